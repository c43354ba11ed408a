/* heatmap.c - the rule of a tensor's heatmap (see heatmap.h). */
#include "view/heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "view/npy.h"

/* rows reduced down their columns first when no longer (see KEYS) */
#define COLS_MAX (1u << 20)
/* keys past the last column + block, read by whole vectors */
#define KEYS_PAD 32

/* Blocks of at most px values: b = ceil(n / px), ceil(n / b) pixels. */
static void
axis(uint64_t n, unsigned px, uint64_t *b, uint32_t *p)
{
	if (!n) {
		*b = 1;
		*p = 0;
		return;
	}
	*b = (n + px - 1) / px;
	*p = (uint32_t)((n + *b - 1) / *b);
}

static uint32_t
magnify(uint32_t p, unsigned px)
{
	unsigned lim = px < HEATMAP_MAGNIFY ? px : HEATMAP_MAGNIFY;

	return p && p < lim ? lim / p : 1;
}

void
heatmap_geom(const uint64_t *shape, uint32_t rank, int complex, unsigned px,
	     struct heatmap_geom *g)
{
	uint64_t rows = 1, cols = 1;
	uint32_t i;

	memset(g, 0, sizeof(*g));
	if (px < HEATMAP_PX_MIN)
		px = HEATMAP_PX_MIN;
	if (px > HEATMAP_PX_MAX)
		px = HEATMAP_PX_MAX;
	if (rank >= 1)
		cols = shape[rank - 1];
	for (i = 0; i + 1 < rank; i++)
		rows = shape[i] && rows > UINT64_MAX / shape[i] ? UINT64_MAX :
		       rows * shape[i];
	for (i = 0; i < rank; i++)
		if (!shape[i])
			rows = cols = 0;
	if (complex)
		cols = cols > UINT64_MAX / 2 ? UINT64_MAX : 2 * cols;
	g->rows = rows;
	g->cols = cols;
	g->merged = rank > 2;
	g->strip = rank <= 1;
	axis(rows, px, &g->brows, &g->ph);
	axis(cols, px, &g->bcols, &g->pw);
	if (!g->ph || !g->pw) {
		g->ph = g->pw = 0;
		g->cy = g->cx = 1;
		return;
	}
	g->cx = magnify(g->pw, px);
	g->cy = g->strip ? HEATMAP_STRIP : magnify(g->ph, px);
}

int
heatmap_init(struct heatmap_acc *a, const struct heatmap_geom *g)
{
	size_t n = (size_t)g->ph * g->pw;

	memset(a, 0, sizeof(*a));
	a->g = *g;
	a->pix_len = (n ? n : 1) * sizeof(*a->pix);
	a->pix = bigmem_alloc(a->pix_len);	/* zeroed */
	/* column keys of a pixel row: up to 32 bits each, and zeros past
	 * the last column for the reduction across (see KEYS) */
	if (g->pw && g->cols <= COLS_MAX)
		a->colkeys = calloc((size_t)(g->cols + g->bcols) + KEYS_PAD,
				    sizeof(uint32_t));
	if (!a->pix || (g->pw && g->cols <= COLS_MAX && !a->colkeys)) {
		heatmap_drop(a);
		return -1;
	}
	return 0;
}

void
heatmap_drop(struct heatmap_acc *a)
{
	bigmem_free(a->pix, a->pix_len);
	free(a->colkeys);
	a->pix = NULL;
	a->colkeys = NULL;
}

static inline double
pick(double pixel, double v)
{
	double ap, av;

	if (isnan(pixel) || isnan(v))
		return NAN;
	ap = fabs(pixel);
	av = fabs(v);
	if (av > ap || (av == ap && v > pixel))
		return v;
	return pixel;
}

double
heatmap_pick(double pixel, double v)
{
	return pick(pixel, v);
}

/* Walk the next n values as row segments within one block column:
 * REDUCE(i, len) reduces values [i, i + len) of the input to one value,
 * merged into the pixel of their block. */
#define WALK(a, n, REDUCE)						\
	do {								\
		const struct heatmap_geom *g_ = &(a)->g;		\
		uint64_t r_, c_, left_ = (n);				\
		size_t i_ = 0;						\
									\
		if (!g_->pw || !left_)					\
			break;						\
		r_ = (a)->next / g_->cols;				\
		c_ = (a)->next % g_->cols;				\
		while (left_ && r_ < g_->rows) {			\
			uint64_t end_ = (c_ / g_->bcols + 1) * g_->bcols; \
			size_t len_;					\
			double *px_;					\
									\
			if (end_ > g_->cols)				\
				end_ = g_->cols;			\
			len_ = (size_t)(end_ - c_ < left_ ? end_ - c_ :	\
					left_);				\
			px_ = &(a)->pix[(size_t)(r_ / g_->brows) * g_->pw + \
					(size_t)(c_ / g_->bcols)];	\
			*px_ = pick(*px_, REDUCE(i_, len_));		\
			i_ += len_;					\
			left_ -= len_;					\
			c_ += len_;					\
			if (c_ == g_->cols) {				\
				c_ = 0;					\
				r_++;					\
			}						\
		}							\
		(a)->next += (n);					\
	} while (0)

/* Sign-magnitude codes (IEEE floats, BF16) compared without decoding:
 * key = magnitude bits << 1 | (1 when positive), so that the largest key
 * is the largest magnitude, positive on a tie, and a NaN's is above an
 * infinity's.  Rows of up to COLS_MAX values are reduced down their
 * columns first, into a pixel row's column keys (a.colkeys, in vectors:
 * GCC's vector extensions, no intrinsics), then across each block of
 * columns once the pixel row is complete; longer rows block by block.
 * Across, in vectors too: after k passes ck[c] = max(ck[c], ck[c + d])
 * with d = 1, 2, .., 2^(k-1), ck[c] is the largest of ck[c .. c + 2^k),
 * so a block of b columns, 2^k <= b < 2^(k+1), is the larger of the keys
 * at its first column and at its last but 2^k - 1 (zeros past the last
 * column stand for nothing). */
typedef uint16_t vec16 __attribute__((vector_size(32)));
typedef uint32_t vec32 __attribute__((vector_size(32)));
typedef int16_t svec16 __attribute__((vector_size(32)));
typedef int32_t svec32 __attribute__((vector_size(32)));

#define KEY16(x) ((uint16_t)((x) << 1) | (uint16_t)(~(x) >> 15 & 1))
#define KEY32(x) ((uint32_t)((x) << 1) | (~(x) >> 31 & 1))

/* x = the larger of vectors of keys x and y, elementwise: compared as
 * signed (top bit flipped), the instructions every x86-64 has */
#define VMAX(T, VEC, SVEC, x, y)					\
	do {								\
		const T top_ = (T)((T)1 << (sizeof(T) * 8 - 1));	\
		SVEC a_ = (SVEC)((x) ^ top_), b_ = (SVEC)((y) ^ top_), m_; \
									\
		m_ = a_ > b_;						\
		(x) = (VEC)((a_ & m_) | (b_ & ~m_)) ^ top_;		\
	} while (0)

#define KEYS(NAME, T, VEC, SVEC, KEY, INFKEY, VAL)			\
/* ck[c] = max(ck[c], key of p[c]) for c < n */				\
__attribute__((target_clones("avx2", "default")))			\
static void								\
NAME##_down(T *ck, const T *p, size_t n)				\
{									\
	const size_t w = sizeof(VEC) / sizeof(T);			\
	size_t c = 0;							\
									\
	for (; c + w <= n; c += w) {					\
		VEC x, a;						\
									\
		memcpy(&x, p + c, sizeof(x));				\
		memcpy(&a, ck + c, sizeof(a));				\
		x = (x << 1) | (~x >> (sizeof(T) * 8 - 1) & 1);		\
		VMAX(T, VEC, SVEC, a, x);				\
		memcpy(ck + c, &a, sizeof(a));				\
	}								\
	for (; c < n; c++) {						\
		T k = KEY(p[c]);					\
									\
		ck[c] = k > ck[c] ? k : ck[c];				\
	}								\
}									\
									\
static inline void							\
NAME##_pixel(double *px, T k)						\
{									\
	double v = (k >> 1) > (INFKEY) ? NAN :				\
		   (k & 1 ? VAL(k >> 1) : -VAL(k >> 1));		\
									\
	*px = pick(*px, v);						\
}									\
									\
/* ck[c] = max(ck[c], ck[c + d]) for c < n, in place going up: a	\
 * vector reads its own and later keys before it stores. */		\
__attribute__((target_clones("avx2", "default")))			\
static void								\
NAME##_span(T *ck, size_t n, size_t d)					\
{									\
	const size_t w = sizeof(VEC) / sizeof(T);			\
	size_t c = 0;							\
									\
	for (; c + w <= n; c += w) {					\
		VEC x, y;						\
									\
		memcpy(&x, ck + c, sizeof(x));				\
		memcpy(&y, ck + c + d, sizeof(y));			\
		VMAX(T, VEC, SVEC, x, y);				\
		memcpy(ck + c, &x, sizeof(x));				\
	}								\
	for (; c < n; c++)						\
		ck[c] = ck[c + d] > ck[c] ? ck[c + d] : ck[c];		\
}									\
									\
/* The column keys of pixel row prow into its pixels; then zero. */	\
static void								\
NAME##_flush(struct heatmap_acc *a, uint64_t prow)			\
{									\
	const struct heatmap_geom *g = &a->g;				\
	double *px = &a->pix[(size_t)prow * g->pw];			\
	T *ck = a->colkeys;						\
	size_t n = (size_t)g->cols, b = (size_t)g->bcols, d = 1, c;	\
	uint32_t j;							\
									\
	for (; 2 * d <= b; d *= 2)					\
		NAME##_span(ck, n, d);					\
	for (j = 0, c = 0; j < g->pw; j++, c += b) {			\
		T x = ck[c], y = ck[c + b - d];				\
									\
		NAME##_pixel(&px[j], x > y ? x : y);			\
	}								\
	memset(ck, 0, n * sizeof(T));					\
}									\
									\
static void								\
NAME(struct heatmap_acc *a, const T *v, size_t n)			\
{									\
	const struct heatmap_geom *g = &a->g;				\
	uint64_t r, c, prow, end;					\
	size_t i = 0;							\
									\
	if (!g->pw || !n)						\
		return;							\
	r = a->next / g->cols;						\
	c = a->next % g->cols;						\
	prow = r / g->brows;						\
	a->next += n;							\
	while (i < n && r < g->rows) {					\
		end = c + (n - i) < g->cols ? c + (n - i) : g->cols;	\
		if (r / g->brows != prow) {				\
			if (a->colkeys)					\
				NAME##_flush(a, prow);			\
			prow = r / g->brows;				\
		}							\
		if (a->colkeys) {					\
			NAME##_down((T *)a->colkeys + c, v + i,		\
				    (size_t)(end - c));			\
			i += (size_t)(end - c);				\
			c = end;					\
		}							\
		while (c < end) {	/* long rows: by blocks */	\
			uint64_t e = (c / g->bcols + 1) * g->bcols;	\
			T m = 0;					\
									\
			if (e > end)					\
				e = end;				\
			for (; c < e; c++, i++) {			\
				T k = KEY(v[i]);			\
									\
				m = k > m ? k : m;			\
			}						\
			NAME##_pixel(&a->pix[(size_t)prow * g->pw +	\
					     (size_t)((c - 1) / g->bcols)], m); \
		}							\
		if (c == g->cols) {					\
			c = 0;						\
			r++;						\
		}							\
	}								\
	/* a pixel row's keys wait for its last row (in a later call) */	\
	if (a->colkeys && (r >= g->rows || r / g->brows != prow))	\
		NAME##_flush(a, prow);					\
}

static inline double
f32_of(uint32_t k)
{
	float f;

	memcpy(&f, &k, 4);
	return f;
}

static inline double
bf16_of(uint32_t k)
{
	return f32_of(k << 16);
}

static double
f16_of(uint32_t k)
{
	return npy_f32(npy_code_f32(DTYPE_F16, k));
}

KEYS(feed_keys_f32, uint32_t, vec32, svec32, KEY32, 0x7f800000u, f32_of)
KEYS(feed_keys_bf16, uint16_t, vec16, svec16, KEY16, 0x7f80u, bf16_of)
KEYS(feed_keys_f16, uint16_t, vec16, svec16, KEY16, 0x7c00u, f16_of)

void
heatmap_feed_f32(struct heatmap_acc *a, const uint32_t *v, size_t n)
{
	feed_keys_f32(a, v, n);
}

void
heatmap_feed_bf16(struct heatmap_acc *a, const uint16_t *v, size_t n)
{
	feed_keys_bf16(a, v, n);
}

void
heatmap_feed_f16(struct heatmap_acc *a, const uint16_t *v, size_t n)
{
	feed_keys_f16(a, v, n);
}

static double
max_f64(const double *p, size_t n)
{
	double m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m = pick(m, p[i]);
	return m;
}

void
heatmap_feed_f64(struct heatmap_acc *a, const double *v, size_t n)
{
#define R64(i, len) max_f64(v + (i), (len))
	WALK(a, n, R64);
#undef R64
}

double
heatmap_scale(const struct heatmap_acc *a)
{
	size_t i, n = (size_t)a->g.ph * a->g.pw;
	double s = 0;

	for (i = 0; i < n; i++)
		if (isfinite(a->pix[i]) && fabs(a->pix[i]) > s)
			s = fabs(a->pix[i]);
	return s;
}

int
heatmap_step(double v, double s)
{
	double t;

	if (!(s > 0) || !isfinite(v))
		return 0;
	t = v / s * HEATMAP_LEVELS;
	if (t > HEATMAP_LEVELS)
		t = HEATMAP_LEVELS;
	if (t < -HEATMAP_LEVELS)
		t = -HEATMAP_LEVELS;
	return (int)lround(t);
}

/* The map's anchors from -1 to +1, linearly between them: dark blue,
 * light blue, near-white, light red, dark red. */
static const struct {
	double t;
	unsigned char r, g, b;
} anchors[] = {
	{ -1.0, 16, 48, 128 },
	{ -0.5, 96, 150, 214 },
	{ 0.0, 246, 246, 246 },
	{ 0.5, 230, 120, 92 },
	{ 1.0, 128, 12, 32 },
};

uint32_t
heatmap_step_colour(int step)
{
	double t = (double)step / HEATMAP_LEVELS, f;
	size_t k = 0;
	unsigned r, g, b;

	while (k + 2 < sizeof(anchors) / sizeof(anchors[0]) &&
	       t > anchors[k + 1].t)
		k++;
	f = (t - anchors[k].t) / (anchors[k + 1].t - anchors[k].t);
	r = (unsigned)lround(anchors[k].r + f * (anchors[k + 1].r -
						  anchors[k].r));
	g = (unsigned)lround(anchors[k].g + f * (anchors[k + 1].g -
						  anchors[k].g));
	b = (unsigned)lround(anchors[k].b + f * (anchors[k + 1].b -
						  anchors[k].b));
	return r << 16 | g << 8 | b;
}

uint32_t
heatmap_colour(double v, double s)
{
	if (isnan(v))
		return HEATMAP_NAN;
	if (isinf(v))
		return v > 0 ? HEATMAP_PINF : HEATMAP_NINF;
	return heatmap_step_colour(heatmap_step(v, s));
}
