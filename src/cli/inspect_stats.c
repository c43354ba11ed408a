/* inspect_stats.c - stfs-inspect --stats: numerical health of every
 * tensor (tensor_stats.h), NaN and Inf flagged.  Exit status as grep's:
 * 0 none holds NaN or Inf, 1 some tensor does, 2 trouble (an invalid or
 * unreadable SOURCE, a read that failed).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "model/catalog.h"
#include "base/error.h"
#include "cli/inspect.h"
#include "cli/progress.h"
#include "model/model.h"
#include "model/quant_model.h"
#include "model/summary.h"
#include "view/tensor_stats.h"

/* The progress line on a terminal: bytes done of the model's total. */
struct stats_progress {
	struct progress line;
	uint64_t base, total;
};

static void
progress_cb(void *arg, uint64_t done)
{
	struct stats_progress *p = arg;

	progress_bytes(&p->line, "stats", p->base + done, p->total);
}

static void
print_row(const struct model_tensor *mt, const struct tensor_stats *s)
{
	summary_print_name(stdout, mt->t->name, mt->t->name_len);
	printf(" %s", dtype_info(s->dtype)->name);
	if (s->kind != TENSOR_STATS_FLOAT && s->finite) {
		if (s->kind == TENSOR_STATS_SIGNED)
			printf(" min=%" PRId64 " max=%" PRId64, s->imin, s->imax);
		else
			printf(" min=%" PRIu64 " max=%" PRIu64, s->umin, s->umax);
		printf(" mean=%.6g std=%.6g zeros=%" PRIu64 "\n", s->mean,
		       s->std, s->zeros);
		return;
	}
	printf(" min=%.6g max=%.6g mean=%.6g std=%.6g", s->min, s->max,
	       s->mean, s->std);
	if (s->kind == TENSOR_STATS_FLOAT)
		printf(" nan=%" PRIu64 " +inf=%" PRIu64 " -inf=%" PRIu64
		       " zeros=%" PRIu64 " subnormals=%" PRIu64 "%s\n",
		       s->nan, s->pinf, s->ninf, s->zeros, s->subnormals,
		       tensor_stats_bad(s) ? "  <-- NaN/Inf" : "");
	else
		printf(" zeros=%" PRIu64 "\n", s->zeros);
}

/* Append one object of tensor_stats_json() as an element of an array two
 * levels deep.  0 or -1. */
static int
add_indented(struct buf *b, const char *text, int first)
{
	int rc = buf_adds(b, first ? "\n    " : ",\n    ");

	for (; !rc && *text; text++) {
		if (*text == '\n' && !text[1])
			break;
		rc = buf_add(b, text, 1);
		if (!rc && *text == '\n')
			rc = buf_adds(b, "    ");
	}
	return rc;
}

/* The state of one run over every model of a SOURCE. */
struct run {
	const struct inspect_opts *o;
	struct stats_progress pr;
	struct buf objs;	/* --json: the tensors' objects, as text */
	json_t *bad;		/* --json: names holding NaN or Inf */
	json_t *assumed;	/* --json: per model, what its quantized
				   weights took without a config */
	uint64_t nbad, ntensors;
	int multi;		/* several models: qualify by directory */
};

/* "DIR/NAME" for a tensor of a model in a tree, else NAME; malloc'd. */
static char *
qualified(const char *dir, const struct tensor *t, size_t *len)
{
	size_t dl = strlen(dir);
	char *q = malloc(dl + 1 + t->name_len + 1);

	if (!q)
		return NULL;
	memcpy(q, dir, dl);
	q[dl] = '/';
	memcpy(q + (dl ? dl + 1 : 0), t->name, t->name_len);
	*len = (dl ? dl + 1 : 0) + t->name_len;
	q[*len] = '\0';
	return q;
}

/* What m's quantized weights took without a config (their values, which
 * --stats describes, depend on it): a line each, or with --json an
 * object in r->assumed.  0 or -1 (memory). */
static int
stats_assumed(struct run *r, const struct model *m, const char *dir)
{
	json_t *a, *o;
	int bad;

	if (r->o->quiet)
		return 0;
	if (!r->o->json) {
		progress_clear(&r->pr.line);
		summary_print_assumed(stdout, "", m, NULL);
		return 0;
	}
	if (quant_model_assumed(m, NULL, (void **)&a))
		return -1;
	if (!a)
		return 0;
	/* {"dir", "assumed", "assumed_why"} */
	o = json_pack("{s:s}", "dir", dir);
	bad = !o || json_object_update(o, a) ||
	      json_array_append(r->assumed, o);
	json_decref(o);
	json_decref(a);
	return bad ? -1 : 0;
}

/* A JSON value, indented by two spaces more than json_dumps() gives,
 * on stdout.  0 or -1 (memory). */
static int
print_nested(const json_t *v)
{
	char *b = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (!b)
		return -1;
	for (char *p = b; *p; p++) {
		putchar(*p);
		if (*p == '\n')
			fputs("  ", stdout);
	}
	free(b);
	return 0;
}

/* One model's tensors.  0, 2 (read error, reported) or -1 (memory). */
static int
stats_model(struct run *r, const struct model *m, const char *dir)
{
	const struct inspect_opts *o = r->o;
	size_t i;
	int rc;

	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[i];
		struct tensor_stats s;
		size_t ql;
		char *q;

		struct model_tensor_at at = { m, mt };

		/* the tensor file's bytes: gathered for a strided view */
		rc = tensor_stats_compute(mt->t, model_tensor_read_file, &at, &s,
					  progress_cb, &r->pr);
		r->pr.base += model_tensor_nbytes(mt);
		if (rc == -ENOMEM)
			return -1;
		if (rc == -EOPNOTSUPP) {
			/* a quantization stfs does not decode: no values */
			if (!o->quiet)
				fprintf(stderr, "stfs-inspect: %s: tensor %s: "
					"%s is not decoded, no statistics\n",
					m->shards[mt->shard].src->name,
					mt->t->name,
					dtype_info(mt->t->dtype)->name);
			continue;
		}
		if (rc) {
			progress_clear(&r->pr.line);
			if (!o->quiet)
				fprintf(stderr, "stfs-inspect: %s: %s: cannot "
					"read tensor %s (was the source changed?)\n",
					m->shards[mt->shard].src->name,
					strerror(-rc), mt->t->name);
			return 2;
		}
		r->ntensors++;
		if (tensor_stats_bad(&s))
			r->nbad++;
		if (o->quiet)
			continue;
		if (o->json) {
			char *text = tensor_stats_json(&s, mt->t->name,
						 mt->t->name_len);
			int bad;

			/* kept as text: jansson cannot hold a U64 max */
			if (!text)
				return -1;
			if (r->multi) {
				/* the model's directory, right after "{" */
				struct buf t = BUF_INIT;

				bad = buf_adds(&t, "{\n  \"dir\": ") ||
				      buf_add_json_string(&t, dir, strlen(dir)) ||
				      buf_adds(&t, ",") || buf_adds(&t, text + 1);
				free(text);
				text = bad ? NULL : buf_steal(&t);
				buf_free(&t);
				if (!text)
					return -1;
			}
			bad = add_indented(&r->objs, text, r->ntensors == 1);
			free(text);
			if (bad)
				return -1;
			if (!tensor_stats_bad(&s))
				continue;
			q = qualified(r->multi ? dir : "", mt->t, &ql);
			if (!q || json_array_append_new(r->bad,
							json_stringn(q, ql))) {
				free(q);
				return -1;
			}
			free(q);
			continue;
		}
		progress_clear(&r->pr.line);
		print_row(mt, &s);
	}
	return stats_assumed(r, m, dir);
}

int
inspect_stats(const struct inspect_opts *o)
{
	struct run r;
	struct catalog *c;
	size_t i, k;
	int rc;

	if (o->nsources != 1) {
		fputs("stfs-inspect: --stats takes exactly one SOURCE "
		      "(try --help)\n", stderr);
		return 2;
	}
	/* an invalid file is trouble (2), as for grep and cmp: 1 says
	 * that a NaN or Inf was found */
	if (inspect_catalog(o, o->sources[0], 1, &c))
		return 2;
	rc = 0;
	memset(&r, 0, sizeof(r));
	r.o = o;
	progress_start(&r.pr.line, "stfs-inspect", NULL, o->quiet, 0);
	r.multi = c->n != 1 || c->entries[0].dir[0];
	for (k = 0; k < c->n; k++)
		for (i = 0; i < c->entries[k].model->ntensors; i++)
			r.pr.total += model_tensor_nbytes(
				&c->entries[k].model->tensors[i]);
	progress_cb(&r.pr, 0);	/* the rate's start */
	if (o->json && (!(r.bad = json_array()) ||
			!(r.assumed = json_array())))
		rc = -1;
	for (k = 0; !rc && k < c->n; k++) {
		if (r.multi && !o->json && !o->quiet)
			printf("%s== %s ==\n", k ? "\n" : "",
			       c->entries[k].dir[0] ? c->entries[k].dir : ".");
		rc = stats_model(&r, c->entries[k].model, c->entries[k].dir);
	}
	progress_end(&r.pr.line, 0);
	progress_destroy(&r.pr.line);
	if (!rc && o->json && !o->quiet) {
		/* "source" as in --json: one model's file or index, or
		 * the SOURCE of a tree (both absolute, URLs redacted) */
		json_t *src = json_string(r.multi ? c->label :
					  c->entries[0].label);
		char *a = src ? json_dumps(src, JSON_ENCODE_ANY) : NULL;

		json_decref(src);
		if (a) {
			printf("{\n  \"source\": %s,\n  \"tensors\": [%s%s],\n"
			       "  \"nan_or_inf\": ", a,
			       r.objs.len ? r.objs.data : "",
			       r.objs.len ? "\n  " : "");
			/* the arrays one level in */
			rc = print_nested(r.bad);
			fputs(",\n  \"assumed\": ", stdout);
			rc = rc ? rc : print_nested(r.assumed);
			fputs("\n}\n", stdout);
		} else {
			rc = -1;
		}
		free(a);
	} else if (!rc && !o->quiet) {
		printf("%s%" PRIu64 " of %" PRIu64 " tensor%s hold%s NaN or Inf\n",
		       r.multi ? "\n" : "", r.nbad, r.ntensors,
		       r.ntensors == 1 ? "" : "s", r.ntensors == 1 ? "s" : "");
	}
	buf_free(&r.objs);
	json_decref(r.bad);
	json_decref(r.assumed);
	catalog_free(c);
	if (rc < 0) {
		fputs("stfs-inspect: out of memory\n", stderr);
		return 2;
	}
	if (rc)
		return rc;
	return r.nbad ? 1 : 0;
}
