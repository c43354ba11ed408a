/* qscalar.c - scales and half-precision rounding (see qscalar.h). */
#include "format/quant/qscalar.h"

#include <math.h>
#include <string.h>

#include "format/le.h"

#define F32_QNAN 0x7fc00000u
#define F32_INF 0x7f800000u

static inline uint32_t
bits_of(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

static inline float
float_of(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

int
qscalar_is_scale(enum dtype d)
{
	return d == DTYPE_F32 || d == DTYPE_F16 || d == DTYPE_BF16;
}

float
qscalar_load(enum dtype d, const uint8_t *p)
{
	switch (d) {
	case DTYPE_F16:
		return le_f16(p);
	case DTYPE_BF16:
		return float_of((uint32_t)le_u16(p) << 16);
	default:
		return float_of(le_u32(p));
	}
}

float
qscalar_round_bf16(float x)
{
	uint32_t b = bits_of(x);

	if ((b & 0x7fffffffu) > F32_INF)
		return float_of((b & 0x80000000u) | F32_QNAN);
	/* Adding half an ulp less one, plus the kept lowest bit, carries
	 * exactly when the dropped half is above the tie or a tie with an
	 * odd kept part; a carry out of the largest finite value reaches
	 * the infinity's code, as it should. */
	b += 0x7fffu + ((b >> 16) & 1u);
	return float_of(b & 0xffff0000u);
}

float
qscalar_round_f16(float x)
{
	uint32_t b = bits_of(x), sign = b & 0x80000000u, a = b & 0x7fffffffu;
	float t;

	if (a > F32_INF)
		return float_of(sign | F32_QNAN);
	/* 65520 and up round to F16's infinity (65504 is its largest
	 * finite value, 65520 the tie between it and 2^16). */
	if (a >= 0x477ff000u)
		return float_of(sign | F32_INF);
	if (a < 0x38800000u) {
		/* Below 2^-14, F16's steps are 2^-24 apart: scaling by a
		 * power of two is exact, and rintf() rounds to nearest,
		 * ties to even (the default rounding mode). */
		t = rintf(float_of(a) * 0x1p24f) * 0x1p-24f;
		return float_of(sign | bits_of(t));
	}
	/* 10 of the 23 mantissa bits kept */
	a += 0xfffu + ((a >> 13) & 1u);
	return float_of(sign | (a & 0xffffe000u));
}

float
qscalar_round(enum dtype d, float x)
{
	switch (d) {
	case DTYPE_F16:
		return qscalar_round_f16(x);
	case DTYPE_BF16:
		return qscalar_round_bf16(x);
	default:
		return x;
	}
}
