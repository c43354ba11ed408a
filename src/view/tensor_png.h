/* tensor_png.h - a tensor's pictures as PNG files: its heatmap
 * (heatmap.h's rule) and the histogram of its values (value_hist.h),
 * drawn by png_draw.h, for the .png/ view and stfs-inspect --png.  No
 * FUSE.
 *
 * Cost: the heatmap reads the tensor once; the histogram reads it once
 * for formats of 16 bits and less (counted by code, as .stats/ does),
 * twice for wider ones (the statistics, then the bins).  Sizes depend on
 * the tensor's name, dtype and shape only (png_file.h).
 *
 * The texts of each file (tEXt/iTXt chunks), beside what is drawn:
 *   Title        the tensor's name (its bytes 0x00-0x1F, 0x7F and '%'
 *                written %XX; cut at 4096 bytes with "…")
 *   Software     "stfs VERSION"
 *   Description  what the picture shows, in a sentence
 *   stfs:dtype   "BF16"; stfs:shape  the shape, a JSON array
 * heatmap:
 *   stfs:map     JSON: {"rows", "cols" (the matrix of values), "block":
 *                [rows, cols] per pixel, "pixels": [ph, pw], "magnify":
 *                [y, x] screen pixels per pixel, "at": [x, y] of the
 *                map's top-left corner}
 *   stfs:scale   s, %.17g
 * histogram:
 *   stfs:stats   JSON: count, finite, min, max, mean, std, zeros, nan,
 *                +inf, -inf, subnormals, written as .stats/ writes them
 *   stfs:hist    JSON: {"lo", "hi", "counts": [VALUE_HIST_BINS counts]}
 */
#ifndef STFS_TENSOR_PNG_H
#define STFS_TENSOR_PNG_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct tensor;

/* Reads len bytes at off (relative to the tensor's first byte; a strided
 * view's elements gathered) into dst: 0 or -errno (-EINTR to stop). */
typedef int (*tensor_png_read_fn)(void *arg, uint64_t off, size_t len,
				  void *dst);

/* What the pictures say beside the tensor's own name, dtype and shape. */
struct tensor_png_opts {
	unsigned px;		/* heatmap: largest side of the map */
	const char *note;	/* NULL, or appended to the info line
				   ("dequantized from F8_E4M3 with scales") */
};

/* 1 when the pictures can be drawn (the values are decoded). */
int tensor_png_readable(const struct tensor *t);

uint64_t tensor_png_heat_size(const struct tensor *t,
			      const struct tensor_png_opts *o);
/* The heatmap's width and height in pixels (the histogram's are
 * PNG_DRAW_HIST_W x PNG_DRAW_HIST_H). */
void tensor_png_heat_dims(const struct tensor *t,
			  const struct tensor_png_opts *o, unsigned *w,
			  unsigned *h);
uint64_t tensor_png_hist_size(const struct tensor *t);

/* Append the file (exactly its size) to out.  0, or -errno: read's
 * error, -ENOMEM, -EOPNOTSUPP (values not decoded), -EIO. */
int tensor_png_heat(const struct tensor *t, const struct tensor_png_opts *o,
		    tensor_png_read_fn read, void *arg, struct buf *out);
int tensor_png_hist(const struct tensor *t, const struct tensor_png_opts *o,
		    tensor_png_read_fn read, void *arg, struct buf *out);

/* The heatmap of |a - b| of two tensors of one shape (stfs-inspect
 * --diff --png): the rule over the differences, title "|A - B|". */
int tensor_png_diff(const struct tensor *a, tensor_png_read_fn read_a,
		    void *arg_a, const struct tensor *b,
		    tensor_png_read_fn read_b, void *arg_b,
		    const struct tensor_png_opts *o, struct buf *out);

#endif
