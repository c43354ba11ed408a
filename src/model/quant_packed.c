/* quant_packed.c - the matcher of integers packed in I32, GPTQ's and
 * AWQ's (see quant_packed.h). */
#include "model/quant_packed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/dtype.h"
#include "format/quant/qscalar.h"
#include "format/table.h"
#include "model/model.h"
#include "model/quant_scan.h"

/* 0 when every g_idx entry names one of the groups, else -1 with *why
 * (read in chunks: an input of 16 Mi rows is 64 MiB of g_idx). */
static int
gidx_check(struct quant_scan *f, size_t gi, uint64_t groups,
	   const char **why)
{
	const struct tensor *t = quant_scan_tensor(f, gi);
	uint64_t n = t->end - t->begin, off, k;
	uint8_t *b = malloc(1 << 20);
	int rc = 0;

	if (!b) {	/* not the weight's fault: decided on a later try */
		f->oom = 1;
		*why = "out of memory";
		return -1;
	}
	for (off = 0; rc == 0 && off < n; off += 1 << 20) {
		size_t len = n - off < (1 << 20) ? (size_t)(n - off) : 1 << 20;

		rc = model_tensor_read(f->m, &f->m->tensors[gi], off, len, b);
		if (rc) {
			/* short of memory: decided on a later try */
			f->oom |= rc == -ENOMEM;
			*why = "its g_idx cannot be read";
			rc = -1;
		}
		for (k = 0; rc == 0 && k + 4 <= len; k += 4) {
			uint32_t v = (uint32_t)b[k] | (uint32_t)b[k + 1] << 8 |
				     (uint32_t)b[k + 2] << 16 |
				     (uint32_t)b[k + 3] << 24;

			if ((uint64_t)v >= groups) {	/* negatives too */
				*why = "its g_idx names a group that is not "
				       "there";
				rc = -1;
			}
		}
	}
	free(b);
	return rc;
}

static uint64_t
gptq_zcols(uint64_t out, unsigned bits)
{
	return bits == 3 ? quant_scan_ceil_div(out, 32) * 3 :
	       quant_scan_ceil_div(out * bits, 32);
}

static uint64_t
gptq_qrows(uint64_t in, unsigned bits)
{
	return quant_scan_ceil_div(in * bits, 32);
}

/* GPTQ's bits, input size and groups; 0 or -1 with *why. */
static int
gptq_fit(const struct quant_scan *f, const struct tensor *qw,
	 const struct tensor *qz, const struct tensor *gi,
	 struct int_packed *p, const char **why)
{
	static const unsigned cand[] = { 2, 3, 4, 8 };
	unsigned bits = 0, n = 0, k;
	uint64_t in = 0;

	for (k = 0; k < 4; k++) {
		unsigned b = cand[k];

		if (f->cfg.bits && f->cfg.bits != b)
			continue;
		if (gptq_zcols(p->out, b) != qz->shape[1])
			continue;
		if (gi && gptq_qrows(gi->shape[0], b) != qw->shape[0])
			continue;
		if (b == 3 && (gi ? gi->shape[0] % 32 : qw->shape[0] % 3))
			continue;
		bits = b;
		n++;
	}
	if (n != 1) {
		*why = n ? "several bit widths fit: say which in config.json" :
		       "no bit width (2, 3, 4, 8) fits its shapes";
		return -1;
	}
	in = gi ? gi->shape[0] : bits == 3 ? qw->shape[0] / 3 * 32 :
	     qw->shape[0] * (32 / bits);
	p->bits = bits;
	p->in = in;
	p->zero_offset = !f->cfg.gptq_v2;
	return 0;
}

/* The group size of a weight without g_idx (or for its sidecar; *assumed
 * notes one no config told that changes values); 0 or -1 with *why. */
static int
group_fit(const struct quant_scan *f, struct int_packed *p, int have_gidx,
	  unsigned *assumed, const char **why)
{
	int64_t gs = f->cfg.group_size;

	if (p->groups == 0) {
		*why = "its scales have no groups";
		return -1;
	}
	if (gs == -1)
		gs = (int64_t)p->in;
	if (gs > 0 && quant_scan_ceil_div(p->in, (uint64_t)gs) == p->groups) {
		p->group_size = (uint64_t)gs;
		return 0;
	}
	if (p->groups && p->in % p->groups == 0) {
		p->group_size = p->in / p->groups;
		if (!have_gidx && p->groups > 1)
			*assumed |= QUANT_ASSUMED_GROUP;
		return 0;
	}
	if (have_gidx) {	/* the groups come from g_idx */
		p->group_size = quant_scan_ceil_div(p->in, p->groups);
		return 0;
	}
	*why = "its group size is unknown: say it in config.json";
	return -1;
}

/* Add the weight of parts[0..QUANT_PARTS) decoded as p, named a[0..alen)
 * + b, [p->out, p->in], and claim its parts. */
static void
claim_int_packed(struct quant_scan *f, enum quant_scheme s, const char *label,
		 const char *a, size_t alen, const char *b,
		 const size_t *parts, unsigned assumed,
		 const struct int_packed *p)
{
	struct quant_weight *w = quant_scan_add(f, s, label, a, alen, b);

	if (!w)
		return;
	memcpy(w->part, parts, QUANT_PARTS * sizeof(*parts));
	w->assumed.what = assumed;
	if (assumed & QUANT_ASSUMED_GROUP)
		w->assumed.group_size = p->group_size;
	w->rank = 2;
	w->shape[0] = p->out;
	w->shape[1] = p->in;
	w->numel = p->out * p->in;
	w->u.ip = *p;
	quant_scan_claim(f, w);
}

void
quant_packed_qweight(struct quant_scan *f, size_t i, size_t base)
{
	const struct tensor *qw = quant_scan_tensor(f, i), *qz, *sc, *gi = NULL;
	const char *why = NULL, *m = f->cfg.method;
	size_t zi = quant_scan_lookup(f, qw->name, base, "qzeros");
	size_t si = quant_scan_lookup(f, qw->name, base, "scales");
	size_t gidx = quant_scan_lookup(f, qw->name, base, "g_idx");
	struct int_packed p;
	unsigned assumed = 0;
	int awq;

	if (zi == QUANT_ABSENT || si == QUANT_ABSENT)
		return;
	qz = quant_scan_tensor(f, zi);
	sc = quant_scan_tensor(f, si);
	if (gidx != QUANT_ABSENT)
		gi = quant_scan_tensor(f, gidx);
	memset(&p, 0, sizeof(p));
	if (qw->dtype != DTYPE_I32 || qz->dtype != DTYPE_I32 ||
	    !qscalar_is_scale(sc->dtype) || qw->rank != 2 || qz->rank != 2 ||
	    sc->rank != 2 || (gi && (gi->dtype != DTYPE_I32 ||
				     gi->rank != 1))) {
		quant_scan_refuse(f, qw->name, qw->name_len, "qweight, qzeros "
				  "(I32, 2-D), scales (F16, BF16, F32, 2-D), "
				  "g_idx (I32) expected");
		return;
	}
	p.out = sc->shape[1];
	p.groups = sc->shape[0];
	p.sdtype = sc->dtype;
	awq = strcmp(m, "awq") == 0 ||
	      (strcmp(m, "gptq") != 0 && !gi && qw->shape[1] != p.out &&
	       qw->shape[1] == quant_scan_ceil_div(p.out, 8));
	if (qz->shape[0] != p.groups) {
		why = "qzeros and scales have different group counts";
	} else if (qw->strides || qz->strides || sc->strides ||
		   (gi && gi->strides)) {
		why = "a strided view";
	} else if (awq) {
		p.kind = INT_PACKED_AWQ;
		p.bits = 4;
		p.in = qw->shape[0];
		if (f->cfg.awq_gemv)
			why = "AWQ's GEMV layout is not decoded";
		else if ((f->cfg.bits && f->cfg.bits != 4) || gi)
			why = "AWQ is decoded with 4 bits and no g_idx only";
		else if (qw->shape[1] != quant_scan_ceil_div(p.out, 8) ||
			 qz->shape[1] != quant_scan_ceil_div(p.out, 8))
			why = "qweight or qzeros do not fit AWQ's packing";
		else
			group_fit(f, &p, 0, &assumed, &why);
	} else {
		p.kind = INT_PACKED_GPTQ;
		/* a config that does not say means v1, as for its
		 * reference */
		assumed = f->cfg.file ? 0 : QUANT_ASSUMED_FORMAT;
		if (qw->shape[1] != p.out)
			why = "qweight's columns are not scales' columns";
		else if (!gptq_fit(f, qw, qz, gi, &p, &why))
			group_fit(f, &p, gi != NULL, &assumed, &why);
	}
	if (!why && p.in > QUANT_ROW_MAX)
		why = "its rows hold more than 16 Mi values";
	if (!why && !quant_scan_name_free(f, qw->name, base, "weight",
					  QUANT_ABSENT))
		why = "a stored tensor has the logical name";
	if (!why && !quant_scan_parts_free(f, (size_t[]){ i, zi, si, gidx }, 4))
		why = "its tensors belong to another weight";
	if (!why && gi && !awq && !f->count)
		gidx_check(f, gidx, p.groups, &why);
	if (f->oom)
		return;
	if (why && *m && strcmp(m, "gptq") && strcmp(m, "awq")) {
		/* the config is about another method: that is the cause */
		quant_scan_refuse(f, qw->name, qw->name_len, "%s names "
				  "quant_method \"%s\", not gptq or awq, whose "
				  "qweight this looks like (as GPTQ or AWQ: %s)",
				  f->cfg.file, m, why);
		return;
	}
	if (why) {
		quant_scan_refuse(f, qw->name, qw->name_len, "%s", why);
		return;
	}
	claim_int_packed(f, awq ? QUANT_AWQ : QUANT_GPTQ, awq ? "awq" : "gptq",
			 qw->name, base, "weight", (size_t[QUANT_PARTS]){
				 i, zi, si, awq ? QUANT_ABSENT : gidx,
				 QUANT_ABSENT, QUANT_ABSENT }, assumed, &p);
}

/* weight_shape's [out, in] (I64 or I32 [2]); 0 or -1. */
static int
ct_shape(const struct quant_scan *f, size_t i, uint64_t *out, uint64_t *in)
{
	const struct tensor *t = quant_scan_tensor(f, i);
	unsigned sz = t->dtype == DTYPE_I64 ? 8 : 4, k;
	uint8_t b[16];
	int64_t v[2];

	if ((t->dtype != DTYPE_I64 && t->dtype != DTYPE_I32) || t->rank != 1 ||
	    t->shape[0] != 2 || t->strides ||
	    model_tensor_read(f->m, &f->m->tensors[i], 0, 2 * sz, b))
		return -1;
	for (k = 0; k < 2; k++) {
		uint64_t x = 0;
		unsigned j;

		for (j = 0; j < sz; j++)
			x |= (uint64_t)b[k * sz + j] << (8 * j);
		v[k] = sz == 8 ? (int64_t)x : (int64_t)(int32_t)(uint32_t)x;
	}
	if (v[0] <= 0 || v[1] <= 0)
		return -1;
	*out = (uint64_t)v[0];
	*in = (uint64_t)v[1];
	return 0;
}

/* bits and the input size from the config, weight_shape and the packed
 * columns; NULL or why not. */
static const char *
ct_fit(const struct quant_scan *f, size_t i, const struct tensor *pk,
       struct int_packed *p)
{
	static const unsigned cand[] = { 2, 4, 8 };
	unsigned k, n = 0;

	/* read when counting too (16 bytes): without it the input, bits
	 * and a lying weight_shape are guesses, and the count would not be
	 * what .dequant/ holds */
	if (ct_shape(f, i, &p->out, &p->in))
		return "its weight_shape is not two positive integers "
		       "(I64 or I32 [2])";
	if (p->out != pk->shape[0])
		return "weight_packed's rows are not weight_shape's first";
	for (k = 0; k < 3; k++) {
		if (f->cfg.bits && f->cfg.bits != cand[k])
			continue;
		if (quant_scan_ceil_div(p->in, 32 / cand[k]) != pk->shape[1])
			continue;
		p->bits = cand[k];
		n++;
	}
	if (f->cfg.bits && f->cfg.bits != 2 && f->cfg.bits != 4 &&
	    f->cfg.bits != 8)
		return "its num_bits is not 2, 4 or 8";
	if (n != 1)
		return n ? "several bit widths fit: say num_bits in config.json" :
		       "no bit width (2, 4, 8) fits weight_packed's columns";
	return NULL;
}

void
quant_packed_ct(struct quant_scan *f, size_t i, size_t base)
{
	const struct tensor *sh = quant_scan_tensor(f, i), *pk, *sc;
	const struct tensor *zp = NULL, *gi = NULL;
	const char *n = sh->name, *why = NULL;
	size_t pi = quant_scan_lookup(f, n, base, "_packed");
	size_t si = quant_scan_lookup(f, n, base, "_scale");
	size_t zi = quant_scan_lookup(f, n, base, "_zero_point");
	size_t gidx = quant_scan_lookup(f, n, base, "_g_idx");
	struct int_packed p;
	unsigned assumed = 0;

	if (pi == QUANT_ABSENT || quant_scan_tensor(f, pi)->dtype != DTYPE_I32)
		return;		/* a shape of something else (or NVFP4) */
	pk = quant_scan_tensor(f, pi);
	memset(&p, 0, sizeof(p));
	p.kind = INT_PACKED_CT;
	if (zi != QUANT_ABSENT && f->cfg.symmetric != 1)
		zp = quant_scan_tensor(f, zi);
	else
		zi = QUANT_ABSENT;	/* symmetric: a stored zero is 0 */
	if (gidx != QUANT_ABSENT)
		gi = quant_scan_tensor(f, gidx);
	p.symmetric = zp == NULL;
	if (si == QUANT_ABSENT) {
		why = "it has no weight_scale";
	} else if (sc = quant_scan_tensor(f, si), pk->rank != 2 ||
		   !qscalar_is_scale(sc->dtype) || sc->rank != 2 ||
		   (zp && (zp->dtype != DTYPE_I32 || zp->rank != 2)) ||
		   (gi && (gi->dtype != DTYPE_I32 || gi->rank != 1))) {
		why = "weight_packed (I32, 2-D), weight_scale (F16, BF16, "
		      "F32, 2-D), weight_zero_point (I32, 2-D), weight_g_idx "
		      "(I32) expected";
	} else if (*f->cfg.ct_format && strcmp(f->cfg.ct_format,
						"pack-quantized")) {
		why = "config.json's compressed-tensors format is not "
		      "pack-quantized";
	} else if (!zp && f->cfg.symmetric == 0) {
		why = "config.json says symmetric false but there is no "
		      "weight_zero_point";
	} else if (pk->strides || sc->strides || (zp && zp->strides) ||
		   (gi && gi->strides)) {
		why = "a strided view";
	} else if (!(why = ct_fit(f, i, pk, &p))) {
		p.groups = sc->shape[1];
		p.sdtype = sc->dtype;
		if (sc->shape[0] != p.out)
			why = "weight_scale's rows are not the output's";
		else if (zp && (zp->shape[0] !=
				quant_scan_ceil_div(p.out, 32 / p.bits) ||
				zp->shape[1] != p.groups))
			why = "weight_zero_point is not packed [ceil(out * bits "
			      "/ 32), groups]";
		else if (gi && gi->shape[0] != p.in)
			why = "weight_g_idx is not one group per input column";
		else
			group_fit(f, &p, gi != NULL, &assumed, &why);
	}
	if (!why && p.in > QUANT_ROW_MAX)
		why = "its rows hold more than 16 Mi values";
	if (!why && !quant_scan_name_free(f, n, base, "", QUANT_ABSENT))
		why = "a stored tensor has the logical name";
	if (!why && !quant_scan_parts_free(f, (size_t[]){ pi, zi, si, gidx, i },
					   5))
		why = "its tensors belong to another weight";
	if (!why && gi && !f->count)
		gidx_check(f, gidx, p.groups, &why);
	if (f->oom)
		return;
	if (why) {
		quant_scan_refuse(f, pk->name, pk->name_len,
				  "compressed-tensors pack-quantized: %s", why);
		return;
	}
	claim_int_packed(f, QUANT_CT_INT, "pack-quantized", n, base, "",
			 (size_t[QUANT_PARTS]){ pi, zi, si, gidx, i,
						QUANT_ABSENT }, assumed, &p);
}
