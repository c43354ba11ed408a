/* txt.c - the fixed-width text view of a tensor (layout in txt.h). */
#include "txt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"
#include "npy.h"

/* Widths are the longest text each dtype can produce; the unit tests
 * check them against every code of the formats of 16 bits and less. */
static const unsigned char txt_widths[DTYPE__COUNT] = {
	[DTYPE_BOOL] = 1,
	[DTYPE_F4] = 4,
	[DTYPE_F6_E2M3] = 6,
	[DTYPE_F6_E3M2] = 7,
	[DTYPE_U8] = 3,
	[DTYPE_I8] = 4,
	[DTYPE_F8_E5M2] = 14,
	[DTYPE_F8_E4M3] = 12,
	[DTYPE_F8_E8M0] = 14,
	[DTYPE_F8_E4M3FNUZ] = 13,
	[DTYPE_F8_E5M2FNUZ] = 14,
	[DTYPE_I16] = 6,
	[DTYPE_U16] = 5,
	[DTYPE_F16] = 11,
	[DTYPE_BF16] = 15,
	[DTYPE_I32] = 11,
	[DTYPE_U32] = 10,
	[DTYPE_F32] = 15,
	[DTYPE_C64] = 31,
	[DTYPE_F64] = 24,
	[DTYPE_I64] = 20,
	[DTYPE_U64] = 20,
};

unsigned
txt_width(enum dtype d)
{
	if ((unsigned)d >= DTYPE__COUNT)
		return 0;
	return txt_widths[d];
}

/* --- numbers ------------------------------------------------------------- */

/* "nan", "inf", "-inf" (glibc would print "-nan" for a negative NaN,
 * which not every reader takes); 0 for a finite value. */
static size_t
special(double v, char *out)
{
	if (isnan(v)) {
		memcpy(out, "nan", 3);
		return 3;
	}
	if (isinf(v)) {
		if (v < 0) {
			memcpy(out, "-inf", 4);
			return 4;
		}
		memcpy(out, "inf", 3);
		return 3;
	}
	return 0;
}

static size_t
fmt_g(double v, int prec, char *out)
{
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);

	memcpy(out, tmp, (size_t)n);
	return (size_t)n;
}

/* Shortest %.Ng (N from 6) that reads back to f.  Starting at 6 is enough
 * for the shortest text: float32 is finer than 6 digits, so whenever a
 * shorter number reads back to f, %.6g prints it (trailing zeros go). */
static size_t
fmt_f32(float f, char *out)
{
	char tmp[40];
	size_t n;
	int p;

	n = special(f, out);
	if (n)
		return n;
	for (p = 6; p < 9; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, (double)f);
		if (strtof(tmp, NULL) == f)
			break;
	}
	return fmt_g(f, p, out);
}

static size_t
fmt_f64(double v, char *out)
{
	char tmp[40];
	size_t n;
	int p;

	n = special(v, out);
	if (n)
		return n;
	for (p = 15; p < 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	return fmt_g(v, p, out);
}

/* The binary16 code nearest to x, ties to even (the rounding numpy uses
 * when it reads text into float16); finite x only. */
static unsigned
f16_nearest(double x)
{
	unsigned sign = signbit(x) ? 0x8000 : 0;
	double a = fabs(x);
	int ex;

	if (a >= 65520.0)	/* 65504 plus half a step: inf */
		return sign | 0x7c00;
	if (a < 0x1p-14)	/* subnormal steps of 2^-24 (0x400 = 2^-14) */
		return sign | (unsigned)nearbyint(a * 0x1p24);
	frexp(a, &ex);		/* a in [2^(ex-1), 2^ex) */
	/* mantissa in [1024, 2048]; 2048 carries into the exponent */
	return sign | ((unsigned)((ex - 1 + 15) << 10) +
		       ((unsigned)nearbyint(ldexp(a, 11 - ex)) - 1024));
}

static size_t
fmt_f16(unsigned code, char *out)
{
	double v = npy_f32(npy_code_f32(DTYPE_F16, code));
	char tmp[40];
	size_t n;
	int p;

	n = special(v, out);
	if (n)
		return n;
	for (p = 3; p < 5; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, v);
		if (f16_nearest(strtod(tmp, NULL)) == code)
			break;
	}
	return fmt_g(v, p, out);
}

static size_t
fmt_c64(const uint8_t *p, char *out)
{
	uint32_t re, im;
	size_t n;

	memcpy(&re, p, 4);	/* little-endian host (x86-64, arm64) */
	memcpy(&im, p + 4, 4);
	n = fmt_f32(npy_f32(re), out);
	/* the imaginary part always carries a sign: "1+2j", "1-nanj" */
	if (isnan(npy_f32(im)) || !signbit(npy_f32(im)))
		out[n++] = '+';
	n += fmt_f32(npy_f32(im), out + n);
	out[n++] = 'j';
	return n;
}

static size_t
fmt_i64(int64_t v, char *out)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);

	memcpy(out, tmp, (size_t)n);
	return (size_t)n;
}

static size_t
fmt_u64(uint64_t v, char *out)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);

	memcpy(out, tmp, (size_t)n);
	return (size_t)n;
}

size_t
txt_format(enum dtype d, const uint8_t *src, uint64_t j, char *out)
{
	union {
		int16_t i16;
		uint16_t u16;
		int32_t i32;
		uint32_t u32;
		int64_t i64;
		uint64_t u64;
		float f32;
		double f64;
	} u;
	unsigned bytes = dtype_info(d)->bits / 8;
	const uint8_t *p = src + j * bytes;

	/* Wider dtypes are copied out: the source offsets of a tensor are
	 * only byte-aligned. */
	if (bytes >= 2 && bytes <= 8)
		memcpy(&u, p, bytes);
	switch (d) {
	case DTYPE_BOOL:
		out[0] = *p ? '1' : '0';
		return 1;
	case DTYPE_U8:
		return fmt_u64(*p, out);
	case DTYPE_I8:
		return fmt_i64((int8_t)*p, out);
	case DTYPE_U16:
		return fmt_u64(u.u16, out);
	case DTYPE_I16:
		return fmt_i64(u.i16, out);
	case DTYPE_U32:
		return fmt_u64(u.u32, out);
	case DTYPE_I32:
		return fmt_i64(u.i32, out);
	case DTYPE_U64:
		return fmt_u64(u.u64, out);
	case DTYPE_I64:
		return fmt_i64(u.i64, out);
	case DTYPE_F64:
		return fmt_f64(u.f64, out);
	case DTYPE_F32:
		return fmt_f32(u.f32, out);
	case DTYPE_C64:
		return fmt_c64(p, out);
	case DTYPE_F16:
		return fmt_f16(npy_code(d, src, j), out);
	default:
		/* BF16 and the sub-16-bit floats: their float32 value */
		return fmt_f32(npy_f32(npy_code_f32(d, npy_code(d, src, j))),
			       out);
	}
}

/* --- the file ------------------------------------------------------------ */

uint64_t
txt_size(const struct tensor *t)
{
	return t->numel * (txt_width(t->dtype) + 1);
}

/* [off, off + len) clamped to the text; 0 when empty, else the elements
 * [*e0, *e1) it touches. */
static uint64_t
clamp(const struct tensor *t, uint64_t off, uint64_t len, uint64_t *e0,
      uint64_t *e1)
{
	uint64_t size = txt_size(t), stride = txt_width(t->dtype) + 1;

	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	if (len == 0)
		return 0;
	*e0 = off / stride;
	*e1 = (off + len + stride - 1) / stride;
	return len;
}

void
txt_src_range(const struct tensor *t, uint64_t off, uint64_t len,
	      uint64_t *src_off, uint64_t *src_len)
{
	uint64_t e0, e1, first;

	*src_off = 0;
	*src_len = 0;
	if (!clamp(t, off, len, &e0, &e1))
		return;
	npy_elem_bytes(t->dtype, e0, e1, &first, src_off, src_len);
}

size_t
txt_render(const struct tensor *t, const uint8_t *src, uint64_t off,
	   size_t len, char *out)
{
	uint64_t e0, e1, first, soff, slen, e, pos = off;
	unsigned w = txt_width(t->dtype);
	uint64_t stride = w + 1;
	/* a scalar is one row of one element */
	uint64_t row = t->rank ? t->shape[t->rank - 1] : 1;
	char cell[TXT_WIDTH_MAX + 1], val[TXT_WIDTH_MAX];
	size_t n, done = 0;

	n = (size_t)clamp(t, off, len, &e0, &e1);
	if (n == 0)
		return 0;
	npy_elem_bytes(t->dtype, e0, e1, &first, &soff, &slen);
	for (e = e0; e < e1; e++) {
		size_t k = (size_t)(pos - stride * e), m, vl;
		char *c = cell;

		/* Whole cells go straight to out; the partial first and
		 * last ones through cell. */
		if (k == 0 && n - done >= stride)
			c = out + done;
		vl = txt_format(t->dtype, src, e - first, val);
		if (vl > w)	/* never: the widths are the maxima */
			vl = w;
		memset(c, ' ', w - vl);
		memcpy(c + w - vl, val, vl);
		c[w] = (e + 1) % row ? ' ' : '\n';
		m = (size_t)stride - k;
		if (m > n - done)
			m = n - done;
		if (c == cell)
			memcpy(out + done, cell + k, m);
		done += m;
		pos += m;
	}
	return n;
}
