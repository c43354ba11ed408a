/* heatmap.h - the rule of a tensor's heatmap (the .png/ view), apart from
 * any drawing: which block of values each pixel stands for, the value it
 * shows, and its colour.  No I/O, no cairo; tested alone (unit-png).
 *
 * The tensor as a matrix: a 2-D tensor is rows x columns; one of more
 * dimensions has its leading dimensions merged into rows (rows = the
 * product of all but the last, "merged"); a 1-D tensor is one row (a
 * strip); a scalar is 1 x 1.  C64 counts as its real and imaginary
 * float32 parts side by side (2 columns per element), as .stats/ counts
 * it.
 *
 * Downsampling, each axis on its own: an axis of n values shown in at
 * most px pixels is cut in blocks of b = ceil(n / px) values, the last
 * one shorter, so it has ceil(n / b) pixels: pixel j stands for values
 * [j b, min((j + 1) b, n)).  An axis of fewer than HEATMAP_MAGNIFY
 * pixels (and less than px) is magnified by the largest whole factor that
 * keeps it within that (a 1-D strip is HEATMAP_STRIP px tall), so that a
 * small tensor is not a few dots.
 *
 * The value of a pixel: NaN when its block holds a NaN; else the value of
 * largest magnitude in the block, sign kept (+x rather than -x when both
 * are there), so that an outlier is never averaged away; an infinity is
 * the largest magnitude of all.
 *
 * Colours: a diverging map, symmetric about zero, from dark blue (-s)
 * through near-white (0) to dark red (+s), in 2 HEATMAP_LEVELS + 1 steps:
 * value v is step round(v / s * HEATMAP_LEVELS); s, the scale, is the
 * largest magnitude among the finite pixels (0: every finite pixel is
 * the middle colour, so a constant tensor is one colour).  NaN, +Inf and
 * -Inf have colours of their own that no step has (green, yellow,
 * magenta).
 */
#ifndef STFS_HEATMAP_H
#define STFS_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

#define HEATMAP_PX 1024		/* default largest side, -o png_px */
#define HEATMAP_PX_MIN 16
#define HEATMAP_PX_MAX 8192
#define HEATMAP_MAGNIFY 256	/* small axes magnified up to this */
#define HEATMAP_STRIP 32	/* height of a 1-D tensor's strip */
#define HEATMAP_LEVELS 127	/* steps each side of zero */

struct heatmap_geom {
	uint64_t rows, cols;	/* the tensor as a matrix (values) */
	uint64_t brows, bcols;	/* values per block along each axis */
	uint32_t ph, pw;	/* pixels of the map before magnification */
	uint32_t cy, cx;	/* magnification: screen pixels per pixel */
	int merged;		/* rank > 2: leading dimensions merged */
	int strip;		/* rank <= 1 */
};

/* The geometry of a tensor of this shape (C64: complex 1) shown in at
 * most px pixels a side (HEATMAP_PX_MIN..HEATMAP_PX_MAX).  A tensor
 * without values has ph = pw = 0. */
void heatmap_geom(const uint64_t *shape, uint32_t rank, int complex,
		  unsigned px, struct heatmap_geom *g);

/* The pixels being reduced: values are fed in row-major order. */
struct heatmap_acc {
	struct heatmap_geom g;
	double *pix;		/* ph * pw, row-major */
	size_t pix_len;		/* its bytes, mapped */
	uint64_t next;		/* index of the next value fed */
	void *colkeys;		/* a pixel row's keys per column */
};

/* 0, or -1 when out of memory. */
int heatmap_init(struct heatmap_acc *a, const struct heatmap_geom *g);
void heatmap_drop(struct heatmap_acc *a);

/* Feed the next n values. */
void heatmap_feed_f64(struct heatmap_acc *a, const double *v, size_t n);
/* The same from IEEE float32 bits, BF16 and F16 codes and float64 bits
 * (native byte order), without decoding every value: magnitudes compared
 * as sign-magnitude integers. */
void heatmap_feed_f32(struct heatmap_acc *a, const uint32_t *v, size_t n);
void heatmap_feed_bf16(struct heatmap_acc *a, const uint16_t *v, size_t n);
void heatmap_feed_f16(struct heatmap_acc *a, const uint16_t *v, size_t n);

/* The scale: the largest magnitude among the finite pixels (0 if none). */
double heatmap_scale(const struct heatmap_acc *a);

/* The merge of one value into a pixel by the rule above (exported for
 * the unit test and for |a - b| maps). */
double heatmap_pick(double pixel, double v);

/* The colour of a pixel value at scale s: 0xRRGGBB. */
uint32_t heatmap_colour(double v, double s);

/* The step of a finite value (-HEATMAP_LEVELS..HEATMAP_LEVELS) and the
 * colour of a step. */
int heatmap_step(double v, double s);
uint32_t heatmap_step_colour(int step);

#define HEATMAP_NAN 0x00c800u	/* green */
#define HEATMAP_PINF 0xffd700u	/* yellow */
#define HEATMAP_NINF 0xc800c8u	/* magenta */

#endif
