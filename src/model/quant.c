/* quant.c - recognising a model's quantized weights (see quant.h).
 *
 * One pass over the tensors (quant_scan.h): a name ending in a scheme's
 * telltale suffix (the table `matchers`) makes a candidate, whose
 * siblings its matcher (quant_float.h, quant_packed.h, quant_bnb.h) looks
 * up by name in a keyed table (nametab.h: names come from files); then
 * one over a PyTorch checkpoint's metadata for its quantized tensors
 * (quant_torch.h).  A
 * tensor is a part of one weight at most; the first candidate that
 * claims it keeps it.
 */
#include "model/quant.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/tensor_size.h"
#include "model/model.h"
#include "model/quant_bnb.h"
#include "model/quant_float.h"
#include "model/quant_packed.h"
#include "model/quant_scan.h"
#include "model/quant_torch.h"

static const char *const roles[][QUANT_PARTS] = {
	[QUANT_FP8] = { "weight", "scale" },
	[QUANT_MXFP4] = { "blocks", "scales" },
	[QUANT_GPTQ] = { "qweight", "qzeros", "scales", "g_idx" },
	[QUANT_AWQ] = { "qweight", "qzeros", "scales" },
	[QUANT_BNB4] = { "weight", "absmax", "quant_map", "quant_state",
			 "nested_absmax", "nested_quant_map" },
	[QUANT_NVFP4] = { "packed", "scale", "global_scale" },
	[QUANT_CT_INT] = { "packed", "zero_point", "scale", "g_idx", "shape" },
	[QUANT_TORCH] = { "int_repr", "scales", "zero_points" },
};

const char *
quant_role(enum quant_scheme s, unsigned k)
{
	if ((unsigned)s >= sizeof(roles) / sizeof(roles[0]) ||
	    k >= QUANT_PARTS)
		return NULL;
	return roles[s][k];
}

/* --- the registry -------------------------------------------------------- */

/* A telltale suffix and what it makes of the tensor that ends with it
 * (base: the name's length without the suffix). */
static const struct matcher {
	const char *suffix;
	void (*match)(struct quant_scan *f, size_t i, size_t base);
} matchers[] = {
	{ "_scale_inv", quant_float_fp8 },
	/* before "_scale", which it ends with */
	{ "_global_scale", quant_float_nvfp4_ct },
	{ "_scale_2", quant_float_nvfp4_modelopt },
	{ "_scale", quant_float_fp8 },
	{ "_blocks", quant_float_mxfp4 },
	{ "qweight", quant_packed_qweight },
	{ "_shape", quant_packed_ct },
	{ ".quant_state.bitsandbytes__nf4", quant_bnb_nf4 },
	{ ".quant_state.bitsandbytes__fp4", quant_bnb_fp4 },
};

#define NMATCHERS (sizeof(matchers) / sizeof(matchers[0]))

void
quant_free(struct quant *q)
{
	size_t k;

	if (!q)
		return;
	for (k = 0; k < q->nkept; k++)
		free(q->refused[k].text);
	free(q->refused);
	free(q->refused_at);
	free(q->by_replaced);
	free(q->w);
	free(q->priv);
	free(q);
}

size_t
quant_replacing(const struct quant *q, size_t i)
{
	size_t lo = 0, hi = q->nreplacing;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t r = q->w[q->by_replaced[mid]].replaces;

		if (r == i)
			return q->by_replaced[mid];
		if (r < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return QUANT_ABSENT;
}

static int
cmp_replaced(const void *a, const void *b, void *arg)
{
	const struct quant *q = arg;
	size_t x = q->w[*(const size_t *)a].replaces;
	size_t y = q->w[*(const size_t *)b].replaces;

	return (x > y) - (x < y);
}

/* q->by_replaced; 0 or -1 (no memory). */
static int
index_replaced(struct quant *q)
{
	size_t i;

	q->by_replaced = malloc((q->n ? q->n : 1) * sizeof(*q->by_replaced));
	if (!q->by_replaced)
		return -1;
	for (i = 0; i < q->n; i++)
		if (q->w[i].replaces != QUANT_ABSENT)
			q->by_replaced[q->nreplacing++] = i;
	qsort_r(q->by_replaced, q->nreplacing, sizeof(*q->by_replaced),
		cmp_replaced, q);
	return 0;
}

/* Candidates need a telltale suffix (or a PyTorch checkpoint's
 * NAME.__quantizer__, quant_torch.h); most models have none, and their
 * mount pays one pass over the names. */
static int
has_candidates(const struct model *m)
{
	size_t i, k, base;

	for (i = 0; i < m->ntensors; i++)
		for (k = 0; k < NMATCHERS; k++)
			if (quant_scan_ends_with(m->tensors[i].t,
						 matchers[k].suffix, &base))
				return 1;
	return quant_torch_any(m);
}

/* quant_find(), or with count quant_count(): *counted only. */
static int
find(const struct model *m, int count, struct quant **out,
     struct quant_count *counted, struct err *e)
{
	struct quant_scan f;
	size_t i, k, base;
	uint64_t data = 0;

	*out = NULL;
	if (counted)
		memset(counted, 0, sizeof(*counted));
	if (!has_candidates(m))
		return 0;
	if (quant_scan_init(&f, m, count))
		goto oom;
	for (i = 0; i < m->ntensors && !f.oom; i++)
		for (k = 0; k < NMATCHERS; k++)
			if (quant_scan_ends_with(m->tensors[i].t,
						 matchers[k].suffix, &base)) {
				matchers[k].match(&f, i, base);
				break;
			}
	if (!f.oom)
		quant_torch_scan(&f);
	if (f.oom)
		goto oom;
	if (count) {
		*counted = f.counted;
		counted->refused = f.q->nrefused;
		counted->config = f.q->config;
		counted->assumed_why = f.q->assumed_why;
		quant_scan_free(&f);
		quant_free(f.q);
		return 0;
	}
	/* an empty weight has no bytes to compute, one of more elements
	 * than any stored tensor may have (format/tensor_size.h: its views'
	 * sizes would not fit a file size) or past what the computed shard
	 * holds none that fits: left as stored */
	for (i = k = 0; i < f.q->n; i++) {
		const char *why = NULL;

		if (f.q->w[i].numel == 0)
			why = "an empty weight";
		else if (f.q->w[i].numel > TENSOR_SIZE_NUMEL_MAX)
			why = "more than the 2^56 values stfs serves";
		else if (4 * f.q->w[i].numel > QUANT_DATA_MAX - data)
			why = "the weights before it take all the 2^62 bytes "
			      "of float32 values stfs serves";
		if (why) {
			quant_scan_refuse(&f, f.names.data +
					  (uintptr_t)f.q->w[i].name,
					  f.q->w[i].name_len, "%s", why);
			continue;
		}
		data += 4 * f.q->w[i].numel;
		f.q->w[k++] = f.q->w[i];
	}
	f.q->n = k;
	if (f.oom)
		goto oom;
	/* the arena is final: offsets become pointers */
	f.q->priv = buf_steal(&f.names);
	for (i = 0; i < f.q->n; i++)
		f.q->w[i].name = (const char *)f.q->priv +
				 (uintptr_t)f.q->w[i].name;
	quant_scan_free(&f);
	if (index_replaced(f.q))
		goto oom;
	if (f.q->n == 0 && f.q->nrefused == 0) {
		quant_free(f.q);
		return 0;
	}
	*out = f.q;
	return 0;
oom:
	quant_scan_free(&f);
	quant_free(f.q);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}

int
quant_find(const struct model *m, struct quant **out, struct err *e)
{
	return find(m, 0, out, NULL, e);
}

int
quant_count(const struct model *m, struct quant_count *out, struct err *e)
{
	struct quant *q;

	return find(m, 1, &q, out, e);
}
