/* catalog.c - what a SOURCE names: discovery of the models in a directory
 * tree, their names in the mount, and opening them (see catalog.h).
 */
#include "model/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/catalog_int.h"
#include "base/error.h"
#include "base/nametab.h"
#include "base/text.h"
#ifdef STFS_HAVE_HTTP
#include "source/hub/hub.h"
#endif
#ifdef STFS_HAVE_S3
#include "source/s3/s3.h"
#endif
#include "model/model.h"
#include "source/source.h"

#define SUFFIX ".safetensors"
#define INDEX_SUFFIX ".safetensors.index.json"

static char *
join(const char *a, const char *b)
{
	char *p;

	if (!*a)
		return strdup(b);
	return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

/* --- nodes --------------------------------------------------------------- */

struct cnode *
cnode_new(const char *path)
{
	struct cnode *n = calloc(1, sizeof(*n));

	if (n && path && !(n->path = strdup(path))) {
		free(n);
		return NULL;
	}
	return n;
}

void
cnode_free(struct cnode *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->nmodels; i++)
		free(n->models[i]);
	for (i = 0; i < n->nkids; i++) {
		free(n->kids[i].name);
		cnode_free(n->kids[i].node);
	}
	free(n->models);
	free(n->kids);
	free(n->path);
	free(n);
}

int
cnode_add_model(struct cnode *n, const char *file)
{
	if (n->nmodels == n->capm) {
		size_t cap = n->capm ? n->capm * 2 : 8;
		char **m = realloc(n->models, cap * sizeof(*m));

		if (!m)
			return -1;
		n->models = m;
		n->capm = cap;
	}
	if (!(n->models[n->nmodels] = strdup(file)))
		return -1;
	n->nmodels++;
	return 0;
}

int
cnode_add_kid(struct cnode *n, const char *name, struct cnode *kid)
{
	if (n->nkids == n->capk) {
		size_t cap = n->capk ? n->capk * 2 : 8;
		struct ckid *k = realloc(n->kids, cap * sizeof(*k));

		if (!k)
			return -1;
		n->kids = k;
		n->capk = cap;
	}
	if (!(n->kids[n->nkids].name = strdup(name)))
		return -1;
	n->kids[n->nkids++].node = kid;
	return 0;
}

struct cnode *
cnode_kid(struct cnode *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->nkids; i++)
		if (strcmp(n->kids[i].name, name) == 0)
			return n->kids[i].node;
	return NULL;
}

/* --- the paths indexes name (never models of their own) ----------------- */

/* Index names come from files anyone may write: a keyed nametab of
 * indexes into s->shards, not an unkeyed hash. */
static int
shard_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct cscan *s = ctx;
	const char *p = s->shards[id];

	return strlen(p) == k->len && memcmp(p, k->name, k->len) == 0;
}

static int
shard_set_has(const struct cscan *s, const char *path)
{
	struct nametab_key k;

	if (!s->nshards)
		return 0;
	nametab_key(&k, 0, path, strlen(path));
	return nametab_find(&s->shard_tab, &k) >= 0;
}

/* Add path (taken, also on failure). */
static int
shard_set_add(struct cscan *s, char *path)
{
	struct nametab_key k;

	if (!s->shard_tab.slot &&
	    nametab_init(&s->shard_tab, 64, shard_eq, s) != 0) {
		free(path);
		return -1;
	}
	if (shard_set_has(s, path)) {
		free(path);
		return 0;
	}
	if (s->nshards >= NAMETAB_ID_MAX) {
		free(path);
		return -1;
	}
	if (s->nshards == s->capshards) {
		size_t cap = s->capshards ? s->capshards * 2 : 64;
		char **t = realloc(s->shards, cap * sizeof(*t));

		if (!t) {
			free(path);
			return -1;
		}
		s->shards = t;
		s->capshards = cap;
	}
	s->shards[s->nshards] = path;
	nametab_key(&k, 0, path, strlen(path));
	if (nametab_put(&s->shard_tab, &k, (uint32_t)s->nshards) == -2) {
		free(path);
		return -1;
	}
	s->nshards++;
	return 0;
}

static void
shard_set_free(struct cscan *s)
{
	size_t i;

	for (i = 0; i < s->nshards; i++)
		free(s->shards[i]);
	free(s->shards);
	if (s->shard_tab.slot)
		nametab_free(&s->shard_tab);
}

/* Remember the files an index names.  An index that cannot be read here
 * still counts as a model: opening it says what is wrong. */
static int
note_index(struct cscan *s, const char *dir, const char *file)
{
	json_t *root, *wmap, *v;
	const char *key;
	char *path;
	int rc = 0;

	path = join(dir, file);
	if (!path)
		return err_set(s->e, ERR_NO_MEMORY, "out of memory");
	root = json_load_file(path, 0, NULL);
	free(path);
	wmap = json_object_get(root, "weight_map");
	json_object_foreach(wmap, key, v) {
		char *shard;

		if (!json_is_string(v))
			continue;
		shard = join(dir, json_string_value(v));
		if (!shard || shard_set_add(s, shard)) {
			rc = err_set(s->e, ERR_NO_MEMORY, "out of memory");
			break;
		}
	}
	json_decref(root);
	return rc;
}

/* --- discovery ------------------------------------------------------------ */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct listing {
	char **files, **dirs;
	size_t nfiles, ndirs;
};

static void
listing_free(struct listing *l)
{
	size_t i;

	for (i = 0; i < l->nfiles; i++)
		free(l->files[i]);
	for (i = 0; i < l->ndirs; i++)
		free(l->dirs[i]);
	free(l->files);
	free(l->dirs);
}

static int
push(char ***v, size_t *n, const char *s)
{
	/* grow at powers of two */
	if ((*n & (*n - 1)) == 0) {
		char **t = realloc(*v, (*n ? *n * 2 : 1) * sizeof(**v));

		if (!t)
			return -1;
		*v = t;
	}
	if (!((*v)[*n] = strdup(s)))
		return -1;
	(*n)++;
	return 0;
}

/* The names in path that matter, sorted: *.safetensors and
 * *.safetensors.index.json regular files (symlinks followed) and
 * directories; names starting with '.' are left out. */
static int
list_dir(struct cscan *s, const char *path, struct listing *l)
{
	struct dirent *d;
	int fd, rc = 0;
	DIR *dp;

	memset(l, 0, sizeof(*l));
	dp = opendir(path);
	if (!dp) {
		err_where(s->e, path);
		return err_set(s->e, ERR_IO, "cannot open directory: %s",
			       strerror(errno));
	}
	fd = dirfd(dp);
	while (rc == 0 && (d = readdir(dp))) {
		int want_file = text_ends_with(d->d_name, SUFFIX) ||
				text_ends_with(d->d_name, INDEX_SUFFIX);
		struct stat st;

		if (d->d_name[0] == '.')
			continue;
		if (d->d_type == DT_REG) {
			if (want_file)
				rc = push(&l->files, &l->nfiles, d->d_name);
			continue;
		}
		if (d->d_type != DT_DIR && d->d_type != DT_LNK &&
		    d->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(fd, d->d_name, &st, 0) != 0)
			continue;	/* a dangling link: not a model */
		if (S_ISDIR(st.st_mode))
			rc = push(&l->dirs, &l->ndirs, d->d_name);
		else if (want_file)
			/* not a regular file: opening it says so */
			rc = push(&l->files, &l->nfiles, d->d_name);
	}
	closedir(dp);
	if (rc) {
		listing_free(l);
		return err_set(s->e, ERR_NO_MEMORY, "out of memory");
	}
	if (l->nfiles)
		qsort(l->files, l->nfiles, sizeof(char *), cmp_str);
	if (l->ndirs)
		qsort(l->dirs, l->ndirs, sizeof(char *), cmp_str);
	return 0;
}

static int
scan_listing(struct cscan *s, struct cnode *n, struct listing *l)
{
	size_t i;

	/* Indexes first: the shards they name are not models. */
	for (i = 0; i < l->nfiles; i++)
		if (text_ends_with(l->files[i], INDEX_SUFFIX) &&
		    note_index(s, n->path, l->files[i]))
			return -1;
	for (i = 0; i < l->nfiles; i++) {
		int index = text_ends_with(l->files[i], INDEX_SUFFIX);
		char *p;

		if (!index) {
			p = join(n->path, l->files[i]);
			if (!p)
				return err_set(s->e, ERR_NO_MEMORY, "out of "
					       "memory");
			if (shard_set_has(s, p)) {
				free(p);
				continue;
			}
			free(p);
		}
		if (s->max && s->found >= s->max) {
			err_where(s->e, n->path);
			return err_set(s->e, ERR_USAGE, "more than %zu models",
				       s->max);
		}
		if (cnode_add_model(n, l->files[i]))
			return err_set(s->e, ERR_NO_MEMORY, "out of memory");
		s->found++;
	}
	for (i = 0; i < l->ndirs; i++) {
		struct cnode *kid = NULL;
		char *p = join(n->path, l->dirs[i]);

		if (!p)
			return err_set(s->e, ERR_NO_MEMORY, "out of memory");
		if (cscan_dir(s, p, &kid)) {
			free(p);
			return -1;
		}
		free(p);
		if (kid && cnode_add_kid(n, l->dirs[i], kid)) {
			cnode_free(kid);
			return err_set(s->e, ERR_NO_MEMORY, "out of memory");
		}
	}
	return 0;
}

int
cscan_dir(struct cscan *s, const char *path, struct cnode **out)
{
	struct listing l;
	struct cnode *n;
	struct stat st;
	int i, rc;

	*out = NULL;
	if (stat(path, &st) != 0) {
		err_where(s->e, path);
		return err_set(s->e, ERR_IO, "cannot open directory: %s",
			       strerror(errno));
	}
	/* A symlink back up the tree is a loop: not followed again. */
	for (i = 0; i < s->depth; i++)
		if (s->up[i].dev == st.st_dev && s->up[i].ino == st.st_ino)
			return 0;
	if (s->depth >= CATALOG_MAX_DEPTH) {
		err_where(s->e, path);
		return err_set(s->e, ERR_USAGE, "directories nested more than "
			       "%d deep", CATALOG_MAX_DEPTH);
	}
	if (hubcache_is_root(path))
		return hubcache_scan_root(s, path, out);
	if (list_dir(s, path, &l))
		return -1;
	n = cnode_new(path);
	if (!n) {
		listing_free(&l);
		return err_set(s->e, ERR_NO_MEMORY, "out of memory");
	}
	s->up[s->depth].dev = st.st_dev;
	s->up[s->depth].ino = st.st_ino;
	s->depth++;
	rc = scan_listing(s, n, &l);
	s->depth--;
	listing_free(&l);
	if (rc || (n->nmodels == 0 && n->nkids == 0)) {
		cnode_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

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

/* Each model's and kid's name among its siblings; v[i].i says which.
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
		size_t strip = i >= n->nmodels ? 0 :
			       text_ends_with(f, INDEX_SUFFIX) ?
			       strlen(INDEX_SUFFIX) : strlen(SUFFIX);

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

	if (slash && slash[1] == '\0')
		return realpath(path, NULL);
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

/* The label of an opened model: its index, else its one file. */
static char *
model_label(const struct model *m, const char *fallback)
{
	if (m->sharded && m->index_path)
		return absolute(m->index_path);
	if (m->nshards == 1 && m->shards[0].src &&
	    !source_is_url(m->shards[0].src->name))
		return absolute(m->shards[0].src->name);
	return strdup(fallback);
}

static int
is_remote(const char *source)
{
#ifdef STFS_HAVE_HTTP
	if (hub_is_uri(source))
		return 1;
#endif
#ifdef STFS_HAVE_S3
	if (s3_is_url(source))
		return 1;
#endif
	return source_is_url(source);
}

/* A model by path or URL; hf:// through hub.c. */
static int
open_model(const char *path, struct model **m, struct err *e)
{
#ifdef STFS_HAVE_HTTP
	if (hub_is_uri(path))
		return hub_open_model(path, m, e);
#endif
	return model_open(path, m, e);
}

static int
open_one(struct catalog *c, const char *dir, const char *path,
	 const char *arg, struct err *e)
{
	struct model *m = NULL;
	char *label;

	err_reset_where(e);	/* opening sets it even on success */
	if (open_model(path, &m, e)) {
		err_where(e, path);
		return -1;
	}
	if (arg) {
		char *a = strdup(arg);

		if (!a) {
			model_free(m);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		free(m->arg);
		m->arg = a;
	}
	err_reset_where(e);
	/* a URL without user info and query: presigned URLs keep
	 * credentials there (issue 14.5) */
	label = is_remote(path) ? source_display(path) : model_label(m, path);
	if (!label) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (catalog_add(c, dir, label, m, e)) {
		free(label);
		return -1;
	}
	free(label);
	return 0;
}

/* Add node's models under prefix.  root_arg: SOURCE as typed, when node
 * is SOURCE itself (its model keeps today's "source"). */
static int
emit(struct catalog *c, const struct cnode *n, const char *prefix,
     const char *root_arg, struct err *e)
{
	size_t total = n->nmodels + n->nkids, i;
	struct named *v;
	int rc = 0;

	if (n->nmodels == 1 && n->nkids == 0) {
		char *p = join(n->path, n->models[0]);

		if (!p)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		rc = open_one(c, prefix, p, root_arg, e);
		free(p);
		return rc;
	}
	v = sibling_names(n);
	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < total; i++) {
		char *dir = join(prefix, v[i].name), *p;

		if (!dir) {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		} else if (v[i].i < n->nmodels) {
			p = join(n->path, n->models[v[i].i]);
			rc = p ? open_one(c, dir, p, NULL, e) :
			     err_set(e, ERR_NO_MEMORY, "out of memory");
			free(p);
		} else {
			rc = emit(c, n->kids[v[i].i - n->nmodels].node, dir,
				  NULL, e);
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
open_dir_tree(struct catalog *c, const char *source, const char *root,
	      const char *root_arg, const struct catalog_opts *o,
	      struct err *e)
{
	struct cscan s = { 0 };
	struct cnode *n = NULL;
	int rc;

	s.e = e;
	s.max = o ? o->max_models : 0;
	rc = cscan_dir(&s, root, &n);
	shard_set_free(&s);
	if (rc)
		return -1;
	if (!n) {
		err_where(e, source);
		return err_set(e, ERR_USAGE, "no .safetensors file and no "
			       "*.safetensors.index.json in this directory "
			       "or below it");
	}
	rc = emit(c, n, "", root_arg, e);
	cnode_free(n);
	return rc;
}

int
catalog_open(const char *source, const struct catalog_opts *o,
	     struct catalog **out, struct err *e)
{
	struct catalog *c;
	struct stat st;
	char *root = NULL, *snap = NULL;
	int rc;

	*out = NULL;
#ifdef STFS_HAVE_HTTP
	/* hf://: the models of a Hub repo at one commit (hub_catalog.c) */
	if (hub_is_uri(source))
		return hub_catalog(source, out, e);
#endif
#ifdef STFS_HAVE_S3
	if (s3_is_url(source))
		return s3_catalog_open(source, out, e);	/* s3.c */
#endif
	if (is_remote(source) || stat(source, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		/* One model: a file, an index, a URL (model_open says what
		 * is wrong with a path that does not exist). */
		c = catalog_new(source);
		if (!c)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		{
			/* a URL without its query (issue 14.5) */
			char *abs = is_remote(source) ? source_display(source)
						      : absolute(source);

			if (abs) {
				free(c->label);
				c->label = abs;
			}
		}
		rc = open_one(c, "", source, NULL, e);
	} else {
		root = realpath(source, NULL);
		c = root ? catalog_new(root) : NULL;
		if (!c) {
			free(root);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		if (hubcache_is_repo(root)) {
			snap = hubcache_snapshot(root, e);
			rc = snap ? open_dir_tree(c, source, snap, NULL, o, e)
				  : -1;
		} else {
			rc = open_dir_tree(c, source, root, source, o, e);
		}
	}
	if (rc == 0)
		rc = catalog_finish(c, e);
	if (rc == 0)
		err_reset_where(e);
	free(root);
	free(snap);
	if (rc) {
		catalog_free(c);
		return -1;
	}
	*out = c;
	return 0;
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
	free(c->label);
	free(c);
}
