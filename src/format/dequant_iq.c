/* dequant_iq.c - the grid i-quants to float32 (dequant_iq.h).
 *
 * Block layouts are ggml's (ggml-common.h: block_iq2_xxs, ...),
 * little-endian; each function follows ggml's dequantize_row_* of the type
 * in its order of float32 operations (a sign is a multiplication by -1 or
 * 1, as there), so the values are the same bit for bit.
 */
#include "format/dequant_iq.h"

#include "format/dequant_grids.h"
#include "format/le.h"

#define IQ1_DELTA 0.125f	/* ggml's IQ1S_DELTA */

/* 8 values of a grid entry times dl, times their sign factors s (-1 or
 * 1, ggml's multiplication; a row of sign_factors, so that the loop has
 * no branch). */
static inline void
signed8(float dl, const uint8_t *grid, const float *s, float *y)
{
	int j;

	for (j = 0; j < 8; j++)
		y[j] = dl * (float)grid[j] * s[j];
}

/* Two entries of 4 (IQ3's grids) times dl, times their sign factors. */
static inline void
signed4x2(float dl, const uint8_t *g1, const uint8_t *g2, const float *s,
	  float *y)
{
	int j;

	for (j = 0; j < 4; j++) {
		y[j] = dl * (float)g1[j] * s[j];
		y[j + 4] = dl * (float)g2[j] * s[j + 4];
	}
}

/* The sign factors of 7 stored sign bits (the low 7 of bits) and their
 * parity. */
static inline const float *
seven_signs(const struct dequant_grids *g, uint32_t bits)
{
	return g->sign_factors[g->signs[bits & 127]];
}

/* IQ2_XXS: half d; 8 groups of 32 elements, 8 bytes each: 4 grid indices,
 * then a u32 whose top 4 bits are the scale and whose 4 runs of 7 bits
 * are the signs of each 8.  dl = d * (0.5 + scale) * 0.25. */
void
dequant_iq_iq2_xxs(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const float d = le_f16(b);
	const uint8_t *q = b + 2;
	int ib, l;

	for (ib = 0; ib < 8; ib++, q += 8) {
		const uint32_t aux = le_u32(q + 4);
		const float db = d * (0.5f + (float)(aux >> 28)) * 0.25f;

		for (l = 0; l < 4; l++, y += 8)
			signed8(db, g->iq2xxs[q[l]],
				seven_signs(g, aux >> (7 * l)), y);
	}
}

/* IQ2_XS: half d, 32 u16 (9 bits of grid index, 7 of signs), 8 bytes of
 * two 4-bit scales (the low one for the first 16 elements of a group of
 * 32). */
void
dequant_iq_iq2_xs(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const float d = le_f16(b);
	const uint8_t *qs = b + 2, *sc = b + 66;
	int ib, l;

	for (ib = 0; ib < 8; ib++) {
		const float db[2] = {
			d * (0.5f + (float)(sc[ib] & 0xf)) * 0.25f,
			d * (0.5f + (float)(sc[ib] >> 4)) * 0.25f,
		};

		for (l = 0; l < 4; l++, y += 8) {
			const unsigned q = le_u16(qs + 2 * (4 * ib + l));

			signed8(db[l / 2], g->iq2xs[q & 511],
				seven_signs(g, q >> 9), y);
		}
	}
}

/* IQ2_S: half d, 32 low bytes of grid indices, 32 bytes of signs (8 a
 * byte, stored), 8 bytes of the indices' top 2 bits (2 per group of 8),
 * 8 bytes of two 4-bit scales. */
void
dequant_iq_iq2_s(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const float d = le_f16(b);
	const uint8_t *qs = b + 2, *signs = b + 34, *qh = b + 66;
	const uint8_t *sc = b + 74;
	int ib, l;

	for (ib = 0; ib < 8; ib++, qs += 4, signs += 4) {
		const float db[2] = {
			d * (0.5f + (float)(sc[ib] & 0xf)) * 0.25f,
			d * (0.5f + (float)(sc[ib] >> 4)) * 0.25f,
		};

		for (l = 0; l < 4; l++, y += 8)
			signed8(db[l / 2], g->iq2s[qs[l] |
				((qh[ib] << (8 - 2 * l)) & 0x300)],
				g->sign_factors[signs[l]], y);
	}
}

/* IQ3_XXS: half d, 64 bytes of grid indices (two entries of 4 per 8
 * elements), then 8 u32 like IQ2_XXS's: a 4-bit scale on top, 4 runs of 7
 * sign bits.  dl = d * (0.5 + scale) * 0.5. */
void
dequant_iq_iq3_xxs(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const float d = le_f16(b);
	const uint8_t *qs = b + 2, *ss = b + 66;
	int ib, l;

	for (ib = 0; ib < 8; ib++, qs += 8) {
		const uint32_t aux = le_u32(ss + 4 * ib);
		const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;

		for (l = 0; l < 4; l++, y += 8)
			signed4x2(db, g->iq3xxs[qs[2 * l]],
				  g->iq3xxs[qs[2 * l + 1]],
				  seven_signs(g, aux >> (7 * l)), y);
	}
}

/* IQ3_S: half d, 64 low bytes of grid indices, 8 bytes of their ninth
 * bits, 32 bytes of signs, 4 bytes of two 4-bit scales, one per 32
 * elements: dl = d * (1 + 2 * scale). */
void
dequant_iq_iq3_s(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const float d = le_f16(b);
	const uint8_t *qs = b + 2, *qh = b + 66, *signs = b + 74;
	const uint8_t *sc = b + 106;
	int ib, h, l;

	for (ib = 0; ib < 4; ib++) {
		for (h = 0; h < 2; h++, qh++, qs += 8, signs += 4) {
			const float db = d * (float)(1 + 2 * (h ? sc[ib] >> 4 :
						     sc[ib] & 0xf));

			for (l = 0; l < 4; l++, y += 8)
				signed4x2(db, g->iq3s[qs[2 * l] |
					  ((qh[0] << (8 - 2 * l)) & 256)],
					  g->iq3s[qs[2 * l + 1] |
					  ((qh[0] << (7 - 2 * l)) & 256)],
					  g->sign_factors[signs[l]], y);
		}
	}
}

/* 8 values of an IQ1 grid entry plus delta, times dl. */
static inline void
shifted8(float dl, const int8_t *grid, float delta, float *y)
{
	int j;

	for (j = 0; j < 8; j++)
		y[j] = dl * ((float)grid[j] + delta);
}

/* IQ1_S: half d, 32 low bytes of grid indices, 8 u16: per 32 elements
 * the indices' top 3 bits (x4), a 3-bit scale and the sign of the
 * shift.  dl = d * (2 * scale + 1). */
void
dequant_iq_iq1_s(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const float d = le_f16(b);
	const uint8_t *qs = b + 2;
	int ib, l;

	for (ib = 0; ib < 8; ib++, qs += 4) {
		const unsigned qh = le_u16(b + 34 + 2 * ib);
		const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
		const float delta = qh & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;

		for (l = 0; l < 4; l++, y += 8)
			shifted8(dl, g->iq1s[qs[l] | (((qh >> (3 * l)) & 7) << 8)],
				 delta, y);
	}
}

/* IQ1_M: 32 low bytes of grid indices, 16 bytes (per 8 elements 3 top
 * index bits and a shift sign), 4 u16 of 3-bit scales (two per 32
 * elements) whose top nibbles make the half d. */
void
dequant_iq_iq1_m(const uint8_t *b, float *y)
{
	const struct dequant_grids *g = dequant_grids();
	const uint8_t *qs = b, *qh = b + 32;
	unsigned sc[4], k;
	float d;
	int ib, l;

	for (k = 0; k < 4; k++)
		sc[k] = le_u16(b + 48 + 2 * k);
	d = minifloat_f16((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
				     ((sc[2] >> 4) & 0x0f00) |
				     (sc[3] & 0xf000)));
	for (ib = 0; ib < 8; ib++, qs += 4, qh += 2) {
		const unsigned s = sc[ib / 2] >> (6 * (ib % 2));
		const float dl[2] = { d * (float)(2 * (s & 7) + 1),
				      d * (float)(2 * ((s >> 3) & 7) + 1) };
		const unsigned idx[4] = {
			qs[0] | ((qh[0] << 8) & 0x700),
			qs[1] | ((qh[0] << 4) & 0x700),
			qs[2] | ((qh[1] << 8) & 0x700),
			qs[3] | ((qh[1] << 4) & 0x700),
		};

		for (l = 0; l < 4; l++, y += 8)
			shifted8(dl[l / 2], g->iq1s[idx[l]],
				 qh[l / 2] & (l % 2 ? 0x80 : 0x08) ?
				 -IQ1_DELTA : IQ1_DELTA, y);
	}
}
