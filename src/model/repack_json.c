/* repack_json.c - the JSON header of a virtual safetensors file
 * (repack_json.h). */
#include "model/repack_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonmem.h"
#include "base/error.h"
#include "format/dtype.h"
#include "model/model.h"
#include "model/tensor_render.h"

#define META_KEY "__metadata__"
#define META_KEY_LEN 12

/* --- the writer (p NULL: count only) --------------------------------------- */

static void
put(struct repack_json *o, const char *s, size_t len)
{
	if (o->p)
		memcpy(o->p + o->n, s, len);
	o->n += len;
}

#define PUTS(o, lit) put(o, lit, sizeof(lit) - 1)

static void
put_u64(struct repack_json *o, uint64_t v)
{
	o->n += buf_put_u64(o->p ? o->p + o->n : NULL, v);
}

static void
put_str(struct repack_json *o, const char *s, size_t len)
{
	o->n += buf_put_json_string(o->p ? o->p + o->n : NULL, s, len);
}

/* --- __metadata__ --------------------------------------------------------- */

static int
cmp_pair(const void *a, const void *b)
{
	const struct meta_pair *x = *(const struct meta_pair *const *)a;
	const struct meta_pair *y = *(const struct meta_pair *const *)b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);

	if (c)
		return c;
	return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* The pairs of h sorted by key, for comparing shards as maps. */
static const struct meta_pair **
sorted_pairs(const struct header *h)
{
	const struct meta_pair **p;
	size_t i;

	p = malloc((h->nmeta ? h->nmeta : 1) * sizeof(*p));
	if (!p)
		return NULL;
	for (i = 0; i < h->nmeta; i++)
		p[i] = &h->meta[i];
	qsort(p, h->nmeta, sizeof(*p), cmp_pair);
	return p;
}

/* 1 when every shard has the same __metadata__ as shard 0, 0 when not,
 * -1 when out of memory. */
static int
shards_agree(const struct model *m)
{
	const struct header *h0 = m->shards[0].hdr;
	const struct meta_pair **a, **b = NULL;
	size_t k, i;
	int agree = 1;

	a = sorted_pairs(h0);
	if (!a)
		return -1;
	for (k = 1; agree && k < m->nshards; k++) {
		const struct header *h = m->shards[k].hdr;

		if (h->has_metadata != h0->has_metadata ||
		    h->nmeta != h0->nmeta) {
			agree = 0;
			break;
		}
		free(b);
		b = sorted_pairs(h);
		if (!b) {
			agree = -1;
			break;
		}
		for (i = 0; i < h->nmeta; i++) {
			if (a[i]->key_len != b[i]->key_len ||
			    a[i]->val_len != b[i]->val_len ||
			    memcmp(a[i]->key, b[i]->key, a[i]->key_len) ||
			    memcmp(a[i]->val, b[i]->val, a[i]->val_len)) {
				agree = 0;
				break;
			}
		}
	}
	free(a);
	free(b);
	return agree;
}

static void
emit_header_meta(struct repack_json *o, const struct header *h)
{
	size_t i;

	put_str(o, META_KEY, META_KEY_LEN);
	PUTS(o, ":{");
	for (i = 0; i < h->nmeta; i++) {
		if (i)
			PUTS(o, ",");
		put_str(o, h->meta[i].key, h->meta[i].key_len);
		PUTS(o, ":");
		put_str(o, h->meta[i].val, h->meta[i].val_len);
	}
	PUTS(o, "}");
}

/* The index's "metadata" (m->metadata_json, as shards.c rendered it). */
static int
emit_index_meta(struct repack_json *o, json_t *obj)
{
	const char *key;
	json_t *val;
	int first = 1;

	put_str(o, META_KEY, META_KEY_LEN);
	PUTS(o, ":{");
	json_object_foreach(obj, key, val) {
		if (!first)
			PUTS(o, ",");
		first = 0;
		put_str(o, key, strlen(key));
		PUTS(o, ":");
		if (json_is_string(val)) {
			put_str(o, json_string_value(val),
				json_string_length(val));
		} else {
			char *t = json_dumps(val, JSON_COMPACT |
					     JSON_ENCODE_ANY);

			if (!t)
				return -1;
			put_str(o, t, strlen(t));
			free(t);
		}
	}
	PUTS(o, "}");
	return 0;
}

int
repack_json_meta(const struct model *m, char **meta, size_t *len)
{
	unsigned long jf = jsonmem_failures();
	const struct header *h0;
	json_t *obj = NULL;
	struct repack_json o = { NULL, 0, 0 };
	int agree, pass;

	*meta = NULL;
	*len = 0;
	if (m->nshards == 0)
		return 0;
	h0 = m->shards[0].hdr;
	agree = m->sharded ? shards_agree(m) : 1;
	if (agree < 0)
		return -1;
	if (agree && !h0->has_metadata)
		return 0;
	if (!agree) {
		obj = json_loads(m->metadata_json ? m->metadata_json : "{}",
				 JSON_ALLOW_NUL, NULL);
		if (jsonmem_failures() != jf) {
			json_decref(obj);
			return -1;
		}
		if (!json_is_object(obj) || json_object_size(obj) == 0) {
			json_decref(obj);
			return 0;
		}
	}
	/* The second pass writes what the first one counted: a value that
	 * jansson dumped short of memory (jsonmem.h) in the first may be
	 * longer in the second. */
	for (pass = 0; pass < 2 && jsonmem_failures() == jf; pass++) {
		if (pass) {
			*meta = malloc(o.n ? o.n : 1);
			if (!*meta)
				break;
			*len = o.n;
			o.p = *meta;
			o.n = 0;
		}
		if (agree)
			emit_header_meta(&o, h0);
		else if (emit_index_meta(&o, obj))
			break;
	}
	json_decref(obj);
	if (pass < 2 || jsonmem_failures() != jf) {
		free(*meta);
		*meta = NULL;
		*len = 0;
		return -1;
	}
	return 0;
}

/* --- a file's header ------------------------------------------------------ */

uint64_t
repack_json_header(const struct model *m, const char *meta, size_t meta_len,
		   const uint32_t *tix, size_t n, size_t cut,
		   struct repack_json *o)
{
	uint64_t off = 0;
	size_t i, d;

	PUTS(o, "{");
	if (meta) {
		put(o, meta, meta_len);
		if (n)
			PUTS(o, ",");
	}
	for (i = 0; i < n; i++) {
		const struct tensor *t = m->tensors[tix[i]].t;
		struct tensor_render r;
		struct err e = { 0 };
		const char *dt;

		/* repack.c keeps only tensors that have a rendering */
		tensor_render_of(t, &r, &e);
		dt = dtype_info(r.dtype)->name;

		if (i)
			PUTS(o, ",");
		put_str(o, t->name + cut, t->name_len - cut);
		PUTS(o, ":{\"dtype\":\"");
		put(o, dt, strlen(dt));
		PUTS(o, "\",\"shape\":[");
		for (d = 0; d < t->rank; d++) {
			if (d)
				PUTS(o, ",");
			put_u64(o, t->shape[d]);
		}
		PUTS(o, "],\"data_offsets\":[");
		put_u64(o, off);
		PUTS(o, ",");
		/* each tensor is below 2^62 (format/tensor_size.h), their
		 * sum need not be */
		if (r.nbytes > REPACK_DATA_MAX - off)
			o->big = 1;
		else
			off += r.nbytes;
		put_u64(o, off);
		PUTS(o, "]}");
	}
	PUTS(o, "}");
	return off;
}
