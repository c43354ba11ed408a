/* dequant.c - GGUF's quantized blocks to float32 (see dequant.h).
 *
 * One function per block format, decoding one block into y (the grid
 * i-quants' are in dequant_iq.c).  The block layouts are ggml's
 * (ggml-common.h), little-endian; "half" is an F16 read with le_f16()
 * (le.h).  Each formula is ggml's in its order of operations, so that
 * float32 rounding is the same.
 */
#include "format/dequant.h"

#include <pthread.h>
#include <string.h>

#include "format/dequant_iq.h"
#include "format/le.h"

#define QK 32			/* the small blocks */
#define QK_K 256		/* the K-quant super-blocks */

/* The 4-bit non-linear codebooks: IQ4_NL and IQ4_XS share one, MXFP4
 * uses the E2M1 values doubled (its scale is halved to match). */
static const int8_t iq4nl_values[16] = {
	-127, -104, -83, -65, -49, -35, -22, -10,
	1, 13, 25, 38, 53, 69, 89, 113,
};
static const int8_t e2m1_doubled[16] = {
	0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};

/* --- blocks of 32 ------------------------------------------------------- */

/* Q4_0: half d, 16 bytes of nibbles; low nibbles are elements 0-15, high
 * ones 16-31; x = (q - 8) * d. */
static void
q4_0(const uint8_t *b, float *y)
{
	const float d = le_f16(b);
	const uint8_t *qs = b + 2;
	int j;

	for (j = 0; j < QK / 2; j++) {
		y[j] = (float)((qs[j] & 0xf) - 8) * d;
		y[j + QK / 2] = (float)((qs[j] >> 4) - 8) * d;
	}
}

/* Q4_1: half d, half m, nibbles; x = q * d + m. */
static void
q4_1(const uint8_t *b, float *y)
{
	const float d = le_f16(b), m = le_f16(b + 2);
	const uint8_t *qs = b + 4;
	int j;

	for (j = 0; j < QK / 2; j++) {
		y[j] = (float)(qs[j] & 0xf) * d + m;
		y[j + QK / 2] = (float)(qs[j] >> 4) * d + m;
	}
}

/* Q5_0: half d, 32 fifth bits (bit k for element k), nibbles;
 * x = (q - 16) * d. */
static void
q5_0(const uint8_t *b, float *y)
{
	const float d = le_f16(b);
	const uint32_t qh = le_u32(b + 2);
	const uint8_t *qs = b + 6;
	int j;

	for (j = 0; j < QK / 2; j++) {
		int lo = (int)((qs[j] & 0xf) | ((qh >> j) & 1) << 4);
		int hi = (int)((qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4);

		y[j] = (float)(lo - 16) * d;
		y[j + QK / 2] = (float)(hi - 16) * d;
	}
}

/* Q5_1: half d, half m, fifth bits, nibbles; x = q * d + m. */
static void
q5_1(const uint8_t *b, float *y)
{
	const float d = le_f16(b), m = le_f16(b + 2);
	const uint32_t qh = le_u32(b + 4);
	const uint8_t *qs = b + 8;
	int j;

	for (j = 0; j < QK / 2; j++) {
		int lo = (int)((qs[j] & 0xf) | ((qh >> j) & 1) << 4);
		int hi = (int)((qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4);

		y[j] = (float)lo * d + m;
		y[j + QK / 2] = (float)hi * d + m;
	}
}

/* Q8_0: half d, 32 signed bytes; x = q * d.  Q8_1 (half d, half s,
 * 32 signed bytes) the same after its second half. */
static void
q8_run(const int8_t *qs, float d, float *y)
{
	int j;

	for (j = 0; j < QK; j++)
		y[j] = (float)qs[j] * d;
}

static void
q8_0(const uint8_t *b, float *y)
{
	q8_run((const int8_t *)(b + 2), le_f16(b), y);
}

static void
q8_1(const uint8_t *b, float *y)
{
	q8_run((const int8_t *)(b + 4), le_f16(b), y);
}

/* IQ4_NL: half d, nibbles indexing the codebook; x = d * value. */
static void
iq4_nl(const uint8_t *b, float *y)
{
	const float d = le_f16(b);
	const uint8_t *qs = b + 2;
	int j;

	for (j = 0; j < QK / 2; j++) {
		y[j] = d * (float)iq4nl_values[qs[j] & 0xf];
		y[j + QK / 2] = d * (float)iq4nl_values[qs[j] >> 4];
	}
}

/* ggml's E8M0 scale, halved: 2^(e - 128); e = 0 and 1 are float32
 * subnormals. */
static float
e8m0_half(uint8_t e)
{
	uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* MXFP4: E8M0 exponent e, nibbles of E2M1 (doubled values). */
static void
mxfp4(const uint8_t *b, float *y)
{
	const float d = e8m0_half(b[0]);
	const uint8_t *qs = b + 1;
	int j;

	for (j = 0; j < QK / 2; j++) {
		y[j] = (float)e2m1_doubled[qs[j] & 0xf] * d;
		y[j + QK / 2] = (float)e2m1_doubled[qs[j] >> 4] * d;
	}
}

/* NVFP4: 4 UE4M3 scales (one per 16 elements), then 32 bytes of E2M1
 * nibbles, 8 per scale: its low nibbles are elements 0-7 of the 16, the
 * high ones 8-15.  ggml's scale is halved to match the doubled E2M1
 * values: an unsigned E4M3 (the top bit ignored; 0x7f is 0, as ggml
 * reads E4M3's NaN), every value exact in float32. */
static float
ue4m3_half(uint8_t x)
{
	const unsigned exp = (x >> 3) & 0xf, man = x & 7;
	uint32_t bits;
	float f;

	if (x == 0x7f)
		return 0.0f;
	if (exp == 0)		/* man * 2^-9, halved */
		return (float)man * 0x1p-10f;
	/* (1 + man / 8) * 2^(exp - 7), halved: exponent exp - 8 */
	bits = (exp - 8 + 127) << 23 | man << 20;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static void
nvfp4(const uint8_t *b, float *y)
{
	const uint8_t *qs = b + 4;
	int s, j;

	for (s = 0; s < 4; s++, y += 16, qs += 8) {
		const float d = ue4m3_half(b[s]);

		for (j = 0; j < 8; j++) {
			y[j] = (float)e2m1_doubled[qs[j] & 0xf] * d;
			y[j + 8] = (float)e2m1_doubled[qs[j] >> 4] * d;
		}
	}
}

/* Q1_0: half d, 128 sign bits (element j is bit j % 8 of byte j / 8):
 * x = bit ? d : -d. */
static void
q1_0(const uint8_t *b, float *y)
{
	const float d = le_f16(b);
	const float v[2] = { -d, d };	/* indexed, not branched on */
	int j;

	for (j = 0; j < 128; j++)
		y[j] = v[(b[2 + j / 8] >> (j % 8)) & 1];
}

/* Q2_0: half d, 2 bits per element, four a byte from the low bits:
 * x = (q - 1) * d. */
static void
q2_0(const uint8_t *b, float *y)
{
	const float d = le_f16(b);
	int j;

	for (j = 0; j < 64; j++)
		y[j] = (float)((int)((b[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) *
		       d;
}

/* --- super-blocks of 256 ------------------------------------------------ */

/* Q2_K: 16 bytes of (scale | min << 4), 64 bytes of 2-bit quants, half d,
 * half dmin.  Two halves of 128; in each, four shifts of the same 32
 * bytes, each two groups of 16 with a scale byte each:
 * x = (d * scale) * q - (dmin * min). */
static void
q2_k(const uint8_t *b, float *y)
{
	const uint8_t *sc = b, *q = b + 16;
	const float d = le_f16(b + 80), dmin = le_f16(b + 82);
	int n, shift, g, l, is = 0;

	for (n = 0; n < 2; n++, q += 32) {
		for (shift = 0; shift < 8; shift += 2) {
			for (g = 0; g < 2; g++, is++) {
				const float dl = d * (float)(sc[is] & 0xf);
				const float ml = dmin * (float)(sc[is] >> 4);
				const uint8_t *qg = q + 16 * g;

				for (l = 0; l < 16; l++)
					*y++ = dl * (float)((qg[l] >> shift) & 3)
					       - ml;
			}
		}
	}
}

/* Q3_K's sixteen 6-bit scales from its 12 bytes: the low nibbles of bytes
 * 0-7 are scales 0-7, their high nibbles scales 8-15; byte 8 + k % 4
 * holds the top two bits of scale k at bit 2 * (k / 4). */
static int
q3_scale(const uint8_t *s, int k)
{
	int lo = k < 8 ? s[k] & 0xf : s[k - 8] >> 4;
	int hi = (s[8 + k % 4] >> (2 * (k / 4))) & 3;

	return (lo | hi << 4) - 32;
}

/* Q3_K: 32 bytes of high bits (hmask), 64 of 2-bit quants, 12 of
 * scales, half d.  Laid out like Q2_K; the high bit of element l of
 * shift group j (0-7 over both halves) is bit j of hmask[l]; a clear bit
 * subtracts 4: x = (d * scale) * (q - (h ? 0 : 4)). */
static void
q3_k(const uint8_t *b, float *y)
{
	const uint8_t *hm = b, *q = b + 32, *sc = b + 96;
	const float d = le_f16(b + 108);
	int n, shift, g, l, is = 0;
	unsigned m = 1;

	for (n = 0; n < 2; n++, q += 32) {
		for (shift = 0; shift < 8; shift += 2, m <<= 1) {
			for (g = 0; g < 2; g++, is++) {
				const float dl = d * (float)q3_scale(sc, is);
				const uint8_t *qg = q + 16 * g;
				const uint8_t *hg = hm + 16 * g;

				for (l = 0; l < 16; l++)
					*y++ = dl * (float)(((qg[l] >> shift) & 3)
						- ((hg[l] & m) ? 0 : 4));
			}
		}
	}
}

/* The 6-bit scale and min of group j (0-7) of Q4_K and Q5_K, from their
 * 12 bytes: groups 0-3 in the low 6 bits of bytes j and j + 4; groups
 * 4-7 take their low nibbles from byte j + 4 and their top two bits from
 * the top of bytes j - 4 (scale) and j (min). */
static void
k4_scale_min(const uint8_t *s, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = s[j] & 63;
		*m = s[j + 4] & 63;
	} else {
		*sc = (s[j + 4] & 0xf) | (s[j - 4] >> 6) << 4;
		*m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
	}
}

/* Q4_K: half d, half dmin, 12 bytes of scales and mins, 128 bytes of
 * nibbles.  Four runs of 64: the 32 bytes' low nibbles with group 2i,
 * their high nibbles with group 2i + 1; x = (d * sc) * q - (dmin * m). */
static void
q4_k(const uint8_t *b, float *y)
{
	const float d = le_f16(b), dmin = le_f16(b + 2);
	const uint8_t *s = b + 4, *q = b + 16;
	int i, l, sc, m;

	for (i = 0; i < 4; i++, q += 32) {
		float d1, m1, d2, m2;

		k4_scale_min(s, 2 * i, &sc, &m);
		d1 = d * (float)sc;
		m1 = dmin * (float)m;
		k4_scale_min(s, 2 * i + 1, &sc, &m);
		d2 = d * (float)sc;
		m2 = dmin * (float)m;
		for (l = 0; l < 32; l++)
			y[l] = d1 * (float)(q[l] & 0xf) - m1;
		for (l = 0; l < 32; l++)
			y[32 + l] = d2 * (float)(q[l] >> 4) - m2;
		y += 64;
	}
}

/* Q5_K: Q4_K with 32 bytes of fifth bits before the nibbles: element l of
 * run i takes bit 2i (low nibbles) or 2i + 1 (high) of qh[l] as 16. */
static void
q5_k(const uint8_t *b, float *y)
{
	const float d = le_f16(b), dmin = le_f16(b + 2);
	const uint8_t *s = b + 4, *qh = b + 16, *q = b + 48;
	int i, l, sc, m;

	for (i = 0; i < 4; i++, q += 32) {
		const unsigned u1 = 1u << (2 * i), u2 = 2u << (2 * i);
		float d1, m1, d2, m2;

		k4_scale_min(s, 2 * i, &sc, &m);
		d1 = d * (float)sc;
		m1 = dmin * (float)m;
		k4_scale_min(s, 2 * i + 1, &sc, &m);
		d2 = d * (float)sc;
		m2 = dmin * (float)m;
		for (l = 0; l < 32; l++)
			y[l] = d1 * (float)((q[l] & 0xf) +
					    ((qh[l] & u1) ? 16 : 0)) - m1;
		for (l = 0; l < 32; l++)
			y[32 + l] = d2 * (float)((q[l] >> 4) +
						 ((qh[l] & u2) ? 16 : 0)) - m2;
		y += 64;
	}
}

/* Q6_K: 128 bytes of low nibbles (ql), 64 of 2-bit highs (qh), 16 signed
 * scales, half d.  Two halves of 128 elements; in each, element l (0-31)
 * of quarter k takes a nibble of ql[l] or ql[l + 32] and bits 2k of
 * qh[l]: x = (d * scale) * (q - 32), scale 2k + l / 16 of the half. */
static void
q6_k(const uint8_t *b, float *y)
{
	const uint8_t *ql = b, *qh = b + 128;
	const int8_t *sc = (const int8_t *)(b + 192);
	const float d = le_f16(b + 208);
	int n, l;

	for (n = 0; n < 2; n++, y += 128, ql += 64, qh += 32, sc += 8) {
		for (l = 0; l < 32; l++) {
			const int is = l / 16;
			const int q1 = ((ql[l] & 0xf) | (qh[l] & 3) << 4) - 32;
			const int q2 = ((ql[l + 32] & 0xf) |
					((qh[l] >> 2) & 3) << 4) - 32;
			const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4)
				       - 32;
			const int q4 = ((ql[l + 32] >> 4) |
					((qh[l] >> 6) & 3) << 4) - 32;

			y[l] = d * (float)sc[is] * (float)q1;
			y[l + 32] = d * (float)sc[is + 2] * (float)q2;
			y[l + 64] = d * (float)sc[is + 4] * (float)q3;
			y[l + 96] = d * (float)sc[is + 6] * (float)q4;
		}
	}
}

/* Q8_K: float32 d, 256 signed bytes, 16 int16 sums (unused); x = d * q. */
static void
q8_k(const uint8_t *b, float *y)
{
	const int8_t *qs = (const int8_t *)(b + 4);
	uint32_t bits = le_u32(b);
	float d;
	int j;

	memcpy(&d, &bits, sizeof(d));
	for (j = 0; j < QK_K; j++)
		y[j] = d * (float)qs[j];
}

/* IQ4_XS: half d, 16-bit high scale bits, 4 bytes of low scale nibbles,
 * 128 bytes of codebook nibbles.  Eight groups of 32: the scale of group
 * g is its nibble of scales_l[g / 2] and bits 2g of scales_h, minus 32;
 * x = (d * scale) * value. */
static void
iq4_xs(const uint8_t *b, float *y)
{
	const float d = le_f16(b);
	const unsigned sh = (unsigned)b[2] | (unsigned)b[3] << 8;
	const uint8_t *sl = b + 4, *qs = b + 8;
	int g, j;

	for (g = 0; g < 8; g++, y += 32, qs += 16) {
		const int ls = (int)(((sl[g / 2] >> (4 * (g % 2))) & 0xf) |
				     ((sh >> (2 * g)) & 3) << 4);
		const float dl = d * (float)(ls - 32);

		for (j = 0; j < 16; j++) {
			y[j] = dl * (float)iq4nl_values[qs[j] & 0xf];
			y[j + 16] = dl * (float)iq4nl_values[qs[j] >> 4];
		}
	}
}

/* TQ1_0: 48 bytes of 5 trits each, 4 bytes of 4 trits each, half d.  A
 * byte q holds its trits as a fixed-point fraction: trit n is the top
 * trit of q * 3^n (mod 256), ((q * 3^n mod 256) * 3) >> 8; x = (t - 1) *
 * d.  The first 32 bytes give 5 runs of 32 elements, the next 16 bytes 5
 * runs of 16, the last 4 bytes 4 runs of 4. */
static void
tq1_trits(const uint8_t *q, int n, int trits, float d, float *y)
{
	static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
	int t, m;

	for (t = 0; t < trits; t++) {
		for (m = 0; m < n; m++) {
			const uint8_t v = (uint8_t)(q[m] * pow3[t]);

			*y++ = (float)(((v * 3) >> 8) - 1) * d;
		}
	}
}

static void
tq1_0(const uint8_t *b, float *y)
{
	const float d = le_f16(b + 52);

	tq1_trits(b, 32, 5, d, y);
	tq1_trits(b + 32, 16, 5, d, y + 160);
	tq1_trits(b + 48, 4, 4, d, y + 240);
}

/* TQ2_0: 64 bytes of 2-bit values, half d.  Two halves of 32 bytes, each
 * four runs of 32 elements (bits 0-1 of the 32 bytes, then 2-3, ...);
 * x = (q - 1) * d. */
static void
tq2_0(const uint8_t *b, float *y)
{
	const float d = le_f16(b + 64);
	int h, shift, m;

	for (h = 0; h < 64; h += 32)
		for (shift = 0; shift < 8; shift += 2)
			for (m = 0; m < 32; m++)
				*y++ = (float)(((b[h + m] >> shift) & 3) - 1) * d;
}

/* --- the table ------------------------------------------------------------ */

struct kernel {
	const char *name;	/* the dtype's name (dtype.h) */
	unsigned block, bytes;
	void (*decode)(const uint8_t *b, float *y);
};

static const struct kernel kernels[] = {
	{ "Q4_0", QK, 18, q4_0 },
	{ "Q4_1", QK, 20, q4_1 },
	{ "Q5_0", QK, 22, q5_0 },
	{ "Q5_1", QK, 24, q5_1 },
	{ "Q8_0", QK, 34, q8_0 },
	{ "Q8_1", QK, 36, q8_1 },
	{ "Q2_K", QK_K, 84, q2_k },
	{ "Q3_K", QK_K, 110, q3_k },
	{ "Q4_K", QK_K, 144, q4_k },
	{ "Q5_K", QK_K, 176, q5_k },
	{ "Q6_K", QK_K, 210, q6_k },
	{ "Q8_K", QK_K, 292, q8_k },
	{ "IQ2_XXS", QK_K, 66, dequant_iq_iq2_xxs },
	{ "IQ2_XS", QK_K, 74, dequant_iq_iq2_xs },
	{ "IQ3_XXS", QK_K, 98, dequant_iq_iq3_xxs },
	{ "IQ1_S", QK_K, 50, dequant_iq_iq1_s },
	{ "IQ4_NL", QK, 18, iq4_nl },
	{ "IQ3_S", QK_K, 110, dequant_iq_iq3_s },
	{ "IQ2_S", QK_K, 82, dequant_iq_iq2_s },
	{ "IQ4_XS", QK_K, 136, iq4_xs },
	{ "IQ1_M", QK_K, 56, dequant_iq_iq1_m },
	{ "TQ1_0", QK_K, 54, tq1_0 },
	{ "TQ2_0", QK_K, 66, tq2_0 },
	{ "MXFP4", QK, 17, mxfp4 },
	{ "NVFP4", 64, 36, nvfp4 },
	{ "Q1_0", 128, 18, q1_0 },
	{ "Q2_0", 64, 18, q2_0 },
};
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

/* dtype -> kernel, matched by name once: the names are ggml's, the enum
 * values dtype.h's. */
static const struct kernel *by_dtype[DTYPE__COUNT];
static pthread_once_t by_dtype_once = PTHREAD_ONCE_INIT;

static void
by_dtype_fill(void)
{
	unsigned d;
	size_t k;

	for (d = 0; d < DTYPE__COUNT; d++)
		for (k = 0; k < NKERNELS; k++)
			if (strcmp(dtype_info((enum dtype)d)->name,
				   kernels[k].name) == 0)
				by_dtype[d] = &kernels[k];
}

static const struct kernel *
kernel_of(enum dtype d)
{
	if ((unsigned)d >= DTYPE__COUNT)
		return NULL;
	pthread_once(&by_dtype_once, by_dtype_fill);
	return by_dtype[d];
}

int
dequant_has(enum dtype d)
{
	return kernel_of(d) != NULL;
}

unsigned
dequant_block(enum dtype d)
{
	const struct kernel *k = kernel_of(d);

	return k ? k->block : 0;
}

unsigned
dequant_block_bytes(enum dtype d)
{
	const struct kernel *k = kernel_of(d);

	return k ? k->bytes : 0;
}

void
dequant_blocks(enum dtype d, const uint8_t *src, size_t n, void *out)
{
	const struct kernel *k = kernel_of(d);
	float tmp[DEQUANT_BLOCK_MAX];
	uint8_t *o = out;
	size_t i;

	if (!k)
		return;
	if ((uintptr_t)o % _Alignof(float) == 0) {
		for (i = 0; i < n; i++)
			k->decode(src + i * k->bytes,
				  (float *)(void *)(o + i * 4 * k->block));
		return;
	}
	for (i = 0; i < n; i++) {
		k->decode(src + i * k->bytes, tmp);
		memcpy(o + i * 4 * k->block, tmp, 4 * k->block);
	}
}

void
dequant_src_range(enum dtype d, uint64_t off, uint64_t len,
		  uint64_t *src_off, uint64_t *src_len)
{
	const struct kernel *k = kernel_of(d);
	uint64_t bout, b0, b1;

	*src_off = 0;
	*src_len = 0;
	if (!k || len == 0)
		return;
	bout = 4 * (uint64_t)k->block;	/* output bytes per block */
	b0 = off / bout;
	b1 = (off + len + bout - 1) / bout;
	*src_off = b0 * k->bytes;
	*src_len = (b1 - b0) * k->bytes;
}

void
dequant_window(enum dtype d, const uint8_t *src, uint64_t off, size_t len,
	       uint8_t *out)
{
	const struct kernel *k = kernel_of(d);
	float tmp[DEQUANT_BLOCK_MAX];
	uint64_t bout, at, end = off + len;
	size_t whole;

	if (!k || len == 0)
		return;
	bout = 4 * (uint64_t)k->block;
	at = off - off % bout;	/* output offset of the block src starts */
	/* a first block cut by off */
	if (at < off) {
		size_t skip = (size_t)(off - at);
		size_t n = (size_t)(bout - skip < len ? bout - skip : len);

		k->decode(src, tmp);
		memcpy(out, (const uint8_t *)tmp + skip, n);
		out += n;
		src += k->bytes;
		at += bout;
	}
	if (at >= end)
		return;
	whole = (size_t)((end - at) / bout);
	dequant_blocks(d, src, whole, out);
	out += whole * bout;
	src += whole * k->bytes;
	at += whole * bout;
	/* a last block cut by the end */
	if (at < end) {
		k->decode(src, tmp);
		memcpy(out, tmp, (size_t)(end - at));
	}
}
