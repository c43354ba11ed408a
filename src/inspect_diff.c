/* inspect_diff.c - stfs-inspect --diff A B: which tensors differ between
 * two models.  Names only in A, only in B, and in both with a different
 * dtype, shape or bytes; identical ones counted; __metadata__ keys
 * compared too.  Bytes are compared by reading both sides in chunks,
 * stopping at the first difference.  Exit status as cmp(1): 0 identical,
 * 1 different, 2 trouble.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inspect.h"
#include "model.h"
#include "summary.h"

#define CHUNK (4u << 20)

/* Tensors of a model sorted by name, for lookups by binary search (no
 * hash table: names come from files anyone may have written). */
struct byname {
	const struct model *m;
	size_t *ix;
};

struct diff {
	const struct inspect_opts *o;
	struct model *a, *b;
	struct byname na, nb;
	uint8_t *ba, *bb;	/* one chunk of each side */
	uint64_t total, done;	/* bytes to compare (both sides count once) */
	struct timespec last;
	int tty;
	uint64_t identical, ndiff;
	json_t *only_a, *only_b, *changed;	/* --json */
};

static int
cmp_name(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : (na > nb) - (na < nb);
}

static const struct model *qsort_model;

static int
cmp_ix(const void *x, const void *y)
{
	const struct tensor *a = qsort_model->tensors[*(const size_t *)x].t;
	const struct tensor *b = qsort_model->tensors[*(const size_t *)y].t;

	return cmp_name(a->name, a->name_len, b->name, b->name_len);
}

static int
byname_init(struct byname *bn, const struct model *m)
{
	size_t i;

	bn->m = m;
	bn->ix = malloc((m->ntensors ? m->ntensors : 1) * sizeof(*bn->ix));
	if (!bn->ix)
		return -1;
	for (i = 0; i < m->ntensors; i++)
		bn->ix[i] = i;
	qsort_model = m;
	qsort(bn->ix, m->ntensors, sizeof(*bn->ix), cmp_ix);
	return 0;
}

static const struct model_tensor *
byname_find(const struct byname *bn, const struct tensor *t)
{
	size_t lo = 0, hi = bn->m->ntensors;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct model_tensor *mt = &bn->m->tensors[bn->ix[mid]];
		int c = cmp_name(t->name, t->name_len, mt->t->name,
				 mt->t->name_len);

		if (!c)
			return mt;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void
progress(struct diff *d)
{
	struct timespec now;

	if (!d->tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec == d->last.tv_sec &&
	    now.tv_nsec - d->last.tv_nsec < 200000000L)
		return;
	d->last = now;
	fprintf(stderr, "\rdiff: compared %" PRIu64 " of %" PRIu64 " MiB",
		d->done >> 20, d->total >> 20);
}

/* Compare the bytes of two tensors of equal length.  0 equal, 1 different
 * (*at: the first differing byte), -errno on a read error (*side: which
 * model). */
static int
same_bytes(struct diff *d, const struct model_tensor *x,
	   const struct model_tensor *y, uint64_t *at, struct model **side)
{
	uint64_t len = model_tensor_nbytes(x), off = 0;
	uint64_t pa = model_tensor_offset(d->a, x);
	uint64_t pb = model_tensor_offset(d->b, y);

	while (off < len) {
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK, k;
		int rc;

		rc = source_pread(d->a->shards[x->shard].src, d->ba, n, pa + off);
		if (rc) {
			*side = d->a;
			return rc;
		}
		rc = source_pread(d->b->shards[y->shard].src, d->bb, n, pb + off);
		if (rc) {
			*side = d->b;
			return rc;
		}
		d->done += n;
		progress(d);
		if (memcmp(d->ba, d->bb, n)) {
			for (k = 0; d->ba[k] == d->bb[k]; k++)
				;
			*at = off + k;
			d->done += len - off - n;	/* skipped */
			return 1;
		}
		off += n;
	}
	return 0;
}

static void
print_shape(const struct tensor *t)
{
	uint32_t k;

	printf("%s [", dtype_info(t->dtype)->name);
	for (k = 0; k < t->rank; k++)
		printf("%s%" PRIu64, k ? ", " : "", t->shape[k]);
	putchar(']');
}

static json_t *
shape_json(const struct tensor *t)
{
	json_t *a = json_array();
	uint32_t k;

	for (k = 0; a && k < t->rank; k++)
		json_array_append_new(a, json_integer((json_int_t)t->shape[k]));
	return json_pack("{s:s, s:o}", "dtype", dtype_info(t->dtype)->name,
			 "shape", a);
}

static void
clear_line(struct diff *d)
{
	if (d->tty)
		fputs("\r\033[K", stderr);
}

static void
report_only(struct diff *d, const struct tensor *t, const char *which,
	    json_t *list)
{
	d->ndiff++;
	if (d->o->quiet)
		return;
	if (list) {
		json_array_append_new(list, json_stringn(t->name, t->name_len));
		return;
	}
	clear_line(d);
	printf("only in %s: ", which);
	summary_print_name(stdout, t->name, t->name_len);
	putchar('\n');
}

static void
report_changed(struct diff *d, const struct tensor *x, const struct tensor *y,
	       const char *what, uint64_t at)
{
	d->ndiff++;
	if (d->o->quiet)
		return;
	if (d->changed) {
		json_t *j = json_pack("{s:s%, s:s, s:o, s:o}",
				      "name", x->name, (size_t)x->name_len,
				      "what", what, "a", shape_json(x),
				      "b", shape_json(y));

		if (j && !strcmp(what, "bytes"))
			json_object_set_new(j, "first_difference",
					    json_integer((json_int_t)at));
		json_array_append_new(d->changed, j);
		return;
	}
	clear_line(d);
	printf("%s: ", what);
	summary_print_name(stdout, x->name, x->name_len);
	if (!strcmp(what, "bytes")) {
		printf(": first difference at byte %" PRIu64 " of %" PRIu64 "\n",
		       at, x->end - x->begin);
		return;
	}
	fputs(": ", stdout);
	print_shape(x);
	fputs(" -> ", stdout);
	print_shape(y);
	putchar('\n');
}

static int
same_shape(const struct tensor *x, const struct tensor *y)
{
	return x->rank == y->rank &&
	       !memcmp(x->shape, y->shape, x->rank * sizeof(*x->shape));
}

/* __metadata__ keys only in A, only in B, or with another value.  Returns
 * the number of differences; fills *out (--json) or prints. */
static uint64_t
diff_metadata(struct diff *d, json_t **out)
{
	json_t *ma = json_loads(d->a->metadata_json, JSON_ALLOW_NUL, NULL);
	json_t *mb = json_loads(d->b->metadata_json, JSON_ALLOW_NUL, NULL);
	json_t *oa = json_array(), *ob = json_array(), *ch = json_array(), *v;
	const char *k;
	uint64_t n = 0;

	if (!json_is_object(ma)) {
		json_decref(ma);
		ma = json_object();
	}
	if (!json_is_object(mb)) {
		json_decref(mb);
		mb = json_object();
	}
	json_object_foreach(ma, k, v) {
		json_t *w = json_object_get(mb, k);

		if (!w || !json_equal(v, w)) {
			json_array_append_new(w ? ch : oa, json_string(k));
			n++;
		}
	}
	json_object_foreach(mb, k, v)
		if (!json_object_get(ma, k)) {
			json_array_append_new(ob, json_string(k));
			n++;
		}
	if (d->only_a) {
		*out = json_pack("{s:o, s:o, s:o}", "only_in_a", oa,
				 "only_in_b", ob, "changed", ch);
	} else if (!d->o->quiet) {
		size_t i;

		json_array_foreach(oa, i, v)
			printf("metadata only in A: %s\n", json_string_value(v));
		json_array_foreach(ob, i, v)
			printf("metadata only in B: %s\n", json_string_value(v));
		json_array_foreach(ch, i, v)
			printf("metadata changed: %s\n", json_string_value(v));
		json_decref(oa);
		json_decref(ob);
		json_decref(ch);
	} else {
		json_decref(oa);
		json_decref(ob);
		json_decref(ch);
	}
	json_decref(ma);
	json_decref(mb);
	return n;
}

static int
run_diff(struct diff *d)
{
	struct model *a = d->a, *b = d->b;
	json_t *meta = NULL;
	uint64_t inboth = 0;
	size_t i;

	for (i = 0; i < a->ntensors; i++) {
		const struct model_tensor *x = &a->tensors[i];
		const struct model_tensor *y = byname_find(&d->nb, x->t);

		if (y && x->t->dtype == y->t->dtype && same_shape(x->t, y->t))
			d->total += model_tensor_nbytes(x);
	}
	for (i = 0; i < a->ntensors; i++) {
		const struct model_tensor *x = &a->tensors[i];
		const struct model_tensor *y = byname_find(&d->nb, x->t);
		struct model *side = NULL;
		uint64_t at = 0;
		int rc;

		if (!y) {
			report_only(d, x->t, "A", d->only_a);
			continue;
		}
		inboth++;
		if (x->t->dtype != y->t->dtype) {
			report_changed(d, x->t, y->t, "dtype", 0);
			continue;
		}
		if (!same_shape(x->t, y->t)) {
			report_changed(d, x->t, y->t, "shape", 0);
			continue;
		}
		rc = same_bytes(d, x, y, &at, &side);
		if (rc < 0) {
			clear_line(d);
			if (!d->o->quiet)
				fprintf(stderr, "stfs-inspect: %s: %s: cannot "
					"read tensor %s (was the source "
					"changed?)\n", side->shards[
					(side == a ? x : y)->shard].src->name,
					strerror(-rc), x->t->name);
			return 2;
		}
		if (rc)
			report_changed(d, x->t, y->t, "bytes", at);
		else
			d->identical++;
	}
	for (i = 0; i < b->ntensors; i++) {
		const struct model_tensor *y = &b->tensors[i];

		if (!byname_find(&d->na, y->t))
			report_only(d, y->t, "B", d->only_b);
	}
	clear_line(d);
	d->ndiff += diff_metadata(d, &meta);
	if (d->o->quiet) {
		json_decref(meta);
	} else if (d->only_a) {
		json_t *root = json_pack("{s:s, s:s, s:b, s:I, s:I, s:o, s:o, "
					 "s:o, s:o}", "a", a->arg, "b", b->arg,
					 "same", d->ndiff == 0,
					 "identical", (json_int_t)d->identical,
					 "in_both", (json_int_t)inboth,
					 "only_in_a", d->only_a,
					 "only_in_b", d->only_b,
					 "changed", d->changed,
					 "metadata", meta ? meta : json_null());
		char *text = root ? json_dumps(root, JSON_PRESERVE_ORDER |
					       JSON_INDENT(2)) : NULL;

		d->only_a = d->only_b = d->changed = NULL;
		json_decref(root);
		if (!text) {
			fputs("stfs-inspect: out of memory\n", stderr);
			return 2;
		}
		puts(text);
		free(text);
	} else {
		printf("identical: %" PRIu64 " of %" PRIu64 " tensors in both "
		       "(A has %zu, B has %zu)\n", d->identical, inboth,
		       a->ntensors, b->ntensors);
	}
	return d->ndiff ? 1 : 0;
}

int
inspect_diff(const struct inspect_opts *o)
{
	struct diff d;
	int rc;

	if (o->nsources != 2) {
		fputs("stfs-inspect: --diff takes two SOURCEs: A B "
		      "(try --help)\n", stderr);
		return 2;
	}
	memset(&d, 0, sizeof(d));
	d.o = o;
	/* 1 means "different" here: any failure to open is trouble, 2 */
	if (inspect_open(o, o->sources[0], &d.a))
		return 2;
	if (inspect_open(o, o->sources[1], &d.b)) {
		model_free(d.a);
		return 2;
	}
	d.tty = !o->quiet && isatty(STDERR_FILENO);
	d.ba = malloc(CHUNK);
	d.bb = malloc(CHUNK);
	if (o->json && !o->quiet) {
		d.only_a = json_array();
		d.only_b = json_array();
		d.changed = json_array();
	}
	if (byname_init(&d.na, d.a) || byname_init(&d.nb, d.b) ||
	    !d.ba || !d.bb || (o->json && !o->quiet &&
			       (!d.only_a || !d.only_b || !d.changed))) {
		fputs("stfs-inspect: out of memory\n", stderr);
		rc = 2;
	} else {
		rc = run_diff(&d);
	}
	json_decref(d.only_a);
	json_decref(d.only_b);
	json_decref(d.changed);
	free(d.na.ix);
	free(d.nb.ix);
	free(d.ba);
	free(d.bb);
	model_free(d.a);
	model_free(d.b);
	return rc;
}
