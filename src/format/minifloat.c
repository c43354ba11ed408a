/* minifloat.c - exact float32 values of the small float formats (see
 * minifloat.h; view/npy.h describes each format). */
#include "format/minifloat.h"

#include <math.h>
#include <string.h>

#define F32_QNAN 0x7fc00000u
#define F32_INF 0x7f800000u

enum mini_special {
	MINI_FINITE,	/* every code is a number (F6, F4) */
	MINI_IEEE,	/* top exponent: inf (m == 0) or NaN (E5M2, F16) */
	MINI_FN,	/* only all-ones exponent and mantissa is NaN (E4M3) */
	MINI_FNUZ,	/* only the "negative zero" code is NaN */
};

struct mini {
	unsigned ebits, mbits;
	int bias;
	enum mini_special special;
};

static const struct mini mini_e5m2 = { 5, 2, 15, MINI_IEEE };
static const struct mini mini_e4m3fn = { 4, 3, 7, MINI_FN };
static const struct mini mini_e4m3fnuz = { 4, 3, 8, MINI_FNUZ };
static const struct mini mini_e5m2fnuz = { 5, 2, 16, MINI_FNUZ };
static const struct mini mini_e2m3 = { 2, 3, 1, MINI_FINITE };
static const struct mini mini_e3m2 = { 3, 2, 3, MINI_FINITE };
static const struct mini mini_e2m1 = { 2, 1, 1, MINI_FINITE };
static const struct mini mini_f16 = { 5, 10, 15, MINI_IEEE };

/* Exact float32 bits of one code: every value is a normal float32, so it
 * is a matter of moving the sign, rebiasing the exponent and shifting the
 * mantissa. */
static uint32_t
mini_decode(unsigned code, const struct mini *f)
{
	unsigned nbits = 1 + f->ebits + f->mbits;
	unsigned emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
	unsigned e = (code >> f->mbits) & emax, m = code & mmax;
	uint32_t sign = (uint32_t)((code >> (nbits - 1)) & 1) << 31;
	int p;

	switch (f->special) {
	case MINI_FNUZ:
		if (code == 1u << (nbits - 1))
			return F32_QNAN;
		break;
	case MINI_FN:
		if (e == emax && m == mmax)
			return sign | F32_QNAN;
		break;
	case MINI_IEEE:
		if (e == emax)
			return sign | (m ? F32_QNAN : F32_INF);
		break;
	case MINI_FINITE:
		break;
	}
	if (e == 0) {
		if (m == 0)
			return sign;
		/* Subnormal m * 2^(1 - bias - mbits): make bit p of m the
		 * implicit one of a normal float32. */
		p = 31 - __builtin_clz(m);
		return sign |
		       (uint32_t)(p + 1 - f->bias - (int)f->mbits + 127) << 23 |
		       (uint32_t)(m - (1u << p)) << (23 - p);
	}
	return sign | (uint32_t)((int)e - f->bias + 127) << 23 |
	       (uint32_t)m << (23 - f->mbits);
}

/* 2^(x - 127); x = 0 is the float32 subnormal 2^-127, 0xFF is NaN. */
static uint32_t
e8m0_decode(unsigned x)
{
	if (x == 0xff)
		return F32_QNAN;
	if (x == 0)
		return 1u << 22;
	return (uint32_t)x << 23;
}

uint32_t
minifloat_bits(enum dtype d, unsigned code)
{
	switch (d) {
	case DTYPE_BF16:
		return (uint32_t)(code & 0xffff) << 16;
	case DTYPE_F16:
		return mini_decode(code & 0xffff, &mini_f16);
	case DTYPE_F8_E5M2:
		return mini_decode(code & 0xff, &mini_e5m2);
	case DTYPE_F8_E4M3:
		return mini_decode(code & 0xff, &mini_e4m3fn);
	case DTYPE_F8_E8M0:
		return e8m0_decode(code & 0xff);
	case DTYPE_F8_E4M3FNUZ:
		return mini_decode(code & 0xff, &mini_e4m3fnuz);
	case DTYPE_F8_E5M2FNUZ:
		return mini_decode(code & 0xff, &mini_e5m2fnuz);
	case DTYPE_F6_E2M3:
		return mini_decode(code & 0x3f, &mini_e2m3);
	case DTYPE_F6_E3M2:
		return mini_decode(code & 0x3f, &mini_e3m2);
	case DTYPE_F4:
		return mini_decode(code & 0xf, &mini_e2m1);
	default:
		return 0;
	}
}

float
minifloat_f16(uint16_t code)
{
	uint32_t bits = mini_decode(code, &mini_f16);
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t
minifloat_f16_nearest(double x)
{
	unsigned sign = signbit(x) ? 0x8000 : 0;
	double a = fabs(x);
	int ex;

	if (a >= 65520.0)	/* 65504 plus half a step: inf */
		return (uint16_t)(sign | 0x7c00);
	if (a < 0x1p-14)	/* subnormal steps of 2^-24 (0x400 = 2^-14) */
		return (uint16_t)(sign | (unsigned)nearbyint(a * 0x1p24));
	frexp(a, &ex);		/* a in [2^(ex-1), 2^ex) */
	/* mantissa in [1024, 2048]; 2048 carries into the exponent */
	return (uint16_t)(sign | ((unsigned)((ex - 1 + 15) << 10) +
			  ((unsigned)nearbyint(ldexp(a, 11 - ex)) - 1024)));
}
