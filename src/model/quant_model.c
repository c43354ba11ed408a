/* quant_model.c - the derived model with its quantized weights
 * dequantized (see quant_model.h). */
#include "model/quant_model.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/container.h"
#include "format/dtype.h"
#include "model/model.h"
#include "model/model_beside.h"
#include "model/quant.h"
#include "model/quant_source.h"
#include "source/source.h"

#define DEQUANT_SHARD "dequantized"

/* The computed shard of a derived model, else NULL. */
static const struct source *
derived_src(const struct model *d)
{
	if (!d || !d->nshards)
		return NULL;
	return quant_source_quant(d->shards[d->nshards - 1].src) ?
	       d->shards[d->nshards - 1].src : NULL;
}

const struct quant *
quant_model_quant(const struct model *d)
{
	return quant_source_quant(derived_src(d));
}

const struct model *
quant_model_base(const struct model *d)
{
	return quant_source_base(derived_src(d));
}

size_t
quant_model_replacement(const struct model *d, size_t i)
{
	const struct quant *q = quant_model_quant(d);
	size_t k;

	if (!q)
		return SIZE_MAX;
	k = quant_replacing(q, i);
	return k == QUANT_ABSENT ? SIZE_MAX : d->ntensors - q->n + k;
}

/* --- building ------------------------------------------------------------- */

/* A copy of h's scalars and metadata with room for n tensors; NULL when
 * out of memory.  The names, shapes and metadata text stay h's. */
static struct header *
header_like(const struct header *h, size_t n)
{
	struct header *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	*c = *h;
	c->ntensors = 0;
	c->priv = NULL;
	c->free_priv = NULL;
	c->tensors = calloc(n ? n : 1, sizeof(*c->tensors));
	c->meta = malloc((h->nmeta ? h->nmeta : 1) * sizeof(*c->meta));
	if (!c->tensors || !c->meta) {
		container_free(c);
		return NULL;
	}
	memcpy(c->meta, h->meta, h->nmeta * sizeof(*c->meta));
	return c;
}

/* The table of the computed shard: the logical tensors back to back, of
 * dtype dt (F32, BF16 or F16); offs[k] gets weight k's first byte.  NULL
 * when out of memory. */
static struct header *
logical_header(const struct quant *q, enum dtype dt, uint64_t *offs)
{
	uint64_t es = dtype_info(dt)->bits / 8;
	struct header *h = calloc(1, sizeof(*h));
	uint64_t at = 0;
	size_t k;

	if (!h)
		return NULL;
	h->tensors = calloc(q->n ? q->n : 1, sizeof(*h->tensors));
	if (!h->tensors) {
		free(h);
		return NULL;
	}
	for (k = 0; k < q->n; k++) {
		const struct quant_weight *w = &q->w[k];
		struct tensor *t = &h->tensors[k];

		t->name = w->name;
		t->name_len = w->name_len;
		t->dtype = dt;
		t->rank = w->rank;
		t->shape = w->shape;
		t->numel = w->numel;
		t->begin = at;
		t->end = at + es * w->numel;
		offs[k] = at;
		at = t->end;
	}
	h->ntensors = q->n;
	h->file_size = h->data_len = at;
	h->format = DEQUANT_SHARD;
	return h;
}

/* The shards of d: m's, each table keeping the tensors that are no
 * weight's part nor a refused weight (claimed), in m's order;
 * d->tensors points into them. */
static int
kept_shards(struct model *d, const struct model *m, const uint8_t *claimed)
{
	size_t *count = calloc(m->nshards + 1, sizeof(*count)), i, s;
	int rc = -1;

	if (!count)
		return -1;
	for (i = 0; i < m->ntensors; i++)
		if (!claimed[i])
			count[m->tensors[i].shard]++;
	for (s = 0; s < m->nshards; s++) {
		struct shard *sh = &d->shards[s];

		sh->name = strdup(m->shards[s].name);
		sh->hdr = header_like(m->shards[s].hdr, count[s]);
		sh->src = m->shards[s].src;
		sh->borrowed = 1;
		d->nshards++;
		if (!sh->name || !sh->hdr)
			goto out;
	}
	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[i];
		struct header *h = d->shards[mt->shard].hdr;

		if (claimed[i])
			continue;
		h->tensors[h->ntensors] = *mt->t;
		d->tensors[d->ntensors].t = &h->tensors[h->ntensors++];
		d->tensors[d->ntensors++].shard = mt->shard;
	}
	rc = 0;
out:
	free(count);
	return rc;
}

static char *
dup_or_null(const char *s, int *oom)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*oom = 1;
	return c;
}

/* quant_model_open(), taking m when own. */
static int
derive(struct model *m, int own, enum dtype dt, struct model **out,
       struct err *e)
{
	struct model *d = NULL;
	struct quant *q = NULL;
	struct header *lh = NULL;
	uint8_t *claimed = NULL;
	uint64_t *offs = NULL;
	struct source *src = NULL;
	size_t i, k;
	char *name = NULL;
	int oom = 0;

	*out = NULL;
	if (derived_src(m))
		return 0;
	if (quant_find(m, &q, e))
		return -1;
	if (!q)
		return 0;
	d = calloc(1, sizeof(*d));
	claimed = calloc(m->ntensors ? m->ntensors : 1, 1);
	offs = calloc(q->n ? q->n : 1, sizeof(*offs));
	if (!d || !claimed || !offs)
		goto oom;
	d->shards = calloc(m->nshards + 1, sizeof(*d->shards));
	d->tensors = calloc(m->ntensors + q->n + 1, sizeof(*d->tensors));
	d->arg = dup_or_null(m->arg, &oom);
	d->index_path = dup_or_null(m->index_path, &oom);
	d->metadata_json = dup_or_null(m->metadata_json, &oom);
	d->sharded = m->sharded;
	if (oom || !d->shards || !d->tensors)
		goto oom;
	if (model_beside_copy(d, m, e))
		goto fail;
	for (k = 0; k < q->n; k++)
		for (i = 0; i < QUANT_PARTS; i++)
			if (q->w[k].part[i] != QUANT_ABSENT)
				claimed[q->w[k].part[i]] = 1;
	/* a refused weight's codes have no plain form: they would look
	 * like values (an FP8 weight's .npy/ without its scales) */
	for (i = 0; q->refused_at && i < m->ntensors; i++)
		claimed[i] |= q->refused_at[i];
	if (kept_shards(d, m, claimed))
		goto oom;
	lh = logical_header(q, dt, offs);
	d->shards[d->nshards].name = strdup(DEQUANT_SHARD);
	if (!lh || !d->shards[d->nshards].name ||
	    asprintf(&name, "%s (dequantized)", m->arg ? m->arg : "") < 0) {
		name = NULL;
		goto oom;
	}
	for (k = 0; k < q->n; k++) {
		d->tensors[d->ntensors].t = &lh->tensors[k];
		d->tensors[d->ntensors++].shard = (uint32_t)d->nshards;
	}
	/* the last step that can fail: from here the source owns q, offs
	 * and (own) m */
	if (quant_source_open(m, own, q, dt, offs, lh->data_len, name, &src,
			      e)) {
		q = NULL;
		offs = NULL;
		goto fail;
	}
	d->shards[d->nshards].src = src;
	d->shards[d->nshards].hdr = lh;
	d->nshards++;
	free(name);
	free(claimed);
	*out = d;
	return 0;
oom:
	err_set(e, ERR_NO_MEMORY, "out of memory");
fail:
	if (d && d->shards && d->shards[d->nshards].name)
		free(d->shards[d->nshards].name);
	model_free(d);
	container_free(lh);
	quant_free(q);
	free(offs);
	free(claimed);
	free(name);
	return -1;
}

int
quant_model_open(const struct model *m, enum dtype dt, struct model **out,
		 struct err *e)
{
	/* not taken, so not changed: the source only reads it */
	return derive((struct model *)m, 0, dt, out, e);
}

int
quant_model_take(struct model **m, struct err *e)
{
	struct model *d;

	if (derive(*m, 1, DTYPE_F32, &d, e))
		return -1;
	if (d)
		*m = d;
	return 0;
}

/* --- what it says about itself ----------------------------------------- */

static int
add_pair(struct buf *b, const char *key, uint64_t x, uint64_t y)
{
	return buf_addf(b, ",\n    \"%s\": [%llu, %llu]", key,
			(unsigned long long)x, (unsigned long long)y);
}

static int
add_num(struct buf *b, const char *key, uint64_t x)
{
	return buf_addf(b, ",\n    \"%s\": %llu", key, (unsigned long long)x);
}

static int
add_str(struct buf *b, const char *key, const char *s)
{
	int bad = buf_addf(b, ",\n    \"%s\": ", key);

	if (!s)
		return bad | buf_adds(b, "null");
	return bad | buf_add_json_string(b, s, strlen(s));
}

/* x, finite, as the shortest decimal that reads back as x. */
static int
add_double(struct buf *b, const char *key, double x)
{
	char t[40];
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(t, sizeof(t), "%.*g", prec, x);
		if (strtod(t, NULL) == x)
			break;
	}
	snprintf(t, sizeof(t), "%.*g", prec, x);
	return buf_addf(b, ",\n    \"%s\": %s", key, t);
}

/* A PyTorch quantized tensor's scheme, as torch names it, and how its
 * values are computed (format/quant/torch_affine.h). */
static int
add_torch(struct buf *b, const struct torch_affine *ta)
{
	const char *dt = torch_affine_dtype_name(ta->qdtype);
	int bad = 0;

	if (!ta->per_channel) {
		bad |= add_str(b, "qscheme", "torch.per_tensor_affine");
		bad |= add_str(b, "dtype", dt);
		bad |= add_double(b, "scale", ta->scale);
		bad |= buf_addf(b, ",\n    \"zero_point\": %lld",
				(long long)ta->zero_point);
		return bad | add_str(b, "value", "float32(scale) * (q - "
				     "zero_point), in float32");
	}
	bad |= add_str(b, "qscheme", ta->zdtype == DTYPE_F32 ?
		       "torch.per_channel_affine_float_qparams" :
		       "torch.per_channel_affine");
	bad |= add_str(b, "dtype", dt);
	bad |= add_num(b, "axis", ta->axis);
	bad |= add_str(b, "scale_dtype", dtype_info(ta->sdtype)->name);
	bad |= add_str(b, "zero_point_dtype", dtype_info(ta->zdtype)->name);
	if (ta->zdtype == DTYPE_F32)
		return bad | add_str(b, "value", "(q - zero_points[c]) * "
				     "scales[c], in float32, c the index "
				     "along axis");
	return bad | add_str(b, "value", "float32((q - zero_points[c]) * "
			     "scales[c]), the difference in float32, the "
			     "product in float64, c the index along axis");
}

/* The scheme's settings. */
static int
add_settings(struct buf *b, const struct quant_weight *w)
{
	const struct int_packed *ip = &w->u.ip;
	int bad = 0;

	switch (w->scheme) {
	case QUANT_FP8:
		bad |= add_pair(b, "block", w->u.fp8.brow, w->u.fp8.bcol);
		bad |= add_str(b, "scale_dtype",
			       dtype_info(w->u.fp8.sdtype)->name);
		break;
	case QUANT_MXFP4:
		bad |= add_num(b, "block", 32);
		break;
	case QUANT_GPTQ:
	case QUANT_AWQ:
		bad |= add_num(b, "bits", ip->bits);
		bad |= add_num(b, "group_size", ip->group_size);
		if (w->scheme == QUANT_GPTQ)
			bad |= add_str(b, "checkpoint_format", ip->zero_offset ?
				       "gptq" : "gptq_v2");
		bad |= add_str(b, "scale_dtype", dtype_info(ip->sdtype)->name);
		break;
	case QUANT_CT_INT:
		bad |= add_num(b, "bits", ip->bits);
		bad |= add_num(b, "group_size", ip->group_size);
		bad |= add_str(b, "zero_point", ip->symmetric ?
			       "none: symmetric, the zero 2^(bits-1)" :
			       "weight_zero_point");
		bad |= add_str(b, "scale_dtype", dtype_info(ip->sdtype)->name);
		break;
	case QUANT_NVFP4:
		bad |= add_num(b, "block", NVFP4_ST_BLOCK);
		bad |= add_str(b, "global_scale", w->u.nv.modelopt ?
			       "multiplies the block scales" :
			       "divides the block scales");
		break;
	case QUANT_BNB4:
		bad |= add_num(b, "blocksize", w->u.bnb.blocksize);
		if (w->u.bnb.nested)
			bad |= add_num(b, "nested_blocksize",
				       w->u.bnb.nested_blocksize);
		bad |= add_str(b, "dtype", w->u.bnb.dtype);
		break;
	case QUANT_TORCH:
		bad |= add_torch(b, &w->u.ta);
		break;
	}
	return bad;
}

/* The settings of a that no config told, as a phrase ("checkpoint_format
 * gptq (v1), group_size 128"), appended to b; nothing when none.  The one
 * wording of an assumption: sidecars, summaries, stfs-inspect's lines. */
static int
add_assumed(struct buf *b, const struct quant_assumption *a)
{
	const char *sep = "";
	int bad = 0;

	if (a->what & QUANT_ASSUMED_FORMAT) {
		bad |= buf_adds(b, "checkpoint_format gptq (v1)");
		sep = ", ";
	}
	if (a->what & QUANT_ASSUMED_BLOCK) {
		bad |= buf_addf(b, "%sblock [%llu, %llu]", sep,
				(unsigned long long)a->block[0],
				(unsigned long long)a->block[1]);
		sep = ", ";
	}
	if (a->what & QUANT_ASSUMED_GROUP)
		bad |= buf_addf(b, "%sgroup_size %llu", sep,
				(unsigned long long)a->group_size);
	return bad;
}

/* Why settings were assumed: config (the file that told others) does not
 * say them, or why_none says why no file did. */
static int
add_assumed_why(struct buf *b, const char *config, const char *why_none)
{
	if (config)
		return buf_addf(b, "%s does not say", config);
	return buf_adds(b, why_none ? why_none : "no config");
}

int
quant_model_sidecar(const struct model *d, const struct model_tensor *mt,
		    struct buf *b)
{
	const struct quant *q = quant_model_quant(d);
	const struct model *base = quant_model_base(d);
	const struct quant_weight *w;
	size_t k, first, n = 0;
	int bad = 0;

	if (!q || mt->shard != d->nshards - 1)
		return 0;
	first = d->ntensors - q->n;
	k = (size_t)(mt - d->tensors) - first;
	if (k >= q->n)
		return 0;
	w = &q->w[k];
	bad |= buf_adds(b, ",\n  \"quantization\": {\n    \"scheme\": ");
	bad |= buf_add_json_string(b, w->label, strlen(w->label));
	bad |= add_settings(b, w);
	bad |= add_str(b, "config", q->config);
	if (w->assumed.what) {
		struct buf a = BUF_INIT;

		bad |= add_assumed(&a, &w->assumed) | buf_adds(&a, ": ") |
		       add_assumed_why(&a, q->config, q->assumed_why);
		bad |= a.data ? add_str(b, "assumed", a.data) : -1;
		buf_free(&a);
	}
	bad |= buf_adds(b, ",\n    \"parts\": {");
	for (k = 0; k < QUANT_PARTS; k++) {
		const struct tensor *t;

		if (w->part[k] == QUANT_ABSENT)
			continue;
		t = base->tensors[w->part[k]].t;
		bad |= buf_addf(b, "%s\n      \"%s\": ", n++ ? "," : "",
				quant_role(w->scheme, (unsigned)k));
		bad |= buf_add_json_string(b, t->name, t->name_len);
	}
	bad |= buf_adds(b, "\n    }\n  }");
	return bad ? -1 : 0;
}

/* The key of the weights past the first QUANT_ASSUMPTIONS distinct
 * settings (only a crafted file has more): a line each would flood. */
#define OTHER_SETTINGS "other settings (each sidecar says which)"

/* n more weights that took a (NULL: settings past the first ones) into
 * as: {phrase: weights}, the first QUANT_ASSUMPTIONS distinct phrases
 * and OTHER_SETTINGS, as quant_count() keeps them.  0, or -1 out of
 * memory. */
static int
tally_assumed(json_t *as, const struct quant_assumption *a, size_t n)
{
	struct buf b = BUF_INIT;
	json_t *c;
	int bad;

	bad = a ? add_assumed(&b, a) : buf_adds(&b, OTHER_SETTINGS);
	c = bad ? NULL : json_object_get(as, b.data);
	if (!bad && !c && a && json_object_size(as) -
	    !!json_object_get(as, OTHER_SETTINGS) >= QUANT_ASSUMPTIONS) {
		b.len = 0;
		bad = buf_adds(&b, OTHER_SETTINGS);
		c = bad ? NULL : json_object_get(as, b.data);
	}
	bad = bad || json_object_set_new(as, b.data, json_integer(
		(c ? json_integer_value(c) : 0) + (json_int_t)n));
	buf_free(&b);
	return bad ? -1 : 0;
}

/* {"assumed": as, "assumed_why": why} into *out, NULL when as is empty;
 * as is taken.  0, or -1 out of memory. */
static int
assumed_object(json_t *as, const char *config, const char *why_none,
	       json_t **out)
{
	struct buf why = BUF_INIT;
	int bad = !as;

	*out = NULL;
	if (!bad && json_object_size(as)) {
		bad = add_assumed_why(&why, config, why_none) ||
		      !(*out = json_pack("{s:O, s:s}", "assumed", as,
					 "assumed_why", why.data));
	}
	json_decref(as);
	buf_free(&why);
	return bad ? -1 : 0;
}

/* The assumptions of q's weights named "PREFIX." (prefix NULL: all of
 * them), as quant_model_assumed() gives them. */
static int
weights_assumed(const struct quant *q, const char *prefix, json_t **out)
{
	json_t *as = json_object();
	size_t k, plen = prefix ? strlen(prefix) : 0;
	int bad = !as;

	for (k = 0; !bad && k < q->n; k++) {
		const struct quant_weight *w = &q->w[k];

		if (!w->assumed.what || (prefix && (w->name_len <= plen ||
		    memcmp(w->name, prefix, plen) || w->name[plen] != '.')))
			continue;
		bad = tally_assumed(as, &w->assumed, 1);
	}
	if (bad) {
		json_decref(as);
		return -1;
	}
	return assumed_object(as, q->config, q->assumed_why, out);
}

/* The same from a count. */
static int
count_assumed(const struct quant_count *c, json_t **out)
{
	json_t *as = json_object();
	size_t k;
	int bad = !as;

	for (k = 0; !bad && k < c->nassumed; k++)
		bad = tally_assumed(as, &c->assumed[k].a, c->assumed[k].n);
	if (!bad && c->assumed_more)
		bad = tally_assumed(as, NULL, c->assumed_more);
	if (bad) {
		json_decref(as);
		return -1;
	}
	return assumed_object(as, c->config, c->assumed_why, out);
}

int
quant_model_assumed(const struct model *m, const char *prefix, void **out)
{
	const struct quant *q = quant_model_quant(m);
	struct quant_count c;
	struct err e = { 0 };

	*out = NULL;
	if (q)
		return weights_assumed(q, prefix, (json_t **)out);
	if (quant_count(m, &c, &e))
		return e.code == ERR_NO_MEMORY ? -1 : 0;
	return count_assumed(&c, (json_t **)out);
}

/* o's keys and a's (assumed_object()'s, or NULL); a is taken.  0, or -1
 * out of memory. */
static int
add_keys(json_t *o, json_t *a)
{
	int bad = a && json_object_update(o, a);

	json_decref(a);
	return bad ? -1 : 0;
}

/* The "quantization" object of a model that is not derived: where its
 * dequantized form is and what it holds, as far as quant_count() tells;
 * NULL when nothing is quantized.  0, or -1 (out of memory). */
static int
stored_summary(const struct model *m, void **out)
{
	struct quant_count c;
	struct err e = { 0 };
	json_t *schemes, *a;
	size_t k;

	*out = NULL;
	if (quant_count(m, &c, &e))
		return e.code == ERR_NO_MEMORY ? -1 : 0;
	if (c.weights == 0 && c.refused == 0)
		return 0;
	schemes = json_object();
	for (k = 0; schemes && k < c.nlabels; k++)
		json_object_set_new(schemes, c.label[k].label,
				    json_integer((json_int_t)c.label[k].n));
	*out = json_pack("{s:s, s:I, s:o, s:I}",
			 "dequant", ".dequant/",
			 "weights", (json_int_t)c.weights,
			 "schemes", schemes ? schemes : json_object(),
			 "refused", (json_int_t)c.refused);
	if (*out && (count_assumed(&c, &a) || add_keys(*out, a))) {
		json_decref(*out);
		*out = NULL;
	}
	return *out ? 0 : -1;
}

int
quant_model_summary(const struct model *d, void **out)
{
	const struct quant *q = quant_model_quant(d);
	json_t *o, *schemes, *refused, *a;
	size_t k;

	*out = NULL;
	if (!q)
		return stored_summary(d, out);
	schemes = json_object();
	refused = json_array();
	for (k = 0; schemes && k < q->n; k++) {
		json_t *c = json_object_get(schemes, q->w[k].label);

		json_object_set_new(schemes, q->w[k].label, json_integer(
			(c ? json_integer_value(c) : 0) + 1));
	}
	for (k = 0; refused && k < q->nkept; k++)
		json_array_append_new(refused, json_stringn(q->refused[k].text,
							   q->refused[k].len));
	o = json_pack("{s:I, s:o, s:s?, s:I, s:o}",
		      "weights", (json_int_t)q->n,
		      "schemes", schemes ? schemes : json_object(),
		      "config", q->config,
		      "refused", (json_int_t)q->nrefused,
		      "refused_list", refused ? refused : json_array());
	if (o && (weights_assumed(q, NULL, &a) || add_keys(o, a))) {
		json_decref(o);
		o = NULL;
	}
	*out = o;
	return o ? 0 : -1;
}
