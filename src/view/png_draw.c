/* png_draw.c - a tensor's heatmap and histogram pictures, drawn with
 * cairo (see png_draw.h). */
#include "view/png_draw.h"

#include <cairo.h>
#include <cairo-ft.h>
#include <errno.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/buf.h"
#include "view/png_file.h"

#define FONT "DejaVu Sans"
/* fonts-dejavu-core's files, read with FreeType: the same glyphs on
 * every machine, whatever fontconfig would pick, and no fontconfig */
#define FONT_DIR "/usr/share/fonts/truetype/dejavu/"
static const char *const font_files[2] = {
	FONT_DIR "DejaVuSans.ttf", FONT_DIR "DejaVuSans-Bold.ttf",
};
#define BAR_GAP 16
#define BAR_W 16
#define BAR_H (2 * HEATMAP_LEVELS + 1)	/* one row per step */
#define LABEL_W 88
#define LEGEND_H 72
#define CONTENT_MIN (BAR_H + LEGEND_H)
#define FOOT_H 50
#define MIN_W 600

void
png_draw_heat_dims(const struct heatmap_geom *g, unsigned *w, unsigned *h)
{
	unsigned mw = g->pw * g->cx, mh = g->ph * g->cy;
	unsigned content = mh > CONTENT_MIN ? mh : CONTENT_MIN;

	*w = PNG_DRAW_LEFT + mw + BAR_GAP + BAR_W + LABEL_W;
	if (*w < MIN_W)
		*w = MIN_W;
	*h = PNG_DRAW_TOP + content + FOOT_H;
}

static void
rgb(cairo_t *cr, uint32_t c)
{
	cairo_set_source_rgb(cr, (c >> 16 & 255) / 255.0,
			     (c >> 8 & 255) / 255.0, (c & 255) / 255.0);
}

/* The two faces, loaded once for the process and kept (FreeType's
 * library and faces with them); NULL where a file is missing, then
 * cairo's own "DejaVu Sans" through fontconfig. */
static cairo_font_face_t *faces[2];
static pthread_once_t faces_once = PTHREAD_ONCE_INIT;

static void
load_faces(void)
{
	static FT_Library lib;
	FT_Face f;
	int k;

	if (FT_Init_FreeType(&lib))
		return;
	for (k = 0; k < 2; k++)
		if (FT_New_Face(lib, font_files[k], 0, &f) == 0)
			faces[k] = cairo_ft_font_face_create_for_ft_face(f, 0);
}

static void
font(cairo_t *cr, int bold)
{
	pthread_once(&faces_once, load_faces);
	if (faces[bold ? 1 : 0])
		cairo_set_font_face(cr, faces[bold ? 1 : 0]);
	else
		cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
				       bold ? CAIRO_FONT_WEIGHT_BOLD :
				       CAIRO_FONT_WEIGHT_NORMAL);
}

/* Text in every size and weight the pictures use, drawn on a small
 * surface: the faces loaded, the glyphs cached by cairo. */
static void *
warm(void *arg)
{
	static const double sizes[] = { 11, 11.5, 12, 14 };
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24,
							 8, 8);
	cairo_t *cr = cairo_create(s);
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		font(cr, sizes[i] == 14);
		cairo_set_font_size(cr, sizes[i]);
		cairo_move_to(cr, 0, 4);
		cairo_show_text(cr, "0123456789 .,:;+-=()[]%/|"
			       " abcdefghijklmnopqrstuvwxyz"
			       " ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       " \xc2\xb7\xc3\x97\xe2\x88\x92\xe2\x80\xa6");
	}
	cairo_destroy(cr);
	cairo_surface_destroy(s);
	return NULL;
}

void
png_draw_prepare(void)
{
	static int started;
	pthread_attr_t at;
	pthread_t th;

	if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
		return;
	if (pthread_attr_init(&at))
		return;
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 << 10);
	if (pthread_create(&th, &at, warm, NULL))
		__atomic_store_n(&started, 0, __ATOMIC_RELEASE);
	pthread_attr_destroy(&at);
}

/* Show s at (x, y) in size px, cut with "…" to fit in width. */
static void
text(cairo_t *cr, double x, double y, double px, int bold, const char *s,
     double width)
{
	char tmp[512];
	cairo_text_extents_t ex;
	size_t n = strlen(s);

	font(cr, bold);
	cairo_set_font_size(cr, px);
	if (n > sizeof(tmp) - 4)
		n = sizeof(tmp) - 4;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	cairo_text_extents(cr, tmp, &ex);
	while (ex.x_advance > width && n > 0) {
		/* back one UTF-8 character */
		do
			n--;
		while (n > 0 && ((unsigned char)tmp[n] & 0xc0) == 0x80);
		memcpy(tmp + n, "\xe2\x80\xa6", 4);	/* … */
		cairo_text_extents(cr, tmp, &ex);
	}
	cairo_move_to(cr, x, y);
	cairo_show_text(cr, tmp);
}

static void
head(cairo_t *cr, const struct png_draw_lines *l, unsigned w)
{
	rgb(cr, 0x101010);
	text(cr, PNG_DRAW_LEFT, 20, 14, 1, l->title, w - 2 * PNG_DRAW_LEFT);
	rgb(cr, 0x303030);
	text(cr, PNG_DRAW_LEFT, 40, 11.5, 0, l->info, w - 2 * PNG_DRAW_LEFT);
}

static void
foot(cairo_t *cr, const struct png_draw_lines *l, unsigned w, double y,
     double step)
{
	size_t i;

	rgb(cr, 0x303030);
	for (i = 0; i < 4 && l->lines[i]; i++)
		text(cr, PNG_DRAW_LEFT, y + step * (double)i, 11.5, 0,
		     l->lines[i], w - 2 * PNG_DRAW_LEFT);
}

/* An image surface on big scratch memory (base/bigmem.h): *mem and *len
 * to free once the surface is destroyed. */
static cairo_surface_t *
surface(unsigned w, unsigned h, void **mem, size_t *len)
{
	int stride = cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, (int)w);

	*len = (size_t)stride * h;
	*mem = bigmem_alloc(*len);
	if (!*mem)
		return cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w,
						  (int)h);
	return cairo_image_surface_create_for_data(*mem, CAIRO_FORMAT_RGB24,
						   (int)w, (int)h, stride);
}

static int
finish(cairo_surface_t *s, cairo_t *cr, const struct png_text *t, size_t nt,
       struct buf *out, void *mem, size_t len)
{
	int rc;

	cairo_destroy(cr);
	cairo_surface_flush(s);
	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS)
		rc = -ENOMEM;
	else
		rc = png_file_write(cairo_image_surface_get_data(s),
				    (unsigned)cairo_image_surface_get_width(s),
				    (unsigned)cairo_image_surface_get_height(s),
				    (size_t)cairo_image_surface_get_stride(s),
				    t, nt, out);
	cairo_surface_destroy(s);
	bigmem_free(mem, len);
	return rc;
}

/* The map's pixels, written into the surface as they are. */
static void
map(cairo_surface_t *s, const struct heatmap_acc *a, double scale)
{
	const struct heatmap_geom *g = &a->g;
	unsigned char *data = cairo_image_surface_get_data(s);
	size_t stride = (size_t)cairo_image_surface_get_stride(s);
	uint32_t i, j, y, x, steps[2 * HEATMAP_LEVELS + 1];
	int k;

	for (k = -HEATMAP_LEVELS; k <= HEATMAP_LEVELS; k++)
		steps[k + HEATMAP_LEVELS] = heatmap_step_colour(k);
	cairo_surface_flush(s);
	for (i = 0; i < g->ph; i++) {
		for (y = 0; y < g->cy; y++) {
			uint32_t *row = (uint32_t *)(void *)(data + stride *
				(PNG_DRAW_TOP + (size_t)i * g->cy + y)) +
				PNG_DRAW_LEFT;

			for (j = 0; j < g->pw; j++) {
				double v = a->pix[(size_t)i * g->pw + j];
				uint32_t c = isfinite(v) ? steps[heatmap_step(
					v, scale) + HEATMAP_LEVELS] :
					heatmap_colour(v, scale);

				for (x = 0; x < g->cx; x++)
					*row++ = c;
			}
		}
	}
	cairo_surface_mark_dirty(s);
}

static void
swatch(cairo_t *cr, double x, double y, uint32_t c, const char *label)
{
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	rgb(cr, c);
	cairo_rectangle(cr, x, y, BAR_W, 12);
	cairo_fill(cr);
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
	rgb(cr, 0x303030);
	text(cr, x + BAR_W + 6, y + 11, 11, 0, label, LABEL_W - 6);
}

int
png_draw_heat(const struct heatmap_acc *a, double scale,
	      const struct png_draw_lines *l, const struct png_text *t,
	      size_t nt, struct buf *out)
{
	const struct heatmap_geom *g = &a->g;
	unsigned w, h, mw = g->pw * g->cx, mh = g->ph * g->cy;
	double bx = PNG_DRAW_LEFT + mw + BAR_GAP, by = PNG_DRAW_TOP;
	char label[64];
	cairo_surface_t *s;
	cairo_t *cr;
	void *mem;
	size_t len;
	int k;

	png_draw_heat_dims(g, &w, &h);
	s = surface(w, h, &mem, &len);
	cr = cairo_create(s);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	head(cr, l, w);
	if (mw && mh) {
		map(s, a, scale);
	} else {
		rgb(cr, 0x303030);
		text(cr, PNG_DRAW_LEFT, by + 20, 12, 0, "no values", 200);
	}
	/* the colour bar: +s at the top, one pixel row per step */
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	for (k = HEATMAP_LEVELS; k >= -HEATMAP_LEVELS; k--) {
		rgb(cr, heatmap_step_colour(k));
		cairo_rectangle(cr, bx, by + HEATMAP_LEVELS - k, BAR_W, 1);
		cairo_fill(cr);
	}
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
	rgb(cr, 0x303030);
	snprintf(label, sizeof(label), "+%.4g", scale);
	text(cr, bx + BAR_W + 6, by + 9, 11, 0, label, LABEL_W - 6);
	text(cr, bx + BAR_W + 6, by + HEATMAP_LEVELS + 4, 11, 0, "0",
	     LABEL_W - 6);
	snprintf(label, sizeof(label), "\xe2\x88\x92%.4g", scale);
	text(cr, bx + BAR_W + 6, by + BAR_H, 11, 0, label, LABEL_W - 6);
	swatch(cr, bx, by + BAR_H + 12, HEATMAP_NAN, "NaN");
	swatch(cr, bx, by + BAR_H + 30, HEATMAP_PINF, "+Inf");
	swatch(cr, bx, by + BAR_H + 48, HEATMAP_NINF, "\xe2\x88\x92Inf");
	foot(cr, l, w, h - FOOT_H + 20, 17);
	return finish(s, cr, t, nt, out, mem, len);
}

/* --- histogram --------------------------------------------------------- */

#define PLOT_X 64
#define PLOT_Y 60
#define BIN_W 5
#define PLOT_W (VALUE_HIST_BINS * BIN_W)
#define PLOT_H 230

int
png_draw_hist(const struct value_hist *hs, const struct png_draw_lines *l,
	      const struct png_text *t, size_t nt, struct buf *out)
{
	cairo_surface_t *s;
	cairo_t *cr;
	uint64_t most = 0;
	double top, y;
	char label[64];
	void *mem;
	size_t len;
	int k;

	s = surface(PNG_DRAW_HIST_W, PNG_DRAW_HIST_H, &mem, &len);
	cr = cairo_create(s);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	head(cr, l, PNG_DRAW_HIST_W);
	for (k = 0; hs && k < VALUE_HIST_BINS; k++)
		if (hs->n[k] > most)
			most = hs->n[k];
	top = log10(1 + (double)(most ? most : 1));
	if (top < 1)
		top = 1;
	/* decades */
	cairo_set_line_width(cr, 1);
	for (k = 0; pow(10, k) <= most || k == 0; k++) {
		y = PLOT_Y + PLOT_H - PLOT_H * log10(1 + pow(10, k)) / top;
		rgb(cr, 0xdddddd);
		cairo_move_to(cr, PLOT_X, floor(y) + 0.5);
		cairo_line_to(cr, PLOT_X + PLOT_W, floor(y) + 0.5);
		cairo_stroke(cr);
		rgb(cr, 0x505050);
		snprintf(label, sizeof(label), k < 4 ? "%.0f" : "1e%.0f",
			 k < 4 ? pow(10, k) : (double)k);
		text(cr, 8, y + 4, 10.5, 0, label, PLOT_X - 12);
	}
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	rgb(cr, 0x4a6fa5);
	for (k = 0; hs && k < VALUE_HIST_BINS; k++) {
		double bh;

		if (!hs->n[k])
			continue;
		bh = ceil(PLOT_H * log10(1 + (double)hs->n[k]) / top);
		cairo_rectangle(cr, PLOT_X + k * BIN_W, PLOT_Y + PLOT_H - bh,
				BIN_W, bh);
		cairo_fill(cr);
	}
	rgb(cr, 0x303030);
	cairo_rectangle(cr, PLOT_X, PLOT_Y + PLOT_H, PLOT_W, 1);
	cairo_fill(cr);
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
	if (hs) {
		snprintf(label, sizeof(label), "%.6g", hs->lo);
		text(cr, PLOT_X, PLOT_Y + PLOT_H + 16, 11, 0, label, 200);
		snprintf(label, sizeof(label), "%.6g", hs->hi);
		text(cr, PLOT_X + PLOT_W - 90, PLOT_Y + PLOT_H + 16, 11, 0,
		     label, 120);
	} else {
		text(cr, PLOT_X + 8, PLOT_Y + PLOT_H / 2, 12, 0,
		     "no finite values", 300);
	}
	rgb(cr, 0x505050);
	text(cr, PLOT_X + PLOT_W / 2 - 60, PLOT_Y - 8, 10.5, 0,
	     "count (log scale)", 200);
	foot(cr, l, PNG_DRAW_HIST_W, PLOT_Y + PLOT_H + 40, 18);
	return finish(s, cr, t, nt, out, mem, len);
}
