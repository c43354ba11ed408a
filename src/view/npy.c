/* npy.c - NPY headers and the decoders of the dtypes numpy lacks (see
 * npy.h for the formats, NaN rules and packing). */
#include "view/npy.h"

#include <pthread.h>
#include <string.h>

#include "base/buf.h"
#include "format/dequant.h"
#include "format/minifloat.h"
#include "format/safetensors/header.h"
#include "format/tensor_size.h"
#include "view/element_window.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* numpy leaves room to grow the first axis in place: the dict is followed
 * by (21 - digits of shape[0]) spaces.  Doing the same makes our header
 * byte-identical to np.save()'s. */
#define NPY_GROWTH_DIGITS 21

/* --- minifloats (format/minifloat.h) -------------------------------------- */

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
		tab8[TAB_E5M2][c] = minifloat_bits(DTYPE_F8_E5M2, c);
		tab8[TAB_E4M3][c] = minifloat_bits(DTYPE_F8_E4M3, c);
		tab8[TAB_E8M0][c] = minifloat_bits(DTYPE_F8_E8M0, c);
		tab8[TAB_E4M3FNUZ][c] = minifloat_bits(DTYPE_F8_E4M3FNUZ, c);
		tab8[TAB_E5M2FNUZ][c] = minifloat_bits(DTYPE_F8_E5M2FNUZ, c);
	}
	for (c = 0; c < 64; c++) {
		tab_e2m3[c] = minifloat_bits(DTYPE_F6_E2M3, c);
		tab_e3m2[c] = minifloat_bits(DTYPE_F6_E3M2, c);
	}
	for (c = 0; c < 16; c++)
		tab_e2m1[c] = minifloat_bits(DTYPE_F4, c);
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
	case DTYPE_F16:
		return minifloat_bits(d, code);
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
	unsigned bits = dtype_info(d)->bits, blk = dequant_block(d);

	if (blk) {		/* quantized blocks (format/dequant.h) */
		*first = e0 - e0 % blk;
		*off = *first / blk * dequant_block_bytes(d);
		*len = (e1 + blk - 1) / blk * dequant_block_bytes(d) - *off;
		return;
	}
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

int
npy_decodes(enum dtype d)
{
	return npy_is_raw(d) || dequant_has(d) || d == DTYPE_BF16 ||
	       table(d) != NULL;
}

int
npy_readable(const struct tensor *t)
{
	uint64_t blk = dequant_block(t->dtype);

	if (!npy_decodes(t->dtype))
		return 0;
	/* whole blocks, exactly the stored bytes (the format checked it;
	 * a read past them would decode another tensor's bytes) */
	return !blk || (t->numel % blk == 0 &&
			t->end - t->begin == t->numel / blk *
			dequant_block_bytes(t->dtype));
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
	if (npy_is_raw(t->dtype))	/* as stored, or gathered: table.h */
		return tensor_size_bytes(t);
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
	if (dequant_has(d)) {	/* src starts at e0's block */
		dequant_window(d, src, off, n, out);
		return n;
	}
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
