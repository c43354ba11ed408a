/* inspect_diff.c - stfs-inspect --diff A B: which tensors differ between
 * two SOURCEs.  Names only in A, only in B, and in both with a different
 * dtype, shape or bytes; identical ones counted; __metadata__ keys
 * compared too.  Bytes are compared by reading both sides in chunks,
 * stopping at the first difference; two tensors of one shape that hold
 * floats and differ (in bytes or in dtype) are then read whole for the
 * error between their values (inspect_values.c).  Quantized weights are
 * compared as the values they stand for (inspect_catalog(): their
 * dequantized form) unless --no-dequant.  With --atol/--rtol, two such
 * tensors whose values are all close (numpy's allclose) count as close,
 * not different, whatever their bytes and float dtypes.  Exit status as
 * cmp(1): 0 identical (or close), 1 different, 2 trouble.
 *
 * A SOURCE may be a tree of models (catalog.h): a tensor is then named by
 * its path in the mount, DIR/NAME, so models are paired by directory and
 * a model only on one side shows as its tensors only on that side.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "base/error.h"
#include "cli/inspect.h"
#include "cli/progress.h"
#include "model/model.h"
#include "model/summary.h"

#define CHUNK (4u << 20)

/* One tensor of a side, under the name it is compared by. */
struct item {
	const struct model *m;
	const struct model_tensor *mt;
	const char *dir;	/* its model's directory ("" for one model) */
	char *q;		/* DIR/NAME, or NAME when dir is "" */
	size_t ql;
};

/* One SOURCE: its items in catalog order, and their indices sorted by
 * name for lookups by binary search (no hash table: names come from files
 * anyone may have written). */
struct side {
	struct catalog *c;
	size_t n;
	struct item *it;
	size_t *ix;
};

struct diff {
	const struct inspect_opts *o;
	struct side a, b;
	uint8_t *ba, *bb;	/* one chunk of each side */
	uint64_t total, done;	/* bytes to compare (both sides count once) */
	struct progress line;	/* on a terminal: compared of total */
	uint64_t identical, ndiff;
	uint64_t close;		/* --atol/--rtol: within the tolerance */
	json_t *only_a, *only_b, *changed;	/* --json */
};

static int
cmp_name(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : (na > nb) - (na < nb);
}

static const struct side *qsort_side;

static int
cmp_ix(const void *x, const void *y)
{
	const struct item *a = &qsort_side->it[*(const size_t *)x];
	const struct item *b = &qsort_side->it[*(const size_t *)y];

	return cmp_name(a->q, a->ql, b->q, b->ql);
}

/* Open SOURCE and list its tensors.  0, or the exit status. */
static int
side_open(const struct inspect_opts *o, const char *source, struct side *s)
{
	size_t k, i, n = 0;

	memset(s, 0, sizeof(*s));
	if (inspect_catalog(o, source, 1, &s->c))
		return 2;	/* 1 means "different" here */
	for (k = 0; k < s->c->n; k++)
		n += s->c->entries[k].model->ntensors;
	s->it = calloc(n ? n : 1, sizeof(*s->it));
	s->ix = malloc((n ? n : 1) * sizeof(*s->ix));
	if (!s->it || !s->ix)
		return -1;
	for (k = 0; k < s->c->n; k++) {
		const struct catalog_entry *x = &s->c->entries[k];
		size_t dl = strlen(x->dir);

		for (i = 0; i < x->model->ntensors; i++) {
			struct item *it = &s->it[s->n];
			const struct tensor *t = x->model->tensors[i].t;

			it->m = x->model;
			it->mt = &x->model->tensors[i];
			it->dir = x->dir;
			it->ql = (dl ? dl + 1 : 0) + t->name_len;
			it->q = malloc(it->ql + 1);
			if (!it->q)
				return -1;
			if (dl) {
				memcpy(it->q, x->dir, dl);
				it->q[dl] = '/';
			}
			memcpy(it->q + (dl ? dl + 1 : 0), t->name, t->name_len);
			it->q[it->ql] = '\0';
			s->ix[s->n] = s->n;
			s->n++;
		}
	}
	qsort_side = s;
	qsort(s->ix, s->n, sizeof(*s->ix), cmp_ix);
	return 0;
}

static void
side_free(struct side *s)
{
	size_t i;

	for (i = 0; s->it && i < s->n; i++)
		free(s->it[i].q);
	free(s->it);
	free(s->ix);
	catalog_free(s->c);
}

static const struct item *
side_find(const struct side *s, const struct item *x)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct item *y = &s->it[s->ix[mid]];
		int c = cmp_name(x->q, x->ql, y->q, y->ql);

		if (!c)
			return y;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Compare the bytes of two tensors of equal length.  0 equal, 1 different
 * (*at: the first differing byte), -errno on a read error (*side: which
 * one could not be read). */
static int
same_bytes(struct diff *d, const struct item *x, const struct item *y,
	   uint64_t *at, const struct item **side)
{
	uint64_t len = model_tensor_nbytes(x->mt), off = 0;

	while (off < len) {
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK, k;
		int rc;

		rc = model_tensor_read(x->m, x->mt, off, n, d->ba);
		if (rc) {
			*side = x;
			return rc;
		}
		rc = model_tensor_read(y->m, y->mt, off, n, d->bb);
		if (rc) {
			*side = y;
			return rc;
		}
		d->done += n;
		progress_bytes(&d->line, "compared", d->done, d->total);
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
report_only(struct diff *d, const struct item *x, const char *which,
	    json_t *list)
{
	d->ndiff++;
	if (d->o->quiet)
		return;
	if (list) {
		json_array_append_new(list, json_stringn(x->q, x->ql));
		return;
	}
	progress_clear(&d->line);
	printf("only in %s: ", which);
	summary_print_name(stdout, x->q, x->ql);
	putchar('\n');
}

static int
same_shape(const struct tensor *x, const struct tensor *y)
{
	return x->rank == y->rank &&
	       !memcmp(x->shape, y->shape, x->rank * sizeof(*x->shape));
}

/* A change of dtype, shape or bytes; err: the error between the values
 * when both are numbers of one shape, else NULL. */
static void
report_changed(struct diff *d, const struct item *x, const struct item *y,
	       const char *what, uint64_t at, const struct inspect_values *err)
{
	const struct tensor *tx = x->mt->t, *ty = y->mt->t;

	d->ndiff++;
	if (d->o->quiet)
		return;
	if (d->changed) {
		json_t *j = json_pack("{s:s%, s:s, s:o, s:o}",
				      "name", x->q, x->ql,
				      "what", what, "a", shape_json(tx),
				      "b", shape_json(ty));

		if (j && !strcmp(what, "bytes"))
			json_object_set_new(j, "first_difference",
					    json_integer((json_int_t)at));
		if (j && err)
			json_object_set_new(j, "error", json_pack(
				"{s:f, s:f, s:I, s:I, s:I}",
				"max_abs", err->max_abs,
				"rms", inspect_values_rms(err),
				"values", (json_int_t)err->count,
				"different", (json_int_t)err->differ,
				"nonfinite", (json_int_t)err->nonfinite));
		if (j && err && d->o->tolerant)
			json_object_set_new(json_object_get(j, "error"),
					    "not_close",
					    json_integer((json_int_t)err->far));
		json_array_append_new(d->changed, j);
		return;
	}
	progress_clear(&d->line);
	printf("%s: ", what);
	summary_print_name(stdout, x->q, x->ql);
	if (!strcmp(what, "bytes")) {
		printf(": first difference at byte %" PRIu64 " of %" PRIu64,
		       at, model_tensor_nbytes(x->mt));
	} else {
		fputs(": ", stdout);
		print_shape(tx);
		fputs(" -> ", stdout);
		print_shape(ty);
	}
	if (err) {
		printf(": max |a-b| %.6g, rms %.6g, %" PRIu64 " of %" PRIu64
		       " values differ", err->max_abs, inspect_values_rms(err),
		       err->differ, err->count);
		if (err->nonfinite)
			printf(" (%" PRIu64 " NaN or Inf)", err->nonfinite);
		if (d->o->tolerant)
			printf(", %" PRIu64 " not close", err->far);
	}
	putchar('\n');
}

/* The error between x's and y's values when both are numbers of one
 * shape: 1 with *err, 0 when they are not, -errno when a read failed
 * (*bad: which side). */
static int
value_error(const struct diff *d, const struct item *x, const struct item *y,
	    struct inspect_values *err, const struct item **bad)
{
	int rc;

	if (!same_shape(x->mt->t, y->mt->t) ||
	    !inspect_values_float(x->mt->t->dtype) ||
	    !inspect_values_float(y->mt->t->dtype))
		return 0;
	rc = inspect_values_diff(x->m, x->mt, y->m, y->mt, d->o->atol,
				 d->o->rtol, err);
	if (rc)
		*bad = x;	/* either side: the message names the first */
	return rc ? rc : 1;
}

static int
read_failed(struct diff *d, const struct item *bad, int rc)
{
	progress_clear(&d->line);
	if (!d->o->quiet)
		fprintf(stderr, "stfs-inspect: %s: %s: cannot read tensor %s "
			"(was the source changed?)\n",
			bad->m->shards[bad->mt->shard].src->name,
			strerror(-rc), bad->mt->t->name);
	return 2;
}

/* "DIR: KEY" in a tree, "KEY" for one model (a key of kl bytes, which
 * may hold a NUL). */
static json_t *
meta_key(const char *dir, const char *k, size_t kl)
{
	char *s;
	json_t *j;
	size_t dl = strlen(dir);

	if (!dl)
		return json_stringn(k, kl);
	s = malloc(dl + 2 + kl);
	if (!s)
		return NULL;
	memcpy(s, dir, dl);
	memcpy(s + dl, ": ", 2);
	memcpy(s + dl + 2, k, kl);
	j = json_stringn(s, dl + 2 + kl);
	free(s);
	return j;
}

static void
print_meta_key(const char *what, const json_t *v)
{
	printf("metadata %s: ", what);
	summary_print_value(stdout, json_string_value(v),
			    json_string_length(v));
	putchar('\n');
}

/* __metadata__ keys only in A, only in B, or with another value, for
 * every pair of models with the same directory.  Returns the number of
 * differences; fills *out (--json) or prints. */
static uint64_t
diff_metadata(struct diff *d, json_t **out)
{
	json_t *oa = json_array(), *ob = json_array(), *ch = json_array(), *v;
	const struct catalog *ca = d->a.c, *cb = d->b.c;
	uint64_t n = 0;
	size_t i, j;

	for (i = 0; i < ca->n; i++)
		for (j = 0; j < cb->n; j++) {
			const char *dir = ca->entries[i].dir, *k;
			json_t *ma, *mb;
			size_t kl;

			if (strcmp(dir, cb->entries[j].dir))
				continue;
			ma = summary_metadata(ca->entries[i].model);
			mb = summary_metadata(cb->entries[j].model);
			json_object_keylen_foreach(ma, k, kl, v) {
				json_t *w = json_object_getn(mb, k, kl);

				if (!w || !json_equal(v, w)) {
					json_array_append_new(w ? ch : oa,
							      meta_key(dir, k,
								       kl));
					n++;
				}
			}
			json_object_keylen_foreach(mb, k, kl, v)
				if (!json_object_getn(ma, k, kl)) {
					json_array_append_new(ob, meta_key(dir,
									   k,
									   kl));
					n++;
				}
			json_decref(ma);
			json_decref(mb);
		}
	if (d->only_a) {
		*out = json_pack("{s:o, s:o, s:o}", "only_in_a", oa,
				 "only_in_b", ob, "changed", ch);
		return n;
	}
	if (!d->o->quiet) {
		json_array_foreach(oa, i, v)
			print_meta_key("only in A", v);
		json_array_foreach(ob, i, v)
			print_meta_key("only in B", v);
		json_array_foreach(ch, i, v)
			print_meta_key("changed", v);
	}
	json_decref(oa);
	json_decref(ob);
	json_decref(ch);
	return n;
}

static int
run_diff(struct diff *d)
{
	json_t *meta = NULL;
	uint64_t inboth = 0;
	size_t i;

	for (i = 0; i < d->a.n; i++) {
		const struct item *x = &d->a.it[i], *y = side_find(&d->b, x);

		if (y && x->mt->t->dtype == y->mt->t->dtype &&
		    same_shape(x->mt->t, y->mt->t))
			d->total += model_tensor_nbytes(x->mt);
	}
	progress_bytes(&d->line, "compared", 0, d->total);	/* the rate's start */
	for (i = 0; i < d->a.n; i++) {
		const struct item *x = &d->a.it[i], *y = side_find(&d->b, x);
		const struct item *bad = NULL;
		struct inspect_values err;
		uint64_t at = 0;
		int rc, values;

		if (!y) {
			report_only(d, x, "A", d->only_a);
			continue;
		}
		inboth++;
		/* the values are read for the report, and with --atol or
		 * --rtol for the answer too, quiet or not */
		values = !d->o->quiet || d->o->tolerant;
		if (x->mt->t->dtype != y->mt->t->dtype) {
			rc = values ? value_error(d, x, y, &err, &bad) : 0;
			if (rc < 0)
				return read_failed(d, bad, rc);
			if (rc && d->o->tolerant && !err.far) {
				d->close++;
				continue;
			}
			report_changed(d, x, y, "dtype", 0, rc ? &err : NULL);
			if (d->o->png && (rc = inspect_png_diff(d->o, x->m, x->mt,
					  y->m, y->mt, x->q, x->ql)))
				return rc;
			continue;
		}
		if (!same_shape(x->mt->t, y->mt->t)) {
			report_changed(d, x, y, "shape", 0, NULL);
			continue;
		}
		rc = same_bytes(d, x, y, &at, &bad);
		if (rc < 0)
			return read_failed(d, bad, rc);
		if (rc == 0) {
			d->identical++;
			continue;
		}
		rc = values ? value_error(d, x, y, &err, &bad) : 0;
		if (rc < 0)
			return read_failed(d, bad, rc);
		if (rc && d->o->tolerant && !err.far) {
			d->close++;
			continue;
		}
		report_changed(d, x, y, "bytes", at, rc ? &err : NULL);
		if (d->o->png && (rc = inspect_png_diff(d->o, x->m, x->mt, y->m,
							y->mt, x->q, x->ql)))
			return rc;
	}
	for (i = 0; i < d->b.n; i++)
		if (!side_find(&d->a, &d->b.it[i]))
			report_only(d, &d->b.it[i], "B", d->only_b);
	progress_end(&d->line, 0);
	d->ndiff += diff_metadata(d, &meta);
	if (d->o->quiet) {
		json_decref(meta);
	} else if (d->only_a) {
		json_t *root = json_pack("{s:s, s:s, s:b, s:I, s:I, s:o, s:o, "
					 "s:o, s:o}",
					 "a", d->o->sources[0],
					 "b", d->o->sources[1],
					 "same", d->ndiff == 0,
					 "identical", (json_int_t)d->identical,
					 "in_both", (json_int_t)inboth,
					 "only_in_a", d->only_a,
					 "only_in_b", d->only_b,
					 "changed", d->changed,
					 "metadata", meta ? meta : json_null());
		char *text;

		if (root && d->o->tolerant &&
		    (json_object_set_new(root, "close",
					 json_integer((json_int_t)d->close)) ||
		     json_object_set_new(root, "atol", json_real(d->o->atol)) ||
		     json_object_set_new(root, "rtol", json_real(d->o->rtol)))) {
			json_decref(root);
			root = NULL;
		}
		text = root ? json_dumps(root, JSON_PRESERVE_ORDER |
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
		printf("identical: %" PRIu64 " of %" PRIu64 " tensors in both",
		       d->identical, inboth);
		if (d->o->tolerant)
			printf(", %" PRIu64 " more close (|a-b| <= %g + %g |b|)",
			       d->close, d->o->atol, d->o->rtol);
		printf(" (A has %zu, B has %zu)\n", d->a.n, d->b.n);
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
	rc = side_open(o, o->sources[0], &d.a);
	if (!rc)
		rc = side_open(o, o->sources[1], &d.b);
	if (!rc) {
		progress_start(&d.line, "stfs-inspect", NULL, o->quiet, 0);
		d.ba = malloc(CHUNK);
		d.bb = malloc(CHUNK);
		if (o->json && !o->quiet) {
			d.only_a = json_array();
			d.only_b = json_array();
			d.changed = json_array();
		}
		if (!d.ba || !d.bb || (o->json && !o->quiet &&
				       (!d.only_a || !d.only_b || !d.changed)))
			rc = -1;
	}
	if (!rc)
		rc = run_diff(&d);
	if (rc < 0) {
		fputs("stfs-inspect: out of memory\n", stderr);
		rc = 2;
	}
	progress_destroy(&d.line);
	json_decref(d.only_a);
	json_decref(d.only_b);
	json_decref(d.changed);
	free(d.ba);
	free(d.bb);
	side_free(&d.a);
	side_free(&d.b);
	return rc;
}
