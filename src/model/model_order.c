/* model_order.c - tensors in load order, and the bytes after a read. */
#include "model/model_order.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define WALK_MAX	64	/* tensors looked at per call */

struct model_order {
	const struct model *m;
	uint32_t *sorted;	/* model tensor indexes in load order */
	uint32_t *rank;		/* rank[i]: where tensor i is in sorted */
};

/* Shard, then name. */
static int
cmp_load(const void *a, const void *b, void *arg)
{
	const struct model *m = arg;
	const struct model_tensor *p = &m->tensors[*(const uint32_t *)a];
	const struct model_tensor *q = &m->tensors[*(const uint32_t *)b];
	const struct tensor *x = p->t, *y = q->t;
	uint32_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c;

	if (p->shard != q->shard)
		return p->shard < q->shard ? -1 : 1;
	c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

struct model_order *
model_order_new(const struct model *m)
{
	struct model_order *o = calloc(1, sizeof(*o));
	size_t n = m->ntensors ? m->ntensors : 1, i;

	if (!o)
		return NULL;
	o->m = m;
	o->sorted = malloc(n * sizeof(*o->sorted));
	o->rank = malloc(n * sizeof(*o->rank));
	if (!o->sorted || !o->rank) {
		model_order_free(o);
		return NULL;
	}
	for (i = 0; i < m->ntensors; i++)
		o->sorted[i] = (uint32_t)i;
	qsort_r(o->sorted, m->ntensors, sizeof(*o->sorted), cmp_load,
		(void *)m);
	for (i = 0; i < m->ntensors; i++)
		o->rank[o->sorted[i]] = (uint32_t)i;
	return o;
}

void
model_order_free(struct model_order *o)
{
	if (!o)
		return;
	free(o->sorted);
	free(o->rank);
	free(o);
}

/* Bytes of the tensor's range in its source: for a strided view (table.h)
 * the run of its storage it reaches, not its gathered file's size. */
static uint64_t
stored_len(const struct model_tensor *mt)
{
	return mt->t->end - mt->t->begin;
}

/* The tensor of shard holding byte at (absolute), or -1.  The model's
 * tensors are in shard order, then file order. */
static long
tensor_at(const struct model *m, uint32_t shard, uint64_t at)
{
	size_t lo = 0, hi = m->ntensors;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct model_tensor *mt = &m->tensors[mid];
		uint64_t b = model_tensor_offset(m, mt);

		if (mt->shard < shard || (mt->shard == shard &&
					  b + stored_len(mt) <= at))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->ntensors || m->tensors[lo].shard != shard ||
	    model_tensor_offset(m, &m->tensors[lo]) > at)
		return -1;
	return (long)lo;
}

/* Append [off, off + len) of src, merging with the last range. */
static size_t
add(struct model_order_range *out, size_t n, size_t max,
    struct source *src, uint64_t off, uint64_t len)
{
	struct model_order_range *l = n ? &out[n - 1] : NULL;

	if (len == 0)
		return n;
	if (l && l->src == src && l->off + l->len == off) {
		l->len += len;
		return n;
	}
	if (n == max)
		return n;
	out[n] = (struct model_order_range){ src, off, len };
	return n + 1;
}

/* Tensors from rank r on in load order, up to budget bytes. */
static size_t
walk(const struct model_order *o, size_t r, uint64_t budget,
     struct model_order_range *out, size_t n, size_t max)
{
	const struct model *m = o->m;
	unsigned seen;

	for (seen = 0; r < m->ntensors && budget && seen < WALK_MAX &&
	     n < max; r++, seen++) {
		const struct model_tensor *mt = &m->tensors[o->sorted[r]];
		uint64_t len = stored_len(mt);

		if (len > budget)
			len = budget;
		n = add(out, n, max, m->shards[mt->shard].src,
			model_tensor_offset(m, mt), len);
		budget -= len;
	}
	return n;
}

size_t
model_order_next(const struct model_order *o, uint32_t shard, uint64_t end,
		 uint64_t want, struct model_order_range *out, size_t max)
{
	const struct model *m = o->m;
	const struct model_tensor *mt;
	uint64_t tend, rest;
	long i;
	size_t n;

	if (max > MODEL_ORDER_MAX_RANGES)
		max = MODEL_ORDER_MAX_RANGES;
	if (end == 0 || shard >= m->nshards ||
	    (i = tensor_at(m, shard, end - 1)) < 0)
		return 0;
	mt = &m->tensors[i];
	tend = model_tensor_offset(m, mt) + stored_len(mt);
	rest = tend - end;
	if (rest >= want)
		return 0;
	n = walk(o, (size_t)o->rank[i] + 1, want - rest, out, 0, max);
	/* the last tensor of its shard: a reader of the merged file or of
	 * the shards in file order goes on with the next shard */
	if (shard + 1 < m->nshards && ((size_t)i + 1 == m->ntensors ||
				       m->tensors[i + 1].shard != shard)) {
		const struct shard *nx = &m->shards[shard + 1];

		n = add(out, n, max, nx->src, nx->hdr->data_start,
			want - rest);
	}
	return n;
}

int
model_order_rest(const struct model_order *o, uint32_t shard,
		 uint64_t begin, uint64_t end, uint64_t want,
		 struct model_order_range *out)
{
	const struct model *m = o->m;
	const struct model_tensor *mt;
	uint64_t tbegin, tend;
	long i;

	if (end <= begin || shard >= m->nshards ||
	    (i = tensor_at(m, shard, begin)) < 0)
		return 0;
	mt = &m->tensors[i];
	tbegin = model_tensor_offset(m, mt);
	tend = tbegin + stored_len(mt);
	if (begin != tbegin || end >= tend)
		return 0;
	*out = (struct model_order_range){ m->shards[shard].src, end,
					   tend - end < want ? tend - end :
					   want };
	return 1;
}
