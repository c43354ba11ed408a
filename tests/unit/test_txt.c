/* test_txt.c - the text view (src/view/txt.c): widths are the maxima of every
 * code of the small formats, texts read back to the same value, the
 * fixed-width layout, and random access to any byte range.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/safetensors/header.h"
#include "view/npy.h"
#include "view/txt.h"
#include "suites.h"

static struct tensor
mk(enum dtype d, const uint64_t *shape, uint32_t rank)
{
	struct tensor t;
	uint64_t n = 1;
	uint32_t i;

	memset(&t, 0, sizeof(t));
	t.name = "t";
	t.name_len = 1;
	t.dtype = d;
	t.rank = rank;
	t.shape = shape;
	for (i = 0; i < rank; i++)
		n *= shape[i];
	t.numel = n;
	t.end = n * dtype_info(d)->bits / 8;
	return t;
}

/* txt_format of one value given as its little-endian bytes. */
static const char *
fmt(enum dtype d, const void *bytes)
{
	static char out[TXT_WIDTH_MAX + 1];
	size_t n = txt_format(d, bytes, 0, out);

	ck_assert_uint_le(n, txt_width(d));
	out[n] = '\0';
	return out;
}

static const char *
fmt_f32(float f)
{
	return fmt(DTYPE_F32, &f);
}

static const char *
fmt_f64(double v)
{
	return fmt(DTYPE_F64, &v);
}

/* --- widths and round trips ------------------------------------------------ */

/* Every code of a float format of 16 bits or less: the text is at most
 * the width (and some code needs all of it), and strtof() gives back the
 * very float32 of the .npy view. */
static void
check_all_codes(enum dtype d)
{
	unsigned bits = dtype_info(d)->bits, c, max = 0;
	char out[TXT_WIDTH_MAX + 1];

	for (c = 0; c < 1u << bits; c++) {
		uint8_t src[3] = { (uint8_t)c, (uint8_t)(c >> 8), 0 };
		uint32_t want = npy_code_f32(d, c);
		size_t n = txt_format(d, src, 0, out);
		float got;

		out[n] = '\0';
		if (n > max)
			max = (unsigned)n;
		ck_assert_msg(n <= txt_width(d), "%s 0x%x: '%s' is wider "
			      "than %u", dtype_info(d)->name, c, out,
			      txt_width(d));
		got = strtof(out, NULL);
		if (isnan(npy_f32(want))) {
			ck_assert_str_eq(out, "nan");
			continue;
		}
		ck_assert_msg(npy_f32_bits(got) == want, "%s 0x%x: '%s' reads "
			      "back as 0x%08x, not 0x%08x", dtype_info(d)->name,
			      c, out, npy_f32_bits(got), want);
	}
	ck_assert_uint_eq(max, txt_width(d));
}

START_TEST(test_small_formats)
{
	check_all_codes(DTYPE_F4);
	check_all_codes(DTYPE_F6_E2M3);
	check_all_codes(DTYPE_F6_E3M2);
	check_all_codes(DTYPE_F8_E5M2);
	check_all_codes(DTYPE_F8_E4M3);
	check_all_codes(DTYPE_F8_E8M0);
	check_all_codes(DTYPE_F8_E4M3FNUZ);
	check_all_codes(DTYPE_F8_E5M2FNUZ);
	check_all_codes(DTYPE_BF16);
	ck_assert_str_eq(fmt(DTYPE_F4, "\x07"), "6");
	ck_assert_str_eq(fmt(DTYPE_F8_E4M3, "\x7e"), "448");
	ck_assert_str_eq(fmt(DTYPE_F8_E5M2, "\x7b"), "57344");
	ck_assert_str_eq(fmt(DTYPE_F8_E8M0, "\x7f"), "1");
	ck_assert_str_eq(fmt(DTYPE_BF16, "\x80\x3f"), "1");
	ck_assert_str_eq(fmt(DTYPE_F8_E5M2, "\xfc"), "-inf");
	ck_assert_str_eq(fmt(DTYPE_F8_E4M3, "\xff"), "nan");
}
END_TEST

/* F16 is served raw by the .npy view (<f2); its text reads back to the
 * same half when rounded to nearest, as np.loadtxt(dtype=float16) does.
 * The reference rounding is the compiler's _Float16 conversion. */
START_TEST(test_f16)
{
	unsigned c, max = 0;
	char out[TXT_WIDTH_MAX + 1];

	for (c = 0; c < 65536; c++) {
		uint8_t src[2] = { (uint8_t)c, (uint8_t)(c >> 8) };
		size_t n = txt_format(DTYPE_F16, src, 0, out);
		double v = npy_f32(npy_code_f32(DTYPE_F16, c));

		out[n] = '\0';
		if (n > max)
			max = (unsigned)n;
		if (isnan(v) || isinf(v)) {
			ck_assert_str_eq(out, isnan(v) ? "nan" :
					 v > 0 ? "inf" : "-inf");
			continue;
		}
#ifdef __FLT16_MANT_DIG__
		{
			__extension__ _Float16 h =
				__extension__ (_Float16)strtod(out, NULL);
			uint16_t hb;

			memcpy(&hb, &h, 2);
			ck_assert_msg(hb == c, "F16 0x%04x: '%s' reads back as "
				      "0x%04x", c, out, hb);
		}
#endif
		/* within half a step of binary16 (2^-25 below 2^-14) */
		ck_assert_msg(fabs(strtod(out, NULL) - v) <=
			      fmax(fabs(v) * 0x1p-11, 0x1p-25),
			      "F16 0x%04x: '%s'", c, out);
	}
	ck_assert_uint_eq(max, txt_width(DTYPE_F16));
	ck_assert_str_eq(fmt(DTYPE_F16, "\x66\x2e"), "0.1");	/* 0x2e66 */
	ck_assert_str_eq(fmt(DTYPE_F16, "\xff\x7b"), "6.55e+04");
	ck_assert_str_eq(fmt(DTYPE_F16, "\x00\x80"), "-0");
}
END_TEST

START_TEST(test_f32_f64)
{
	static const float f32s[] = {
		0.0f, -0.0f, 1.0f, 0.1f, -0.1f, 1.0f / 3, FLT_MAX, -FLT_MAX,
		FLT_MIN, -FLT_MIN, 1.17549421e-38f /* largest subnormal */,
		1.40129846e-45f, -1.40129846e-45f, 16777216.0f, 123456789.0f,
		3.14159274f, 1e10f, 1e-10f, -1.09320975e-36f,
	};
	static const double f64s[] = {
		0.0, -0.0, 1.0, 0.1, 1.0 / 3, DBL_MAX, -DBL_MAX, DBL_MIN,
		-DBL_MIN, 4.9406564584124654e-324, -2.2250738585072009e-308,
		9007199254740993.0, 1e300, -1e-300, 3.141592653589793,
	};
	unsigned i;
	uint32_t r = 12345;

	for (i = 0; i < sizeof(f32s) / sizeof(f32s[0]); i++) {
		const char *s = fmt_f32(f32s[i]);

		ck_assert_msg(npy_f32_bits(strtof(s, NULL)) ==
			      npy_f32_bits(f32s[i]), "F32 '%s'", s);
	}
	for (i = 0; i < sizeof(f64s) / sizeof(f64s[0]); i++) {
		const char *s = fmt_f64(f64s[i]);
		double back = strtod(s, NULL);

		ck_assert_msg(memcmp(&back, &f64s[i], 8) == 0, "F64 '%s'", s);
	}
	/* random bit patterns */
	for (i = 0; i < 200000; i++) {
		uint32_t b;
		uint64_t b64;
		double d;
		const char *s;

		r = r * 1103515245u + 12345u;
		b = r;
		r = r * 1103515245u + 12345u;
		b = b << 16 ^ r;
		s = fmt_f32(npy_f32(b));
		if (isnan(npy_f32(b)))
			ck_assert_str_eq(s, "nan");
		else
			ck_assert_msg(npy_f32_bits(strtof(s, NULL)) == b,
				      "F32 0x%08x '%s'", b, s);
		b64 = (uint64_t)b << 32 ^ (uint64_t)r * 2654435761u;
		memcpy(&d, &b64, 8);
		s = fmt_f64(d);
		if (isnan(d)) {
			ck_assert_str_eq(s, "nan");
		} else {
			double back = strtod(s, NULL);

			ck_assert_msg(memcmp(&back, &d, 8) == 0, "F64 '%s'",
				      s);
		}
	}
	ck_assert_str_eq(fmt_f32(0.1f), "0.1");
	ck_assert_str_eq(fmt_f32(-0.0f), "-0");
	ck_assert_str_eq(fmt_f32(-FLT_MIN), "-1.1754944e-38");
	ck_assert_str_eq(fmt_f32(-1.09320975e-36f), "-1.09320975e-36");
	ck_assert_uint_eq(strlen(fmt_f32(-1.09320975e-36f)),
			  txt_width(DTYPE_F32));
	ck_assert_str_eq(fmt_f32(INFINITY), "inf");
	ck_assert_str_eq(fmt_f32(-INFINITY), "-inf");
	ck_assert_str_eq(fmt_f32(-NAN), "nan");
	ck_assert_str_eq(fmt_f64(0.1), "0.1");
	ck_assert_str_eq(fmt_f64(-2.2250738585072014e-308),
			 "-2.2250738585072014e-308");
	ck_assert_uint_eq(strlen(fmt_f64(-2.2250738585072014e-308)),
			  txt_width(DTYPE_F64));
}
END_TEST

/* fmt_f32 builds its text from one %.8e; it must equal the plain way:
 * the first %.Pg, P = 6 .. 9, that strtof() reads back. */
static const char *
ref_f32(float f)
{
	static char out[40];
	int p;

	if (isnan(f))
		return "nan";
	for (p = 6; p < 9; p++) {
		snprintf(out, sizeof(out), "%.*g", p, (double)f);
		if (strtof(out, NULL) == f)
			return out;
	}
	snprintf(out, sizeof(out), "%.9g", (double)f);
	return out;
}

START_TEST(test_f32_like_printf)
{
	uint32_t r = 99, b, i;
	float f;

	for (i = 0; i < 300000; i++) {
		r = r * 1103515245u + 12345u;
		b = r;
		r = r * 1103515245u + 12345u;
		b = b << 16 ^ r >> 8;
		f = npy_f32(b);
		ck_assert_msg(strcmp(fmt_f32(f), ref_f32(f)) == 0,
			      "0x%08x: '%s', printf '%s'", b, fmt_f32(f),
			      ref_f32(f));
	}
	/* every bf16 value, small integers, powers of ten and of two */
	for (i = 0; i < 65536; i++) {
		f = npy_f32(i << 16);
		ck_assert_msg(strcmp(fmt_f32(f), ref_f32(f)) == 0,
			      "0x%08x: '%s', printf '%s'", i << 16, fmt_f32(f),
			      ref_f32(f));
	}
	for (i = 0; i < 100000; i++) {
		f = (float)i;
		ck_assert_str_eq(fmt_f32(f), ref_f32(f));
		f = (float)i / 1000.0f;
		ck_assert_str_eq(fmt_f32(f), ref_f32(f));
	}
	for (i = 0; i < 80; i++) {
		f = powf(10.0f, (float)i - 45.0f);
		ck_assert_str_eq(fmt_f32(f), ref_f32(f));
		f = ldexpf(1.0f, (int)i * 3 - 149);
		ck_assert_str_eq(fmt_f32(f), ref_f32(f));
		f = nextafterf(ldexpf(1.0f, (int)i * 3 - 120), INFINITY);
		ck_assert_str_eq(fmt_f32(f), ref_f32(f));
	}
	ck_assert_str_eq(fmt_f32(9.9999999e9f), ref_f32(9.9999999e9f));
	ck_assert_str_eq(fmt_f32(999999.94f), ref_f32(999999.94f));
	ck_assert_str_eq(fmt_f32(0.0001f), "0.0001");
	ck_assert_str_eq(fmt_f32(0.00001f), "1e-05");
	ck_assert_str_eq(fmt_f32(123456.0f), "123456");
	ck_assert_str_eq(fmt_f32(1234567.0f), "1234567");
	ck_assert_str_eq(fmt_f32(1e7f), "1e+07");
	ck_assert_str_eq(fmt_f32(FLT_MAX), "3.4028235e+38");
}
END_TEST

START_TEST(test_ints_bool_c64)
{
	int8_t i8 = INT8_MIN;
	int16_t i16 = INT16_MIN;
	int32_t i32 = INT32_MIN;
	int64_t i64 = INT64_MIN;
	uint8_t u8 = UINT8_MAX;
	uint16_t u16 = UINT16_MAX;
	uint32_t u32 = UINT32_MAX;
	uint64_t u64 = UINT64_MAX;
	float c[2];

	/* the extremes take the whole width */
	ck_assert_str_eq(fmt(DTYPE_I8, &i8), "-128");
	ck_assert_str_eq(fmt(DTYPE_I16, &i16), "-32768");
	ck_assert_str_eq(fmt(DTYPE_I32, &i32), "-2147483648");
	ck_assert_str_eq(fmt(DTYPE_I64, &i64), "-9223372036854775808");
	ck_assert_str_eq(fmt(DTYPE_U8, &u8), "255");
	ck_assert_str_eq(fmt(DTYPE_U16, &u16), "65535");
	ck_assert_str_eq(fmt(DTYPE_U32, &u32), "4294967295");
	ck_assert_str_eq(fmt(DTYPE_U64, &u64), "18446744073709551615");
	ck_assert_uint_eq(txt_width(DTYPE_I8), 4);
	ck_assert_uint_eq(txt_width(DTYPE_I16), 6);
	ck_assert_uint_eq(txt_width(DTYPE_I32), 11);
	ck_assert_uint_eq(txt_width(DTYPE_I64), 20);
	ck_assert_uint_eq(txt_width(DTYPE_U8), 3);
	ck_assert_uint_eq(txt_width(DTYPE_U16), 5);
	ck_assert_uint_eq(txt_width(DTYPE_U32), 10);
	ck_assert_uint_eq(txt_width(DTYPE_U64), 20);
	ck_assert_str_eq(fmt(DTYPE_BOOL, "\x00"), "0");
	ck_assert_str_eq(fmt(DTYPE_BOOL, "\x01"), "1");
	ck_assert_str_eq(fmt(DTYPE_BOOL, "\x02"), "1");
	c[0] = 1.5f;
	c[1] = -2.0f;
	ck_assert_str_eq(fmt(DTYPE_C64, c), "1.5-2j");
	c[1] = 0.0f;
	ck_assert_str_eq(fmt(DTYPE_C64, c), "1.5+0j");
	c[0] = NAN;
	c[1] = -NAN;
	ck_assert_str_eq(fmt(DTYPE_C64, c), "nan+nanj");
	c[0] = -INFINITY;
	c[1] = -INFINITY;
	ck_assert_str_eq(fmt(DTYPE_C64, c), "-inf-infj");
	c[0] = -1.09320975e-36f;
	c[1] = -1.09320975e-36f;
	ck_assert_str_eq(fmt(DTYPE_C64, c), "-1.09320975e-36-1.09320975e-36j");
	ck_assert_uint_eq(strlen(fmt(DTYPE_C64, c)), txt_width(DTYPE_C64));
	ck_assert_uint_eq(txt_width(DTYPE_C64), TXT_WIDTH_MAX);
}
END_TEST

/* --- layout --------------------------------------------------------------- */

static char *
render_all(const struct tensor *t, const uint8_t *src, size_t *n)
{
	size_t size = (size_t)txt_size(t);
	char *out = malloc(size + 1);

	ck_assert_ptr_nonnull(out);
	*n = txt_render(t, src, 0, size + 10, out);
	out[*n] = '\0';
	return out;
}

START_TEST(test_layout)
{
	static const uint64_t s23[] = { 2, 3 }, s0[] = { 3, 0 }, s4[] = { 4 };
	static const int8_t i8[] = { 1, -2, 3, -128, 0, 127 };
	static const uint8_t f4[] = { 0x21, 0xf7 };
	struct tensor t;
	size_t n;
	char *s;
	float f = 2.5f;

	t = mk(DTYPE_I8, s23, 2);
	ck_assert_uint_eq(txt_size(&t), 6 * 5);
	s = render_all(&t, (const uint8_t *)i8, &n);
	ck_assert_str_eq(s, "   1   -2    3\n-128    0  127\n");
	free(s);

	/* a scalar is one line */
	t = mk(DTYPE_F32, NULL, 0);
	s = render_all(&t, (const uint8_t *)&f, &n);
	ck_assert_str_eq(s, "            2.5\n");
	free(s);

	/* F4, element 0 in the low nibble */
	t = mk(DTYPE_F4, s4, 1);
	s = render_all(&t, f4, &n);
	ck_assert_str_eq(s, " 0.5    1    6   -6\n");
	free(s);

	/* no elements: an empty file */
	t = mk(DTYPE_F32, s0, 2);
	ck_assert_uint_eq(txt_size(&t), 0);
	ck_assert_uint_eq(txt_render(&t, NULL, 0, 100, NULL), 0);
}
END_TEST

/* Every window of the text, rendered from only the source bytes
 * txt_src_range() names (in a buffer of exactly that size), equals the
 * same slice of the whole text. */
static void
check_windows(enum dtype d, const uint64_t *shape, uint32_t rank)
{
	struct tensor t = mk(d, shape, rank);
	uint64_t size = txt_size(&t), off, len, soff, slen, i;
	uint8_t *src = malloc(t.end ? t.end : 1);
	char *full, *out;
	size_t n;

	ck_assert_ptr_nonnull(src);
	for (i = 0; i < t.end; i++)
		src[i] = (uint8_t)(i * 101 + 7);
	if (d == DTYPE_BOOL)
		for (i = 0; i < t.end; i++)
			src[i] &= 1;
	full = render_all(&t, src, &n);
	ck_assert_uint_eq(n, size);
	/* rows end with '\n', elements are width + 1 apart */
	for (i = 0; i < t.numel; i++) {
		uint64_t row = rank ? shape[rank - 1] : 1;
		char sep = full[(i + 1) * (txt_width(d) + 1) - 1];

		ck_assert_int_eq(sep, (i + 1) % row ? ' ' : '\n');
	}
	out = malloc(size + 8);
	ck_assert_ptr_nonnull(out);
	for (off = 0; off <= size + 1; off++) {
		for (len = 0; len <= size + 2 - off; len++) {
			uint8_t *part;

			txt_src_range(&t, off, len, &soff, &slen);
			if (off >= size || len == 0) {
				ck_assert_uint_eq(slen, 0);
				continue;
			}
			ck_assert_uint_le(soff + slen, t.end);
			part = malloc(slen);
			ck_assert_ptr_nonnull(part);
			memcpy(part, src + soff, slen);
			n = txt_render(&t, part, off, len, out);
			free(part);
			ck_assert_uint_eq(n, len < size - off ? len : size - off);
			ck_assert_msg(memcmp(out, full + off, n) == 0,
				      "%s off %llu len %llu",
				      dtype_info(d)->name,
				      (unsigned long long)off,
				      (unsigned long long)len);
		}
	}
	free(out);
	free(full);
	free(src);
}

START_TEST(test_random_access)
{
	static const uint64_t s2x4[] = { 2, 4 }, s3[] = { 3 }, s2x2[] = { 2, 2 },
		s1x8[] = { 1, 8 }, s3x1[] = { 3, 1 };

	check_windows(DTYPE_F4, s2x4, 2);
	check_windows(DTYPE_F6_E2M3, s1x8, 2);
	check_windows(DTYPE_F6_E3M2, s2x4, 2);
	check_windows(DTYPE_F8_E4M3, s3, 1);
	check_windows(DTYPE_BF16, s2x2, 2);
	check_windows(DTYPE_F16, s3x1, 2);
	check_windows(DTYPE_F32, s2x2, 2);
	check_windows(DTYPE_F64, s3, 1);
	check_windows(DTYPE_C64, s3, 1);
	check_windows(DTYPE_I64, s2x2, 2);
	check_windows(DTYPE_U16, s3, 1);
	check_windows(DTYPE_BOOL, s2x4, 2);
	check_windows(DTYPE_I32, NULL, 0);
}
END_TEST

/* A big tensor: a read near the end touches only the elements there. */
START_TEST(test_offset_is_o1)
{
	static const uint64_t shape[] = { 1000000, 1000 };
	struct tensor t = mk(DTYPE_F32, shape, 2);
	uint64_t size = txt_size(&t), soff, slen;
	float tail[2] = { 1.25f, -3.0f };
	char out[40];
	size_t n;

	ck_assert_uint_eq(size, 1000000000ull * 16);
	txt_src_range(&t, size - 20, 100, &soff, &slen);
	ck_assert_uint_eq(soff, (1000000000ull - 2) * 4);
	ck_assert_uint_eq(slen, 8);
	n = txt_render(&t, (const uint8_t *)tail, size - 20, 100, out);
	ck_assert_uint_eq(n, 20);
	ck_assert(memcmp(out, ".25 " "             -3\n", 20) == 0);
}
END_TEST

Suite *
txt_suite(void)
{
	Suite *s = suite_create("txt");
	TCase *tc = tcase_create("txt");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_small_formats);
	tcase_add_test(tc, test_f16);
	tcase_add_test(tc, test_f32_f64);
	tcase_add_test(tc, test_f32_like_printf);
	tcase_add_test(tc, test_ints_bool_c64);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_random_access);
	tcase_add_test(tc, test_offset_is_o1);
	suite_add_tcase(s, tc);
	return s;
}
