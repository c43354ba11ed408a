/* txt.c - the fixed-width text view of a tensor (layout in txt.h). */
#include "view/txt.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/dequant.h"
#include "format/minifloat.h"
#include "format/safetensors/header.h"
#include "view/npy.h"
#include "view/element_window.h"

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
	/* quantized types: their float32 values, printed like F32 */
	if (!txt_widths[d])
		return txt_widths[DTYPE_F32];
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

/* Lay out the p digits d (first digit's exponent x) as %.Pg does:
 * trailing zeros dropped, scientific when x < -4 or x >= prec. */
static size_t
layout_g(int neg, const char *d, int p, int x, int prec, char *out)
{
	size_t o = 0;
	int k = p, i, ax = x < 0 ? -x : x;

	while (k > 1 && d[k - 1] == '0')
		k--;
	if (neg)
		out[o++] = '-';
	if (x < -4 || x >= prec) {
		out[o++] = d[0];
		if (k > 1) {
			out[o++] = '.';
			memcpy(out + o, d + 1, (size_t)k - 1);
			o += (size_t)k - 1;
		}
		out[o++] = 'e';
		out[o++] = x < 0 ? '-' : '+';
		if (ax >= 100)
			out[o++] = (char)('0' + ax / 100);
		out[o++] = (char)('0' + ax / 10 % 10);
		out[o++] = (char)('0' + ax % 10);
		return o;
	}
	if (x < 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (i = 0; i < -x - 1; i++)
			out[o++] = '0';
		memcpy(out + o, d, (size_t)k);
		return o + (size_t)k;
	}
	for (i = 0; i <= x; i++)
		out[o++] = i < k ? d[i] : '0';
	if (k > x + 1) {
		out[o++] = '.';
		memcpy(out + o, d + x + 1, (size_t)(k - x - 1));
		o += (size_t)(k - x - 1);
	}
	return o;
}

/* The plain way: the first %.Pg, P = 6 .. 9, that strtof() reads back.
 * P = 6 is enough to start with: float32 is finer than 6 digits, so
 * whenever a shorter number reads back to f, %.6g prints it (trailing
 * zeros go). */
static size_t
f32_slow(float f, char *out)
{
	char tmp[40];
	int p;

	for (p = 6; p < 9; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, (double)f);
		if (strtof(tmp, NULL) == f)
			break;
	}
	return fmt_g(f, p, out);
}

/* Powers of ten as doubles: exact up to 1e22, nearest beyond. */
static const double p10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23,
	1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34,
	1e35, 1e36, 1e37, 1e38, 1e39, 1e40, 1e41, 1e42, 1e43, 1e44, 1e45,
	1e46, 1e47, 1e48, 1e49, 1e50, 1e51, 1e52, 1e53, 1e54, 1e55,
};

/* v * 10^k within about one double ulp. */
static double
scale10(double v, int k)
{
	return k >= 0 ? v * p10[k] : v / p10[-k];
}

/* Does r * 10^k read back as the positive float whose rounding interval
 * is (lo, hi)?  1 yes, 0 no, -1 too close to a boundary to tell with
 * doubles. */
static int
reads_back(double lo, double hi, uint32_t r, int k)
{
	double c = scale10(r, k), eps = c * 0x1p-49;

	if (c > lo + eps && c < hi - eps)
		return 1;
	if (c < lo - eps || c > hi + eps)
		return 0;
	return -1;
}

static void
put_digits(uint32_t v, int n, char *d)
{
	while (n--) {
		d[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

/* The same text as f32_slow(), from one multiplication in doubles: the 9
 * correctly rounded digits, then the shorter candidates checked against
 * the midpoints between f and its neighbours.  Whatever is too close to
 * a rounding boundary for a double's precision goes to f32_slow().  The
 * unit tests compare the two over millions of values. */
static size_t
fmt_f32(float f, char *out)
{
	static const uint32_t pow10u[] = { 1, 10, 100, 1000, 10000, 100000,
					   1000000, 10000000, 100000000 };
	float a = fabsf(f);
	uint32_t d9, r, rem, div;
	char dig[9], cand[40];
	int x, e2, p, rx, ok;
	double t, fr, lo, hi;
	size_t n;

	n = special(f, out);
	if (n)
		return n;
	if (a == 0.0f) {
		if (signbit(f)) {
			memcpy(out, "-0", 2);
			return 2;
		}
		out[0] = '0';
		return 1;
	}
	/* x = floor(log10(a)), from the binary exponent, then corrected */
	frexpf(a, &e2);
	x = (int)floor((e2 - 1) * 0.30102999566398120);
	t = scale10(a, 8 - x);
	if (t >= 1e9) {
		x++;
		t = scale10(a, 8 - x);
	} else if (t < 1e8) {
		x--;
		t = scale10(a, 8 - x);
	}
	if (t < 1e8 || t >= 1e9)
		return f32_slow(f, out);
	/* t is within ~2^-22 of a * 10^(8-x): round it unless near .5 */
	fr = t - floor(t);
	if (fabs(fr - 0.5) < 1e-5)
		return f32_slow(f, out);
	d9 = (uint32_t)floor(t) + (fr > 0.5);
	if (d9 == 1000000000u) {
		d9 = 100000000u;
		x++;
	}
	/* the midpoints to a's neighbours, exact in double */
	lo = ((double)a + nextafterf(a, 0.0f)) / 2;
	hi = a < FLT_MAX ? ((double)a + nextafterf(a, INFINITY)) / 2 :
	     (double)a + 0x1p103;	/* from there on, inf */
	for (p = 6; p < 9; p++) {
		div = pow10u[9 - p];
		r = d9 / div;
		rem = d9 % div;
		/* The dropped digits exactly 5, 50, 500: d9 itself is the
		 * half, and a may be on either side of it; t tells, unless
		 * a is (almost) exactly that half. */
		if (rem == div / 2) {
			if (fabs(t - d9) < 1e-5)
				return f32_slow(f, out);
			r += t > d9;
		} else {
			r += rem > div / 2;
		}
		rx = x;
		if (r == pow10u[p]) {
			r /= 10;
			rx++;
		}
		ok = reads_back(lo, hi, r, rx - p + 1);
		if (ok < 0) {
			put_digits(r, p, dig);
			n = layout_g(0, dig, p, rx, -1000, cand);
			cand[n] = '\0';
			ok = strtof(cand, NULL) == a;
		}
		if (ok) {
			put_digits(r, p, dig);
			return layout_g(f < 0, dig, p, rx, p, out);
		}
	}
	put_digits(d9, 9, dig);
	return layout_g(f < 0, dig, 9, x, 9, out);
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
		if (minifloat_f16_nearest(strtod(tmp, NULL)) == code)
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

/* The text of any element, formatted from scratch. */
static size_t
format_slow(enum dtype d, const uint8_t *src, uint64_t j, char *out)
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


/* --- precomputed texts ------------------------------------------------------ */

/* Formatting a float costs up to nine snprintf/strtof calls; a format of
 * 16 bits or less has few enough codes to format each once.  The F8, F6
 * and F4 tables (1.5k codes) are built together, the BF16 and F16 ones
 * (64k codes, 1 MiB, about 0.1 s) each on its first use; without memory
 * for a table, elements are formatted one by one. */
struct cell {
	uint8_t len;
	char s[15];		/* the widest of these formats is 15 */
};

static struct cell *tabs[DTYPE__COUNT];
static pthread_once_t small_once = PTHREAD_ONCE_INIT;
static pthread_once_t bf16_once = PTHREAD_ONCE_INIT;
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void
fill(enum dtype d)
{
	unsigned bits = dtype_info(d)->bits, c;
	struct cell *t = malloc(sizeof(*t) << bits);
	char out[TXT_WIDTH_MAX];

	if (!t)
		return;
	for (c = 0; c < 1u << bits; c++) {
		/* one element at the start of a buffer: byte 0, low bits */
		uint8_t src[3] = { (uint8_t)c, (uint8_t)(c >> 8), 0 };

		t[c].len = (uint8_t)format_slow(d, src, 0, out);
		memcpy(t[c].s, out, t[c].len);
	}
	tabs[d] = t;
}

static void
fill_small(void)
{
	static const enum dtype small[] = {
		DTYPE_F4, DTYPE_F6_E2M3, DTYPE_F6_E3M2, DTYPE_F8_E5M2,
		DTYPE_F8_E4M3, DTYPE_F8_E8M0, DTYPE_F8_E4M3FNUZ,
		DTYPE_F8_E5M2FNUZ,
	};
	size_t i;

	for (i = 0; i < sizeof(small) / sizeof(small[0]); i++)
		fill(small[i]);
}

static void
fill_bf16(void)
{
	fill(DTYPE_BF16);
}

static void
fill_f16(void)
{
	fill(DTYPE_F16);
}

/* The table of d, or NULL (not a small float format, or no memory). */
static const struct cell *
table(enum dtype d)
{
	switch (d) {
	case DTYPE_BF16:
		pthread_once(&bf16_once, fill_bf16);
		break;
	case DTYPE_F16:
		pthread_once(&f16_once, fill_f16);
		break;
	case DTYPE_F4:
	case DTYPE_F6_E2M3:
	case DTYPE_F6_E3M2:
	case DTYPE_F8_E5M2:
	case DTYPE_F8_E4M3:
	case DTYPE_F8_E8M0:
	case DTYPE_F8_E4M3FNUZ:
	case DTYPE_F8_E5M2FNUZ:
		pthread_once(&small_once, fill_small);
		break;
	default:
		return NULL;
	}
	return tabs[d];
}

/* Element j of quantized blocks at src, through a one-block cache
 * (*cached: the index of the block in vals, or UINT64_MAX). */
static size_t
format_blocked(enum dtype d, const uint8_t *src, uint64_t j, float *vals,
	       uint64_t *cached, char *out)
{
	uint64_t b = j / dequant_block(d);

	if (*cached != b) {
		dequant_blocks(d, src + b * dequant_block_bytes(d), 1, vals);
		*cached = b;
	}
	return fmt_f32(vals[j % dequant_block(d)], out);
}

size_t
txt_format(enum dtype d, const uint8_t *src, uint64_t j, char *out)
{
	const struct cell *tab = table(d);
	const struct cell *c;
	float vals[DEQUANT_BLOCK_MAX];
	uint64_t cached = UINT64_MAX;

	if (dequant_has(d))
		return format_blocked(d, src, j, vals, &cached, out);
	if (!tab)
		return format_slow(d, src, j, out);
	c = &tab[npy_code(d, src, j)];
	memcpy(out, c->s, c->len);
	return c->len;
}

/* --- the file ------------------------------------------------------------ */

uint64_t
txt_size(const struct tensor *t)
{
	return t->numel * (txt_width(t->dtype) + 1);
}

/* [off, off + len) clamped to the text (width + 1 bytes per element). */
static uint64_t
clamp(const struct tensor *t, uint64_t off, uint64_t len, uint64_t *e0,
      uint64_t *e1)
{
	return element_window_clamp(t->numel, txt_width(t->dtype) + 1, off, len, e0,
			    e1);
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
	float vals[DEQUANT_BLOCK_MAX];
	uint64_t cached = UINT64_MAX;
	int blocked = dequant_has(t->dtype);
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
		vl = blocked ? format_blocked(t->dtype, src, e - first, vals,
					      &cached, val) :
			       txt_format(t->dtype, src, e - first, val);
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
