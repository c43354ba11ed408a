/* sniff.h - say what a file that is not safetensors is.
 *
 * A Git LFS pointer, a PyTorch .bin (zip or pickle), a .npz, a GGUF file
 * or a text file all fail the first length check with a message that is
 * true but useless ("the header length prefix says 85966670672 bytes").
 * Once every container format has refused a file (container.h), its
 * first bytes are looked at and the error detail is rewritten to say what
 * the file is and what to do; the error code (the reference's error name)
 * is kept.  Valid files are never sniffed, so nothing here can refuse one.
 */
#ifndef STFS_SNIFF_H
#define STFS_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

struct err;

/* What the first n bytes of a file of size bytes are, as a sentence
 * ("a Git LFS pointer ...: run `git lfs pull` ..."), written to out (cap
 * bytes); 0 when recognized, -1 when they look like nothing known.
 * Truncation is not judged here (see sniff_explain). */
int sniff_bytes(const unsigned char *p, size_t n, uint64_t size, char *out,
		size_t cap);

/* After a validation error in *e for r: read its first bytes (and, for
 * a header that parses, its end offsets) and put what the file is in front
 * of e->detail.  Does nothing for I/O and memory errors.  container_open()
 * calls it. */
void sniff_explain(const struct reader *r, struct err *e);

#endif
