/* catalog_listing.c - the tree builder for sources that list their files
 * (hf://, s3://): which listed files are models, under the rules a local
 * directory follows (catalog.h), placed by catalog_place() like a local
 * directory's.
 *
 * A file a folder shows (naming_shown: format/naming.h's models and
 * indexes, those that yield only where no other model is) is a model,
 * unless an index of its folder names it as a shard; a split set's later
 * parts are opened through its first.  An index that cannot be read here
 * still counts as a model: opening it says what is wrong.  What the tree
 * will open is opened ahead at once (the provider's open_ahead), before
 * the indexes are read, with the configs beside its models (config.json,
 * quantize_config.json), which each model then keeps: a local folder
 * gives them when asked, a listing only at mount (model/model_beside.h).
 * The listing is sorted once (O(n log n)), the
 * shard names kept in a keyed nametab, and the folders built in one pass
 * over the sorted paths.
 */
#include "model/catalog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/nametab.h"
#include "format/naming.h"
#include "model/catalog_int.h"
#include "model/display.h"
#include "model/model.h"
#include "model/model_beside.h"
#include "model/model_files.h"
#include "model/shards.h"
#include "source/source.h"

#define INDEX_MAX (64u << 20)

struct entry {
	const char *rel;
	const char *url;
	const char *etag;	/* as listed, or NULL */
	uint64_t size;		/* as listed, or MODEL_FILES_UNKNOWN */
	enum naming_role role;	/* what its name says (format/naming.h) */
	int shown;		/* a model or index of its folder */
	int ahead;		/* handed to open_ahead */
};

/* The configs a model's folder may hold (format/naming.h's
 * naming_config), fetched with it (model/model_beside.h). */
static const char *const configs[] = { "config.json",
				       "quantize_config.json" };
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->rel,
		      ((const struct entry *)b)->rel);
}

/* The length of rel's folder part with its '/' (0 at the top). */
static size_t
folder_len(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	return slash ? (size_t)(slash - rel) + 1 : 0;
}

/* The folder part of rel with its '/' ("" at the top), malloc'd. */
static char *
folder_of(const char *rel)
{
	return strndup(rel, folder_len(rel));
}

static int
cmp_folder(const void *a, const void *b)
{
	const char *x = (*(const struct entry *const *)a)->rel;
	const char *y = (*(const struct entry *const *)b)->rel;
	size_t lx = folder_len(x), ly = folder_len(y);
	int c = memcmp(x, y, lx < ly ? lx : ly);

	return c ? c : (lx > ly) - (lx < ly);
}

/* Set each entry's role and whether its folder shows it: the files of
 * one folder side by side (sorted by folder), then the local rule
 * (naming_shown) on each folder's names.  0, or -1 without memory. */
static int
mark_shown(struct entry *v, size_t n)
{
	struct entry **by = calloc(n ? n : 1, sizeof(*by));
	struct naming nm;
	size_t i, j, k;

	if (!by)
		return -1;
	for (i = 0; i < n; i++) {
		v[i].role = naming_of(v[i].rel, &nm);
		by[i] = &v[i];
	}
	qsort(by, n, sizeof(*by), cmp_folder);
	for (i = 0; i < n; i = j) {
		int strong = 0;

		for (j = i; j < n && cmp_folder(&by[i], &by[j]) == 0; j++)
			strong |= naming_shown(by[j]->rel, 1);
		for (k = i; k < j; k++)
			by[k]->shown = naming_shown(by[k]->rel, strong);
	}
	free(by);
	return 0;
}

/* 1 when x, a split set's later part, belongs to a set whose first part
 * the tree opens (v sorted, n entries); -1 without memory. */
static int
part_opened(const struct entry *x, const struct entry *v, size_t n)
{
	struct naming nm;
	struct entry key = { .rel = NULL };
	const struct entry *first;
	char *rel = strdup(x->rel);

	if (!rel)
		return -1;
	naming_of(rel, &nm);
	/* NAME-KKKKK-of-NNNNN.gguf: the part's five digits */
	memcpy(rel + strlen(rel) - nm.suffix + 1, "00001", 5);
	key.rel = rel;
	first = bsearch(&key, v, n, sizeof(*v), cmp_entry);
	free(rel);
	return first && first->shown;
}

/* The index in v (sorted, n entries) of config c (configs[]) in the
 * folder of rel, or SIZE_MAX (*oom set when out of memory). */
static size_t
config_at(const char *rel, size_t c, const struct entry *v, size_t n,
	  int *oom)
{
	struct entry key = { .rel = NULL };
	const struct entry *x;
	size_t fl = folder_len(rel);
	char *path = malloc(fl + strlen(configs[c]) + 1);

	if (!path) {
		*oom = 1;
		return SIZE_MAX;
	}
	memcpy(path, rel, fl);
	strcpy(path + fl, configs[c]);
	key.rel = path;
	x = bsearch(&key, v, n, sizeof(*v), cmp_entry);
	free(path);
	return x ? (size_t)(x - v) : SIZE_MAX;
}

/* Hand the provider every file the tree will open (the models and
 * indexes shown, their split sets' other parts, the configs beside
 * them), to open them at once. */
static int
open_ahead(const struct catalog_listing *l, struct entry *v, struct err *e)
{
	const char **url;
	size_t i, c, x, k = 0;
	int rc = 0, oom = 0;

	if (!l->open_ahead)
		return 0;
	url = calloc(l->n ? l->n : 1, sizeof(*url));
	for (i = 0; url && i < l->n && rc >= 0; i++) {
		if (v[i].shown || (v[i].role == NAMING_PART &&
				   (rc = part_opened(&v[i], v, l->n)) > 0))
			url[k++] = v[i].url;
		for (c = 0; v[i].shown && c < NCONFIGS; c++)
			if ((x = config_at(v[i].rel, c, v, l->n, &oom)) !=
			    SIZE_MAX && !v[x].ahead) {
				v[x].ahead = 1;
				url[k++] = v[x].url;
			}
	}
	if (!url || rc < 0 || oom) {
		free(url);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	rc = l->open_ahead(l->op->arg, url, k, l->op->meter, e);
	free(url);
	return rc;
}

/* Note the shards the index at x names.  Failures to read it are not
 * errors here (opening the model reports them); out of memory is. */
static int
note_index(struct cscan *s, const struct source_opener *op,
	   const struct entry *x)
{
	struct source *src = NULL;
	struct err scratch = { 0 };
	char *text = NULL, *folder;
	int rc = 0;

	if (source_opener_open(op, x->url, &src, &scratch))
		return 0;
	folder = folder_of(x->rel);
	if (!folder)
		rc = err_set(s->e, ERR_NO_MEMORY, "out of memory");
	else if (src->size <= INDEX_MAX && (text = malloc(src->size + 1)) &&
		 source_pread_meta(src, text, src->size, 0) == 0)
		rc = cscan_note_index(s, folder, text, src->size);
	free(text);
	free(folder);
	/* shards.c reads it again: from this source, no second request */
	source_opener_keep(op, x->url, src);
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

/* A folder holding a model file at any depth ("a/b/": its path with its
 * '/'), and the files of the models found in it, made for the first. */
struct mfolder {
	const char *p;
	size_t len;
	struct model_files *files;
};

struct listing_open {
	const struct entry *v;
	size_t n;
	const struct source_opener *op;
	const struct source_opener *files;	/* NULL: no folders */
	struct mfolder *folders;	/* [0] the top, "" */
	size_t nfolders, capfolders;
	struct nametab ftab;		/* path -> index in folders */
};

/* --- the files of a model's folder (MNT/.files/) ------------------------- */

static int
folder_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct listing_open *lo = ctx;
	const struct mfolder *f = &lo->folders[id];

	return f->len == k->len && memcmp(f->p, k->name, k->len) == 0;
}

/* The folder p[0..len), or -1. */
static long
folder_find(const struct listing_open *lo, const char *p, size_t len)
{
	struct nametab_key k;

	if (len == 0)
		return 0;
	nametab_key(&k, 0, p, len);
	return nametab_find(&lo->ftab, &k);
}

/* Note every folder above a model file (a model, an index, a shard, a
 * split set's part): folders below a model's folder that are such are
 * other models' (or hold them), not its.  0, or -1 without memory. */
static int
note_folders(struct listing_open *lo)
{
	size_t i;

	lo->folders = calloc(1, sizeof(*lo->folders));
	if (!lo->folders || nametab_init(&lo->ftab, 16, folder_eq, lo))
		return -1;
	lo->nfolders = lo->capfolders = 1;
	lo->folders[0].p = "";
	for (i = 0; i < lo->n; i++) {
		const struct entry *x = &lo->v[i];
		const char *slash;

		if (!x->shown && x->role != NAMING_PART)
			continue;
		for (slash = strchr(x->rel, '/'); slash;
		     slash = strchr(slash + 1, '/')) {
			size_t len = (size_t)(slash - x->rel) + 1;
			struct nametab_key k;
			struct mfolder *f;

			if (folder_find(lo, x->rel, len) >= 0)
				continue;
			if (lo->nfolders == lo->capfolders) {
				f = realloc(lo->folders, 2 * lo->capfolders *
					    sizeof(*f));
				if (!f)
					return -1;
				lo->folders = f;
				lo->capfolders *= 2;
			}
			f = &lo->folders[lo->nfolders];
			memset(f, 0, sizeof(*f));
			f->p = x->rel;
			f->len = len;
			nametab_key(&k, 0, x->rel, len);
			if (nametab_put(&lo->ftab, &k,
					(uint32_t)lo->nfolders) == -2)
				return -1;
			lo->nfolders++;
		}
	}
	return 0;
}

/* 1 when a file at rel lies in a folder below its model's folder (the
 * first fl bytes of rel) that holds a model file. */
static int
in_model_folder(const struct listing_open *lo, const char *rel, size_t fl)
{
	const char *slash;

	for (slash = strchr(rel + fl, '/'); slash;
	     slash = strchr(slash + 1, '/'))
		if (folder_find(lo, rel, (size_t)(slash - rel) + 1) > 0)
			return 1;
	return 0;
}

/* The bytes of config name kept in m (model_beside.h), or NULL. */
static const struct model_beside *
kept_config(const struct model *m, const char *name)
{
	const struct model_beside *b;

	for (b = m->beside; b; b = b->next)
		if (strcmp(b->name, name) == 0)
			return b;
	return NULL;
}

/* The files of the folder f of model m (its path the first fl bytes of
 * rel): every listed file below it but those of the folders below that
 * hold model files, the configs with the bytes m kept of them.  NULL
 * when out of memory. */
static struct model_files *
folder_files(const struct listing_open *lo, const char *rel, size_t fl,
	     const struct model *m)
{
	struct model_files *f = model_files_new(MODEL_FILES_LISTED, NULL,
						lo->files);
	size_t lo_i = 0, hi = lo->n, i;

	if (!f)
		return NULL;
	while (lo_i < hi) {	/* the first path not before the folder */
		size_t mid = lo_i + (hi - lo_i) / 2;

		if (strncmp(lo->v[mid].rel, rel, fl) < 0)
			lo_i = mid + 1;
		else
			hi = mid;
	}
	for (i = lo_i; i < lo->n && strncmp(lo->v[i].rel, rel, fl) == 0;
	     i++) {
		const struct entry *x = &lo->v[i];
		const char *r = x->rel + fl;
		const struct model_beside *b = NULL;
		int top = !strchr(r, '/');

		if (!top && in_model_folder(lo, x->rel, fl))
			continue;
		if (top && naming_config(r))
			b = kept_config(m, r);
		if (model_files_add(f, r, x->url, x->etag, x->size,
				    b ? b->text : NULL, b ? b->len : 0,
				    top && (x->shown ||
					    x->role == NAMING_PART))) {
			model_files_unref(f);
			return NULL;
		}
	}
	return f;
}

/* m, the model at rel, gets its folder's files: made for the first model
 * of the folder, shared by the others.  0, or -1 with *e. */
static int
give_folder(struct listing_open *lo, const char *rel, struct model *m,
	    struct err *e)
{
	size_t fl = folder_len(rel);
	long id = folder_find(lo, rel, fl);
	struct mfolder *f;

	if (id < 0)
		return 0;	/* never: a model's folder holds a model */
	f = &lo->folders[id];
	if (!f->files && !(f->files = folder_files(lo, rel, fl, m)))
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	model_files_unref(m->files);
	m->files = model_files_ref(f->files);
	return 0;
}

static void
folders_free(struct listing_open *lo)
{
	size_t i;

	for (i = 0; i < lo->nfolders; i++)
		model_files_unref(lo->folders[i].files);
	free(lo->folders);
	if (lo->ftab.slot)
		nametab_free(&lo->ftab);
}

/* c, placed from the listing, gets every listed file for its root's
 * .files/ when it is a tree (catalog.h).  0, or -1 with *e. */
static int
tree_folder(struct catalog *c, const struct listing_open *lo,
	    struct err *e)
{
	size_t i;

	if (c->n == 0 || (c->n == 1 && !c->entries[0].dir[0]))
		return 0;
	c->files = model_files_new(MODEL_FILES_LISTED, NULL, lo->files);
	if (!c->files)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	model_files_set_tree(c->files);
	for (i = 0; i < lo->n; i++) {
		const struct entry *x = &lo->v[i];

		if (model_files_add(c->files, x->rel, x->url, x->etag,
				    x->size, NULL, 0,
				    x->shown || x->role == NAMING_PART))
			return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	return 0;
}

/* The configs beside model x, fetched into m: what its folder would
 * give a local model (model/model_beside.h). */
static int
fetch_configs(const struct listing_open *lo, const struct entry *x,
	      struct model *m, struct err *e)
{
	size_t k, c;
	int oom = 0;

	for (k = 0; k < NCONFIGS; k++) {
		c = config_at(x->rel, k, lo->v, lo->n, &oom);
		if (oom)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		if (model_beside_fetch(m, lo->op, configs[k], c == SIZE_MAX ?
				       NULL : lo->v[c].url, e))
			return -1;
	}
	return 0;
}

/* catalog_opener: the model at a listed path, by its URL. */
static int
open_listed(void *arg, const char *path, struct model **m, char **label,
	    struct err *e)
{
	struct listing_open *lo = arg;
	struct entry key = { .rel = path };
	const struct entry *x = bsearch(&key, lo->v, lo->n, sizeof(*lo->v),
					cmp_entry);
	int rc;

	if (!x)
		return err_set(e, ERR_USAGE, "not in the listing");
	if (x->role == NAMING_INDEX)
		rc = shards_open_index(lo->op, NULL, x->url, m, e);
	else
		rc = model_open_url(lo->op, x->url, m, e);
	if (rc)
		return err_at(e, x->url);
	if (fetch_configs(lo, x, *m, e) ||
	    (lo->files && give_folder(lo, x->rel, *m, e))) {
		model_free(*m);
		*m = NULL;
		return -1;
	}
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
	struct listing_open lo = { v, l->n, l->op, l->files, NULL, 0, 0,
				   { 0 } };
	struct catalog_opener op = { open_listed, &lo };
	size_t i, found = 0, shown = 0;
	int rc = -1;

	s.e = e;
	if (!v || !root) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < l->n; i++) {
		v[i].rel = l->rel[i];
		v[i].url = l->url[i];
		v[i].etag = l->etag ? l->etag[i] : NULL;
		v[i].size = l->size ? l->size[i] : MODEL_FILES_UNKNOWN;
	}
	qsort(v, l->n, sizeof(*v), cmp_entry);
	if (mark_shown(v, l->n) || (l->files && note_folders(&lo))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (open_ahead(l, v, e))
		goto out;
	for (i = 0; i < l->n; i++)
		if (v[i].shown && v[i].role == NAMING_INDEX &&
		    note_index(&s, l->op, &v[i]))
			goto out;
	for (i = 0; i < l->n; i++) {
		if (!v[i].shown)
			continue;
		shown++;
		if (v[i].role != NAMING_INDEX && cscan_shard_has(&s, v[i].rel))
			continue;
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
		err_set(e, ERR_USAGE, shown ? "no model: every model file is a "
			"shard an index names" : "no model (" NAMING_WHAT ")");
		goto out;
	}
	rc = catalog_place(c, root, "", NULL, &op, e);
	if (rc == 0 && l->files)
		rc = tree_folder(c, &lo, e);
out:
	folders_free(&lo);
	cscan_free(&s);
	cnode_free(root);
	free(v);
	return rc;
}
