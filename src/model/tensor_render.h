/* tensor_render.h - tensors whose bytes in a virtual file are rendered
 * from their stored bytes rather than spliced from the source.
 *
 * Most tensors are served as they are stored: a virtual file (a
 * .safetensors/ file, stfs-inspect --merge's output) points at their
 * byte range and the FUSE adapter splices it.  A tensor whose stored
 * bytes cannot be served that way has a rendering: the bytes it is
 * served as (its own dtype, size) and a function that produces any window
 * of them from the stored bytes, reading those in bounded windows too.
 * Renderings today:
 *
 *   TENSOR_RENDER_DEQUANT  a GGUF quantized tensor in a safetensors file:
 *                          its float32 values (format/dequant.h), F32,
 *                          4 bytes per element, row-major like the blocks
 *   TENSOR_RENDER_GATHER   a strided PyTorch view (table.h: strides set):
 *                          its elements gathered in C order from the run
 *                          of its storage it reaches, its own dtype; also
 *                          its tensor file and views (model_tensor_read)
 *
 * A new one (a strided PyTorch tensor gathered in C order, say) is a kind
 * here, its case in tensor_render_of() and in tensor_render_read(); the
 * callers (model/repack.c, view/view_safetensors.c,
 * cli/inspect_merge.c) handle every kind alike through repack_seg.render.
 */
#ifndef STFS_TENSOR_RENDER_H
#define STFS_TENSOR_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct err;
struct tensor;

enum tensor_render_kind {
	TENSOR_RENDER_NONE,	/* served as stored: a byte range */
	TENSOR_RENDER_DEQUANT,	/* float32 from quantized blocks */
	TENSOR_RENDER_GATHER,	/* a strided view's elements in C order */
};

struct tensor_render {
	enum tensor_render_kind kind;
	enum dtype dtype;	/* the dtype it is served as */
	uint64_t nbytes;	/* the bytes it is served as */
};

/* How tensor t (stored in t->end - t->begin bytes) is served in a
 * safetensors file.  0, or -1 with *e (ERR_USAGE) when it cannot be (a
 * quantized type stfs does not decode, blocks that do not add up). */
int tensor_render_of(const struct tensor *t, struct tensor_render *out,
		     struct err *e);

/* Reads len stored bytes of the tensor at off (relative to its first
 * byte) into dst; 0 or -errno. */
typedef int (*tensor_render_read_fn)(void *arg, uint64_t off, size_t len,
				     void *dst);

/* Stored bytes read per call of read: the memory a rendering holds,
 * whatever the size of the window asked for. */
#define TENSOR_RENDER_WINDOW (1u << 20)

/* Bytes [off, off + len) of t's rendering (clamped to its nbytes) into
 * dst.  0, or the -errno of read, -ENOMEM, -EINVAL (t has no rendering). */
int tensor_render_read(const struct tensor *t, uint64_t off, size_t len,
		       void *dst, tensor_render_read_fn read, void *arg);

#endif
