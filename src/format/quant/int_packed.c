/* int_packed.c - GPTQ, AWQ and compressed-tensors integers to values (see
 * int_packed.h). */
#include "format/quant/int_packed.h"

#include <stdlib.h>

#include "format/le.h"
#include "format/quant/qscalar.h"

/* AutoAWQ packs output column 8 c + ORDER[k] into nibble k of word c;
 * column 8 c + j is therefore in nibble awq_nibble[j]. */
static const unsigned awq_nibble[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };

/* Value j (0..31) of a run of 32 3-bit values in words w[0..2]. */
static unsigned
three_bit(const uint32_t w[3], unsigned j)
{
	if (j < 10)
		return (w[0] >> (3 * j)) & 7;
	if (j == 10)
		return ((w[0] >> 30) & 3) | ((w[1] << 2) & 4);
	if (j < 21)
		return (w[1] >> (3 * (j - 11) + 1)) & 7;
	if (j == 21)
		return ((w[1] >> 31) & 1) | ((w[2] << 1) & 6);
	return (w[2] >> (3 * (j - 22) + 2)) & 7;
}

/* Value j of a GPTQ packing along a run of words (word k's values are
 * 32 / bits consecutive ones; 3 bits: 3 words per 32 values). */
static unsigned
gptq_value(const uint8_t *words, uint64_t stride, unsigned bits, uint64_t j)
{
	uint32_t w[3];
	uint64_t m;

	if (bits == 3) {
		m = j / 32 * 3;
		w[0] = le_u32(words + m * stride);
		w[1] = le_u32(words + (m + 1) * stride);
		w[2] = le_u32(words + (m + 2) * stride);
		return three_bit(w, (unsigned)(j % 32));
	}
	return (le_u32(words + j / (32 / bits) * stride) >>
		(bits * (j % (32 / bits)))) & ((1u << bits) - 1);
}

void
int_packed_shapes(const struct int_packed *p, uint64_t *qrows, uint64_t *qcols,
		  uint64_t *zcols)
{
	if (p->kind == INT_PACKED_CT) {
		*qrows = p->out;
		*qcols = (p->in + 32 / p->bits - 1) / (32 / p->bits);
		*zcols = (p->out + 32 / p->bits - 1) / (32 / p->bits);
		return;
	}
	if (p->kind == INT_PACKED_AWQ) {
		*qrows = p->in;
		*qcols = (p->out + 7) / 8;
		*zcols = *qcols;
		return;
	}
	*qrows = (p->in * p->bits + 31) / 32;
	*qcols = p->out;
	*zcols = (p->out * p->bits + 31) / 32;
}

void
int_packed_band_words(const struct int_packed *p, uint64_t o0, uint64_t o1,
		      uint64_t *qfirst, uint64_t *qn, uint64_t *zfirst,
		      uint64_t *zn)
{
	uint64_t pf = 32 / p->bits, cols;

	if (p->kind == INT_PACKED_CT) {
		cols = (p->in + pf - 1) / pf;
		*qfirst = o0 * cols;
		*qn = (o1 - o0) * cols;
		*zfirst = o0 / pf;
		*zn = (o1 - o0 + pf - 1) / pf;
		return;
	}
	if (p->kind == INT_PACKED_AWQ) {
		*qfirst = *zfirst = o0 / 8;
		*qn = *zn = (o1 - o0 + 7) / 8;
		return;
	}
	*qfirst = o0;
	*qn = o1 - o0;
	*zfirst = o0 / 32 * p->bits;
	*zn = ((o1 - o0) * p->bits + 31) / 32;
	if (p->bits == 3)	/* whole runs of 3 words */
		*zn = (o1 - o0 + 31) / 32 * 3;
}

/* The zero of band column oo of every group, and its scale. */
static void
group_params(const struct int_packed *p, const uint8_t *qz, uint64_t zn,
	     const uint8_t *sc, uint64_t nc, int32_t *z, float *s)
{
	unsigned sz = dtype_info(p->sdtype)->bits / 8, v, pf = 32 / p->bits;
	uint64_t g, oo;

	if (p->kind == INT_PACKED_CT) {	/* zeros [zn, groups], scales
					   [nc, groups] */
		for (g = 0; g < p->groups; g++)
			for (oo = 0; oo < nc; oo++) {
				v = 1u << (p->bits - 1);
				if (!p->symmetric)
					v = (le_u32(qz + (oo / pf * p->groups +
							  g) * 4) >>
					     (p->bits * (oo % pf))) &
					    ((1u << p->bits) - 1);
				z[g * nc + oo] = (int32_t)v;
				s[g * nc + oo] = qscalar_load(p->sdtype,
					sc + (oo * p->groups + g) * sz);
			}
		return;
	}
	for (g = 0; g < p->groups; g++) {
		const uint8_t *zrow = qz + g * zn * 4;

		for (oo = 0; oo < nc; oo++) {
			if (p->kind == INT_PACKED_AWQ)
				v = (le_u32(zrow + oo / 8 * 4) >>
				     (4 * awq_nibble[oo % 8])) & 15;
			else
				v = gptq_value(zrow, 4, p->bits, oo);
			z[g * nc + oo] = (int32_t)v + (p->zero_offset ? 1 : 0);
			s[g * nc + oo] = qscalar_load(p->sdtype,
						      sc + (g * nc + oo) * sz);
		}
	}
}

/* The group of every input row: g_idx's, checked, or i / group_size. */
static int
row_groups(const struct int_packed *p, const uint8_t *gidx, uint32_t *grp)
{
	uint64_t i, g;

	for (i = 0; i < p->in; i++) {
		g = gidx ? (uint64_t)(int64_t)(int32_t)le_u32(gidx + 4 * i) :
		    i / p->group_size;
		if (g >= p->groups)
			return -1;
		grp[i] = (uint32_t)g;
	}
	return 0;
}

/* The code of every input row in output column oo of the band. */
static void
row_codes(const struct int_packed *p, const uint8_t *qw, uint64_t qn,
	  uint64_t oo, uint8_t *q)
{
	unsigned bits = p->bits, pf = 32 / bits, mask = (1u << bits) - 1, j;
	uint64_t i, k, n;
	uint32_t w[3];

	if (p->kind == INT_PACKED_CT) {	/* row oo of the band's rows */
		const uint8_t *row = qw + oo * ((p->in + pf - 1) / pf) * 4;

		for (i = 0; i < p->in; i++)
			q[i] = (uint8_t)((le_u32(row + i / pf * 4) >>
					  (bits * (i % pf))) & mask);
		return;
	}
	if (p->kind == INT_PACKED_AWQ) {
		const uint8_t *col = qw + oo / 8 * 4;

		j = 4 * awq_nibble[oo % 8];
		for (i = 0; i < p->in; i++)
			q[i] = (uint8_t)((le_u32(col + i * qn * 4) >> j) & 15);
		return;
	}
	if (bits == 3) {
		for (k = 0; 32 * k < p->in; k++) {
			for (j = 0; j < 3; j++)
				w[j] = le_u32(qw + ((3 * k + j) * qn + oo) * 4);
			n = p->in - 32 * k < 32 ? p->in - 32 * k : 32;
			for (j = 0; j < n; j++)
				q[32 * k + j] = (uint8_t)three_bit(w, j);
		}
		return;
	}
	for (k = 0; k * pf < p->in; k++) {
		w[0] = le_u32(qw + (k * qn + oo) * 4);
		n = p->in - k * pf < pf ? p->in - k * pf : pf;
		for (j = 0; j < n; j++)
			q[k * pf + j] = (uint8_t)((w[0] >> (bits * j)) & mask);
	}
}

int
int_packed_rows(const struct int_packed *p, const uint8_t *qw,
		const uint8_t *qz, const uint8_t *sc, const uint8_t *gidx,
		uint64_t o0, uint64_t o1, float *out)
{
	uint64_t nc = o1 - o0, qfirst, qn, zfirst, zn, oo, i, g;
	size_t ng = (size_t)(p->groups * nc) + 1, nv = (size_t)1 << p->bits;
	/* a row's values by (group, code) when that is fewer products
	 * than the row has values */
	int table = nv * p->groups <= p->in;
	uint32_t *grp = malloc((size_t)(p->in + 1) * sizeof(*grp));
	uint8_t *q = malloc((size_t)p->in + 1);
	int32_t *z = malloc(ng * sizeof(*z));
	float *s = malloc(ng * sizeof(*s));
	float *tab = table ? malloc(nv * p->groups * sizeof(*tab)) : NULL;
	int rc = -2;

	if (!grp || !q || !z || !s || (table && !tab))
		goto out;
	rc = -1;
	if (row_groups(p, gidx, grp))
		goto out;
	int_packed_band_words(p, o0, o1, &qfirst, &qn, &zfirst, &zn);
	group_params(p, qz, zn, sc, nc, z, s);
	for (oo = 0; oo < nc; oo++) {
		float *row = out + oo * p->in;

		row_codes(p, qw, qn, oo, q);
		if (!table) {
			for (i = 0; i < p->in; i++) {
				uint64_t k = grp[i] * nc + oo;

				row[i] = qscalar_round(p->sdtype, s[k] *
					(float)((int32_t)q[i] - z[k]));
			}
			continue;
		}
		for (g = 0; g < p->groups; g++) {
			uint64_t k = g * nc + oo;
			size_t v;

			for (v = 0; v < nv; v++)
				tab[g * nv + v] = qscalar_round(p->sdtype,
					s[k] * (float)((int32_t)v - z[k]));
		}
		for (i = 0; i < p->in; i++)
			row[i] = tab[grp[i] * nv + q[i]];
	}
	rc = 0;
out:
	free(grp);
	free(q);
	free(z);
	free(s);
	free(tab);
	return rc;
}
