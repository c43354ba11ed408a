/* test_npy.c - the .npy view (src/view/npy.c): the float decoders against
 * hand-computed encodings, the sub-byte packing, NPY 1.0/2.0 headers (as
 * numpy 1.24's np.save writes them) and random access to decoded data.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "format/safetensors/header.h"
#include "view/npy.h"
#include "view/element_window.h"
#include "suites.h"

/* A tensor built by hand (no parsing involved). */
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
	t.begin = 0;
	t.end = n * dtype_info(d)->bits / 8;
	return t;
}

/* --- decoders ------------------------------------------------------------- */

struct ref {
	enum dtype d;
	unsigned code;
	double want;		/* ignored when bits is set */
	uint32_t bits;		/* exact float32 bits expected, or 0 */
};

#define QNAN 0x7fc00000u
#define NQNAN 0xffc00000u

/* Every value below is worked out by hand from the format definitions
 * (sign, exponent with its bias, mantissa), not by the code under test. */
static const struct ref refs[] = {
	/* F8_E4M3 (fn): bias 7, no inf, S.1111.111 NaN */
	{ DTYPE_F8_E4M3, 0x00, 0.0, 0 },
	{ DTYPE_F8_E4M3, 0x80, 0, 0x80000000u },	/* -0 */
	{ DTYPE_F8_E4M3, 0x01, 0.001953125, 0 },	/* 2^-9 */
	{ DTYPE_F8_E4M3, 0x07, 0.013671875, 0 },	/* 7 * 2^-9 */
	{ DTYPE_F8_E4M3, 0x08, 0.015625, 0 },		/* 2^-6 */
	{ DTYPE_F8_E4M3, 0x38, 1.0, 0 },
	{ DTYPE_F8_E4M3, 0x3c, 1.5, 0 },
	{ DTYPE_F8_E4M3, 0x40, 2.0, 0 },
	{ DTYPE_F8_E4M3, 0x78, 256.0, 0 },		/* e=15 is a number */
	{ DTYPE_F8_E4M3, 0x7e, 448.0, 0 },
	{ DTYPE_F8_E4M3, 0xfe, -448.0, 0 },
	{ DTYPE_F8_E4M3, 0xb8, -1.0, 0 },
	{ DTYPE_F8_E4M3, 0x7f, 0, QNAN },
	{ DTYPE_F8_E4M3, 0xff, 0, NQNAN },
	/* F8_E5M2: bias 15, IEEE inf/NaN */
	{ DTYPE_F8_E5M2, 0x3c, 1.0, 0 },
	{ DTYPE_F8_E5M2, 0x3e, 1.5, 0 },
	{ DTYPE_F8_E5M2, 0x7b, 57344.0, 0 },
	{ DTYPE_F8_E5M2, 0xfb, -57344.0, 0 },
	{ DTYPE_F8_E5M2, 0x01, 1.52587890625e-05, 0 },	/* 2^-16 */
	{ DTYPE_F8_E5M2, 0x03, 4.57763671875e-05, 0 },	/* 3 * 2^-16 */
	{ DTYPE_F8_E5M2, 0x04, 6.103515625e-05, 0 },	/* 2^-14 */
	{ DTYPE_F8_E5M2, 0x7c, 0, 0x7f800000u },
	{ DTYPE_F8_E5M2, 0xfc, 0, 0xff800000u },
	{ DTYPE_F8_E5M2, 0x7d, 0, QNAN },
	{ DTYPE_F8_E5M2, 0x7f, 0, QNAN },
	{ DTYPE_F8_E5M2, 0xfe, 0, NQNAN },
	{ DTYPE_F8_E5M2, 0x80, 0, 0x80000000u },
	/* F8_E8M0 (fnu): 2^(x-127), 0xFF NaN */
	{ DTYPE_F8_E8M0, 0x7f, 1.0, 0 },
	{ DTYPE_F8_E8M0, 0x80, 2.0, 0 },
	{ DTYPE_F8_E8M0, 0x7e, 0.5, 0 },
	{ DTYPE_F8_E8M0, 0x00, 0, 0x00400000u },	/* 2^-127, subnormal */
	{ DTYPE_F8_E8M0, 0x01, 0, 0x00800000u },	/* 2^-126 */
	{ DTYPE_F8_E8M0, 0xfe, 0, 0x7f000000u },	/* 2^127 */
	{ DTYPE_F8_E8M0, 0xff, 0, QNAN },
	/* F8_E4M3FNUZ: bias 8, 0x80 the only NaN */
	{ DTYPE_F8_E4M3FNUZ, 0x40, 1.0, 0 },
	{ DTYPE_F8_E4M3FNUZ, 0x7f, 240.0, 0 },
	{ DTYPE_F8_E4M3FNUZ, 0xff, -240.0, 0 },
	{ DTYPE_F8_E4M3FNUZ, 0x01, 0.0009765625, 0 },	/* 2^-10 */
	{ DTYPE_F8_E4M3FNUZ, 0x08, 0.0078125, 0 },	/* 2^-7 */
	{ DTYPE_F8_E4M3FNUZ, 0x00, 0, 0x00000000u },
	{ DTYPE_F8_E4M3FNUZ, 0x80, 0, QNAN },
	/* F8_E5M2FNUZ: bias 16, 0x80 the only NaN */
	{ DTYPE_F8_E5M2FNUZ, 0x40, 1.0, 0 },
	{ DTYPE_F8_E5M2FNUZ, 0x7f, 57344.0, 0 },
	{ DTYPE_F8_E5M2FNUZ, 0x7c, 32768.0, 0 },	/* no inf */
	{ DTYPE_F8_E5M2FNUZ, 0x01, 7.62939453125e-06, 0 },	/* 2^-17 */
	{ DTYPE_F8_E5M2FNUZ, 0x04, 3.0517578125e-05, 0 },	/* 2^-15 */
	{ DTYPE_F8_E5M2FNUZ, 0x80, 0, QNAN },
	{ DTYPE_F8_E5M2FNUZ, 0xc0, -1.0, 0 },
	/* BF16: the upper half of a float32, bits kept */
	{ DTYPE_BF16, 0x3f80, 1.0, 0 },
	{ DTYPE_BF16, 0xc000, -2.0, 0 },
	{ DTYPE_BF16, 0x3dcd, 0.10009765625, 0 },
	{ DTYPE_BF16, 0x7f80, 0, 0x7f800000u },
	{ DTYPE_BF16, 0x7fc1, 0, 0x7fc10000u },
	{ DTYPE_BF16, 0x7f81, 0, 0x7f810000u },		/* signalling kept */
	{ DTYPE_BF16, 0x0001, 0, 0x00010000u },
	{ DTYPE_BF16, 0x8000, 0, 0x80000000u },
	/* F16 (text view only) */
	{ DTYPE_F16, 0x3c00, 1.0, 0 },
	{ DTYPE_F16, 0x7bff, 65504.0, 0 },
	{ DTYPE_F16, 0x0001, 5.9604644775390625e-08, 0 },	/* 2^-24 */
	{ DTYPE_F16, 0x03ff, 6.097555160522461e-05, 0 },	/* 1023 * 2^-24 */
	{ DTYPE_F16, 0x0400, 6.103515625e-05, 0 },
	{ DTYPE_F16, 0x3555, 0.333251953125, 0 },
	{ DTYPE_F16, 0xc100, -2.5, 0 },
	{ DTYPE_F16, 0x7c00, 0, 0x7f800000u },
	{ DTYPE_F16, 0xfc00, 0, 0xff800000u },
	{ DTYPE_F16, 0x7e00, 0, QNAN },
	{ DTYPE_F16, 0x8000, 0, 0x80000000u },
	/* F4 E2M1: bias 1, 0 .5 1 1.5 2 3 4 6 */
	{ DTYPE_F4, 0x0, 0.0, 0 },
	{ DTYPE_F4, 0x1, 0.5, 0 },
	{ DTYPE_F4, 0x2, 1.0, 0 },
	{ DTYPE_F4, 0x3, 1.5, 0 },
	{ DTYPE_F4, 0x4, 2.0, 0 },
	{ DTYPE_F4, 0x5, 3.0, 0 },
	{ DTYPE_F4, 0x6, 4.0, 0 },
	{ DTYPE_F4, 0x7, 6.0, 0 },
	{ DTYPE_F4, 0x8, 0, 0x80000000u },
	{ DTYPE_F4, 0xa, -1.0, 0 },
	{ DTYPE_F4, 0xf, -6.0, 0 },
	/* F6_E2M3: bias 1, largest 7.5 */
	{ DTYPE_F6_E2M3, 0x01, 0.125, 0 },
	{ DTYPE_F6_E2M3, 0x07, 0.875, 0 },
	{ DTYPE_F6_E2M3, 0x08, 1.0, 0 },
	{ DTYPE_F6_E2M3, 0x0c, 1.5, 0 },
	{ DTYPE_F6_E2M3, 0x10, 2.0, 0 },
	{ DTYPE_F6_E2M3, 0x1f, 7.5, 0 },
	{ DTYPE_F6_E2M3, 0x3f, -7.5, 0 },
	{ DTYPE_F6_E2M3, 0x20, 0, 0x80000000u },
	/* F6_E3M2: bias 3, largest 28 */
	{ DTYPE_F6_E3M2, 0x01, 0.0625, 0 },
	{ DTYPE_F6_E3M2, 0x03, 0.1875, 0 },
	{ DTYPE_F6_E3M2, 0x04, 0.25, 0 },
	{ DTYPE_F6_E3M2, 0x0c, 1.0, 0 },
	{ DTYPE_F6_E3M2, 0x1f, 28.0, 0 },
	{ DTYPE_F6_E3M2, 0x3f, -28.0, 0 },
	{ DTYPE_F6_E3M2, 0x3c, -16.0, 0 },
};

START_TEST(test_decode_refs)
{
	size_t i;

	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		const struct ref *r = &refs[i];
		uint32_t got = npy_code_f32(r->d, r->code);

		if (r->bits || r->want == 0.0) {
			ck_assert_msg(got == r->bits, "%s 0x%x: 0x%08x, want "
				      "0x%08x", dtype_info(r->d)->name, r->code,
				      got, r->bits);
		} else {
			ck_assert_msg((double)npy_f32(got) == r->want,
				      "%s 0x%x: %.17g, want %.17g",
				      dtype_info(r->d)->name, r->code,
				      (double)npy_f32(got), r->want);
		}
	}
}
END_TEST

/* Every code of a format: monotone over the non-negative codes (the bit
 * patterns of a sign-magnitude float sort like its values), negatives
 * mirror positives, NaN exactly where the format puts it. */
static void
check_format(enum dtype d, unsigned ncodes, int (*is_nan)(unsigned))
{
	unsigned half = ncodes / 2, c;
	double prev = -1.0;

	for (c = 0; c < ncodes; c++) {
		float f = npy_f32(npy_code_f32(d, c));

		ck_assert_msg(!!isnan(f) == !!is_nan(c), "%s 0x%x: NaN %d",
			      dtype_info(d)->name, c, !!isnan(f));
		if (isnan(f))
			continue;
		if (c < half) {
			ck_assert_msg((double)f > prev || (c == 0 && f == 0),
				      "%s 0x%x not increasing",
				      dtype_info(d)->name, c);
			prev = f;
		} else {
			float pos = npy_f32(npy_code_f32(d, c - half));

			if (!isnan(pos))
				ck_assert_msg(f == -pos && signbit(f),
					      "%s 0x%x is not -(0x%x)",
					      dtype_info(d)->name, c, c - half);
		}
	}
}

static int nan_none(unsigned c) { (void)c; return 0; }
static int nan_e4m3(unsigned c) { return (c & 0x7f) == 0x7f; }
static int nan_e5m2(unsigned c) { return (c & 0x7f) > 0x7c; }
static int nan_fnuz(unsigned c) { return c == 0x80; }
static int nan_e8m0(unsigned c) { return c == 0xff; }
static int nan_f16(unsigned c) { return (c & 0x7fff) > 0x7c00; }
static int nan_bf16(unsigned c) { return (c & 0x7fff) > 0x7f80; }

START_TEST(test_decode_all_codes)
{
	unsigned c;
	double prev = 0;

	check_format(DTYPE_F4, 16, nan_none);
	check_format(DTYPE_F6_E2M3, 64, nan_none);
	check_format(DTYPE_F6_E3M2, 64, nan_none);
	check_format(DTYPE_F8_E4M3, 256, nan_e4m3);
	check_format(DTYPE_F8_E5M2, 256, nan_e5m2);
	check_format(DTYPE_F8_E4M3FNUZ, 256, nan_fnuz);
	check_format(DTYPE_F8_E5M2FNUZ, 256, nan_fnuz);
	check_format(DTYPE_F16, 65536, nan_f16);
	check_format(DTYPE_BF16, 65536, nan_bf16);
	/* E8M0 is unsigned: powers of two, each twice the previous */
	for (c = 0; c < 255; c++) {
		double v = npy_f32(npy_code_f32(DTYPE_F8_E8M0, c));

		ck_assert(v == ldexp(1.0, (int)c - 127));
		ck_assert(c == 0 || v == 2 * prev);
		prev = v;
		ck_assert(!nan_e8m0(c));
	}
	ck_assert(isnan(npy_f32(npy_code_f32(DTYPE_F8_E8M0, 255))));
	/* exact against F16's own definition: (-1)^s 2^(e-15) (1 + m/1024) */
	for (c = 0; c < 0x7c00; c++) {
		unsigned e = c >> 10, m = c & 0x3ff;
		double want = e ? ldexp(1.0 + m / 1024.0, (int)e - 15) :
				  ldexp(m, -24);

		ck_assert((double)npy_f32(npy_code_f32(DTYPE_F16, c)) == want);
	}
	/* wider dtypes are not decoded */
	ck_assert_uint_eq(npy_code_f32(DTYPE_F32, 0x3f80), 0);
}
END_TEST

START_TEST(test_packing)
{
	/* F4: element 0 in the low nibble (torch.float4_e2m1fn_x2) */
	static const uint8_t f4[] = { 0x21, 0xf7 };
	/* F6: elements 1, 2, 3, 63 in a little-endian 24-bit group, element
	 * 0 in the low 6 bits: 1 | 2 << 6 | 3 << 12 | 63 << 18 = 0xFC3081 */
	static const uint8_t f6[] = { 0x81, 0x30, 0xfc, 0x3f, 0x00, 0x00 };
	uint64_t first, off, len;

	ck_assert_uint_eq(npy_code(DTYPE_F4, f4, 0), 0x1);
	ck_assert_uint_eq(npy_code(DTYPE_F4, f4, 1), 0x2);
	ck_assert_uint_eq(npy_code(DTYPE_F4, f4, 2), 0x7);
	ck_assert_uint_eq(npy_code(DTYPE_F4, f4, 3), 0xf);
	ck_assert_uint_eq(npy_code(DTYPE_F6_E2M3, f6, 0), 1);
	ck_assert_uint_eq(npy_code(DTYPE_F6_E2M3, f6, 1), 2);
	ck_assert_uint_eq(npy_code(DTYPE_F6_E2M3, f6, 2), 3);
	ck_assert_uint_eq(npy_code(DTYPE_F6_E2M3, f6, 3), 63);
	ck_assert_uint_eq(npy_code(DTYPE_F6_E3M2, f6, 4), 63);
	ck_assert_uint_eq(npy_code(DTYPE_F6_E3M2, f6, 5), 0);
	ck_assert_uint_eq(npy_code(DTYPE_BF16, (const uint8_t *)"\x80\x3f", 0),
			  0x3f80);

	/* element ranges -> byte ranges, starting at a whole group */
	npy_elem_bytes(DTYPE_F4, 3, 6, &first, &off, &len);
	ck_assert_uint_eq(first, 2);
	ck_assert_uint_eq(off, 1);
	ck_assert_uint_eq(len, 2);
	npy_elem_bytes(DTYPE_F6_E2M3, 5, 9, &first, &off, &len);
	ck_assert_uint_eq(first, 4);
	ck_assert_uint_eq(off, 3);
	ck_assert_uint_eq(len, 6);
	npy_elem_bytes(DTYPE_F6_E2M3, 4, 8, &first, &off, &len);
	ck_assert_uint_eq(off, 3);
	ck_assert_uint_eq(len, 3);
	npy_elem_bytes(DTYPE_C64, 2, 5, &first, &off, &len);
	ck_assert_uint_eq(first, 2);
	ck_assert_uint_eq(off, 16);
	ck_assert_uint_eq(len, 24);
}
END_TEST

/* --- headers -------------------------------------------------------------- */

/* The header np.save() of numpy 1.24 writes: prefix, the dict, 21 minus
 * the digits of shape[0] growth spaces, padding to 64, '\n'.  Checked
 * against np.save output when this test was written. */
static void
expect_header(enum dtype d, const uint64_t *shape, uint32_t rank,
	      const char *dict, size_t total)
{
	struct tensor t = mk(d, shape, rank);
	struct buf b = BUF_INIT;
	char *want = malloc(total);

	ck_assert_ptr_nonnull(want);
	memset(want, ' ', total);
	memcpy(want, "\x93NUMPY\x01\x00", 8);
	want[8] = (char)((total - 10) & 0xff);
	want[9] = (char)((total - 10) >> 8);
	memcpy(want + 10, dict, strlen(dict));
	want[total - 1] = '\n';
	ck_assert_int_eq(npy_header(&t, &b), 0);
	ck_assert_uint_eq(b.len, total);
	ck_assert_uint_eq(npy_header_size(&t), total);
	ck_assert_msg(memcmp(b.data, want, total) == 0, "header %.*s",
		      (int)b.len - 10, b.data + 10);
	buf_free(&b);
	free(want);
}

START_TEST(test_header_v1)
{
	static const uint64_t s23[] = { 2, 3 }, s5[] = { 5 },
		s1234[] = { 1, 2, 3, 4 },
		sbig[] = { 0, UINT64_MAX }, sbig2[] = { UINT64_MAX, 0 };

	/* np.save(f, np.zeros((2, 3), '<f4')): 118 = 0x76 after the prefix */
	expect_header(DTYPE_F32, s23, 2, "{'descr': '<f4', 'fortran_order': "
		      "False, 'shape': (2, 3), }", 128);
	expect_header(DTYPE_BOOL, NULL, 0, "{'descr': '|b1', 'fortran_order': "
		      "False, 'shape': (), }", 128);
	expect_header(DTYPE_C64, s5, 1, "{'descr': '<c8', 'fortran_order': "
		      "False, 'shape': (5,), }", 128);
	expect_header(DTYPE_F64, s1234, 4, "{'descr': '<f8', 'fortran_order': "
		      "False, 'shape': (1, 2, 3, 4), }", 128);
	expect_header(DTYPE_U8, sbig, 2, "{'descr': '|u1', 'fortran_order': "
		      "False, 'shape': (0, 18446744073709551615), }", 128);
	/* 20 digits in shape[0]: 1 growth space; still 128 */
	expect_header(DTYPE_U16, sbig2, 2, "{'descr': '<u2', 'fortran_order': "
		      "False, 'shape': (18446744073709551615, 0), }", 128);
	/* decoded dtypes say <f4 */
	expect_header(DTYPE_BF16, s23, 2, "{'descr': '<f4', 'fortran_order': "
		      "False, 'shape': (2, 3), }", 128);
	expect_header(DTYPE_F4, s5, 1, "{'descr': '<f4', 'fortran_order': "
		      "False, 'shape': (5,), }", 128);
	expect_header(DTYPE_I64, s5, 1, "{'descr': '<i8', 'fortran_order': "
		      "False, 'shape': (5,), }", 128);
}
END_TEST

/* A header read the way numpy reads one: version, length, dict, '\n'. */
static void
parse_header(const struct buf *b, int *major, uint64_t *hlen)
{
	ck_assert(b->len >= 12);
	ck_assert(memcmp(b->data, "\x93NUMPY", 6) == 0);
	*major = b->data[6];
	ck_assert_int_eq(b->data[7], 0);
	if (*major == 1)
		*hlen = (uint8_t)b->data[8] | (uint64_t)(uint8_t)b->data[9] << 8;
	else
		*hlen = (uint8_t)b->data[8] |
			(uint64_t)(uint8_t)b->data[9] << 8 |
			(uint64_t)(uint8_t)b->data[10] << 16 |
			(uint64_t)(uint8_t)b->data[11] << 24;
	ck_assert_uint_eq((*major == 1 ? 10 : 12) + *hlen, b->len);
	ck_assert_uint_eq(b->len % NPY_ALIGN, 0);
	ck_assert_int_eq(b->data[b->len - 1], '\n');
	ck_assert_int_eq(b->data[b->len - 2], ' ');
	ck_assert_int_eq(b->data[(*major == 1 ? 10 : 12)], '{');
}

START_TEST(test_header_v2)
{
	uint64_t *shape = malloc(30000 * sizeof(*shape));
	uint32_t rank, switched = 0;
	struct buf b = BUF_INIT;
	int major, last = 1;
	uint64_t hlen;

	ck_assert_ptr_nonnull(shape);
	for (rank = 0; rank < 30000; rank++)
		shape[rank] = 1;
	/* "1, " per dim: 1.0 up to about 21800 dims, then 2.0; find the
	 * switch and check both sides of it. */
	for (rank = 21700; rank < 22000; rank++) {
		struct tensor t = mk(DTYPE_F32, shape, rank);

		b.len = 0;
		ck_assert_int_eq(npy_header(&t, &b), 0);
		ck_assert_uint_eq(b.len, npy_header_size(&t));
		parse_header(&b, &major, &hlen);
		if (major == 1)
			ck_assert_uint_le(hlen, NPY_V1_MAX);
		else
			ck_assert_uint_gt(b.len - 10, NPY_V1_MAX - 64);
		ck_assert_int_ge(major, last);
		if (major != last)
			switched = rank;
		last = major;
	}
	ck_assert_uint_gt(switched, 21700);
	ck_assert_int_eq(last, 2);
	{
		struct tensor t = mk(DTYPE_F32, shape, 30000);

		b.len = 0;
		ck_assert_int_eq(npy_header(&t, &b), 0);
		parse_header(&b, &major, &hlen);
		ck_assert_int_eq(major, 2);
		ck_assert_uint_eq(npy_size(&t), b.len + 4);
	}
	buf_free(&b);
	free(shape);
}
END_TEST

START_TEST(test_sizes)
{
	static const uint64_t s6[] = { 6 }, s4x2[] = { 4, 2 }, s0[] = { 0, 7 };
	struct tensor t;

	t = mk(DTYPE_F32, s6, 1);
	ck_assert(npy_is_raw(DTYPE_F32));
	ck_assert_uint_eq(npy_data_size(&t), 24);
	ck_assert_uint_eq(npy_size(&t), 128 + 24);
	t = mk(DTYPE_F4, s6, 1);
	ck_assert(!npy_is_raw(DTYPE_F4));
	ck_assert_uint_eq(t.end, 3);
	ck_assert_uint_eq(npy_data_size(&t), 24);
	t = mk(DTYPE_F6_E3M2, s4x2, 2);
	ck_assert_uint_eq(npy_data_size(&t), 32);
	t = mk(DTYPE_BF16, s0, 2);
	ck_assert_uint_eq(npy_data_size(&t), 0);
	ck_assert_uint_eq(npy_size(&t), 128);
	ck_assert_str_eq(npy_descr(DTYPE_BOOL), "|b1");
	ck_assert_str_eq(npy_descr(DTYPE_C64), "<c8");
	ck_assert_str_eq(npy_descr(DTYPE_F8_E8M0), "<f4");
	ck_assert(!npy_is_raw(DTYPE_BF16));
	ck_assert(npy_is_raw(DTYPE_BOOL) && npy_is_raw(DTYPE_C64) &&
		  npy_is_raw(DTYPE_F16));
}
END_TEST

/* --- random access --------------------------------------------------------- */

/* Every window [off, off + len) of the decoded data, decoded from only
 * the source bytes npy_src_range() names (copied to a buffer of exactly
 * that size, so a read outside it shows under ASan/valgrind), equals the
 * same slice of the whole decoded data. */
static void
check_windows(enum dtype d, uint64_t numel)
{
	uint64_t shape[1] = { numel };
	struct tensor t = mk(d, shape, 1);
	uint64_t size = npy_data_size(&t), off, len, soff, slen;
	uint8_t *src = malloc(t.end), *full = malloc(size), *out;
	uint64_t i;

	ck_assert(src && full);
	for (i = 0; i < t.end; i++)
		src[i] = (uint8_t)(i * 37 + 11);
	/* the whole data, element by element, straight from the tables */
	for (i = 0; i < numel; i++) {
		uint32_t v = npy_code_f32(d, npy_code(d, src, i));

		memcpy(full + 4 * i, &v, 4);	/* little-endian host */
	}
	out = malloc(size + 8);
	ck_assert_ptr_nonnull(out);
	for (off = 0; off <= size + 1; off++) {
		for (len = 0; len <= size + 2 - off; len++) {
			uint8_t *part;
			size_t n;

			npy_src_range(&t, off, len, &soff, &slen);
			if (off >= size || len == 0) {
				ck_assert_uint_eq(slen, 0);
				ck_assert_uint_eq(npy_decode(&t, src, off, len,
							     out), 0);
				continue;
			}
			ck_assert_uint_le(soff + slen, t.end);
			part = malloc(slen);
			ck_assert_ptr_nonnull(part);
			memcpy(part, src + soff, slen);
			n = npy_decode(&t, part, off, len, out);
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
	check_windows(DTYPE_F4, 10);
	check_windows(DTYPE_F6_E2M3, 12);
	check_windows(DTYPE_F6_E3M2, 8);
	check_windows(DTYPE_F8_E4M3, 7);
	check_windows(DTYPE_F8_E8M0, 5);
	check_windows(DTYPE_BF16, 6);
	/* raw dtypes are served from the source, not decoded */
	{
		uint64_t shape[1] = { 4 }, soff, slen;
		struct tensor t = mk(DTYPE_F32, shape, 1);

		npy_src_range(&t, 0, 16, &soff, &slen);
		ck_assert_uint_eq(slen, 0);
	}
}
END_TEST

/* The window helper shared by the .npy and .txt views (element_window.h). */
START_TEST(test_window_clamp)
{
	uint64_t e0 = 77, e1 = 77;

	/* 3 elements of 4 bytes: [0, 12) */
	ck_assert_uint_eq(element_window_clamp(3, 4, 0, 12, &e0, &e1), 12);
	ck_assert_uint_eq(e0, 0);
	ck_assert_uint_eq(e1, 3);
	ck_assert_uint_eq(element_window_clamp(3, 4, 5, 2, &e0, &e1), 2);
	ck_assert_uint_eq(e0, 1);	/* bytes 5, 6: inside element 1 */
	ck_assert_uint_eq(e1, 2);
	ck_assert_uint_eq(element_window_clamp(3, 4, 7, 2, &e0, &e1), 2);
	ck_assert_uint_eq(e0, 1);	/* bytes 7, 8 straddle 1 and 2 */
	ck_assert_uint_eq(e1, 3);
	ck_assert_uint_eq(element_window_clamp(3, 4, 10, 100, &e0, &e1), 2);
	ck_assert_uint_eq(e0, 2);
	ck_assert_uint_eq(e1, 3);
	/* empty windows leave e0, e1 alone */
	e0 = e1 = 77;
	ck_assert_uint_eq(element_window_clamp(3, 4, 12, 1, &e0, &e1), 0);
	ck_assert_uint_eq(element_window_clamp(3, 4, 13, 1, &e0, &e1), 0);
	ck_assert_uint_eq(element_window_clamp(3, 4, 0, 0, &e0, &e1), 0);
	ck_assert_uint_eq(element_window_clamp(0, 4, 0, 8, &e0, &e1), 0);
	ck_assert_uint_eq(e0, 77);
	ck_assert_uint_eq(e1, 77);
	/* a text stride (width 15 + 1), far into a huge tensor: O(1) */
	ck_assert_uint_eq(element_window_clamp(1ull << 40, 16, (1ull << 44) - 20,
				       100, &e0, &e1), 20);
	ck_assert_uint_eq(e0, (1ull << 40) - 2);
	ck_assert_uint_eq(e1, 1ull << 40);
}
END_TEST

Suite *
npy_suite(void)
{
	Suite *s = suite_create("npy");
	TCase *tc = tcase_create("npy");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_decode_refs);
	tcase_add_test(tc, test_decode_all_codes);
	tcase_add_test(tc, test_packing);
	tcase_add_test(tc, test_header_v1);
	tcase_add_test(tc, test_header_v2);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_random_access);
	tcase_add_test(tc, test_window_clamp);
	suite_add_tcase(s, tc);
	return s;
}
