/* inspect_summary.c - the default mode: validate each SOURCE and print
 * its summary (text or --json), optionally with every tensor (--tensors,
 * --sort) and the per-module breakdown (--group).
 *
 * A SOURCE may hold several models (a directory tree, the hub cache,
 * catalog.h).  One SOURCE that is one model prints as it always did;
 * otherwise there is one block per model, headed "== PATH ==" (SOURCE,
 * then the model's directory in the mount), and --json prints
 * {"models": [...]}: each the usual object plus "path" (that same path)
 * and "dir" (the directory in the mount, "" for a SOURCE that is one
 * model).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "base/error.h"
#include "base/jsonmem.h"
#include "cli/inspect.h"
#include "model/model.h"
#include "model/summary.h"

/* The summary of one model of a catalog: "source" is its label (the
 * absolute path of its file or index, a URL without its secrets), as in
 * the mount's __summary__.json and --stats --json. */
static json_t *
model_json(const struct inspect_opts *o, const struct catalog_entry *x)
{
	unsigned long jf = jsonmem_failures();
	const struct model *m = x->model;
	json_t *root = summary_value(m);

	if (root && json_object_set_new(root, "source", json_string(x->label)))
		root = NULL;
	/* jansson short of memory may leave a key out (jsonmem.h) */
	if (!root || inspect_add_json(o, m, root) ||
	    jsonmem_failures() != jf) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static int
print_json(json_t *root)
{
	unsigned long jf = jsonmem_failures();
	char *text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(2));

	if (!text || jsonmem_failures() != jf) {
		free(text);
		return -1;
	}
	puts(text);
	free(text);
	return 0;
}

/* What a cold full read of m's remote files costs: their data bytes and
 * an upper bound on ranged GETs, one per 1 MiB block of the object that
 * holds data (read-ahead merges neighbouring blocks into fewer requests).
 * Headers are not counted: the mount has read them already. */
static void
print_remote_cost(const struct model *m)
{
	const uint64_t blk = 1u << 20;	/* HTTP_BLOCK_BYTES */
	uint64_t bytes = 0, reqs = 0;
	size_t i, nremote = 0;

	for (i = 0; i < m->nshards; i++) {
		const struct shard *sh = &m->shards[i];
		uint64_t a = sh->hdr->data_start;
		uint64_t b = a + sh->hdr->data_len;

		if (!strstr(sh->src->name, "://"))
			continue;
		nremote++;
		if (b > a) {
			bytes += b - a;
			reqs += (b - 1) / blk - a / blk + 1;
		}
	}
	if (nremote)
		printf("cold read: %llu bytes of tensor data from %zu remote "
		       "file(s) in at most %llu ranged requests (1 MiB blocks; "
		       "read-ahead merges them into fewer)\n",
		       (unsigned long long)bytes, nremote,
		       (unsigned long long)reqs);
}

static int
print_text(const struct inspect_opts *o, const struct model *m)
{
	int rc = 0;

	summary_print_text(stdout, m);
	print_remote_cost(m);
	if (o->tensors)
		rc = inspect_print_tensors(o, m);
	if (!rc && o->group)
		rc = inspect_print_groups(o, m);
	return rc;
}

static char *
model_path(const char *source, const char *dir)
{
	size_t n = strlen(source);
	char *p;

	if (!*dir)
		return strdup(source);
	while (n > 1 && source[n - 1] == '/')
		n--;
	return asprintf(&p, "%.*s/%s", (int)n, source, dir) < 0 ? NULL : p;
}

/* One SOURCE's models: a text block each, or objects added to list.
 * 0 or -1 (out of memory). */
static int
show(const struct inspect_opts *o, const char *source,
     const struct catalog *c, int blocks, json_t *list, int *first)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct catalog_entry *x = &c->entries[i];
		char *path = model_path(source, x->dir);
		json_t *obj;
		int rc = 0;

		if (!path)
			return -1;
		if (o->json) {
			obj = model_json(o, x);
			if (!obj || json_object_set_new(obj, "path",
							json_string(path)) ||
			    json_object_set_new(obj, "dir",
						json_string(x->dir)) ||
			    json_array_append_new(list, obj))
				rc = -1;
		} else if (o->format != INSPECT_FORMAT_TEXT) {
			/* one table: a header, then every model's rows */
			rc = inspect_print_table(o, x->model,
						 blocks ? path : NULL, *first);
		} else {
			if (blocks)
				printf("%s== %s ==\n", *first ? "" : "\n",
				       path);
			rc = print_text(o, x->model);
		}
		*first = 0;
		free(path);
		if (rc)
			return -1;
	}
	return 0;
}

int
inspect_summary(const struct inspect_opts *o)
{
	json_t *list = json_array(), *root;
	int i, rc, status = 0, first = 1, oom = !list, multi;
	struct catalog *c;

	multi = o->nsources > 1;
	for (i = 0; !oom && i < o->nsources; i++) {
		rc = inspect_catalog(o, o->sources[i], 0, &c);
		if (rc) {
			status = rc > status ? rc : status;
			continue;
		}
		if (c->n != 1 || c->entries[0].dir[0])
			multi = 1;
		if (!o->quiet && o->json && !multi && o->nsources == 1) {
			root = model_json(o, &c->entries[0]);
			oom = !root || print_json(root);
			json_decref(root);
		} else if (!o->quiet) {
			oom = show(o, o->sources[i], c, multi, list, &first);
		}
		catalog_free(c);
	}
	if (!oom && o->json && !o->quiet && multi) {
		root = json_pack("{sO}", "models", list);
		oom = !root || print_json(root);
		json_decref(root);
	}
	json_decref(list);
	if (oom) {
		fputs("stfs-inspect: out of memory\n", stderr);
		return 2;
	}
	return status;
}
