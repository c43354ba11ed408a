/* npy.c - NPY headers and the decoders of the dtypes numpy lacks (see
 * npy.h for the formats, NaN rules and packing). */
#include "view/npy.h"

#include <pthread.h>
#include <string.h>

#include "base/buf.h"
#include "format/safetensors/header.h"
#include "view/element_window.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* numpy leaves room to grow the first axis in place: the dict is followed
 * by (21 - digits of shape[0]) spaces.  Doing the same makes our header
 * byte-identical to np.save()'s. */
#define NPY_GROWTH_DIGITS 21
#define F32_QNAN 0x7fc00000u
#define F32_INF 0x7f800000u

/* --- minifloats ---------------------------------------------------------- */

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

/* Exact float32 bits of one code: every value of these formats is a
 * normal float32 (their smallest subnormal, 2^-17 for E5M2FNUZ and 2^-24
 * for F16, is far above float32's 2^-126), so it is a matter of moving
 * the sign, rebiasing the exponent and shifting the mantissa. */
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

/* 2^(x - 127); x = 0 is the float32 subnormal 2^-127. */
static uint32_t
e8m0_decode(unsigned x)
{
	if (x == 0xff)
		return F32_QNAN;
	if (x == 0)
		return 1u << 22;
	return (uint32_t)x << 23;
}

/* Lookup tables for the formats of 8 bits and less, filled once. */
enum { TAB_E5M2, TAB_E4M3, TAB_E8M0, TAB_E4M3FNUZ, TAB_E5M2FNUZ, TAB_N8 };

static uint32_t tab8[TAB_N8][256];
static uint32_t tab_e2m3[64], tab_e3m2[64], tab_e2m1[16];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void
tab_fill(void)
{
	unsigned c;

	for (c = 0; c < 256; c++) {
		tab8[TAB_E5M2][c] = mini_decode(c, &mini_e5m2);
		tab8[TAB_E4M3][c] = mini_decode(c, &mini_e4m3fn);
		tab8[TAB_E8M0][c] = e8m0_decode(c);
		tab8[TAB_E4M3FNUZ][c] = mini_decode(c, &mini_e4m3fnuz);
		tab8[TAB_E5M2FNUZ][c] = mini_decode(c, &mini_e5m2fnuz);
	}
	for (c = 0; c < 64; c++) {
		tab_e2m3[c] = mini_decode(c, &mini_e2m3);
		tab_e3m2[c] = mini_decode(c, &mini_e3m2);
	}
	for (c = 0; c < 16; c++)
		tab_e2m1[c] = mini_decode(c, &mini_e2m1);
}

/* The table of d, or NULL for dtypes decoded without one. */
static const uint32_t *
table(enum dtype d)
{
	pthread_once(&tab_once, tab_fill);
	switch (d) {
	case DTYPE_F8_E5M2:
		return tab8[TAB_E5M2];
	case DTYPE_F8_E4M3:
		return tab8[TAB_E4M3];
	case DTYPE_F8_E8M0:
		return tab8[TAB_E8M0];
	case DTYPE_F8_E4M3FNUZ:
		return tab8[TAB_E4M3FNUZ];
	case DTYPE_F8_E5M2FNUZ:
		return tab8[TAB_E5M2FNUZ];
	case DTYPE_F6_E2M3:
		return tab_e2m3;
	case DTYPE_F6_E3M2:
		return tab_e3m2;
	case DTYPE_F4:
		return tab_e2m1;
	default:
		return NULL;
	}
}

uint32_t
npy_code_f32(enum dtype d, unsigned code)
{
	const uint32_t *tab;

	switch (d) {
	case DTYPE_BF16:
		return (uint32_t)(code & 0xffff) << 16;
	case DTYPE_F16:
		return mini_decode(code & 0xffff, &mini_f16);
	default:
		tab = table(d);
		if (!tab)
			return 0;
		/* Codes come from npy_code(), already masked to the
		 * format's width. */
		return tab[code & ((1u << dtype_info(d)->bits) - 1)];
	}
}

float
npy_f32(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint32_t
npy_f32_bits(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

unsigned
npy_code(enum dtype d, const uint8_t *src, uint64_t j)
{
	const uint8_t *g;
	uint32_t v;

	switch (dtype_info(d)->bits) {
	case 4:
		return (src[j >> 1] >> ((j & 1) * 4)) & 0xf;
	case 6:
		g = src + 3 * (j >> 2);
		v = (uint32_t)g[0] | (uint32_t)g[1] << 8 | (uint32_t)g[2] << 16;
		return (v >> (6 * (j & 3))) & 0x3f;
	case 8:
		return src[j];
	case 16:
		return (unsigned)src[2 * j] | (unsigned)src[2 * j + 1] << 8;
	default:
		return 0;	/* wider dtypes are never decoded */
	}
}

void
npy_elem_bytes(enum dtype d, uint64_t e0, uint64_t e1, uint64_t *first,
	       uint64_t *off, uint64_t *len)
{
	unsigned bits = dtype_info(d)->bits;

	switch (bits) {
	case 4:
		*first = e0 & ~(uint64_t)1;
		*off = *first / 2;
		*len = (e1 + 1) / 2 - *off;
		return;
	case 6:
		*first = e0 & ~(uint64_t)3;
		*off = *first / 4 * 3;
		*len = (e1 + 3) / 4 * 3 - *off;
		return;
	default:
		*first = e0;
		*off = e0 * (bits / 8);
		*len = (e1 - e0) * (bits / 8);
		return;
	}
}

/* --- the .npy file ------------------------------------------------------- */

int
npy_is_raw(enum dtype d)
{
	const struct dtype_info *di = dtype_info(d);

	return di && di->numpy != NULL;
}

const char *
npy_descr(enum dtype d)
{
	return npy_is_raw(d) ? dtype_info(d)->numpy : "<f4";
}

static unsigned
digits(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

#define DICT_A "{'descr': '"
#define DICT_B "', 'fortran_order': False, 'shape': ("
#define DICT_C "), }"

/* Length of the dict text, growth spaces included. */
static uint64_t
dict_len(const struct tensor *t)
{
	uint64_t n = strlen(DICT_A) + strlen(npy_descr(t->dtype)) +
		     strlen(DICT_B) + strlen(DICT_C);
	uint32_t i;

	for (i = 0; i < t->rank; i++)
		n += digits(t->shape[i]) + (i ? 2 : 0);
	if (t->rank == 1)
		n += 1;		/* "(5,)" */
	if (t->rank)
		n += NPY_GROWTH_DIGITS - digits(t->shape[0]);
	return n;
}

/* Version and total header length for a dict of n bytes: numpy pads the
 * dict plus its '\n' with 1 to 64 spaces up to a multiple of 64, and
 * switches to 2.0 only when that does not fit 16 bits. */
static uint64_t
layout(uint64_t n, int *major)
{
	uint64_t prefix = NPY_MAGIC_LEN + 2 + 2, total;

	total = prefix + n + 1;
	total += NPY_ALIGN - total % NPY_ALIGN;
	*major = 1;
	if (total - prefix > NPY_V1_MAX) {
		prefix += 2;
		total = prefix + n + 1;
		total += NPY_ALIGN - total % NPY_ALIGN;
		*major = 2;
	}
	return total;
}

uint64_t
npy_header_size(const struct tensor *t)
{
	int major;

	return layout(dict_len(t), &major);
}

int
npy_header(const struct tensor *t, struct buf *out)
{
	uint64_t n = dict_len(t), total, hlen;
	size_t start = out->len;
	unsigned char pre[12];
	int major, bad = 0;
	size_t plen;
	uint32_t i;

	total = layout(n, &major);
	plen = major == 1 ? 10 : 12;
	hlen = total - plen;
	memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
	pre[6] = (unsigned char)major;
	pre[7] = 0;
	for (i = 0; i < plen - 8; i++)
		pre[8 + i] = (unsigned char)(hlen >> (8 * i));
	if (buf_reserve(out, total))
		return -1;
	bad |= buf_add(out, pre, plen);
	bad |= buf_adds(out, DICT_A);
	bad |= buf_adds(out, npy_descr(t->dtype));
	bad |= buf_adds(out, DICT_B);
	for (i = 0; i < t->rank; i++) {
		if (i)
			bad |= buf_adds(out, ", ");
		bad |= buf_add_u64(out, t->shape[i]);
	}
	if (t->rank == 1)
		bad |= buf_adds(out, ",");
	bad |= buf_adds(out, DICT_C);
	while (!bad && out->len - start < total - 1)
		bad |= buf_add(out, " ", 1);
	bad |= buf_add(out, "\n", 1);
	if (bad) {
		out->len = start;
		return -1;
	}
	return 0;
}

uint64_t
npy_data_size(const struct tensor *t)
{
	if (npy_is_raw(t->dtype))
		return t->end - t->begin;
	return t->numel * 4;
}

uint64_t
npy_size(const struct tensor *t)
{
	return npy_header_size(t) + npy_data_size(t);
}

/* --- decoding a byte range ----------------------------------------------- */

/* [off, off + len) clamped to the data part (4 bytes per element). */
static uint64_t
clamp(const struct tensor *t, uint64_t off, uint64_t len, uint64_t *e0,
      uint64_t *e1)
{
	return element_window_clamp(t->numel, 4, off, len, e0, e1);
}

void
npy_src_range(const struct tensor *t, uint64_t off, uint64_t len,
	      uint64_t *src_off, uint64_t *src_len)
{
	uint64_t e0, e1, first;

	*src_off = 0;
	*src_len = 0;
	if (npy_is_raw(t->dtype) || !clamp(t, off, len, &e0, &e1))
		return;
	npy_elem_bytes(t->dtype, e0, e1, &first, src_off, src_len);
}

static inline void
put_le32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 4);
#else
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
#endif
}

/* Decode count whole elements, from element j of src, to out: one loop
 * per packing, the dtype dispatched once. */
static void
decode_run(enum dtype d, const uint8_t *src, uint64_t j, size_t count,
	   uint8_t *out)
{
	const uint32_t *tab = table(d);
	size_t i;

	switch (dtype_info(d)->bits) {
	case 8:
		src += j;
		for (i = 0; i < count; i++)
			put_le32(out + 4 * i, tab[src[i]]);
		return;
	case 16:	/* BF16 */
		src += 2 * j;
		for (i = 0; i < count; i++)
			put_le32(out + 4 * i, ((uint32_t)src[2 * i] |
					       (uint32_t)src[2 * i + 1] << 8)
					      << 16);
		return;
	default:	/* F4, F6 */
		for (i = 0; i < count; i++)
			put_le32(out + 4 * i, tab[npy_code(d, src, j + i)]);
		return;
	}
}

size_t
npy_decode(const struct tensor *t, const uint8_t *src, uint64_t off,
	   size_t len, uint8_t *out)
{
	uint64_t e0, e1, first, soff, slen, e;
	enum dtype d = t->dtype;
	size_t n, done = 0, k, m, whole;
	uint8_t le[4];

	if (npy_is_raw(d))
		return 0;
	n = (size_t)clamp(t, off, len, &e0, &e1);
	if (n == 0)
		return 0;
	npy_elem_bytes(d, e0, e1, &first, &soff, &slen);
	e = e0;
	/* a first element cut by off */
	k = (size_t)(off % 4);
	if (k) {
		put_le32(le, npy_code_f32(d, npy_code(d, src, e - first)));
		m = 4 - k < n ? 4 - k : n;
		memcpy(out, le + k, m);
		done = m;
		e++;
	}
	whole = (n - done) / 4;
	decode_run(d, src, e - first, whole, out + done);
	done += 4 * whole;
	e += whole;
	/* a last element cut by the end of the range */
	if (done < n) {
		put_le32(le, npy_code_f32(d, npy_code(d, src, e - first)));
		memcpy(out + done, le, n - done);
	}
	return n;
}
