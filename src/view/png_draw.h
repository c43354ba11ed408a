/* png_draw.h - the two pictures of a tensor, drawn with cairo (text in
 * DejaVu Sans: fonts-dejavu-core's files read with FreeType, or
 * fontconfig's DejaVu Sans where they are missing) and written with
 * png_file.h.  Their sizes follow from the shape alone:
 *
 * Heatmap: a title (the name), a line of dtype, shape and downsampling,
 * the map at (PNG_DRAW_LEFT, PNG_DRAW_TOP) with its pixels exactly
 * heatmap_colour() (written, not drawn: no smoothing), the colour bar
 * right of it (one pixel row per step, +s at the top) with its scale and
 * swatches of the NaN, +Inf and -Inf colours, and two lines below saying
 * the rule and the scale.
 *
 * Histogram: PNG_DRAW_HIST_W x PNG_DRAW_HIST_H: title, dtype and shape,
 * value_hist.h's bins as bars whose heights are log10(1 + count) (ticks
 * at 1, 10, 100, ...), the range below, then min, max, mean, std and
 * the counts of .stats/.
 */
#ifndef STFS_PNG_DRAW_H
#define STFS_PNG_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "view/heatmap.h"
#include "view/value_hist.h"

struct buf;
struct png_text;

#define PNG_DRAW_LEFT 12
#define PNG_DRAW_TOP 52
#define PNG_DRAW_HIST_W 640
#define PNG_DRAW_HIST_H 420

/* Start loading the fonts and rasterising the glyphs the pictures use on
 * a thread of their own, once per process (the first picture of a mount
 * then does not wait for them after reading its tensor); nothing when
 * done or started, or when no thread can start (drawing then loads them
 * itself). */
void png_draw_prepare(void);

/* Size of the heatmap picture of geometry g. */
void png_draw_heat_dims(const struct heatmap_geom *g, unsigned *w,
			unsigned *h);

/* Text lines of a picture (UTF-8; cut with "…" to fit). */
struct png_draw_lines {
	const char *title, *info;
	const char *lines[4];	/* below: rule, scale (heatmap); stats
				   (histogram); NULL-ended */
};

/* Draw the heatmap of a (at scale s) and append it as a PNG with the
 * texts t to out.  0 or -errno. */
int png_draw_heat(const struct heatmap_acc *a, double s,
		  const struct png_draw_lines *l, const struct png_text *t,
		  size_t nt, struct buf *out);

/* Draw the histogram h (NULL: no finite value); the same. */
int png_draw_hist(const struct value_hist *h, const struct png_draw_lines *l,
		  const struct png_text *t, size_t nt, struct buf *out);

#endif
