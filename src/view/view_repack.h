/* view_repack.h - a virtual safetensors file (model/repack.h) read as a
 * view file: its header copied, its tensors as byte ranges of their
 * sources (spliced by the FUSE adapter), a tensor served as a rendering
 * of its bytes rendered for the window read.  For .safetensors/ and
 * .dequant/.files/. */
#ifndef STFS_VIEW_REPACK_H
#define STFS_VIEW_REPACK_H

#include <stddef.h>
#include <stdint.h>

struct repack;
struct view;
struct view_segs;

/* Bytes [off, off + size) of file (id, strip) of t (capped at its end)
 * appended to out; v is the view reading it (t's model may be another,
 * a derived one).  0 or -errno. */
int view_repack_read(const struct view *v, struct repack *t, size_t id,
		     int strip, uint64_t off, size_t size,
		     struct view_segs *out);

#endif
