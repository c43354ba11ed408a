/* header_index.c - the second half of reading a header: the reference's
 * validate() on the tensors sorted by data_offsets, full coverage of the
 * file, duplicate names, then the immutable table (struct header).  The
 * parsing half is header.c, which calls header_index_build() once; the
 * state it hands over is in header_parser.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/dtype.h"
#include "base/error.h"
#include "format/safetensors/header.h"
#include "format/safetensors/jscan.h"
#include "base/nametab.h"
#include "format/safetensors/header_parser.h"

/* Stable sort of v[0..n) by the upper 32 bits: three 11-bit LSD radix
 * passes through tmp.  Returns whichever of the two holds the result.
 * Equal names then sit next to each other without a cache miss per name
 * that a table's random inserts would cost. */
static uint64_t *
sort_by_tag(uint64_t *v, uint64_t *tmp, size_t n)
{
	static const unsigned radix = 11;
	size_t count[1u << 11];

	for (unsigned shift = 32; shift < 64; shift += radix) {
		size_t sum = 0;
		uint64_t *x;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(v[i] >> shift) & 2047]++;
		for (size_t k = 0; k < 2048; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i] >> shift) & 2047]++] = v[i];
		x = v;
		v = tmp;
		tmp = x;
	}
	return v;
}

static int
no_memory(struct header_parser *p)
{
	return err_set(p->e, ERR_NO_MEMORY, "out of memory while indexing "
		       "the header");
}

/* ---- validation (the reference's validate()) -------------------------- */

struct okey {
	uint64_t begin, end;
	uint32_t idx;
};

static int
okey_cmp(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	/* the index makes the order total: a stable sort, deterministic
	 * where the reference's HashMap order is not */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Indices of the tensors the reference would keep (the last entry of
 * each name), in data_offsets order; *identity tells that this is simply
 * 0..ntensors-1 (the writer emits file order).  NULL on allocation failure. */
static uint32_t *
sorted_order(const struct header_parser *p, size_t *count, int *identity)
{
	struct okey *k = malloc((p->ntensors ? p->ntensors : 1) * sizeof(*k));
	uint32_t *order;
	size_t m = 0;
	int sorted = 1;

	if (!k)
		return NULL;
	for (size_t i = 0; i < p->ntensors; i++) {
		if (p->tensors[i].shadowed)
			continue;
		k[m].begin = p->tensors[i].begin;
		k[m].end = p->tensors[i].end;
		k[m].idx = (uint32_t)i;
		if (m && okey_cmp(&k[m - 1], &k[m]) > 0)
			sorted = 0;
		m++;
	}
	if (!sorted)
		qsort(k, m, sizeof(*k), okey_cmp);
	*identity = sorted && m == p->ntensors;
	order = malloc((m ? m : 1) * sizeof(*order));
	if (order)
		for (size_t i = 0; i < m; i++)
			order[i] = k[i].idx;
	free(k);
	*count = m;
	return order;
}

static inline int
same_name(const struct header_parser *p, uint32_t a, uint32_t b)
{
	const struct arena_span *x = &p->tensors[a].name;
	const struct arena_span *y = &p->tensors[b].name;

	return x->len == y->len &&
	       memcmp(p->arena + x->off, p->arena + y->off, x->len) == 0;
}

/* v: (tag << 32 | index) of every tensor, sorted by tag, indices rising
 * within a tag.  Marks every entry whose name comes again later as
 * shadowed (the reference keeps the last one) and notes the first
 * repeated entry in header order.  Entries of one name sit in the same
 * run of equal tags, and each is compared until its next occurrence, so
 * even a header of one name repeated stays linear. */
static void
find_duplicates(struct header_parser *p, const uint64_t *v, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j] >> 32 == v[i] >> 32; j++)
			;
		for (size_t a = i; a + 1 < j; a++) {
			for (size_t b = a + 1; b < j; b++) {
				uint32_t x = (uint32_t)v[a], y = (uint32_t)v[b];

				if (!same_name(p, x, y))
					continue;
				p->tensors[x].shadowed = 1;
				if (!p->dup_tensor || y < p->dup_tensor_idx) {
					p->dup_tensor = 1;
					p->dup_tensor_idx = y;
				}
				break;
			}
		}
	}
}

/* The note appended to a validation error when names were duplicated. */
static void
dup_note(const struct header_parser *p, char *buf, size_t cap)
{
	char q[QUOTE_MAX];

	buf[0] = '\0';
	if (p->dup_tensor) {
		const struct parsed_tensor *t = &p->tensors[p->dup_tensor_idx];

		snprintf(buf, cap, "; also, tensor %s appears more than once "
			 "(header byte %" PRIu32 ")",
			 quote_name(q, p->arena + t->name.off, t->name.len),
			 t->pos);
	} else if (p->dup_meta) {
		const struct parsed_meta *m = &p->meta[p->dup_meta_idx];

		snprintf(buf, cap, "; also, __metadata__ key %s appears more "
			 "than once",
			 quote_name(q, p->arena + m->key.off, m->key.len));
	}
}

/* A validation error about tensor t: the sentence, the quoted name in
 * front and the duplicate note behind.  Returns -1. */
static int __attribute__((format(printf, 4, 5)))
tensor_error(struct header_parser *p, const struct parsed_tensor *t,
	     enum err_code code, const char *fmt, ...)
{
	char q[QUOTE_MAX], note[ERR_DETAIL_MAX / 2], msg[ERR_DETAIL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dup_note(p, note, sizeof(note));
	err_set(p->e, code, "tensor %s: %s%s",
		quote_name(q, p->arena + t->name.off, t->name.len), msg, note);
	return -1;
}

/* One step of the reference's validate(): the same checks in the same
 * order, with checked arithmetic where it has checked_mul. */
static int
validate_one(struct header_parser *p, const struct parsed_tensor *t,
	     uint64_t start, uint64_t *numel)
{
	const struct dtype_info *di = dtype_info((enum dtype)t->dtype);
	uint64_t n = 1, nbits;

	if (t->begin != start || t->end < t->begin)
		return tensor_error(p, t, ERR_INVALID_OFFSET, "data_offsets "
				    "[%" PRIu64 ", %" PRIu64 "] %s", t->begin,
				    t->end, t->end < t->begin ?
				    "end before they begin" :
				    "do not start where the previous tensor (in "
				    "offset order) ends");
	for (uint32_t i = 0; i < t->rank; i++) {
		uint64_t d = p->pool[t->shape_off + i];

		if (d && n > UINT64_MAX / d)
			return tensor_error(p, t, ERR_VALIDATION_OVERFLOW, "the "
					    "product of the shape overflows 64 "
					    "bits at dimension %" PRIu32, i);
		n *= d;
	}
	if (n > UINT64_MAX / di->bits)
		return tensor_error(p, t, ERR_VALIDATION_OVERFLOW, "%" PRIu64
				    " elements of %s overflow 64 bits as a size "
				    "in bits", n, di->name);
	nbits = n * di->bits;
	if (nbits % 8)
		return tensor_error(p, t, ERR_MISALIGNED_SLICE, "%" PRIu64
				    " elements of %s (%u bits each) do not fill "
				    "whole bytes", n, di->name, di->bits);
	if (t->end - t->begin != nbits / 8)
		return tensor_error(p, t, ERR_TENSOR_INVALID_INFO, "its shape and "
				    "dtype %s need %" PRIu64 " bytes but "
				    "data_offsets [%" PRIu64 ", %" PRIu64 "] hold %"
				    PRIu64, di->name, nbits / 8, t->begin, t->end,
				    t->end - t->begin);
	*numel = n;
	return 0;
}

/* ---- building the index ----------------------------------------------- */

struct header_index {		/* what the table's priv points to */
	char *arena;		/* names and __metadata__ strings */
	uint64_t *pool;		/* shapes */
};

static void
header_index_free(void *priv)
{
	struct header_index *x = priv;

	if (!x)
		return;
	free(x->arena);
	free(x->pool);
	free(x);
}

/* Hand the parser's arrays over to a new header: tensors in `order`. */
static struct header *
build(struct header_parser *p, const uint32_t *order, const uint64_t *numel,
      uint64_t n, uint64_t file_size, uint64_t data_len)
{
	struct header *h = calloc(1, sizeof(*h));
	struct header_index *x = calloc(1, sizeof(*x));
	char *arena;

	if (!h || !x)
		goto fail;
	h->tensors = calloc(p->ntensors ? p->ntensors : 1, sizeof(*h->tensors));
	h->meta = calloc(p->nmeta ? p->nmeta : 1, sizeof(*h->meta));
	if (!h->tensors || !h->meta)
		goto fail;
	/* give back the arena's unused tail (it was sized for the worst case) */
	arena = realloc(p->arena, p->arena_len ? p->arena_len : 1);
	if (arena)
		p->arena = arena;
	if (p->pool && p->pool_len < p->pool_cap) {
		size_t len = p->pool_len ? p->pool_len : 1;
		uint64_t *pool = realloc(p->pool, len * sizeof(*pool));

		if (pool)
			p->pool = pool;
	}
	for (size_t i = 0; i < p->ntensors; i++) {
		const struct parsed_tensor *s = &p->tensors[order[i]];
		struct tensor *t = &h->tensors[i];

		t->name = p->arena + s->name.off;
		t->name_len = s->name.len;
		t->dtype = (enum dtype)s->dtype;
		t->rank = s->rank;
		t->shape = p->pool ? p->pool + s->shape_off : NULL;
		t->begin = s->begin;
		t->end = s->end;
		t->numel = numel[i];
	}
	for (size_t i = 0; i < p->nmeta; i++) {
		h->meta[i].key = p->arena + p->meta[i].key.off;
		h->meta[i].key_len = p->meta[i].key.len;
		h->meta[i].val = p->arena + p->meta[i].voff;
		h->meta[i].val_len = p->meta[i].vlen;
	}
	h->header_len = n;
	h->data_start = 8 + n;
	h->file_size = file_size;
	h->data_len = data_len;
	h->ntensors = p->ntensors;
	h->has_metadata = p->has_meta;
	h->nmeta = p->nmeta;
	x->arena = p->arena;
	x->pool = p->pool;
	h->priv = x;
	h->free_priv = header_index_free;
	p->arena = NULL;
	p->pool = NULL;
	return h;
fail:
	free(x);
	if (h) {
		free(h->tensors);
		free(h->meta);
		free(h);
	}
	return NULL;
}

static int
duplicate_error(struct header_parser *p)
{
	char q[QUOTE_MAX];

	if (p->dup_tensor) {
		const struct parsed_tensor *t = &p->tensors[p->dup_tensor_idx];

		return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
			       "duplicate tensor name %s (at header byte %"
			       PRIu32 "): the format forbids duplicate keys; "
			       "the reference reader would silently keep the "
			       "last", quote_name(q, p->arena + t->name.off,
						  t->name.len), t->pos);
	}
	return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
		       "duplicate __metadata__ key %s (at header byte %zu): the "
		       "format forbids duplicate keys; the reference reader "
		       "would silently keep the last",
		       quote_name(q, p->arena + p->meta[p->dup_meta_idx].key.off,
				  p->meta[p->dup_meta_idx].key.len),
		       p->dup_meta_pos);
}

/* validate() over the kept tensors, the coverage check, then the index. */
int
header_index_build(struct header_parser *p, uint64_t n, uint64_t file_size,
		   struct header **out)
{
	size_t m = 0, nt = p->ntensors ? p->ntensors : 1;
	uint64_t *keys = malloc(nt * sizeof(*keys));
	uint64_t *tmp = malloc(nt * sizeof(*tmp));
	uint64_t *tags = NULL, *numel = NULL;
	uint64_t start = 0, data_start = 8 + n;
	uint32_t *order = NULL;
	int rc = -1, identity = 0;

	if (!keys || !tmp) {
		no_memory(p);
		goto out;
	}
	for (size_t i = 0; i < p->ntensors; i++)
		keys[i] = (p->tensors[i].name.hash >> 32) << 32 | i;
	tags = sort_by_tag(keys, tmp, p->ntensors);
	find_duplicates(p, tags, p->ntensors);
	order = sorted_order(p, &m, &identity);
	numel = malloc((m ? m : 1) * sizeof(*numel));
	if (!order || !numel) {
		no_memory(p);
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		const struct parsed_tensor *t = &p->tensors[order[i]];

		if (validate_one(p, t, start, &numel[i]) != 0)
			goto out;
		start = t->end;
	}
	if (file_size < data_start || start != file_size - data_start) {
		char note[ERR_DETAIL_MAX / 2];

		dup_note(p, note, sizeof(note));
		err_set(p->e, ERR_METADATA_INCOMPLETE_BUFFER, "the tensors "
			"cover %" PRIu64 " bytes of data but the file has %"
			PRIu64 " bytes after the header%s", start,
			file_size - data_start, note);
		goto out;
	}
	if (p->dup_tensor || p->dup_meta) {
		duplicate_error(p);
		goto out;
	}
	*out = build(p, order, numel, n, file_size, start);
	if (!*out) {
		no_memory(p);
		goto out;
	}
	rc = 0;
out:
	free(order);
	free(numel);
	free(keys);
	free(tmp);
	return rc;
}

