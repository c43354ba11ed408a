/* catalog.c - what a SOURCE names (catalog.h): the one tree builder's
 * naming and placing of models (catalog_place), the catalog itself, and
 * the trees of local paths and single URLs.  Local discovery is in
 * catalog_scan.c, flat listings (hf://, s3://) in catalog_listing.c.
 */
#include "model/catalog.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "format/naming.h"
#include "model/catalog_int.h"
#include "model/display.h"
#include "model/hub_cache.h"
#include "model/model.h"
#include "model/model_files.h"
#include "model/model_folder.h"
#include "model/nomodel.h"
#include "model/ollama_store.h"
#include "source/source.h"

/* --- names in the mount --------------------------------------------------- */

int
catalog_escape(const char *name, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t k = 0;

	if (!*p) {
		if (cap < 2)
			return -1;
		strcpy(out, "%");
		return 0;
	}
	for (; *p; p++) {
		int esc = *p == '%' || *p < 0x20 || *p == 0x7f ||
			  (p == (const unsigned char *)name &&
			   (*p == '.' || (p[0] == '_' && p[1] == '_')));

		if (k + (esc ? 3 : 1) >= cap)
			return -1;
		if (esc)
			k += (size_t)snprintf(out + k, cap - k, "%%%02X", *p);
		else
			out[k++] = (char)*p;
	}
	out[k] = '\0';
	return 0;
}

static char *
escaped(const char *name, size_t strip)
{
	size_t n = strlen(name) - strip, cap = 3 * n + 2;
	char *raw = strndup(name, n), *out = malloc(cap);

	if (!raw || !out || catalog_escape(raw, out, cap)) {
		free(raw);
		free(out);
		return NULL;
	}
	free(raw);
	return out;
}

struct named {
	char *name;
	size_t i;		/* < nmodels: a model, else a kid */
};

static int
cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Each model's and kid's name among its siblings, a model's without the
 * suffix its file name has (format/naming.h); v[i].i says which.
 * Returns the sorted array (nmodels + nkids) or NULL. */
static struct named *
sibling_names(const struct cnode *n)
{
	size_t total = n->nmodels + n->nkids, i, j, k;
	struct named *v = calloc(total ? total : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < total; i++) {
		const char *f = i < n->nmodels ? n->models[i] :
				n->kids[i - n->nmodels].name;
		struct naming nm;
		size_t strip = 0;

		if (i < n->nmodels && naming_of(f, &nm) != NAMING_NONE)
			strip = nm.suffix;
		v[i].i = i;
		if (!(v[i].name = escaped(f, strip)))
			goto oom;
	}
	qsort(v, total, sizeof(*v), cmp_named);
	/* Clashing models take their whole file name. */
	for (i = 0; i < total; i = j) {
		for (j = i + 1; j < total && !strcmp(v[i].name, v[j].name); j++)
			;
		for (k = i; j - i > 1 && k < j; k++) {
			if (v[k].i >= n->nmodels)
				continue;
			free(v[k].name);
			if (!(v[k].name = escaped(n->models[v[k].i], 0)))
				goto oom;
		}
	}
	qsort(v, total, sizeof(*v), cmp_named);
	/* Still the same name: "%1", "%2", ... after the first ('%' is
	 * escaped everywhere else, so these cannot clash again). */
	for (i = 0; i < total; i = j) {
		for (j = i + 1; j < total && !strcmp(v[i].name, v[j].name); j++) {
			char *s;

			if (asprintf(&s, "%s%%%zu", v[j].name, j - i) < 0)
				goto oom;
			free(v[j].name);
			v[j].name = s;
		}
	}
	return v;
oom:
	for (i = 0; i < total; i++)
		free(v[i].name);
	free(v);
	return NULL;
}

/* --- opening ------------------------------------------------------------ */

/* Absolute form of a path, without resolving its last component (a
 * snapshot file is a symlink into blobs/: the label keeps its name). */
static char *
absolute(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *real, *out;

	if (slash && slash[1] == '\0') {
		/* a directory; one that is missing keeps its name, for
		 * model_open's message (NULL means no memory) */
		real = realpath(path, NULL);
		return real ? real : strdup(path);
	}
	dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return NULL;
	real = realpath(*dir ? dir : "/", NULL);
	free(dir);
	if (!real)
		return strdup(path);
	if (asprintf(&out, "%s/%s", strcmp(real, "/") ? real : "",
		     slash ? slash + 1 : path) < 0)
		out = NULL;
	free(real);
	return out;
}

/* A local model by path, labelled by its index, else its one file; its
 * files those of its folder (model_folder.h). */
static int
open_local(void *files, const char *path, struct model **m, char **label,
	   struct err *e)
{
	if (model_open_path(files, path, m, e))
		return -1;
	if (model_folder_local(*m, files, path, e)) {
		model_free(*m);
		*m = NULL;
		return -1;
	}
	if ((*m)->sharded && (*m)->index_path)
		*label = absolute((*m)->index_path);
	else if ((*m)->nshards == 1 && (*m)->shards[0].src)
		*label = absolute((*m)->shards[0].src->name);
	else
		*label = strdup(path);
	return 0;
}

/* One file or index by URL, labelled by the URL without user info and
 * query: presigned URLs keep credentials there (issue 14.5). */
static int
open_url(void *files, const char *url, struct model **m, char **label,
	 struct err *e)
{
	if (model_open_url(files, url, m, e))
		return -1;
	if (model_folder_url(*m, files, url, e)) {
		model_free(*m);
		*m = NULL;
		return -1;
	}
	*label = display_name(url);
	return 0;
}

static int
open_one(struct catalog *c, const char *dir, const char *path,
	 const char *arg, const struct catalog_opener *op, struct err *e)
{
	struct model *m = NULL;
	struct err se = { 0 };
	char *label = NULL;
	int rc;

	/* a fresh record: an earlier model's opening may have left a name
	 * behind in *e (not every source names only on errors yet) */
	if (op->open(op->arg, path, &m, &label, &se)) {
		err_at(&se, path);
		*e = se;
		return -1;
	}
	if (!label) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (arg) {
		char *a = strdup(arg);

		if (!a) {
			free(label);
			model_free(m);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		free(m->arg);
		m->arg = a;
	}
	rc = catalog_add(c, dir, label, m, e);
	free(label);
	return rc;
}

int
catalog_place(struct catalog *c, const struct cnode *n, const char *prefix,
	      const char *root_arg, const struct catalog_opener *op,
	      struct err *e)
{
	size_t total = n->nmodels + n->nkids, i;
	struct named *v;
	int rc = 0;

	if (n->nmodels == 1 && n->nkids == 0) {
		char *p = cnode_join(n->path, n->models[0]);

		if (!p)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		rc = open_one(c, prefix, p, root_arg, op, e);
		free(p);
		return rc;
	}
	v = sibling_names(n);
	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < total; i++) {
		char *dir = cnode_join(prefix, v[i].name), *p;

		if (!dir) {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		} else if (v[i].i < n->nmodels) {
			p = cnode_join(n->path, n->models[v[i].i]);
			rc = p ? open_one(c, dir, p, NULL, op, e) :
			     err_set(e, ERR_NO_MEMORY, "out of memory");
			free(p);
		} else {
			rc = catalog_place(c, n->kids[v[i].i - n->nmodels].node,
					   dir, NULL, op, e);
		}
		free(dir);
		if (rc)
			break;
	}
	for (i = 0; i < total; i++)
		free(v[i].name);
	free(v);
	return rc;
}

static int
open_dir_tree(const struct catalog_opener *op, struct catalog *c,
	      const char *source, const char *root, const char *root_arg,
	      const struct catalog_opts *o, struct err *e)
{
	struct cscan s = { 0 };
	struct cnode *n = NULL;
	int rc;

	s.e = e;
	s.max = o ? o->max_models : 0;
	rc = cscan_dir(&s, root, &n);
	cscan_free(&s);
	if (rc)
		return -1;
	if (!n)
		return nomodel_set(e, source, 1);
	rc = catalog_place(c, n, "", root_arg, op, e);
	cnode_free(n);
	return rc;
}

/* A tree placed from the local folder dir gets that folder, all of it,
 * for its root's .files/ (catalog.h); one model has its own.  0, or -1
 * with *e. */
static int
tree_folder(struct catalog *c, const struct source_opener *files,
	    const char *dir, struct err *e)
{
	if (c->n == 0 || (c->n == 1 && !c->entries[0].dir[0]) ||
	    hubcache_is_root(dir) || ollama_is_root(dir))
		return 0;
	c->files = model_files_new(MODEL_FILES_LOCAL, dir, files);
	if (!c->files)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	model_files_set_tree(c->files);
	return 0;
}

/* c finished and handed out, or freed. */
static int
done(struct catalog *c, int rc, struct catalog **out, struct err *e)
{
	if (rc == 0)
		rc = catalog_finish(c, e);
	if (rc) {
		catalog_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

int
catalog_open_url(const struct source_opener *files, const char *url,
		 const struct catalog_opts *o, struct catalog **out,
		 struct err *e)
{
	struct catalog_opener op = { open_url, (void *)files };
	struct catalog *c = catalog_new(url);
	char *shown = display_name(url);

	(void)o;
	if (!c || !shown) {
		free(shown);
		catalog_free(c);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	free(c->label);
	c->label = shown;
	return done(c, open_one(c, "", url, NULL, &op, e), out, e);
}

int
catalog_open_path(const struct source_opener *files, const char *source,
		  const struct catalog_opts *o, struct catalog **out,
		  struct err *e)
{
	struct catalog_opener op = { open_local, (void *)files };
	struct catalog *c;
	struct stat st;
	char *root, *snap;
	int rc;

	if (stat(source, &st) != 0 || !S_ISDIR(st.st_mode)) {
		/* One model: a file or an index (model_open says what is
		 * wrong with a path that does not exist). */
		char *abs = absolute(source);

		c = catalog_new(source);
		if (!c || !abs) {
			free(abs);
			catalog_free(c);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		free(c->label);
		c->label = abs;
		rc = open_one(c, "", source, NULL, &op, e);
		/* a file named alone has only itself; an index its folder */
		if (rc == 0 && !c->entries[0].model->index_path) {
			model_files_unref(c->entries[0].model->files);
			c->entries[0].model->files = NULL;
		}
		return done(c, rc, out, e);
	}
	root = realpath(source, NULL);
	c = root ? catalog_new(root) : NULL;
	if (!c) {
		free(root);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (hubcache_is_repo(root)) {
		snap = hubcache_snapshot(root, e);
		rc = snap ? open_dir_tree(&op, c, source, snap, NULL, o, e) :
		     -1;
		if (rc == 0)
			rc = tree_folder(c, files, snap, e);
		free(snap);
	} else {
		rc = open_dir_tree(&op, c, source, root, source, o, e);
		if (rc == 0)
			rc = tree_folder(c, files, root, e);
	}
	free(root);
	return done(c, rc, out, e);
}

/* --- the catalog itself ---------------------------------------------------- */

struct catalog *
catalog_new(const char *label)
{
	struct catalog *c = calloc(1, sizeof(*c));

	if (c && !(c->label = strdup(label))) {
		free(c);
		return NULL;
	}
	return c;
}

int
catalog_add(struct catalog *c, const char *dir, const char *label,
	    struct model *m, struct err *e)
{
	struct catalog_entry *x;

	if ((c->n & (c->n - 1)) == 0) {
		x = realloc(c->entries, (c->n ? c->n * 2 : 1) * sizeof(*x));
		if (!x) {
			model_free(m);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		c->entries = x;
	}
	x = &c->entries[c->n];
	x->dir = strdup(dir);
	x->label = strdup(label);
	x->model = m;
	if (!x->dir || !x->label) {
		free(x->dir);
		free(x->label);
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	c->n++;
	return 0;
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct catalog_entry *)a)->dir,
		      ((const struct catalog_entry *)b)->dir);
}

int
catalog_finish(struct catalog *c, struct err *e)
{
	struct catalog_entry key = { 0 };
	size_t i;

	qsort(c->entries, c->n, sizeof(*c->entries), cmp_entry);
	for (i = 0; i < c->n; i++) {
		const char *d = c->entries[i].dir, *p;
		const struct catalog_entry *hit;
		char buf[PATH_MAX];

		if (i + 1 < c->n && strcmp(d, c->entries[i + 1].dir) == 0)
			return err_set(e, ERR_USAGE, "two models at `%s`: %s",
				       d, c->entries[i + 1].label);
		if (!*d && c->n > 1)
			return err_set(e, ERR_USAGE, "a model at the root and "
				       "%zu more", c->n - 1);
		/* A model directory is a leaf: none above this one. */
		for (p = strchr(d, '/'); p; p = strchr(p + 1, '/')) {
			if ((size_t)(p - d) >= sizeof(buf))
				break;
			memcpy(buf, d, (size_t)(p - d));
			buf[p - d] = '\0';
			key.dir = buf;
			hit = bsearch(&key, c->entries, c->n, sizeof(key),
				      cmp_entry);
			if (hit)
				return err_set(e, ERR_USAGE, "model `%s` lies "
					       "inside model `%s`", d, buf);
		}
	}
	return 0;
}

void
catalog_watch(const struct catalog *c, const struct source_watch *w)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		model_watch(c->entries[i].model, w);
	if (c->files)
		model_files_watch(c->files, w);
}

void
catalog_free(struct catalog *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->entries[i].dir);
		free(c->entries[i].label);
		model_free(c->entries[i].model);
	}
	free(c->entries);
	model_files_unref(c->files);
	free(c->label);
	free(c);
}
