/* quant_float.c - the matchers of minifloat codes times scales (see
 * quant_float.h). */
#include "model/quant_float.h"

#include <stdio.h>
#include <string.h>

#include "format/dtype.h"
#include "format/quant/qscalar.h"
#include "format/table.h"
#include "model/quant_scan.h"

/* The FP8 block DeepSeek-V3 and its kin use when no config says. */
#define FP8_DEFAULT_BLOCK 128
/* A reason's text made here. */
#define QUANT_FLOAT_MSG 200

/* The block along a dimension of n elements that g scales tile, no
 * config telling it: 128 (DeepSeek's) when it tiles, else the largest
 * power of two that does (ceil(n / b) == g), else n / g when it divides;
 * 0 when none does. */
static uint64_t
block_of(uint64_t n, uint64_t g)
{
	uint64_t lo, hi, b;

	if (g == 0 || n == 0 || g > n)
		return 0;
	if (quant_scan_ceil_div(n, FP8_DEFAULT_BLOCK) == g)
		return FP8_DEFAULT_BLOCK;
	if (g == 1)
		return n;	/* one block for the whole dimension */
	/* ceil(n / b) == g for b in [ceil(n / g), (n - 1) / (g - 1)] */
	lo = quant_scan_ceil_div(n, g);
	hi = (n - 1) / (g - 1);
	for (b = (uint64_t)1 << 62; b >= lo; b >>= 1)
		if (b <= hi)
			return b;
	return n % g == 0 ? n / g : 0;
}

/* The scale grid of an FP8 weight [rows, cols] from the scale's shape
 * (and the config's block; *assumed notes a block no config told); 0, or
 * -1 with *why. */
static int
fp8_grid(const struct quant_scan *f, const struct tensor *wt,
	 const struct tensor *st, struct fp8_scaled *p, const char **label,
	 unsigned *assumed, const char **why, char *msg)
{
	uint64_t R, C, sr, sc;
	const uint64_t *blk = f->cfg.block;

	p->cols = wt->rank ? wt->shape[wt->rank - 1] : 1;
	p->rows = p->cols ? wt->numel / p->cols : 0;
	R = p->rows;
	C = p->cols;
	if (st->numel == 1) {
		p->brow = R ? R : 1;
		p->bcol = C ? C : 1;
		*label = "fp8-tensor";
		return 0;
	}
	if (wt->rank == 3 && st->rank == 3 && st->shape[0] == wt->shape[0]) {
		/* stacked experts [E, out, in], scales [E, rows, cols]:
		 * the grid of one expert, repeated */
		R = p->erows = wt->shape[1];
		sr = st->shape[1];
		sc = st->shape[2];
	} else if (wt->rank != 2 || st->rank < 1 || st->rank > 2) {
		*why = wt->rank == 3 ? "a 3-D weight (experts) needs a 3-D "
		       "scale with one grid per expert" : "a scale per row "
		       "or block needs a 2-D weight and scale";
		return -1;
	} else {
		sr = st->shape[0];
		sc = st->rank == 2 ? st->shape[1] : 1;
	}
	*label = "fp8-block";
	if (sr == R && sc == 1) {
		p->brow = 1;
		p->bcol = C;
		*label = "fp8-channel";
	} else if (blk[0] && blk[1]) {
		/* the config's block: it tiles the grid, or the weight is
		 * refused (another block would give other values) */
		if (sr != quant_scan_ceil_div(R, blk[0]) ||
		    sc != quant_scan_ceil_div(C, blk[1])) {
			snprintf(msg, QUANT_FLOAT_MSG, "%s's "
				 "weight_block_size [%llu, %llu] does not tile "
				 "its scale grid [%llu, %llu] over [%llu, %llu]",
				 f->cfg.file, (unsigned long long)blk[0],
				 (unsigned long long)blk[1],
				 (unsigned long long)sr, (unsigned long long)sc,
				 (unsigned long long)R, (unsigned long long)C);
			*why = msg;
			return -1;
		}
		p->brow = blk[0];
		p->bcol = blk[1];
	} else if (sr == R && f->cfg.group_size > 0 &&
		   sc == quant_scan_ceil_div(C, (uint64_t)f->cfg.group_size)) {
		p->brow = 1;
		p->bcol = (uint64_t)f->cfg.group_size;
		*label = "fp8-group";
	} else if ((p->brow = block_of(R, sr)) && (p->bcol = block_of(C, sc))) {
		*assumed = QUANT_ASSUMED_BLOCK;
		if (p->brow == 1 && sr > 1)
			*label = "fp8-group";
	} else {
		*why = "its scale grid does not tile the weight";
		return -1;
	}
	return 0;
}

void
quant_float_fp8(struct quant_scan *f, size_t i, size_t base)
{
	const struct tensor *st = quant_scan_tensor(f, i), *wt;
	const char *why = NULL, *label = "fp8-block";
	char msg[QUANT_FLOAT_MSG];
	struct quant_weight *w;
	struct fp8_scaled p;
	unsigned assumed = 0;
	size_t wi = quant_scan_lookup(f, st->name, base, "");

	if (wi == QUANT_ABSENT ||
	    !fp8_scaled_is_weight(quant_scan_tensor(f, wi)->dtype))
		return;		/* a scale of something else (input_scale) */
	wt = quant_scan_tensor(f, wi);
	memset(&p, 0, sizeof(p));
	p.wdtype = wt->dtype;
	p.sdtype = st->dtype;
	if (!qscalar_is_scale(st->dtype))
		why = "its scale is not F32, F16 or BF16";
	else if (wt->strides || st->strides)
		why = "a strided view";
	else if (quant_scan_lookup(f, st->name, base, "_zero_point") !=
		 QUANT_ABSENT)
		why = "FP8 with a zero point is not decoded";
	else
		fp8_grid(f, wt, st, &p, &label, &assumed, &why, msg);
	if (!why && !quant_scan_parts_free(f, (size_t[]){ wi, i }, 2))
		why = "its tensors belong to another weight";
	if (why) {
		quant_scan_refuse(f, wt->name, wt->name_len, "%s", why);
		return;
	}
	w = quant_scan_add(f, QUANT_FP8, label, wt->name, wt->name_len, "");
	if (!w)
		return;
	w->part[0] = wi;
	w->part[1] = i;
	w->replaces = wi;
	w->assumed.what = assumed;
	if (assumed) {
		w->assumed.block[0] = p.brow;
		w->assumed.block[1] = p.bcol;
	}
	w->rank = wt->rank;
	memcpy(w->shape, wt->shape, wt->rank * sizeof(*w->shape));
	w->numel = wt->numel;
	w->u.fp8 = p;
	quant_scan_claim(f, w);
}

void
quant_float_mxfp4(struct quant_scan *f, size_t i, size_t base)
{
	const struct tensor *bt = quant_scan_tensor(f, i), *st;
	size_t si = quant_scan_lookup(f, bt->name, base, "_scales");
	const char *why = NULL;
	struct quant_weight *w;

	if (si == QUANT_ABSENT || bt->dtype != DTYPE_U8)
		return;
	st = quant_scan_tensor(f, si);
	if (bt->rank != 4 || bt->shape[3] != 16 || st->rank != 3 ||
	    st->dtype != DTYPE_U8 || memcmp(bt->shape, st->shape,
					    3 * sizeof(*bt->shape)))
		why = "blocks [E, R, G, 16] and scales [E, R, G] (U8) expected";
	else if (bt->strides || st->strides)
		why = "a strided view";
	else if (bt->shape[1] > QUANT_ROW_MAX)
		why = "its rows hold more than 16 Mi values";
	else if (!quant_scan_name_free(f, bt->name, base, "", QUANT_ABSENT))
		why = "a stored tensor has the logical name";
	else if (!quant_scan_parts_free(f, (size_t[]){ i, si }, 2))
		why = "its tensors belong to another weight";
	if (why) {
		quant_scan_refuse(f, bt->name, bt->name_len, "%s", why);
		return;
	}
	w = quant_scan_add(f, QUANT_MXFP4, "mxfp4", bt->name, base, "");
	if (!w)
		return;
	w->part[0] = i;
	w->part[1] = si;
	w->u.mx.experts = bt->shape[0];
	w->u.mx.rows = bt->shape[1];
	w->u.mx.groups = bt->shape[2];
	w->rank = 3;
	w->shape[0] = bt->shape[0];
	w->shape[1] = bt->shape[2] * 32;
	w->shape[2] = bt->shape[1];
	w->numel = bt->numel * 2;
	quant_scan_claim(f, w);
}

/* An NVFP4 weight named a[0..alen) of packed codes pi, scales si and a
 * global scale gi (model tensors), its global scale multiplying the
 * block scales (ModelOpt, whose packed codes have the weight's name) or
 * dividing them (compressed-tensors). */
static void
nvfp4(struct quant_scan *f, size_t pi, size_t si, size_t gi, const char *a,
      size_t alen, int modelopt)
{
	const struct tensor *pt = quant_scan_tensor(f, pi), *st, *gt;
	const char *why = NULL;
	struct quant_weight *w;
	struct nvfp4_st p;

	memset(&p, 0, sizeof(p));
	p.modelopt = modelopt;
	gt = quant_scan_tensor(f, gi);
	st = si == QUANT_ABSENT ? NULL : quant_scan_tensor(f, si);
	if (pt->rank == 2) {
		p.rows = pt->shape[0];
		p.cols = pt->shape[1] * 2;
	}
	if (!st)
		why = "its weight_scale is missing";
	else if (pt->rank != 2 || st->rank != 2 || st->dtype != DTYPE_F8_E4M3 ||
		 st->shape[0] != p.rows ||
		 st->shape[1] != nvfp4_st_scale_cols(&p) ||
		 (p.cols % NVFP4_ST_BLOCK && p.cols > NVFP4_ST_BLOCK))
		why = "codes [rows, cols / 2] and an F8_E4M3 scale per 16 "
		      "values of a row expected";
	else if (gt->dtype != DTYPE_F32 || gt->numel != 1)
		why = "its global scale is not one F32 value";
	else if (pt->strides || st->strides || gt->strides)
		why = "a strided view";
	else if (quant_scan_lookup(f, a, alen, "_zero_point") != QUANT_ABSENT)
		why = "NVFP4 with a zero point is not decoded";
	else if (!quant_scan_name_free(f, a, alen, "",
				       modelopt ? pi : QUANT_ABSENT))
		why = "a stored tensor has the logical name";
	else if (!quant_scan_parts_free(f, (size_t[]){ pi, si, gi }, 3))
		why = "its tensors belong to another weight";
	if (why) {
		quant_scan_refuse(f, pt->name, pt->name_len, "%s", why);
		return;
	}
	w = quant_scan_add(f, QUANT_NVFP4, modelopt ? "nvfp4-modelopt" :
			   "nvfp4", a, alen, "");
	if (!w)
		return;
	w->part[0] = pi;
	w->part[1] = si;
	w->part[2] = gi;
	w->replaces = modelopt ? pi : QUANT_ABSENT;
	w->rank = 2;
	w->shape[0] = p.rows;
	w->shape[1] = p.cols;
	w->numel = p.rows * p.cols;
	w->u.nv = p;
	quant_scan_claim(f, w);
}

void
quant_float_nvfp4_ct(struct quant_scan *f, size_t i, size_t base)
{
	const char *n = quant_scan_tensor(f, i)->name;
	size_t pi = quant_scan_lookup(f, n, base, "_packed");

	if (pi == QUANT_ABSENT)
		return;		/* a global scale of something else */
	nvfp4(f, pi, quant_scan_lookup(f, n, base, "_scale"), i, n, base, 0);
}

void
quant_float_nvfp4_modelopt(struct quant_scan *f, size_t i, size_t base)
{
	const char *n = quant_scan_tensor(f, i)->name;
	size_t pi = quant_scan_lookup(f, n, base, "");

	if (pi == QUANT_ABSENT || quant_scan_tensor(f, pi)->dtype != DTYPE_U8)
		return;		/* a second scale of something else */
	nvfp4(f, pi, quant_scan_lookup(f, n, base, "_scale"), i, n, base, 1);
}
