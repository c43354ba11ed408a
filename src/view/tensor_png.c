/* tensor_png.c - a tensor's heatmap and histogram as PNG files (see
 * tensor_png.h). */
#include "view/tensor_png.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "format/dequant.h"
#include "format/table.h"
#include "view/heatmap.h"
#include "view/npy.h"
#include "view/png_draw.h"
#include "view/png_file.h"
#include "view/tensor_stats.h"
#include "view/tensor_values.h"
#include "view/value_hist.h"

#define CHUNK (1u << 20)
#define NAME_MAX_SHOWN 4096
#define SCALE_MAX 24		/* %.17g of a double */
#define NUM_MAX 24		/* a number in JSON: %.17g, or a u64 */
#define DESC_HEAT "Heatmap of a tensor: each pixel is the value of " \
	"largest magnitude in its block of values, sign kept (NaN when the " \
	"block holds one); colours linear from -scale (blue) through 0 " \
	"(white) to +scale (red), scale the largest finite magnitude; NaN " \
	"green, +Inf yellow, -Inf magenta."
#define DESC_HIST "Histogram of a tensor's finite values: 100 bins of " \
	"equal width from the least to the largest, bar heights " \
	"log10(1 + count); the statistics are those of .stats/."
#define SOFTWARE "stfs " STFS_VERSION

int
tensor_png_readable(const struct tensor *t)
{
	return tensor_values_readable(t);
}

/* --- texts -------------------------------------------------------------- */

/* The name as shown: bytes 0x00-0x1F, 0x7F and '%' as %XX, cut at
 * NAME_MAX_SHOWN bytes (not inside a character) with "…". */
static int
shown_name(const struct tensor *t, struct buf *b)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < t->name_len && !rc; i++) {
		unsigned char c = (unsigned char)t->name[i];

		if (b->len >= NAME_MAX_SHOWN &&
		    (c & 0xc0) != 0x80)
			return buf_adds(b, "\xe2\x80\xa6");
		if (c < 0x20 || c == 0x7f || c == '%')
			rc = buf_addf(b, "%%%02X", c);
		else
			rc = buf_add(b, &c, 1);
	}
	if (!b->data)
		rc |= buf_adds(b, "");
	return rc;
}

static int
shape_json(const struct tensor *t, struct buf *b)
{
	uint32_t i;
	int rc = buf_adds(b, "[");

	for (i = 0; i < t->rank; i++)
		rc |= buf_addf(b, "%s%" PRIu64, i ? "," : "", t->shape[i]);
	return rc | buf_adds(b, "]");
}

/* "BF16 [4096, 14336]" */
static int
dtype_shape(const struct tensor *t, struct buf *b)
{
	uint32_t i;
	int rc = buf_addf(b, "%s [", dtype_info(t->dtype)->name);

	for (i = 0; i < t->rank; i++)
		rc |= buf_addf(b, "%s%" PRIu64, i ? ", " : "", t->shape[i]);
	return rc | buf_adds(b, "]");
}

static void
geom_of(const struct tensor *t, const struct tensor_png_opts *o,
	struct heatmap_geom *g)
{
	heatmap_geom(t->shape, t->rank, t->dtype == DTYPE_C64,
		     o && o->px ? o->px : HEATMAP_PX, g);
}

static int
map_json(const struct heatmap_geom *g, struct buf *b)
{
	return buf_addf(b, "{\"rows\":%" PRIu64 ",\"cols\":%" PRIu64
			",\"block\":[%" PRIu64 ",%" PRIu64 "],\"pixels\":"
			"[%u,%u],\"magnify\":[%u,%u],\"at\":[%d,%d]}",
			g->rows, g->cols, g->brows, g->bcols, g->ph, g->pw,
			g->cy, g->cx, PNG_DRAW_LEFT, PNG_DRAW_TOP);
}

/* The texts every file has; name, shape, map are caller's buffers. */
struct texts {
	struct buf name, shape, extra;
	char dtype[32];
	char num[SCALE_MAX + 1];
	struct png_text t[8];
	size_t nt;
};

static void
texts_free(struct texts *x)
{
	buf_free(&x->name);
	buf_free(&x->shape);
	buf_free(&x->extra);
}

static void
add_text(struct texts *x, const char *key, const char *text, size_t max,
	 int utf8)
{
	x->t[x->nt].key = key;
	x->t[x->nt].text = text;
	x->t[x->nt].max = max;
	x->t[x->nt].utf8 = utf8;
	x->nt++;
}

/* The texts of the heatmap (hist 0) or the histogram (1); the values of
 * stfs:scale / stfs:stats / stfs:hist are filled in later (x->num,
 * x->extra) within their max. */
static int
texts_make(struct texts *x, const struct tensor *t,
	   const struct tensor_png_opts *o, int hist)
{
	struct heatmap_geom g;

	memset(x, 0, sizeof(*x));
	if (shown_name(t, &x->name) || shape_json(t, &x->shape))
		return -ENOMEM;
	snprintf(x->dtype, sizeof(x->dtype), "%s", dtype_info(t->dtype)->name);
	add_text(x, "Title", x->name.data, x->name.len, 1);
	add_text(x, "Software", SOFTWARE, strlen(SOFTWARE), 0);
	add_text(x, "Description", hist ? DESC_HIST : DESC_HEAT,
		 strlen(hist ? DESC_HIST : DESC_HEAT), 0);
	add_text(x, "stfs:dtype", x->dtype, strlen(x->dtype), 0);
	add_text(x, "stfs:shape", x->shape.data, x->shape.len, 0);
	if (!hist) {
		geom_of(t, o, &g);
		if (map_json(&g, &x->extra))
			return -ENOMEM;
		add_text(x, "stfs:map", x->extra.data, x->extra.len, 0);
		add_text(x, "stfs:scale", x->num, SCALE_MAX, 0);
	} else {
		/* {"count":N, ... 11 keys}: keys and punctuation, and a
		 * number each; then {"lo":x,"hi":x,"counts":[...]} */
		add_text(x, "stfs:stats", "", 140 + 11 * NUM_MAX, 0);
		add_text(x, "stfs:hist", "",
			 32 + 2 * NUM_MAX + VALUE_HIST_BINS * 21, 0);
	}
	return 0;
}

/* The lengths texts_make() gives, without writing the texts (a stat of
 * every file of .png/ asks for them): shown_name()'s, shape_json()'s,
 * map_json()'s. */
static size_t
shown_len(const struct tensor *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->name_len; i++) {
		unsigned char c = (unsigned char)t->name[i];

		if (n >= NAME_MAX_SHOWN && (c & 0xc0) != 0x80)
			return n + 3;
		n += c < 0x20 || c == 0x7f || c == '%' ? 3 : 1;
	}
	return n;
}

static size_t
digits(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static size_t
shape_len(const struct tensor *t)
{
	size_t n = 2;
	uint32_t i;

	for (i = 0; i < t->rank; i++)
		n += digits(t->shape[i]) + (i ? 1 : 0);
	return n;
}

static void
texts_measure(struct texts *x, const struct tensor *t,
	      const struct tensor_png_opts *o, int hist)
{
	struct heatmap_geom g;
	char map[256];
	int n;

	memset(x, 0, sizeof(*x));
	add_text(x, "Title", "", shown_len(t), 1);
	add_text(x, "Software", "", strlen(SOFTWARE), 0);
	add_text(x, "Description", "", strlen(hist ? DESC_HIST : DESC_HEAT),
		 0);
	add_text(x, "stfs:dtype", "", strlen(dtype_info(t->dtype)->name), 0);
	add_text(x, "stfs:shape", "", shape_len(t), 0);
	if (!hist) {
		geom_of(t, o, &g);
		n = snprintf(map, sizeof(map), "{\"rows\":%" PRIu64 ",\"cols\":%"
			     PRIu64 ",\"block\":[%" PRIu64 ",%" PRIu64 "],"
			     "\"pixels\":[%u,%u],\"magnify\":[%u,%u],\"at\":"
			     "[%d,%d]}", g.rows, g.cols, g.brows, g.bcols, g.ph,
			     g.pw, g.cy, g.cx, PNG_DRAW_LEFT, PNG_DRAW_TOP);
		add_text(x, "stfs:map", "", n > 0 ? (size_t)n : 0, 0);
		add_text(x, "stfs:scale", "", SCALE_MAX, 0);
	} else {
		add_text(x, "stfs:stats", "", 140 + 11 * NUM_MAX, 0);
		add_text(x, "stfs:hist", "",
			 32 + 2 * NUM_MAX + VALUE_HIST_BINS * 21, 0);
	}
}

uint64_t
tensor_png_heat_size(const struct tensor *t, const struct tensor_png_opts *o)
{
	struct heatmap_geom g;
	struct texts x;
	unsigned w, h;

	texts_measure(&x, t, o, 0);
	geom_of(t, o, &g);
	png_draw_heat_dims(&g, &w, &h);
	return png_file_size(w, h, x.t, x.nt);
}

void
tensor_png_heat_dims(const struct tensor *t, const struct tensor_png_opts *o,
		     unsigned *w, unsigned *h)
{
	struct heatmap_geom g;

	geom_of(t, o, &g);
	png_draw_heat_dims(&g, w, h);
}

uint64_t
tensor_png_hist_size(const struct tensor *t)
{
	struct texts x;

	texts_measure(&x, t, NULL, 1);
	return png_file_size(PNG_DRAW_HIST_W, PNG_DRAW_HIST_H, x.t, x.nt);
}

/* --- reading ------------------------------------------------------------ */

/* Call feed(ctx, bytes, len) over t's data in chunks.  0 or -errno. */
static int
each_chunk(const struct tensor *t, size_t want, tensor_png_read_fn read,
	   void *arg, void (*feed)(void *ctx, const uint8_t *p, size_t len),
	   void *ctx)
{
	uint64_t len = tensor_values_bytes(t), done = 0;
	size_t chunk = tensor_values_chunk(t->dtype, want);
	uint8_t *buf;
	int rc = 0;

	buf = malloc(len < chunk ? (len ? len : 1) : chunk);
	if (!buf)
		return -ENOMEM;
	while (done < len && !rc) {
		size_t n = len - done < chunk ? (size_t)(len - done) : chunk;

		rc = read(arg, done, n, buf);
		if (!rc)
			feed(ctx, buf, n);
		done += n;
	}
	free(buf);
	return rc;
}

struct heat_ctx {
	struct heatmap_acc acc;
	enum dtype d;
	double *vals;		/* decoded values of a chunk */
};

static void
heat_feed(void *ctx, const uint8_t *p, size_t len)
{
	struct heat_ctx *h = ctx;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the common float formats compared as codes, not decoded */
	switch (h->d) {
	case DTYPE_BF16:
		heatmap_feed_bf16(&h->acc, (const uint16_t *)(const void *)p,
				  len / 2);
		return;
	case DTYPE_F16:
		heatmap_feed_f16(&h->acc, (const uint16_t *)(const void *)p,
				 len / 2);
		return;
	case DTYPE_F32:
	case DTYPE_C64:
		heatmap_feed_f32(&h->acc, (const uint32_t *)(const void *)p,
				 len / 4);
		return;
	default:
		break;
	}
#endif
	tensor_values_decode(h->d, p, len, h->vals);
	heatmap_feed_f64(&h->acc, h->vals, tensor_values_count(h->d, len));
}

/* The info line: "BF16 [4096, 14336] · 4096 × 14336 values, blocks of
 * 4 × 14 in 1024 × 1024 px" and what applies of "rows merged", the
 * magnification and the note. */
static int
heat_info(const struct tensor *t, const struct heatmap_geom *g,
	  const struct tensor_png_opts *o, struct buf *b)
{
	int rc = dtype_shape(t, b);

	if (!g->pw)
		return rc | buf_adds(b, " \xc2\xb7 no values");
	rc |= buf_addf(b, " \xc2\xb7 %" PRIu64 " \xc3\x97 %" PRIu64
		       " values%s, blocks of %" PRIu64 " \xc3\x97 %" PRIu64
		       " in %u \xc3\x97 %u px", g->rows, g->cols,
		       g->merged ? " (leading dimensions merged into rows)" :
		       g->strip ? " (one row)" : "", g->brows, g->bcols,
		       g->ph, g->pw);
	if (g->cx > 1 || g->cy > 1)
		rc |= buf_addf(b, ", drawn %u \xc3\x97 %u each", g->cy, g->cx);
	if (t->dtype == DTYPE_C64)
		rc |= buf_adds(b, " \xc2\xb7 real and imaginary parts side "
			       "by side");
	if (o && o->note)
		rc |= buf_addf(b, " \xc2\xb7 %s", o->note);
	return rc;
}

static int
heat_draw(const struct tensor *t, const struct tensor_png_opts *o,
	  const struct heatmap_acc *acc, const char *title_override,
	  struct buf *out)
{
	struct buf info = BUF_INIT, scale_line = BUF_INIT;
	struct png_draw_lines l;
	struct texts x;
	double s = heatmap_scale(acc);
	int rc;

	rc = texts_make(&x, t, o, 0);
	if (!rc) {
		snprintf(x.num, sizeof(x.num), "%.17g", s);
		rc = heat_info(t, &acc->g, o, &info) ||
		     buf_addf(&scale_line, "colour: linear, \xe2\x88\x92s blue,"
			      " 0 white, +s red; s = %.6g, the largest finite"
			      " |pixel|", s) ? -ENOMEM : 0;
	}
	if (!rc) {
		memset(&l, 0, sizeof(l));
		l.title = title_override ? title_override : x.name.data;
		l.info = info.data;
		l.lines[0] = "pixel: the value of largest magnitude in its "
			     "block, sign kept (NaN when the block holds one)";
		l.lines[1] = scale_line.data;
		rc = png_draw_heat(acc, s, &l, x.t, x.nt, out);
	}
	texts_free(&x);
	buf_free(&info);
	buf_free(&scale_line);
	return rc;
}

int
tensor_png_heat(const struct tensor *t, const struct tensor_png_opts *o,
		tensor_png_read_fn read, void *arg, struct buf *out)
{
	struct heatmap_geom g;
	struct heat_ctx h;
	size_t chunk = tensor_values_chunk(t->dtype, CHUNK);
	int rc;

	if (!tensor_png_readable(t))
		return -EOPNOTSUPP;
	png_draw_prepare();	/* the fonts meanwhile */
	geom_of(t, o, &g);
	memset(&h, 0, sizeof(h));
	h.d = t->dtype;
	if (heatmap_init(&h.acc, &g))
		return -ENOMEM;
	h.vals = malloc(tensor_values_count(t->dtype, chunk) *
			sizeof(double) + 1);
	if (!h.vals) {
		heatmap_drop(&h.acc);
		return -ENOMEM;
	}
	rc = each_chunk(t, CHUNK, read, arg, heat_feed, &h);
	free(h.vals);
	if (!rc)
		rc = heat_draw(t, o, &h.acc, NULL, out);
	heatmap_drop(&h.acc);
	return rc;
}

/* --- |a - b| ------------------------------------------------------------ */

int
tensor_png_diff(const struct tensor *a, tensor_png_read_fn read_a,
		void *arg_a, const struct tensor *b,
		tensor_png_read_fn read_b, void *arg_b,
		const struct tensor_png_opts *o, struct buf *out)
{
	uint64_t la = tensor_values_bytes(a), lb = tensor_values_bytes(b);
	uint64_t va, vb, done = 0, at_a = 0, at_b = 0;
	size_t ca = tensor_values_chunk(a->dtype, CHUNK / 4), cb;
	struct heatmap_geom g;
	struct heatmap_acc acc;
	struct buf title = BUF_INIT;
	uint8_t *pa = NULL, *pb = NULL;
	double *xa = NULL, *xb = NULL;
	size_t na, i;
	int rc = 0;

	if (!tensor_png_readable(a) || !tensor_png_readable(b))
		return -EOPNOTSUPP;
	png_draw_prepare();
	va = a->numel * tensor_values_per_elem(a->dtype);
	vb = b->numel * tensor_values_per_elem(b->dtype);
	if (va != vb)
		return -EINVAL;
	na = tensor_values_count(a->dtype, ca);
	cb = tensor_values_chunk(b->dtype, CHUNK / 4);
	geom_of(a, o, &g);
	if (heatmap_init(&acc, &g))
		return -ENOMEM;
	pa = malloc(ca);
	pb = malloc(cb);
	/* b's values are read to keep up with a's; what is left over waits
	 * in xb for a's next chunk */
	xa = malloc(sizeof(double) * (na + 1));
	xb = malloc(sizeof(double) * (na + tensor_values_count(b->dtype, cb) +
				      1));
	if (!pa || !pb || !xa || !xb)
		rc = -ENOMEM;
	{
		size_t have_b = 0;	/* b values decoded, not yet used */

		while (!rc && done < va) {
			size_t n = la - at_a < ca ? (size_t)(la - at_a) : ca;
			size_t k = tensor_values_count(a->dtype, n);

			rc = read_a(arg_a, at_a, n, pa);
			if (rc)
				break;
			at_a += n;
			tensor_values_decode(a->dtype, pa, n, xa);
			while (!rc && have_b < k && at_b < lb) {
				size_t m = lb - at_b < cb ?
					   (size_t)(lb - at_b) : cb;

				rc = read_b(arg_b, at_b, m, pb);
				if (rc)
					break;
				at_b += m;
				tensor_values_decode(b->dtype, pb, m,
						     xb + have_b);
				have_b += tensor_values_count(b->dtype, m);
			}
			if (rc)
				break;
			if (have_b < k) {
				rc = -EIO;
				break;
			}
			for (i = 0; i < k; i++)
				xa[i] = fabs(xa[i] - xb[i]);
			heatmap_feed_f64(&acc, xa, k);
			memmove(xb, xb + k, (have_b - k) * sizeof(double));
			have_b -= k;
			done += k;
		}
	}
	if (!rc) {
		rc = buf_adds(&title, "|A \xe2\x88\x92 B| of ") ||
		     shown_name(a, &title) ? -ENOMEM : 0;
		if (!rc)
			rc = heat_draw(a, o, &acc, title.data, out);
	}
	buf_free(&title);
	free(pa);
	free(pb);
	free(xa);
	free(xb);
	heatmap_drop(&acc);
	return rc;
}

/* --- histogram ---------------------------------------------------------- */

struct hist_ctx {
	struct tensor_stats_acc st;
	struct value_hist vh;
	enum dtype d;
	double *vals;
};

static void
stats_feed(void *ctx, const uint8_t *p, size_t len)
{
	tensor_stats_feed(&((struct hist_ctx *)ctx)->st, p, len);
}

static void
bins_feed(void *ctx, const uint8_t *p, size_t len)
{
	struct hist_ctx *h = ctx;
	size_t i, n = tensor_values_count(h->d, len);

	tensor_values_decode(h->d, p, len, h->vals);
	for (i = 0; i < n; i++)
		value_hist_add(&h->vh, h->vals[i], 1);
}

/* A number as .stats/ writes it: null when not finite, an integral one
 * with ".0", else %.17g. */
static int
json_real(struct buf *b, const char *key, double x)
{
	if (!isfinite(x))
		return buf_addf(b, "\"%s\":null,", key);
	if (x == floor(x) && fabs(x) < 1e17)
		return buf_addf(b, "\"%s\":%.1f,", key, x);
	return buf_addf(b, "\"%s\":%.17g,", key, x);
}

static int
stats_json(const struct tensor_stats *s, struct buf *b)
{
	int rc = buf_addf(b, "{\"count\":%" PRIu64 ",", s->count);

	if (s->finite && s->kind == TENSOR_STATS_SIGNED)
		rc |= buf_addf(b, "\"min\":%" PRId64 ",\"max\":%" PRId64 ",",
			       s->imin, s->imax);
	else if (s->finite && s->kind == TENSOR_STATS_UNSIGNED)
		rc |= buf_addf(b, "\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",",
			       s->umin, s->umax);
	else
		rc |= json_real(b, "min", s->min) | json_real(b, "max", s->max);
	rc |= json_real(b, "mean", s->mean) | json_real(b, "std", s->std);
	rc |= buf_addf(b, "\"zeros\":%" PRIu64, s->zeros);
	if (s->kind == TENSOR_STATS_FLOAT)	/* as .stats/: floats only */
		rc |= buf_addf(b, ",\"finite\":%" PRIu64 ",\"nan\":%" PRIu64
			       ",\"+inf\":%" PRIu64 ",\"-inf\":%" PRIu64
			       ",\"subnormals\":%" PRIu64, s->finite, s->nan,
			       s->pinf, s->ninf, s->subnormals);
	return rc | buf_adds(b, "}");
}

static int
hist_json(const struct value_hist *vh, struct buf *b)
{
	int rc = 0, k;

	if (!vh)
		return buf_adds(b, "{\"lo\":null,\"hi\":null,\"counts\":[]}");
	rc |= buf_addf(b, "{\"lo\":%.17g,\"hi\":%.17g,\"counts\":[", vh->lo,
		       vh->hi);
	for (k = 0; k < VALUE_HIST_BINS; k++)
		rc |= buf_addf(b, "%s%" PRIu64, k ? "," : "", vh->n[k]);
	return rc | buf_adds(b, "]}");
}

/* "min X   max X   mean X   std X" with integers exact */
static int
stats_lines(const struct tensor_stats *s, struct buf *l1, struct buf *l2)
{
	int rc = 0;

	if (!s->finite)
		rc |= buf_adds(l1, "no finite values");
	else if (s->kind == TENSOR_STATS_SIGNED)
		rc |= buf_addf(l1, "min %" PRId64 "   max %" PRId64, s->imin,
			       s->imax);
	else if (s->kind == TENSOR_STATS_UNSIGNED)
		rc |= buf_addf(l1, "min %" PRIu64 "   max %" PRIu64, s->umin,
			       s->umax);
	else
		rc |= buf_addf(l1, "min %.6g   max %.6g", s->min, s->max);
	if (s->finite)
		rc |= buf_addf(l1, "   mean %.6g   std %.6g", s->mean, s->std);
	rc |= buf_addf(l2, "count %" PRIu64 "   finite %" PRIu64 "   NaN %"
		       PRIu64 "   +Inf %" PRIu64 "   \xe2\x88\x92Inf %" PRIu64
		       "   zeros %" PRIu64, s->count, s->finite, s->nan,
		       s->pinf, s->ninf, s->zeros);
	return rc;
}

int
tensor_png_hist(const struct tensor *t, const struct tensor_png_opts *o,
		tensor_png_read_fn read, void *arg, struct buf *out)
{
	struct buf info = BUF_INIT, l1 = BUF_INIT, l2 = BUF_INIT;
	struct buf js = BUF_INIT, jh = BUF_INIT;
	struct tensor_stats s;
	struct png_draw_lines l;
	struct hist_ctx h;
	struct texts x;
	uint64_t *codes = NULL, four[16];
	size_t nc = 0, c;
	int rc;

	if (!tensor_png_readable(t))
		return -EOPNOTSUPP;
	png_draw_prepare();	/* the fonts meanwhile */
	memset(&h, 0, sizeof(h));
	h.d = t->dtype;
	if (tensor_stats_init(&h.st, t->dtype))
		return -ENOMEM;
	/* .stats/'s chunks: the same numbers */
	rc = each_chunk(t, TENSOR_STATS_CHUNK, read, arg, stats_feed, &h);
	if (rc) {
		tensor_stats_drop(&h.st);
		return rc;
	}
	if (h.st.hist) {	/* counted by code: keep the counts */
		nc = h.st.nhist;
		codes = malloc(nc * sizeof(*codes));
		if (!codes) {
			tensor_stats_drop(&h.st);
			return -ENOMEM;
		}
		memcpy(codes, h.st.hist, nc * sizeof(*codes));
	}
	tensor_stats_finish(&h.st, &s);
	value_hist_init(&h.vh, s.min, s.max);
	if (s.finite && codes) {
		if (t->dtype == DTYPE_F4) {	/* bytes: two codes each */
			memset(four, 0, sizeof(four));
			for (c = 0; c < 256; c++) {
				four[c & 15] += codes[c];
				four[c >> 4] += codes[c];
			}
			memcpy(codes, four, sizeof(four));
			nc = 16;
		}
		for (c = 0; c < nc; c++)
			if (codes[c])
				value_hist_add(&h.vh,
					       tensor_stats_code_value(t->dtype, (unsigned)c),
					       codes[c]);
	} else if (s.finite) {
		size_t chunk = tensor_values_chunk(t->dtype, CHUNK);

		h.vals = malloc(tensor_values_count(t->dtype, chunk) *
				sizeof(double) + 1);
		rc = h.vals ? each_chunk(t, CHUNK, read, arg, bins_feed, &h) :
		     -ENOMEM;
		free(h.vals);
	}
	free(codes);
	if (!rc)
		rc = texts_make(&x, t, o, 1);
	else
		memset(&x, 0, sizeof(x));
	if (!rc && (stats_json(&s, &js) ||
		    hist_json(s.finite ? &h.vh : NULL, &jh) ||
		    dtype_shape(t, &info) ||
		    buf_addf(&info, " \xc2\xb7 %" PRIu64 " values", s.count) ||
		    (o && o->note && buf_addf(&info, " \xc2\xb7 %s", o->note)) ||
		    stats_lines(&s, &l1, &l2)))
		rc = -ENOMEM;
	if (!rc) {
		x.t[5].text = js.data;
		x.t[6].text = jh.data;
		memset(&l, 0, sizeof(l));
		l.title = x.name.data;
		l.info = info.data;
		l.lines[0] = l1.data;
		l.lines[1] = l2.data;
		l.lines[2] = "bins: 100 of equal width from the least to the "
			     "largest finite value; bar height log10(1 + count)";
		rc = png_draw_hist(s.finite ? &h.vh : NULL, &l, x.t, x.nt, out);
	}
	texts_free(&x);
	buf_free(&info);
	buf_free(&l1);
	buf_free(&l2);
	buf_free(&js);
	buf_free(&jh);
	return rc;
}
