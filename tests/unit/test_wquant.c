/* test_wquant.c - the decoders of quantized weights stored as several
 * tensors (src/format/quant/): half-precision rounding, FP8 with scale
 * grids, transformers' MXFP4, GPTQ and AWQ integers, bitsandbytes' 4-bit
 * blocks.  Every expected value here is worked out by hand or by a
 * packer written from the scheme's description (little-endian bit
 * streams, AutoAWQ's order, NVFP4's low nibble first);
 * tests/integration/test_quant.py compares
 * whole tensors with numpy and torch references.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/minifloat.h"
#include "format/quant/bnb4.h"
#include "format/quant/fp8_scaled.h"
#include "format/quant/int_packed.h"
#include "format/quant/mxfp4_hf.h"
#include "format/quant/nvfp4_st.h"
#include "format/quant/qscalar.h"
#include "suites.h"

static uint32_t
bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

static float
flt(uint32_t b)
{
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* --- rounding ------------------------------------------------------------ */

/* Every finite F16 value is kept; the midpoint of two neighbours goes to
 * the even code, a hair above it to the upper one. */
START_TEST(test_round_f16)
{
	unsigned c;

	for (c = 0; c < 0x7c00; c++) {
		float x = minifloat_f16((uint16_t)c), y, mid, r;

		ck_assert_uint_eq(bits(qscalar_round_f16(x)), bits(x));
		ck_assert_uint_eq(bits(qscalar_round_f16(-x)), bits(-x));
		if (c + 1 >= 0x7c00)
			continue;
		y = minifloat_f16((uint16_t)(c + 1));
		mid = (float)(((double)x + (double)y) / 2);
		r = qscalar_round_f16(mid);
		ck_assert_msg(bits(r) == bits(c % 2 ? y : x),
			      "tie after code %#x", c);
		ck_assert_uint_eq(bits(qscalar_round_f16(nextafterf(mid, INFINITY))),
				  bits(y));
		ck_assert_uint_eq(bits(qscalar_round_f16(nextafterf(mid, 0))),
				  bits(x));
	}
	ck_assert(isinf(qscalar_round_f16(65520.0f)));
	ck_assert_float_eq(qscalar_round_f16(nextafterf(65520.0f, 0)), 65504.0f);
	ck_assert(isinf(qscalar_round_f16(-1e30f)) &&
		  qscalar_round_f16(-1e30f) < 0);
	ck_assert(isnan(qscalar_round_f16(NAN)));
	ck_assert_uint_eq(bits(qscalar_round_f16(-0.0f)), 0x80000000u);
	/* below F16's smallest subnormal half: zero; above: 2^-24 */
	ck_assert_uint_eq(bits(qscalar_round_f16(0x1p-25f)), 0);
	ck_assert_float_eq(qscalar_round_f16(nextafterf(0x1p-25f, 1)),
			   0x1p-24f);
}
END_TEST

START_TEST(test_round_bf16)
{
	uint32_t c;

	for (c = 0; c < 0x7f80; c++) {
		float x = flt(c << 16), y = flt((c + 1) << 16);
		float mid = (float)(((double)x + (double)y) / 2);

		ck_assert_uint_eq(bits(qscalar_round_bf16(x)), bits(x));
		if (c + 1 == 0x7f80)
			break;
		ck_assert_uint_eq(bits(qscalar_round_bf16(mid)),
				  bits(c % 2 ? y : x));
		ck_assert_uint_eq(bits(qscalar_round_bf16(nextafterf(mid,
					INFINITY))), bits(y));
	}
	/* past the largest finite value: infinity */
	ck_assert(isinf(qscalar_round_bf16(flt(0x7f7fffffu))));
	ck_assert(isnan(qscalar_round_bf16(NAN)));
	ck_assert_float_eq(qscalar_round(DTYPE_F32, 1.1f), 1.1f);
}
END_TEST

START_TEST(test_scale_load)
{
	uint8_t p[4];

	put16(p, 0x3c00);
	ck_assert_float_eq(qscalar_load(DTYPE_F16, p), 1.0f);
	put16(p, 0x3f81);
	ck_assert_float_eq(qscalar_load(DTYPE_BF16, p), 1.0078125f);
	put32(p, bits(-2.5f));
	ck_assert_float_eq(qscalar_load(DTYPE_F32, p), -2.5f);
	ck_assert(qscalar_is_scale(DTYPE_BF16) && !qscalar_is_scale(DTYPE_I32));
}
END_TEST

/* --- FP8 with scales ------------------------------------------------------- */

/* 3 x 5 E4M3 weight, 2 x 2 blocks (grid 2 x 3, cut at the edges). */
START_TEST(test_fp8_blocks)
{
	/* E4M3: 0x38 = 1, 0x40 = 2, 0xb8 = -1, 0x01 = 2^-9, 0x39 = 1.125 */
	static const uint8_t w[15] = {
		0x38, 0x40, 0xb8, 0x01, 0x39,
		0x40, 0x38, 0x01, 0xb8, 0x38,
		0xb8, 0x39, 0x38, 0x40, 0x01,
	};
	static const float val[5] = { 1, 2, -1, 0x1p-9f, 1.125f };
	static const uint8_t code_of[256] = { [0x38] = 0, [0x40] = 1,
		[0xb8] = 2, [0x01] = 3, [0x39] = 4 };
	const float scale[6] = { 1, 2, 4, 8, 16, 32 };
	struct fp8_scaled p = { DTYPE_F8_E4M3, DTYPE_F32, 3, 5, 2, 2, 0 };
	uint8_t s[24];
	float out[15];
	int r, c, k;

	for (r = 0; r < 6; r++)
		put32(s + 4 * r, bits(scale[r]));
	ck_assert_uint_eq(fp8_scaled_grid_rows(&p), 2);
	ck_assert_uint_eq(fp8_scaled_grid_cols(&p), 3);
	fp8_scaled_range(&p, w, s, 0, 15, out);
	for (r = 0; r < 3; r++)
		for (c = 0; c < 5; c++)
			ck_assert_float_eq(out[r * 5 + c],
					   val[code_of[w[r * 5 + c]]] *
					   scale[(r / 2) * 3 + c / 2]);
	/* row 2 alone: the scale rows start at grid row 1 */
	fp8_scaled_range(&p, w + 10, s + 12, 10, 15, out);
	ck_assert_float_eq(out[0], -1 * 8.0f);
	ck_assert_float_eq(out[4], 0x1p-9f * 32);
	/* a range that starts and ends inside rows: elements 3..11 */
	fp8_scaled_range(&p, w + 3, s, 3, 12, out);
	for (k = 3; k < 12; k++)
		ck_assert_float_eq(out[k - 3], val[code_of[w[k]]] *
				   scale[(k / 5 / 2) * 3 + k % 5 / 2]);
}
END_TEST

/* Stacked experts [2, 3, 5] under blocks of 2 x 2: scales [2, 2, 3];
 * each expert's rows start a block (row 3, the second expert's first,
 * is grid row 2, not row 1 as a 6 x 5 weight's would be). */
START_TEST(test_fp8_experts)
{
	struct fp8_scaled p = { DTYPE_F8_E4M3, DTYPE_F32, 6, 5, 2, 2, 3 };
	static const uint64_t grid_row[6] = { 0, 0, 1, 2, 2, 3 };
	uint8_t w[30], s[48];
	float out[30];
	int r, c, k;

	for (k = 0; k < 30; k++)
		w[k] = 0x38;		/* 1.0 */
	for (k = 0; k < 12; k++)
		put32(s + 4 * k, bits((float)(k + 1)));
	ck_assert_uint_eq(fp8_scaled_grid_rows(&p), 4);
	for (r = 0; r < 6; r++)
		ck_assert_uint_eq(fp8_scaled_grid_row(&p, r), grid_row[r]);
	fp8_scaled_range(&p, w, s, 0, 30, out);
	for (r = 0; r < 6; r++)
		for (c = 0; c < 5; c++)
			ck_assert_float_eq(out[r * 5 + c],
					   (float)(grid_row[r] * 3 + c / 2 + 1));
	/* from row 3 on: its scales start at grid row 2 */
	fp8_scaled_range(&p, w, s + 2 * 12, 17, 30, out);
	for (k = 17; k < 30; k++)
		ck_assert_float_eq(out[k - 17], (float)(grid_row[k / 5] * 3 +
							k % 5 / 2 + 1));
}
END_TEST

/* A BF16 scale: the product is rounded to BF16, as torch multiplies. */
START_TEST(test_fp8_bf16_scale)
{
	const uint8_t w[2] = { 0x39, 0x38 };	/* 1.125, 1 */
	struct fp8_scaled p = { DTYPE_F8_E4M3, DTYPE_BF16, 2, 1, 1, 1, 0 };
	uint8_t s[4];
	float out[2];

	put16(s, 0x3f81);	/* 1.0078125 */
	put16(s + 2, 0x3f81);
	fp8_scaled_range(&p, w, s, 0, 2, out);
	/* 1.125 * 1.0078125 = 1.1337890625 = 145.125 steps of 2^-7 */
	ck_assert_float_eq(out[0], 1.1328125f);
	ck_assert_float_eq(out[1], 1.0078125f);
}
END_TEST

/* A long row under one half-precision scale: the same values as the
 * products rounded one by one. */
START_TEST(test_fp8_long_rows)
{
	enum { C = 3000 };
	struct fp8_scaled p = { DTYPE_F8_E5M2, _i ? DTYPE_F16 : DTYPE_BF16, 2,
				C, 1, C, 0 };
	uint8_t *w = malloc(2 * C), s[4];
	float *out = malloc(2 * C * sizeof(float));
	int k;

	for (k = 0; k < 2 * C; k++)
		w[k] = (uint8_t)(k * 7);
	put16(s, _i ? 0x3c05 : 0x3f85);
	put16(s + 2, _i ? 0xbc07 : 0xbf87);
	fp8_scaled_range(&p, w, s, 0, 2 * C, out);
	for (k = 0; k < 2 * C; k++) {
		float v = flt(minifloat_bits(DTYPE_F8_E5M2, w[k])) *
			  qscalar_load(p.sdtype, s + 2 * (k / C));
		float want = qscalar_round(p.sdtype, v);

		ck_assert_msg(bits(out[k]) == bits(want) ||
			      (isnan(out[k]) && isnan(want)), "element %d", k);
	}
	free(w);
	free(out);
}
END_TEST

/* --- MXFP4 ------------------------------------------------------------------ */

START_TEST(test_mxfp4)
{
	uint8_t blk[2 * 16], sc[2];
	float pow2[2], out[32 * 2];
	int k;

	/* row 0: byte k holds codes (2k % 16, (2k + 1) % 16), low first */
	for (k = 0; k < 16; k++) {
		blk[k] = (uint8_t)((2 * k) % 16 | ((2 * k + 1) % 16) << 4);
		blk[16 + k] = 0x21;	/* row 1: 0.5 then 1 */
	}
	sc[0] = 127;		/* 1 */
	sc[1] = 0;		/* 2^-127 */
	mxfp4_hf_rows(blk, sc, 2, 0, 32, pow2, out);
	/* out is [c][r] */
	ck_assert_float_eq(out[0 * 2], 0.0f);
	ck_assert_float_eq(out[1 * 2], 0.5f);
	ck_assert_float_eq(out[7 * 2], 6.0f);
	ck_assert_uint_eq(bits(out[8 * 2]), 0x80000000u);	/* -0 */
	ck_assert_float_eq(out[15 * 2], -6.0f);
	ck_assert_float_eq(out[17 * 2], 0.5f);	/* code 1 again */
	ck_assert_float_eq(out[0 * 2 + 1], 0x1p-128f);
	ck_assert_float_eq(out[1 * 2 + 1], 0x1p-127f);
	sc[1] = 255;		/* 2^128: infinite in float32 */
	blk[16] = 0x10;		/* codes 0 and 1 */
	mxfp4_hf_rows(blk, sc, 2, 0, 32, pow2, out);
	ck_assert(isnan(out[0 * 2 + 1]));
	ck_assert(isinf(out[1 * 2 + 1]) && out[1 * 2 + 1] > 0);
}
END_TEST

/* --- GPTQ and AWQ ---------------------------------------------------------- */

/* A little-endian bit stream of `bits`-bit values into 32-bit words. */
static void
pack_stream(const unsigned *v, size_t n, unsigned bits, uint32_t *words)
{
	size_t i, at;

	memset(words, 0, (n * bits + 31) / 32 * 4);
	for (i = 0; i < n; i++)
		for (at = 0; at < bits; at++)
			if (v[i] >> at & 1)
				words[(i * bits + at) / 32] |=
					1u << ((i * bits + at) % 32);
}

/* GPTQ with `bits`: IN x OUT integers q, zeros z per group (v1: stored
 * minus one), scales 0.5 (group 0) and 2 (group 1), g_idx gi or none. */
static void
gptq_case(unsigned nbits, const int32_t *gi)
{
	enum { IN = 64, OUT = 32, G = 2 };
	unsigned max = (1u << nbits) - 1, col[IN], row[OUT];
	unsigned q[IN][OUT], z[G][OUT];
	uint32_t words[IN], qw[IN * OUT], qz[G * OUT];
	uint8_t qwb[IN * OUT * 4], qzb[G * OUT * 4], sc[G * OUT * 2];
	uint8_t gib[IN * 4];
	struct int_packed p = { INT_PACKED_GPTQ, nbits, IN, OUT, G, 32, 1,
				DTYPE_F16, 0 };
	uint64_t qrows, qcols, zcols, k;
	float *out = malloc(IN * OUT * sizeof(float));
	int i, o, g;

	int_packed_shapes(&p, &qrows, &qcols, &zcols);
	ck_assert_uint_eq(qrows, IN * nbits / 32);
	ck_assert_uint_eq(qcols, OUT);
	ck_assert_uint_eq(zcols, OUT * nbits / 32);
	for (i = 0; i < IN; i++)
		for (o = 0; o < OUT; o++)
			q[i][o] = (unsigned)(i * 7 + o * 3) & max;
	for (g = 0; g < G; g++)
		for (o = 0; o < OUT; o++)
			z[g][o] = (unsigned)(g * 5 + o) % max;	/* stored */
	/* qweight: the input rows of each column as one bit stream */
	for (o = 0; o < OUT; o++) {
		for (i = 0; i < IN; i++)
			col[i] = q[i][o];
		pack_stream(col, IN, nbits, words);
		for (k = 0; k < qrows; k++)
			qw[k * OUT + o] = words[k];
	}
	for (g = 0; g < G; g++) {
		for (o = 0; o < OUT; o++)
			row[o] = z[g][o];
		pack_stream(row, OUT, nbits, qz + g * zcols);
		for (o = 0; o < OUT; o++)
			put16(sc + 2 * (g * OUT + o), g ? 0x4000 : 0x3800);
	}
	for (k = 0; k < qrows * OUT; k++)
		put32(qwb + 4 * k, qw[k]);
	for (k = 0; k < G * zcols; k++)
		put32(qzb + 4 * k, qz[k]);
	for (i = 0; gi && i < IN; i++)
		put32(gib + 4 * i, (uint32_t)gi[i]);
	ck_assert_int_eq(int_packed_rows(&p, qwb, qzb, sc, gi ? gib : NULL, 0,
					 OUT, out), 0);
	for (o = 0; o < OUT; o++)
		for (i = 0; i < IN; i++) {
			g = gi ? gi[i] : i / 32;
			ck_assert_float_eq(out[o * IN + i],
					   (g ? 2.0f : 0.5f) *
					   ((float)q[i][o] -
					    (float)(z[g][o] + 1)));
		}
	free(out);
}

START_TEST(test_gptq_bits)
{
	static const unsigned b[] = { 2, 3, 4, 8 };

	gptq_case(b[_i], NULL);
}
END_TEST

/* act-order: g_idx sends rows to groups in any order; a g_idx naming a
 * group that is not there is refused. */
START_TEST(test_gptq_act_order)
{
	int32_t gi[64];
	int i;

	for (i = 0; i < 64; i++)
		gi[i] = (i * 37) % 5 < 2;
	gptq_case(4, gi);
}
END_TEST

START_TEST(test_gptq_bad_gidx)
{
	struct int_packed p = { INT_PACKED_GPTQ, 4, 8, 8, 1, 8, 1, DTYPE_F16, 0 };
	uint8_t qw[4 * 8] = { 0 }, qz[4] = { 0 }, sc[16] = { 0 }, gi[32] = { 0 };
	float out[64];

	put32(gi + 4 * 3, 1);	/* group 1 of 1 */
	ck_assert_int_eq(int_packed_rows(&p, qw, qz, sc, gi, 0, 8, out), -1);
	put32(gi + 4 * 3, (uint32_t)-1);
	ck_assert_int_eq(int_packed_rows(&p, qw, qz, sc, gi, 0, 8, out), -1);
}
END_TEST

/* v2 zeros are taken as they are; F16 products are rounded to F16. */
START_TEST(test_gptq_v2_rounding)
{
	struct int_packed p = { INT_PACKED_GPTQ, 8, 4, 4, 1, 4, 0, DTYPE_F16, 0 };
	uint8_t qw[4 * 4], qz[4], sc[8];
	float out[16];
	int o;

	for (o = 0; o < 4; o++) {
		put32(qw + 4 * o, 0x000000ffu);	/* row 0: 255, others 0 */
		put16(sc + 2 * o, 0x3c01);	/* 1 + 2^-10 */
	}
	put32(qz, 0x00000000u);
	ck_assert_int_eq(int_packed_rows(&p, qw, qz, sc, NULL, 0, 4, out), 0);
	/* 255 * (1 + 2^-10) = 255.249..., F16 steps of 2^-3 there: 255.25 */
	ck_assert_float_eq(out[0], 255.25f);
	ck_assert_float_eq(out[1], 0.0f);
}
END_TEST

/* AWQ: output column 8c + ORDER[k] is nibble k of word c. */
START_TEST(test_awq_order)
{
	static const unsigned order[8] = { 0, 2, 4, 6, 1, 3, 5, 7 };
	enum { IN = 4, OUT = 12, G = 2, W = 2 };
	uint8_t qw[IN * W * 4], qz[G * W * 4], sc[G * OUT * 2];
	struct int_packed p = { INT_PACKED_AWQ, 4, IN, OUT, G, 2, 0,
				DTYPE_F16, 0 };
	unsigned q[IN][16], z[G][16];
	float out[OUT * IN];
	int i, o, g, c, k;

	for (i = 0; i < IN; i++)
		for (o = 0; o < 16; o++)
			q[i][o] = o < OUT ? (unsigned)(i + 3 * o) % 16 : 0;
	for (g = 0; g < G; g++)
		for (o = 0; o < 16; o++)
			z[g][o] = o < OUT ? (unsigned)(g + o) % 9 : 0;
	for (i = 0; i < IN; i++)
		for (c = 0; c < W; c++) {
			uint32_t w = 0;

			for (k = 0; k < 8; k++)
				w |= q[i][8 * c + order[k]] << (4 * k);
			put32(qw + 4 * (i * W + c), w);
		}
	for (g = 0; g < G; g++) {
		for (c = 0; c < W; c++) {
			uint32_t w = 0;

			for (k = 0; k < 8; k++)
				w |= z[g][8 * c + order[k]] << (4 * k);
			put32(qz + 4 * (g * W + c), w);
		}
		for (o = 0; o < OUT; o++)
			put16(sc + 2 * (g * OUT + o), g ? 0x4400 : 0x3c00);
	}
	ck_assert_int_eq(int_packed_rows(&p, qw, qz, sc, NULL, 0, OUT, out), 0);
	for (o = 0; o < OUT; o++)
		for (i = 0; i < IN; i++)
			ck_assert_float_eq(out[o * IN + i],
					   (i / 2 ? 4.0f : 1.0f) *
					   ((float)q[i][o] -
					    (float)z[i / 2][o]));
}
END_TEST

/* compressed-tensors pack-quantized, with zero points: input column 8k + j
 * of a row at bits 4j of its word k; zero points packed along the output
 * the same way; a band of rows [32, 40) takes zero-point row 4. */
START_TEST(test_ct_asym)
{
	enum { IN = 10, OUT = 40, G = 2, QC = 2, ZR = 5 };
	struct int_packed p = { INT_PACKED_CT, 4, IN, OUT, G, 5, 0,
				DTYPE_F16, 0 };
	uint8_t qw[OUT * QC * 4], qz[ZR * G * 4], sc[OUT * G * 2];
	unsigned q[OUT][16] = { { 0 } }, z[ZR * 8][G];
	uint64_t qrows, qcols, zcols, qf, qn, zf, zn;
	float out[8 * IN];
	int o, i, g, k, j;

	for (o = 0; o < OUT; o++) {
		for (i = 0; i < IN; i++)
			q[o][i] = (unsigned)(o + 3 * i) % 16;
		for (k = 0; k < QC; k++) {
			uint32_t w = 0;

			for (j = 0; j < 8; j++)
				w |= q[o][8 * k + j] << (4 * j);
			put32(qw + 4 * (o * QC + k), w);
		}
		for (g = 0; g < G; g++)
			put16(sc + 2 * (o * G + g), g ? 0x4000 : 0x3c00);
	}
	for (o = 0; o < ZR * 8; o++)
		for (g = 0; g < G; g++)
			z[o][g] = (unsigned)(o + 5 * g) % 16;
	for (k = 0; k < ZR; k++)
		for (g = 0; g < G; g++) {
			uint32_t w = 0;

			for (j = 0; j < 8; j++)
				w |= z[8 * k + j][g] << (4 * j);
			put32(qz + 4 * (k * G + g), w);
		}
	int_packed_shapes(&p, &qrows, &qcols, &zcols);
	ck_assert(qrows == OUT && qcols == QC && zcols == ZR);
	int_packed_band_words(&p, 32, 40, &qf, &qn, &zf, &zn);
	ck_assert(qf == 32 * QC && qn == 8 * QC && zf == 4 && zn == 1);
	ck_assert_int_eq(int_packed_rows(&p, qw + 4 * qf, qz + 4 * zf * G,
					 sc + 2 * 32 * G, NULL, 32, 40, out), 0);
	for (o = 32; o < 40; o++)
		for (i = 0; i < IN; i++)
			ck_assert_float_eq(out[(o - 32) * IN + i],
					   (i / 5 ? 2.0f : 1.0f) *
					   ((float)q[o][i] -
					    (float)z[o][i / 5]));
}
END_TEST

/* Symmetric: the zero is 2^(bits - 1); a BF16 scale rounds the product
 * to BF16. */
START_TEST(test_ct_sym_bf16)
{
	struct int_packed p = { INT_PACKED_CT, 8, 5, 1, 1, 5, 0,
				DTYPE_BF16, 1 };
	uint8_t qw[8], sc[2];
	float out[5];

	put32(qw, 0x00ff8000u);		/* 0, 128, 255, 0 */
	put32(qw + 4, 0x00000081u);	/* 129 */
	put16(sc, 0x3f81);		/* 1 + 2^-7 */
	ck_assert_int_eq(int_packed_rows(&p, qw, NULL, sc, NULL, 0, 1, out),
			 0);
	/* -128 (1 + 2^-7) = -129: exact; 127 (1 + 2^-7) = 127.99...: 128 in
	 * BF16 */
	ck_assert_float_eq(out[0], -129.0f);
	ck_assert_float_eq(out[1], 0.0f);
	ck_assert_float_eq(out[2], 128.0f);
	ck_assert_float_eq(out[3], -129.0f);
	ck_assert_float_eq(out[4], 1.0078125f);
}
END_TEST

/* --- bitsandbytes 4-bit ----------------------------------------------------- */

START_TEST(test_bnb4)
{
	float code[16], absmax[3] = { 1, 2, 4 }, out[10];
	/* 10 elements, blocks of 4 (the last one short); element 2k is the
	 * high nibble of byte k */
	const uint8_t packed[5] = { 0x01, 0x23, 0x45, 0x67, 0x89 };
	int i;

	for (i = 0; i < 16; i++)
		code[i] = (float)i / 8 - 1;
	bnb4_run(code, packed, absmax, 4, 0, 10, out);
	for (i = 0; i < 10; i++)
		ck_assert_float_eq(out[i], code[i] * absmax[i / 4]);
	/* from element 4 on: packed from byte 2, absmax from block 1 */
	bnb4_run(code, packed + 2, absmax + 1, 4, 4, 10, out);
	ck_assert_float_eq(out[0], code[4] * 2);
	ck_assert_float_eq(out[5], code[9] * 4);
}
END_TEST

START_TEST(test_bnb4_nested)
{
	float code[256], nab[2] = { 2, 8 }, out[4];
	const uint8_t q[4] = { 0, 128, 255, 64 };
	int i;

	for (i = 0; i < 256; i++)
		code[i] = (float)(i - 128) / 128;
	/* blocks 2..5, nested blocks of 3: nab[0] for 2, nab[1] for 3..5 */
	bnb4_absmax(code, q, nab, 3, 0.5f, 2, 6, out);
	ck_assert_float_eq(out[0], -1 * 2 + 0.5f);
	ck_assert_float_eq(out[1], 0 * 8 + 0.5f);
	ck_assert_float_eq(out[2], code[255] * 8 + 0.5f);
	ck_assert_float_eq(out[3], -0.5f * 8 + 0.5f);
}
END_TEST

/* --- NVFP4 ------------------------------------------------------------------ */

START_TEST(test_nvfp4)
{
	static const float mag[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };
	/* 2 rows of 32: every code twice in a row, element 2k in the low
	 * nibble of byte k; block scales 1, 2 (row 0) and 0.5, 448 (row 1):
	 * F8_E4M3 0x38, 0x40, 0x30, 0x7e */
	struct nvfp4_st p = { 2, 32, _i };
	const uint8_t sc[4] = { 0x38, 0x40, 0x30, 0x7e };
	const float bs[4] = { 1, 2, 0.5f, 448 }, g = 3;
	uint8_t packed[32];
	float out[64], s, v;
	int e, q;

	ck_assert_uint_eq(nvfp4_st_scale_cols(&p), 2);
	for (e = 0; e < 32; e++)
		packed[e] = (uint8_t)(((2 * e + 1) % 16) << 4 | (2 * e) % 16);
	nvfp4_st_range(&p, packed, sc, g, 0, 64, out);
	for (e = 0; e < 64; e++) {
		q = e % 16;
		s = p.modelopt ? bs[e / 16] * g : bs[e / 16] / g;
		v = (q & 8 ? -mag[q & 7] : mag[q & 7]) * s;
		if (q == 8 && p.modelopt)	/* ModelOpt's table: +0 */
			v = 0.0f;
		ck_assert_uint_eq(bits(out[e]), bits(v));
	}
	/* a window from row 1 on: its bytes and its row of scales */
	nvfp4_st_range(&p, packed + 16, sc + 2, g, 32, 64, out);
	ck_assert_uint_eq(bits(out[1]), bits(0.5f * (p.modelopt ? 0.5f * 3 :
							 0.5f / 3)));
	ck_assert_uint_eq(bits(out[31]), bits(-6 * (p.modelopt ? 448.0f * 3 :
						    448.0f / 3)));
}
END_TEST

/* A row of 8 values has one scale, its block cut short. */
START_TEST(test_nvfp4_short_row)
{
	struct nvfp4_st p = { 3, 8, 0 };
	const uint8_t sc[3] = { 0x38, 0x40, 0x48 }, packed[12] = {
		0x21, 0x43, 0x65, 0x77, 0x21, 0x43, 0x65, 0x77,
		0x21, 0x43, 0x65, 0x77 };
	float out[8];

	ck_assert_uint_eq(nvfp4_st_scale_cols(&p), 1);
	/* row 2 alone: scale 4 (0x48), global 1 */
	nvfp4_st_range(&p, packed + 8, sc + 2, 1, 16, 24, out);
	ck_assert_float_eq(out[0], 0.5f * 4);
	ck_assert_float_eq(out[1], 1.0f * 4);
	ck_assert_float_eq(out[7], 6.0f * 4);
}
END_TEST

Suite *
wquant_suite(void)
{
	Suite *s = suite_create("wquant");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_round_f16);
	tcase_add_test(tc, test_round_bf16);
	tcase_add_test(tc, test_scale_load);
	tcase_add_test(tc, test_fp8_blocks);
	tcase_add_test(tc, test_fp8_experts);
	tcase_add_test(tc, test_fp8_bf16_scale);
	tcase_add_loop_test(tc, test_fp8_long_rows, 0, 2);
	tcase_add_test(tc, test_mxfp4);
	tcase_add_loop_test(tc, test_gptq_bits, 0, 4);
	tcase_add_test(tc, test_gptq_act_order);
	tcase_add_test(tc, test_gptq_bad_gidx);
	tcase_add_test(tc, test_gptq_v2_rounding);
	tcase_add_test(tc, test_awq_order);
	tcase_add_test(tc, test_ct_asym);
	tcase_add_test(tc, test_ct_sym_bf16);
	tcase_add_test(tc, test_bnb4);
	tcase_add_test(tc, test_bnb4_nested);
	tcase_add_loop_test(tc, test_nvfp4, 0, 2);
	tcase_add_test(tc, test_nvfp4_short_row);
	suite_add_tcase(s, tc);
	return s;
}
