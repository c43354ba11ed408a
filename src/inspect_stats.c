/* inspect_stats.c - stfs-inspect --stats: numerical health of every
 * tensor (tstats.h), NaN and Inf flagged; exit status 1 when a tensor
 * holds either.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "inspect.h"
#include "model.h"
#include "summary.h"
#include "tstats.h"

/* A progress line on a terminal: bytes done of the model's total. */
struct progress {
	int on;
	uint64_t base, total;
	struct timespec last;
};

static void
progress_cb(void *arg, uint64_t done)
{
	struct progress *p = arg;
	struct timespec now;

	if (!p->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec == p->last.tv_sec &&
	    now.tv_nsec - p->last.tv_nsec < 200000000L && done)
		return;
	p->last = now;
	fprintf(stderr, "\rstats: %" PRIu64 " of %" PRIu64 " MiB", (p->base + done) >> 20,
		p->total >> 20);
}

static void
print_row(const struct model_tensor *mt, const struct tstats *s)
{
	summary_print_name(stdout, mt->t->name, mt->t->name_len);
	printf(" %s", dtype_info(s->dtype)->name);
	if (s->kind != TSTATS_FLOAT && s->finite) {
		if (s->kind == TSTATS_SIGNED)
			printf(" min=%" PRId64 " max=%" PRId64, s->imin, s->imax);
		else
			printf(" min=%" PRIu64 " max=%" PRIu64, s->umin, s->umax);
		printf(" mean=%.6g std=%.6g zeros=%" PRIu64 "\n", s->mean,
		       s->std, s->zeros);
		return;
	}
	printf(" min=%.6g max=%.6g mean=%.6g std=%.6g", s->min, s->max,
	       s->mean, s->std);
	if (s->kind == TSTATS_FLOAT)
		printf(" nan=%" PRIu64 " +inf=%" PRIu64 " -inf=%" PRIu64
		       " zeros=%" PRIu64 " subnormals=%" PRIu64 "%s\n",
		       s->nan, s->pinf, s->ninf, s->zeros, s->subnormals,
		       tstats_bad(s) ? "  <-- NaN/Inf" : "");
	else
		printf(" zeros=%" PRIu64 "\n", s->zeros);
}

/* Append one object of tstats_json() as an element of an array two
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

int
inspect_stats(const struct inspect_opts *o)
{
	struct progress pr = { 0 };
	struct buf objs = BUF_INIT;
	json_t *bad = NULL;
	struct model *m;
	uint64_t nbad = 0;
	size_t i;
	int rc;

	if (o->nsources != 1) {
		fputs("stfs-inspect: --stats takes exactly one SOURCE "
		      "(try --help)\n", stderr);
		return 2;
	}
	rc = inspect_open(o, o->sources[0], &m);
	if (rc)
		return rc;
	pr.on = !o->quiet && isatty(STDERR_FILENO);
	for (i = 0; i < m->ntensors; i++)
		pr.total += model_tensor_nbytes(&m->tensors[i]);
	if (o->json) {
		bad = json_array();
		if (!bad)
			goto nomem;
	}
	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[i];
		struct tstats s;

		rc = tstats_tensor(m->shards[mt->shard].src,
				   model_tensor_offset(m, mt), mt->t, &s,
				   progress_cb, &pr);
		pr.base += model_tensor_nbytes(mt);
		if (rc == -ENOMEM)
			goto nomem;
		if (rc) {
			if (pr.on)
				fputc('\n', stderr);
			if (!o->quiet)
				fprintf(stderr, "stfs-inspect: %s: %s: cannot "
					"read tensor %s (was the source changed?)\n",
					m->shards[mt->shard].src->name,
					strerror(-rc), mt->t->name);
			buf_free(&objs);
			json_decref(bad);
			model_free(m);
			return 2;
		}
		if (tstats_bad(&s))
			nbad++;
		if (o->quiet)
			continue;
		if (o->json) {
			char *text = tstats_json(&s, mt->t->name,
						 mt->t->name_len);

			/* kept as text: jansson cannot hold a U64 max */
			if (!text || add_indented(&objs, text, i == 0))
				goto nomem;
			free(text);
			if (tstats_bad(&s) && json_array_append_new(bad,
				json_stringn(mt->t->name, mt->t->name_len)))
				goto nomem;
			continue;
		}
		if (pr.on)
			fputs("\r\033[K", stderr);
		print_row(mt, &s);
	}
	if (pr.on)
		fputs("\r\033[K", stderr);
	if (o->json && !o->quiet) {
		json_t *src = json_string(m->arg);
		char *a = src ? json_dumps(src, JSON_ENCODE_ANY) : NULL;
		char *b = json_dumps(bad, JSON_INDENT(2));

		json_decref(src);
		if (!a || !b) {
			free(a);
			free(b);
			goto nomem;
		}
		printf("{\n  \"source\": %s,\n  \"tensors\": [%s%s],\n"
		       "  \"nan_or_inf\": ", a, objs.len ? objs.data : "",
		       objs.len ? "\n  " : "");
		/* the array one level in */
		for (char *p = b; *p; p++) {
			putchar(*p);
			if (*p == '\n')
				fputs("  ", stdout);
		}
		fputs("\n}\n", stdout);
		free(a);
		free(b);
	} else if (!o->quiet) {
		printf("%" PRIu64 " of %zu tensor%s hold%s NaN or Inf\n", nbad,
		       m->ntensors, m->ntensors == 1 ? "" : "s",
		       m->ntensors == 1 ? "s" : "");
	}
	buf_free(&objs);
	json_decref(bad);
	model_free(m);
	return nbad ? 1 : 0;
nomem:
	buf_free(&objs);
	json_decref(bad);
	model_free(m);
	fputs("stfs-inspect: out of memory\n", stderr);
	return 2;
}
