/* test_png.c - the rules of the .png/ pictures apart from drawing
 * (src/view/heatmap.c, value_hist.c, png_file.c) and the bounded memo
 * that keeps them (src/base/memo.c): the blocks of each pixel, the value
 * a pixel shows (largest magnitude, sign kept, NaN first), the fast paths
 * over codes equal to the float64 one, colours symmetric with NaN/Inf
 * apart, the histogram's bins, a PNG's size fixed before its pixels, the
 * least recently read pictures dropped. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/buf.h"
#include "base/memo.h"
#include "view/heatmap.h"
#include "view/html_page.h"
#include "view/npy.h"
#include "view/png_file.h"
#include "view/value_hist.h"
#include "suites.h"

START_TEST(geometry)
{
	uint64_t big[] = { 4096, 14336 }, strip[] = { 1025 }, cube[] = { 3, 4, 5 };
	uint64_t empty[] = { 0, 5 }, small[] = { 4, 4 }, wide[] = { 3, 1000 };
	struct heatmap_geom g;

	heatmap_geom(big, 2, 0, 1024, &g);
	ck_assert_uint_eq(g.rows, 4096);
	ck_assert_uint_eq(g.cols, 14336);
	ck_assert_uint_eq(g.brows, 4);
	ck_assert_uint_eq(g.bcols, 14);
	ck_assert_uint_eq(g.ph, 1024);
	ck_assert_uint_eq(g.pw, 1024);
	ck_assert_uint_eq(g.cx, 1);
	ck_assert_uint_eq(g.cy, 1);
	ck_assert_int_eq(g.merged, 0);

	heatmap_geom(strip, 1, 0, 1024, &g);	/* blocks of 2: 513 pixels */
	ck_assert_uint_eq(g.rows, 1);
	ck_assert_uint_eq(g.bcols, 2);
	ck_assert_uint_eq(g.pw, 513);
	ck_assert_int_eq(g.strip, 1);
	ck_assert_uint_eq(g.cy, HEATMAP_STRIP);

	heatmap_geom(cube, 3, 0, 1024, &g);	/* rows 3 x 4 merged */
	ck_assert_uint_eq(g.rows, 12);
	ck_assert_uint_eq(g.cols, 5);
	ck_assert_int_eq(g.merged, 1);
	ck_assert_uint_eq(g.cy, HEATMAP_MAGNIFY / 12);
	ck_assert_uint_eq(g.cx, HEATMAP_MAGNIFY / 5);

	heatmap_geom(cube, 3, 1, 1024, &g);	/* C64: two values each */
	ck_assert_uint_eq(g.cols, 10);

	heatmap_geom(empty, 2, 0, 1024, &g);
	ck_assert_uint_eq(g.ph, 0);
	ck_assert_uint_eq(g.pw, 0);

	heatmap_geom(small, 2, 0, 1024, &g);
	ck_assert_uint_eq(g.cx, 64);
	ck_assert_uint_eq(g.cy, 64);
	heatmap_geom(small, 2, 0, 100, &g);	/* never past px */
	ck_assert_uint_le(g.cx * g.pw, 100);

	heatmap_geom(wide, 2, 0, 64, &g);	/* px clamped to 16..8192 */
	ck_assert_uint_eq(g.pw, 63);
	ck_assert_uint_eq(g.bcols, 16);
	heatmap_geom(wide, 2, 0, 1, &g);
	ck_assert_uint_le(g.pw, HEATMAP_PX_MIN);
}
END_TEST

START_TEST(pick)
{
	ck_assert(heatmap_pick(0, -3) == -3);
	ck_assert(heatmap_pick(-3, 3) == 3);	/* a tie: the positive */
	ck_assert(heatmap_pick(3, -3) == 3);
	ck_assert(heatmap_pick(2, -3) == -3);
	ck_assert(isnan(heatmap_pick(5, NAN)));
	ck_assert(isnan(heatmap_pick(NAN, INFINITY)));	/* NaN first */
	ck_assert(heatmap_pick(1e300, -INFINITY) == -INFINITY);
	ck_assert(heatmap_pick(-INFINITY, INFINITY) == INFINITY);
}
END_TEST

/* A deterministic generator of codes with a few NaNs, infinities,
 * zeros of both signs and outliers. */
static uint64_t rng = 88172645463325252ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t
f32_code(void)
{
	uint64_t r = next();
	float f;
	uint32_t b;

	switch (r % 64) {
	case 0:
		return 0x7fc00000u;
	case 1:
		return 0xff800000u;
	case 2:
		return 0x7f800000u;
	case 3:
		return 0x80000000u;
	default:
		f = (float)((double)(int64_t)(r >> 11) / 9e15);
		memcpy(&b, &f, 4);
		return b;
	}
}

/* Feed the same values through a fast path and the float64 one, in
 * chunks of odd sizes; the pixels must be equal. */
static void
compare(const uint64_t *shape, uint32_t rank, unsigned px, int kind)
{
	struct heatmap_geom g;
	struct heatmap_acc fast, slow;
	uint64_t n = 1, i, at;
	uint32_t *c32;
	uint16_t *c16;
	double *v;
	size_t k;

	for (k = 0; k < rank; k++)
		n *= shape[k];
	heatmap_geom(shape, rank, 0, px, &g);
	ck_assert_int_eq(heatmap_init(&fast, &g), 0);
	ck_assert_int_eq(heatmap_init(&slow, &g), 0);
	c32 = malloc(n * 4 + 4);
	c16 = malloc(n * 2 + 2);
	v = malloc(n * 8 + 8);
	for (i = 0; i < n; i++) {
		c32[i] = f32_code();
		c16[i] = (uint16_t)(kind == 1 ? c32[i] >> 16 : next());
		if (kind == 0)
			v[i] = npy_f32(c32[i]);
		else if (kind == 1)
			v[i] = npy_f32((uint32_t)c16[i] << 16);
		else
			v[i] = npy_f32(npy_code_f32(DTYPE_F16, c16[i]));
	}
	for (at = 0; at < n; at += k) {
		k = (size_t)(next() % 5000 + 1);
		if (k > n - at)
			k = (size_t)(n - at);
		if (kind == 0)
			heatmap_feed_f32(&fast, c32 + at, k);
		else if (kind == 1)
			heatmap_feed_bf16(&fast, c16 + at, k);
		else
			heatmap_feed_f16(&fast, c16 + at, k);
		heatmap_feed_f64(&slow, v + at, k);
	}
	for (i = 0; i < (uint64_t)g.ph * g.pw; i++) {
		double a = fast.pix[i], b = slow.pix[i];

		ck_assert_msg((isnan(a) && isnan(b)) || a == b,
			      "pixel %llu: %g != %g", (unsigned long long)i, a, b);
		ck_assert(signbit(a) == signbit(b) || isnan(a));
	}
	free(c32);
	free(c16);
	free(v);
	heatmap_drop(&fast);
	heatmap_drop(&slow);
}

START_TEST(fast_paths)
{
	uint64_t a[] = { 37, 1000 }, b[] = { 300, 7 }, c[] = { 5, 6, 7 };
	uint64_t strip[] = { 100000 }, longrow[] = { 2, 1100000 };
	/* blocks across of 14 (the reduction's two halves overlap), 3, 98
	 * and 7, the last block of each shorter */
	uint64_t d[] = { 9, 14330 }, e[] = { 11, 3001 }, f[] = { 3, 100000 };
	uint64_t h[] = { 33, 699 };
	int kind;

	for (kind = 0; kind < 3; kind++) {
		compare(d, 2, 1024, kind);
		compare(e, 2, 1024, kind);
		compare(f, 2, 1024, kind);
		compare(h, 2, 100, kind);
		compare(a, 2, 64, kind);
		compare(a, 2, 1024, kind);
		compare(b, 2, 16, kind);
		compare(c, 3, 1024, kind);
		compare(strip, 1, 1024, kind);
	}
	/* rows past COLS_MAX: by blocks (one macro for the three) */
	compare(longrow, 2, 1024, 1);
}
END_TEST

/* An outlier is never averaged away: it is its pixel's value. */
START_TEST(outlier)
{
	uint64_t shape[] = { 512, 2048 };
	struct heatmap_geom g;
	struct heatmap_acc a;
	double *v = calloc(512 * 2048, sizeof(double));
	uint32_t j;

	for (j = 0; j < 512 * 2048; j++)
		v[j] = 0.01 * sin(j);
	v[100 * 2048 + 777] = -9;
	heatmap_geom(shape, 2, 0, 256, &g);
	ck_assert_int_eq(heatmap_init(&a, &g), 0);
	heatmap_feed_f64(&a, v, 512 * 2048);
	ck_assert(a.pix[(100 / 2) * g.pw + 777 / 8] == -9);
	ck_assert(heatmap_scale(&a) == 9);
	ck_assert_uint_eq(heatmap_colour(-9, 9),
			  heatmap_step_colour(-HEATMAP_LEVELS));
	heatmap_drop(&a);
	free(v);
}
END_TEST

/* Big scratch memory: zeroed, writable to its last byte, on a 2 MiB
 * boundary from 1 MiB on (a huge page backs only an aligned 2 MiB). */
START_TEST(bigmem)
{
	size_t lens[] = { 1, 4095, 4096, (1u << 20) - 1, 1u << 20,
			  5 * 1000 * 1000 + 7, 8u << 20 };
	size_t i, j;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *p = bigmem_alloc(lens[i]);

		ck_assert_ptr_nonnull(p);
		for (j = 0; j < lens[i]; j += 4093)
			ck_assert_uint_eq(p[j], 0);
		ck_assert_uint_eq(p[lens[i] - 1], 0);
		memset(p, 0xa5, lens[i]);
		if (lens[i] >= 1u << 20)
			ck_assert_uint_eq((uintptr_t)p % (2u << 20), 0);
		bigmem_free(p, lens[i]);
	}
	bigmem_free(NULL, 10);
	ck_assert_ptr_null(bigmem_alloc(0));
	ck_assert_ptr_null(bigmem_alloc(SIZE_MAX - 10));
}
END_TEST

START_TEST(colours)
{
	int k, j;

	ck_assert_int_eq(heatmap_step(0.5, 1), 64);	/* 63.5 rounds up */
	ck_assert_int_eq(heatmap_step(-0.5, 1), -64);
	ck_assert_int_eq(heatmap_step(1, 1), HEATMAP_LEVELS);
	ck_assert_int_eq(heatmap_step(-2, 1), -HEATMAP_LEVELS);
	ck_assert_int_eq(heatmap_step(3, 0), 0);	/* constant zero */
	for (k = -HEATMAP_LEVELS; k <= HEATMAP_LEVELS; k++) {
		uint32_t c = heatmap_step_colour(k);

		ck_assert_uint_ne(c, HEATMAP_NAN);
		ck_assert_uint_ne(c, HEATMAP_PINF);
		ck_assert_uint_ne(c, HEATMAP_NINF);
		/* blue below zero, red above */
		if (k < 0)
			ck_assert_uint_gt(c & 255, c >> 16);
		if (k > 0)
			ck_assert_uint_gt(c >> 16, c & 255);
		for (j = k + 1; j <= HEATMAP_LEVELS; j++)
			ck_assert_uint_ne(c, heatmap_step_colour(j));
	}
	ck_assert_uint_eq(heatmap_colour(NAN, 1), HEATMAP_NAN);
	ck_assert_uint_eq(heatmap_colour(INFINITY, 1), HEATMAP_PINF);
	ck_assert_uint_eq(heatmap_colour(-INFINITY, 1), HEATMAP_NINF);
	ck_assert_uint_ne(HEATMAP_NAN, HEATMAP_PINF);
	ck_assert_uint_ne(HEATMAP_NAN, HEATMAP_NINF);
	ck_assert_uint_ne(HEATMAP_PINF, HEATMAP_NINF);
}
END_TEST

START_TEST(hist_bins)
{
	struct value_hist h;

	value_hist_init(&h, -1, 1);
	ck_assert_int_eq(value_hist_bin(&h, -1), 0);
	ck_assert_int_eq(value_hist_bin(&h, 1), VALUE_HIST_BINS - 1);
	ck_assert_int_eq(value_hist_bin(&h, 0), VALUE_HIST_BINS / 2);
	ck_assert_int_eq(value_hist_bin(&h, -0.99), 0);
	ck_assert_int_eq(value_hist_bin(&h, -0.98), 1);
	ck_assert_int_eq(value_hist_bin(&h, NAN), -1);
	ck_assert_int_eq(value_hist_bin(&h, 2), -1);
	value_hist_init(&h, 3, 3);	/* one value: numpy's range */
	ck_assert(h.lo == 2.5 && h.hi == 3.5);
	ck_assert_int_eq(value_hist_bin(&h, 3), VALUE_HIST_BINS / 2);
	value_hist_init(&h, -1.7e308, 1.7e308);	/* hi - lo overflows */
	ck_assert_int_eq(value_hist_bin(&h, 0), VALUE_HIST_BINS / 2);
	ck_assert_int_eq(value_hist_bin(&h, 1.7e308), VALUE_HIST_BINS - 1);
	value_hist_add(&h, 0, 5);
	ck_assert_uint_eq(h.n[VALUE_HIST_BINS / 2], 5);
}
END_TEST

/* The size is fixed before the pixels: exactly it, for many sizes and
 * any pixels (noise compresses worst, but level 0 does not compress). */
START_TEST(png_size_fixed)
{
	struct png_text t[2] = {
		{ "Title", "a name \xc3\xa9", 40, 1 },
		{ "stfs:scale", "1.5", 24, 0 },
	};
	unsigned dims[][2] = { { 1, 1 }, { 3, 2 }, { 640, 420 },
			       { 1044, 1076 }, { 5000, 7 }, { 7, 3000 },
			       { 1500, 1100 } };
	size_t k, i;

	for (k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
		unsigned w = dims[k][0], h = dims[k][1];
		size_t stride = 4 * (size_t)w;
		unsigned char *px = malloc(stride * h);
		struct buf out = BUF_INIT;

		for (i = 0; i < stride * h; i++)
			px[i] = (unsigned char)next();
		ck_assert_int_eq(png_file_write(px, w, h, stride, t, 2, &out),
				 0);
		ck_assert_uint_eq(out.len, png_file_size(w, h, t, 2));
		ck_assert(memcmp(out.data, "\x89PNG\r\n\x1a\n", 8) == 0);
		/* IEND last, the padding chunk before it */
		ck_assert(memcmp(out.data + out.len - 8, "IEND", 4) == 0);
		buf_free(&out);
		free(px);
	}
	/* a text longer than its max is refused, not written past */
	t[1].text = "a text longer than the twenty-four bytes promised";
	{
		unsigned char px[4] = { 0 };
		struct buf out = BUF_INIT;

		ck_assert_int_lt(png_file_write(px, 1, 1, 4, t, 2, &out), 0);
		ck_assert_uint_eq(out.len, 0);
		buf_free(&out);
	}
}
END_TEST

static int computed;

static int
big_value(void *arg, size_t i, struct buf *out, const struct memo_job *job)
{
	char b[1000];

	(void)arg;
	(void)job;
	computed++;
	memset(b, 'a' + (int)i, sizeof(b));
	return buf_add(out, b, sizeof(b)) ? -1 : 0;
}

/* Values past the budget drop the least recently read; a window of a
 * value is its bytes. */
START_TEST(memo_bounded)
{
	struct memo *m = memo_new_bounded(4, 2500);
	struct buf b = BUF_INIT;

	ck_assert_ptr_nonnull(m);
	computed = 0;
	ck_assert_int_eq(memo_get_part(m, 0, big_value, NULL, 10, 5, &b), 0);
	ck_assert_uint_eq(b.len, 5);
	ck_assert(memcmp(b.data, "aaaaa", 5) == 0);
	b.len = 0;
	ck_assert_int_eq(memo_get_part(m, 1, big_value, NULL, 998, 100, &b),
			 0);
	ck_assert_uint_eq(b.len, 2);		/* clamped to the end */
	b.len = 0;
	ck_assert_int_eq(memo_get_part(m, 0, big_value, NULL, 1000, 1, &b), 0);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(computed, 2);
	/* 0 was read last: the third value drops 1 */
	ck_assert_int_eq(memo_get(m, 2, big_value, NULL, &b), 0);
	ck_assert_int_eq(computed, 3);
	b.len = 0;
	ck_assert_int_eq(memo_get(m, 0, big_value, NULL, &b), 0);
	ck_assert_int_eq(computed, 3);
	ck_assert_int_eq(memo_get(m, 1, big_value, NULL, &b), 0);
	ck_assert_int_eq(computed, 4);
	buf_free(&b);
	memo_free(m);
}
END_TEST

/* The page's data: names that could end a <script> are escaped, and the
 * paths are written only when the page cannot make them from the name. */
START_TEST(page_data)
{
	static const uint64_t shape[] = { 2, 3 };
	struct html_page_tensor t = { "a</script>&\"\\\n", 14, "F32", shape, 2,
				      24, 6, NULL, NULL, 0, 0, 600, 400, 1 };
	struct buf b = BUF_INIT;

	ck_assert_int_eq(html_page_json_string(&b, t.name, t.name_len), 0);
	ck_assert_str_eq(b.data, "\"a\\u003c/script\\u003e\\u0026\\\"\\\\"
			 "\\u000a\"");
	b.len = 0;
	t.name = "m.l.w";
	t.name_len = 5;
	t.heat = "m.l.w.png";
	t.heat_len = 9;
	t.hist = "m.l.w.hist.png";
	t.hist_len = 14;
	ck_assert_int_eq(html_page_tensor(&b, &t, 1), 0);
	ck_assert_str_eq(b.data, "[\"m.l.w\",\"F32\",[2,3],24,6,0,0,600,400,1]");
	b.len = 0;
	t.heat = "m/l/w.png";
	t.hist = "m/l/w.hist.png";
	ck_assert_int_eq(html_page_tensor(&b, &t, 0), 0);
	ck_assert_str_eq(b.data, ",\n[\"m.l.w\",\"F32\",[2,3],24,6,1,0,600,400,1]");
	b.len = 0;
	t.hist = "m/l/w%2Ehist.hist.png";	/* not the rule: both written */
	t.hist_len = strlen(t.hist);
	ck_assert_int_eq(html_page_tensor(&b, &t, 1), 0);
	ck_assert_str_eq(b.data, "[\"m.l.w\",\"F32\",[2,3],24,6,\"m/l/w.png\","
			 "\"m/l/w%2Ehist.hist.png\",600,400,1]");
	buf_free(&b);
}
END_TEST

Suite *
png_suite(void)
{
	Suite *s = suite_create("png");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, geometry);
	tcase_add_test(tc, pick);
	tcase_add_test(tc, fast_paths);
	tcase_add_test(tc, outlier);
	tcase_add_test(tc, bigmem);
	tcase_add_test(tc, colours);
	tcase_add_test(tc, hist_bins);
	tcase_add_test(tc, png_size_fixed);
	tcase_add_test(tc, memo_bounded);
	tcase_add_test(tc, page_data);
	suite_add_tcase(s, tc);
	return s;
}
