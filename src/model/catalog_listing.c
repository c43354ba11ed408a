/* catalog_listing.c - the tree builder for sources that list their files
 * (hf://, s3://): which listed files are models, under the rules a local
 * directory follows (catalog.h), placed by catalog_place() like a local
 * directory's.
 *
 * Every *.safetensors.index.json is a model; its weight_map names shards
 * (relative to its folder) that are not models of their own; every other
 * *.safetensors file is one, and so is every *.gguf file (of a split set
 * its first part, which opens the others).  An index that cannot be read here still
 * counts as a model: opening it says what is wrong.  The listing is sorted
 * once (O(n log n)), the shard names kept in a keyed nametab, and the
 * folders built in one pass over the sorted paths.
 */
#include "model/catalog.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "model/catalog_int.h"
#include "model/display.h"
#include "format/naming.h"
#include "model/model.h"
#include "model/shards.h"
#include "source/source.h"

#define INDEX_SUFFIX ".safetensors.index.json"
#define INDEX_MAX (64u << 20)

struct entry {
	const char *rel;
	const char *url;
};

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->rel,
		      ((const struct entry *)b)->rel);
}

/* The folder part of rel with its '/' ("" at the top), malloc'd. */
static char *
folder_of(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	return strndup(rel, slash ? (size_t)(slash - rel) + 1 : 0);
}

/* Note the shards the index at x names.  Failures to read it are not
 * errors here (opening the model reports them); out of memory is. */
static int
note_index(struct cscan *s, const struct source_opener *op,
	   const struct entry *x)
{
	struct source *src = NULL;
	struct err scratch = { 0 };
	json_t *root = NULL, *v;
	const char *key;
	char *text = NULL, *folder;
	int rc = 0;

	if (source_opener_open(op, x->url, &src, &scratch))
		return 0;
	if (src->size <= INDEX_MAX && (text = malloc(src->size + 1)) &&
	    source_pread(src, text, src->size, 0) == 0)
		root = json_loadb(text, src->size, 0, NULL);
	free(text);
	/* shards.c reads it again: from this source, no second request */
	source_opener_keep(op, x->url, src);
	folder = folder_of(x->rel);
	if (!folder) {
		json_decref(root);
		return err_set(s->e, ERR_NO_MEMORY, "out of memory");
	}
	json_object_foreach(json_object_get(root, "weight_map"), key, v) {
		char *path;

		if (!json_is_string(v))
			continue;
		if (asprintf(&path, "%s%s", folder, json_string_value(v)) < 0 ||
		    cscan_shard_add(s, path)) {
			rc = err_set(s->e, ERR_NO_MEMORY, "out of memory");
			break;
		}
	}
	free(folder);
	json_decref(root);
	return rc;
}

/* Put the model at rel into the tree under root: its folders first (the
 * sorted order makes a folder's kid the last one added, if any). */
static int
insert(struct cnode *root, const char *rel)
{
	struct cnode *n = root;
	const char *p = rel, *slash;

	while ((slash = strchr(p, '/'))) {
		size_t len = (size_t)(slash - p);
		struct ckid *last = n->nkids ? &n->kids[n->nkids - 1] : NULL;

		if (last && strlen(last->name) == len &&
		    memcmp(last->name, p, len) == 0) {
			n = last->node;
		} else {
			char *name = strndup(p, len), *path;
			struct cnode *kid;

			path = name ? cnode_join(n->path, name) : NULL;
			kid = path ? cnode_new(path) : NULL;
			free(path);
			if (!kid || cnode_add_kid(n, name, kid)) {
				free(name);
				cnode_free(kid);
				return -1;
			}
			free(name);
			n = kid;
		}
		p = slash + 1;
	}
	return cnode_add_model(n, p);
}

struct listing_open {
	const struct entry *v;
	size_t n;
	const struct source_opener *op;
};

/* catalog_opener: the model at a listed path, by its URL. */
static int
open_listed(void *arg, const char *path, struct model **m, char **label,
	    struct err *e)
{
	const struct listing_open *lo = arg;
	struct entry key = { path, NULL };
	const struct entry *x = bsearch(&key, lo->v, lo->n, sizeof(*lo->v),
					cmp_entry);
	int rc;

	if (!x)
		return err_set(e, ERR_USAGE, "not in the listing");
	if (text_ends_with(x->rel, INDEX_SUFFIX))
		rc = shards_open_index(lo->op, NULL, x->url, m, e);
	else
		rc = model_open_url(lo->op, x->url, m, e);
	if (rc)
		return err_at(e, x->url);
	/* a URL without user info and query (issue 14.5) */
	*label = display_name(x->url);
	return 0;
}

int
catalog_add_listing(struct catalog *c, const struct catalog_listing *l,
		    const struct catalog_opts *o, struct err *e)
{
	struct cscan s = { 0 };
	struct entry *v = calloc(l->n ? l->n : 1, sizeof(*v));
	struct cnode *root = cnode_new("");
	struct listing_open lo = { v, l->n, l->op };
	struct catalog_opener op = { open_listed, &lo };
	struct naming nm;
	size_t i, found = 0;
	int rc = -1;

	s.e = e;
	if (!v || !root) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < l->n; i++) {
		v[i].rel = l->rel[i];
		v[i].url = l->url[i];
	}
	qsort(v, l->n, sizeof(*v), cmp_entry);
	for (i = 0; i < l->n; i++)
		if (text_ends_with(v[i].rel, INDEX_SUFFIX) &&
		    note_index(&s, l->op, &v[i]))
			goto out;
	for (i = 0; i < l->n; i++) {
		if (!text_ends_with(v[i].rel, INDEX_SUFFIX) &&
		    cscan_shard_has(&s, v[i].rel))
			continue;
		if (naming_of(v[i].rel, &nm) == NAMING_PART)
			continue;	/* a split set's other parts */
		if (o && o->max_models && found >= o->max_models) {
			err_set(e, ERR_USAGE, "more than %zu models",
				o->max_models);
			goto out;
		}
		if (insert(root, v[i].rel)) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		found++;
	}
	if (!found) {
		err_set(e, ERR_USAGE, "no model: every .safetensors file is a "
			"shard an index names");
		goto out;
	}
	rc = catalog_place(c, root, "", NULL, &op, e);
out:
	cscan_free(&s);
	cnode_free(root);
	free(v);
	return rc;
}
