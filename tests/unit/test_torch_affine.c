/* test_torch_affine.c - PyTorch's quantized tensors dequantized
 * (src/format/quant/torch_affine.h).  The expected values are exact by
 * hand (scales that are powers of two), or the float32 bits torch 1.13's
 * Tensor.dequantize() gives for the case (noted beside each: these are the
 * cases where computing in another precision gives another last bit).
 * tests/integration/test_ckpt.py compares whole tensors torch.save wrote
 * with Tensor.dequantize().
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "format/quant/torch_affine.h"
#include "suites.h"

static uint32_t
bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

static void
put64(uint8_t *p, uint64_t x)
{
	for (unsigned k = 0; k < 8; k++)
		p[k] = (uint8_t)(x >> (8 * k));
}

static void
put32(uint8_t *p, uint32_t x)
{
	for (unsigned k = 0; k < 4; k++)
		p[k] = (uint8_t)(x >> (8 * k));
}

static void
putd(uint8_t *p, double d)
{
	uint64_t b;

	memcpy(&b, &d, 8);
	put64(p, b);
}

static void
putf(uint8_t *p, float f)
{
	put32(p, bits(f));
}

/* per_tensor_affine quint8: exact values, and the product in float32 */
START_TEST(test_per_tensor)
{
	struct torch_affine p = { .qdtype = DTYPE_U8, .scale = 0.5,
				  .zero_point = 3 };
	const uint8_t q[] = { 0, 3, 255, 12 };
	float out[4];

	torch_affine_range(&p, q, NULL, NULL, 0, 4, out);
	ck_assert(out[0] == -1.5f && out[1] == 0.0f && out[2] == 126.0f &&
		  out[3] == 4.5f);
	/* qint8, scale 0.1, q 9: float32(0.1) * 9 in float32 is 0x3f666667
	 * (torch's); in float64, rounded, it would be 0x3f666666 */
	p.qdtype = DTYPE_I8;
	p.scale = 0.1;
	p.zero_point = -3;
	{
		const uint8_t q8[] = { 6, (uint8_t)-128 };

		torch_affine_range(&p, q8, NULL, NULL, 7, 9, out);
		ck_assert_uint_eq(bits(out[0]), 0x3f666667);
		ck_assert(out[1] == (float)0.1 * -125.0f);
	}
}
END_TEST

/* qint32: q - zero_point in 32-bit integers, wrapping as torch's does */
START_TEST(test_qint32_wraps)
{
	struct torch_affine p = { .qdtype = DTYPE_I32, .scale = 1.0,
				  .zero_point = -1 };
	uint8_t q[8];
	float out[2];

	put32(q, INT32_MAX);
	put32(q + 4, (uint32_t)INT32_MIN);
	torch_affine_range(&p, q, NULL, NULL, 0, 2, out);
	/* 2^31 - 1 + 1 wraps to -2^31; -2^31 + 1 rounds to -2^31 */
	ck_assert(out[0] == -2147483648.0f);
	ck_assert(out[1] == -2147483648.0f);
}
END_TEST

START_TEST(test_zero_points)
{
	struct torch_affine p = { .qdtype = DTYPE_I8, .per_channel = 1,
				  .zdtype = DTYPE_I64 };
	uint8_t z[24];

	ck_assert_str_eq(torch_affine_dtype_name(DTYPE_U8), "torch.quint8");
	ck_assert(torch_affine_dtype_name(DTYPE_F32) == NULL);
	ck_assert(torch_affine_zero_point_fits(DTYPE_I8, -128));
	ck_assert(!torch_affine_zero_point_fits(DTYPE_I8, 128));
	ck_assert(torch_affine_zero_point_fits(DTYPE_U8, 255));
	ck_assert(!torch_affine_zero_point_fits(DTYPE_U8, -1));
	ck_assert(torch_affine_zero_point_fits(DTYPE_I32, INT32_MIN));
	ck_assert(!torch_affine_zero_point_fits(DTYPE_I32,
						(int64_t)INT32_MAX + 1));
	ck_assert(!torch_affine_zero_point_fits(DTYPE_F32, 0));
	put64(z, 0);
	put64(z + 8, 127);
	put64(z + 16, 128);
	ck_assert_uint_eq(torch_affine_bad_zero_point(&p, z, 3), 2);
	ck_assert_uint_eq(torch_affine_bad_zero_point(&p, z, 2), 2);
	put64(z, (uint64_t)-129);
	ck_assert_uint_eq(torch_affine_bad_zero_point(&p, z, 2), 0);
	p.zdtype = DTYPE_F32;	/* float qparams: any zero point */
	ck_assert_uint_eq(torch_affine_bad_zero_point(&p, z, 3), 3);
}
END_TEST

/* The channels a window spans: along axis 0 of [4, 3] (inner 3), and
 * along axis 1 (inner 1), where a window past the last channel goes on
 * from channel 0. */
START_TEST(test_channels)
{
	struct torch_affine p = { .per_channel = 1, .channels = 4,
				  .inner = 3 };
	uint64_t c0, n;

	torch_affine_channels(&p, 4, 12, &c0, &n);
	ck_assert_uint_eq(c0, 1);
	ck_assert_uint_eq(n, 3);
	torch_affine_channels(&p, 0, 12, &c0, &n);
	ck_assert_uint_eq(c0, 0);
	ck_assert_uint_eq(n, 4);
	p.channels = 3;
	p.inner = 1;
	torch_affine_channels(&p, 2, 7, &c0, &n);
	ck_assert_uint_eq(c0, 2);
	ck_assert_uint_eq(n, 3);
	torch_affine_channels(&p, 4, 5, &c0, &n);
	ck_assert_uint_eq(c0, 1);
	ck_assert_uint_eq(n, 1);
}
END_TEST

/* per_channel_affine qint8 along axis 1 of [4, 3], F64 scales and I64
 * zero points, a window from element 2 on: channels 2, 0, 1 in that
 * order. */
START_TEST(test_per_channel)
{
	struct torch_affine p = { .qdtype = DTYPE_I8, .per_channel = 1,
				  .axis = 1, .channels = 3, .inner = 1,
				  .sdtype = DTYPE_F64, .zdtype = DTYPE_I64 };
	const double sc[3] = { 0.5, 0.25, 2.0 };
	const int64_t zp[3] = { 1, -2, 0 };
	/* elements 2..6: (0, 2), (1, 0), (1, 1), (1, 2), (2, 0) */
	const int8_t q[5] = { 3, 5, -2, 100, -128 };
	const float want[5] = { 6.0f, 2.0f, 0.0f, 200.0f, -64.5f };
	uint8_t s[24], z[24];
	uint64_t c0, n, k;
	float out[5];

	torch_affine_channels(&p, 2, 7, &c0, &n);
	for (k = 0; k < n; k++) {
		putd(s + 8 * k, sc[(c0 + k) % 3]);
		put64(z + 8 * k, (uint64_t)zp[(c0 + k) % 3]);
	}
	torch_affine_range(&p, (const uint8_t *)q, s, z, 2, 7, out);
	for (k = 0; k < 5; k++)
		ck_assert_msg(out[k] == want[k], "element %u: %g, not %g",
			      (unsigned)k + 2, out[k], want[k]);
}
END_TEST

/* The product in float64: scale 0.1, q -124 gives 0xc1466666 (torch's);
 * float32 arithmetic would give 0xc1466667.  F32 scales are widened. */
START_TEST(test_per_channel_f64)
{
	struct torch_affine p = { .qdtype = DTYPE_I8, .per_channel = 1,
				  .channels = 1, .inner = 2,
				  .sdtype = DTYPE_F64, .zdtype = DTYPE_I64 };
	const int8_t q[2] = { -124, 10 };
	uint8_t s[8], z[8];
	float out[2];

	putd(s, 0.1);
	put64(z, 0);
	torch_affine_range(&p, (const uint8_t *)q, s, z, 0, 2, out);
	ck_assert_uint_eq(bits(out[0]), 0xc1466666);
	ck_assert(out[1] == (float)(10 * 0.1));
	p.sdtype = DTYPE_F32;
	putf(s, 0.1f);
	torch_affine_range(&p, (const uint8_t *)q, s, z, 0, 2, out);
	ck_assert(out[0] == (float)(-124 * (double)0.1f));
}
END_TEST

/* per_channel_affine_float_qparams: F32 zero points, all in float32
 * (torch: (0 - 0.5) * 0.1 0xbd4ccccd, (7 - 0.5) * 0.1 0x3f266667,
 * (200 - 0.5) * 0.1 0x419f999a) */
START_TEST(test_float_qparams)
{
	struct torch_affine p = { .qdtype = DTYPE_U8, .per_channel = 1,
				  .channels = 1, .inner = 3,
				  .sdtype = DTYPE_F32, .zdtype = DTYPE_F32 };
	const uint8_t q[3] = { 0, 7, 200 };
	uint8_t s[8], z[4];
	float out[3];

	putf(s, 0.1f);
	putf(z, 0.5f);
	torch_affine_range(&p, q, s, z, 0, 3, out);
	ck_assert_uint_eq(bits(out[0]), 0xbd4ccccd);
	ck_assert_uint_eq(bits(out[1]), 0x3f266667);
	ck_assert_uint_eq(bits(out[2]), 0x419f999a);
	/* F64 scales are rounded to float32 first, as torch keeps them */
	p.sdtype = DTYPE_F64;
	putd(s, 0.1);
	torch_affine_range(&p, q, s, z, 0, 3, out);
	ck_assert_uint_eq(bits(out[1]), 0x3f266667);
}
END_TEST

Suite *
torch_affine_suite(void)
{
	Suite *s = suite_create("torch_affine");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_per_tensor);
	tcase_add_test(tc, test_qint32_wraps);
	tcase_add_test(tc, test_zero_points);
	tcase_add_test(tc, test_channels);
	tcase_add_test(tc, test_per_channel);
	tcase_add_test(tc, test_per_channel_f64);
	tcase_add_test(tc, test_float_qparams);
	suite_add_tcase(s, tc);
	return s;
}
