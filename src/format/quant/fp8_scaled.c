/* fp8_scaled.c - FP8 times scales (see fp8_scaled.h). */
#include "format/quant/fp8_scaled.h"

#include <string.h>

#include "format/minifloat.h"
#include "format/quant/qscalar.h"

int
fp8_scaled_is_weight(enum dtype d)
{
	return d == DTYPE_F8_E4M3 || d == DTYPE_F8_E5M2 ||
	       d == DTYPE_F8_E4M3FNUZ || d == DTYPE_F8_E5M2FNUZ;
}

/* Rows of an expert: erows, or all of them (0: one expert). */
static uint64_t
expert_rows(const struct fp8_scaled *p)
{
	return p->erows ? p->erows : p->rows ? p->rows : 1;
}

uint64_t
fp8_scaled_grid_rows(const struct fp8_scaled *p)
{
	uint64_t er = expert_rows(p);

	return (p->rows + er - 1) / er * ((er + p->brow - 1) / p->brow);
}

uint64_t
fp8_scaled_grid_row(const struct fp8_scaled *p, uint64_t r)
{
	uint64_t er = expert_rows(p);

	return r / er * ((er + p->brow - 1) / p->brow) + r % er / p->brow;
}

uint64_t
fp8_scaled_grid_cols(const struct fp8_scaled *p)
{
	return (p->cols + p->bcol - 1) / p->bcol;
}

/* One run of a row under one scale: out[k] = round(tab[w[k]] * s).  A
 * long run rounded to a half precision looks its 256 products up. */
static void
run(const float *tab, enum dtype sd, float s, const uint8_t *w, uint64_t n,
    float *out)
{
	float prod[256];
	uint64_t k;

	if (sd != DTYPE_F32 && n >= 1024) {
		for (k = 0; k < 256; k++)
			prod[k] = qscalar_round(sd, tab[k] * s);
		for (k = 0; k < n; k++)
			out[k] = prod[w[k]];
		return;
	}
	switch (sd) {
	case DTYPE_F32:
		for (k = 0; k < n; k++)
			out[k] = tab[w[k]] * s;
		return;
	case DTYPE_BF16:
		for (k = 0; k < n; k++)
			out[k] = qscalar_round_bf16(tab[w[k]] * s);
		return;
	default:
		for (k = 0; k < n; k++)
			out[k] = qscalar_round(sd, tab[w[k]] * s);
		return;
	}
}

void
fp8_scaled_range(const struct fp8_scaled *p, const uint8_t *w,
		 const uint8_t *s, uint64_t e0, uint64_t e1, float *out)
{
	unsigned sz = dtype_info(p->sdtype)->bits / 8;
	uint64_t gcols = fp8_scaled_grid_cols(p);
	uint64_t g0 = fp8_scaled_grid_row(p, e0 / p->cols);
	uint64_t e = e0, r, c, stop, n;
	float tab[256];
	uint32_t b;
	unsigned k;

	for (k = 0; k < 256; k++) {
		b = minifloat_bits(p->wdtype, k);
		memcpy(&tab[k], &b, sizeof(b));
	}
	while (e < e1) {
		const uint8_t *srow;

		r = e / p->cols;
		c = e % p->cols;
		srow = s + (fp8_scaled_grid_row(p, r) - g0) * gcols * sz;
		stop = (r + 1) * p->cols < e1 ? (r + 1) * p->cols : e1;
		for (; e < stop; e += n, c += n) {
			/* a run under one scale: to the block's edge */
			n = p->bcol - c % p->bcol;
			if (n > stop - e)
				n = stop - e;
			run(tab, p->sdtype, qscalar_load(p->sdtype, srow +
					(c / p->bcol) * sz), w + (e - e0), n,
			    out + (e - e0));
		}
	}
}
