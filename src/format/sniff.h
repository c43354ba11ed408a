/* sniff.h - say what a file that is not safetensors is.
 *
 * A Git LFS pointer, a PyTorch .bin (zip or pickle), a .npz or a text
 * file all fail the first length check with a message that is true but
 * useless ("the header length prefix says 85966670672 bytes"); named
 * .gguf, they fail GGUF's magic check ("magic is \"vers\" ...").
 * Once every container format has refused a file (container.h), its
 * first bytes are looked at and the error detail is rewritten to say what
 * the file is and what to do; the error code (the reference's error name)
 * is kept.  Valid files are never sniffed, so nothing here can refuse one.
 */
#ifndef STFS_SNIFF_H
#define STFS_SNIFF_H

#include "format/reader.h"

struct err;

/* After a validation error in *e for r: read its first bytes (and, for
 * a header that parses, its end offsets) and put what the file is in front
 * of e->detail ("a Git LFS pointer ...: run `git lfs pull` ...", "N of M
 * bytes: incomplete download? ...").  Does nothing for I/O and memory
 * errors.  container_open() calls it. */
void sniff_explain(const struct reader *r, struct err *e);

#endif
