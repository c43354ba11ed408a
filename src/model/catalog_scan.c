/* catalog_scan.c - the model tree's nodes, and the discovery of the models
 * in a local directory tree (catalog_int.h): which files are models (an
 * index's shards are not), which directories lead to some.
 */
#include "model/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/nametab.h"
#include "base/text.h"
#include "format/naming.h"
#include "format/safetensors/jscan.h"
#include "model/catalog_int.h"
#include "model/hub_cache.h"
#include "model/ollama_store.h"

char *
cnode_join(const char *a, const char *b)
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

int
cscan_shard_has(const struct cscan *s, const char *path)
{
	struct nametab_key k;

	if (!s->nshards)
		return 0;
	nametab_key(&k, 0, path, strlen(path));
	return nametab_find(&s->shard_tab, &k) >= 0;
}

/* Add path (taken, also on failure). */
int
cscan_shard_add(struct cscan *s, char *path)
{
	struct nametab_key k;

	if (!s->shard_tab.slot &&
	    nametab_init(&s->shard_tab, 64, shard_eq, s) != 0) {
		free(path);
		return -1;
	}
	if (cscan_shard_has(s, path)) {
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

void
cscan_free(struct cscan *s)
{
	size_t i;

	for (i = 0; i < s->nshards; i++)
		free(s->shards[i]);
	free(s->shards);
	if (s->shard_tab.slot)
		nametab_free(&s->shard_tab);
}

/* Add prefix + the file a weight_map value names, unless known. */
static int
note_shard(struct cscan *s, struct buf *path, size_t plen,
	   const struct jscan_tok *t)
{
	char *copy;

	path->len = plen;
	if (buf_reserve(path, t->len + 1))
		return -1;
	if (t->escaped)
		path->len += jscan_unescape(t->s, t->len, path->data + plen,
					    t->len);
	else
		buf_add(path, t->s, t->len);
	path->data[path->len] = '\0';
	if (cscan_shard_has(s, path->data))
		return 0;
	copy = strdup(path->data);
	return copy ? cscan_shard_add(s, copy) : -1;
}

/* The members of the index's top object, the scanner past its '{'. */
static int
note_members(struct cscan *s, struct jscan *j, struct buf *path, size_t plen)
{
	struct jscan_tok t;
	int wmap;

	while (jscan_next(j, &t) == JSCAN_KEY) {
		wmap = !t.escaped && t.len == 10 &&
		       memcmp(t.s, "weight_map", 10) == 0;
		if (jscan_next(j, &t) != JSCAN_OBJECT || !wmap) {
			if (jscan_skip_to(j, 1))
				return 0;
			continue;
		}
		while (jscan_next(j, &t) == JSCAN_KEY) {
			if (jscan_next(j, &t) == JSCAN_STRING) {
				if (note_shard(s, path, plen, &t))
					return -1;
			} else if (jscan_skip_to(j, 2)) {
				return 0;
			}
		}
	}
	return 0;
}

int
cscan_note_index(struct cscan *s, const char *prefix, const char *text,
		 size_t len)
{
	struct buf path = BUF_INIT;
	struct jscan j;
	struct jscan_tok t;
	size_t plen = strlen(prefix), bad;
	unsigned bad_len;
	int rc = 0;

	if (text_utf8_check(text, len, &bad, &bad_len) != 0)
		return 0;
	jscan_init(&j, text, len, JSCAN_MAX_DEPTH);
	if (buf_add(&path, prefix, plen) ||
	    (jscan_next(&j, &t) == JSCAN_OBJECT &&
	     note_members(s, &j, &path, plen)))
		rc = err_set(s->e, ERR_NO_MEMORY, "out of memory");
	buf_free(&path);
	return rc;
}

/* Remember the files an index names.  An index that cannot be read here
 * still counts as a model: opening it says what is wrong. */
static int
note_index(struct cscan *s, const char *dir, const char *file)
{
	char *path = cnode_join(dir, file), *prefix = NULL, *text = NULL;
	long n = -1;
	FILE *f;
	int rc = 0;

	if (!path || asprintf(&prefix, "%s%s", dir, *dir ? "/" : "") < 0) {
		free(path);
		return err_set(s->e, ERR_NO_MEMORY, "out of memory");
	}
	f = fopen(path, "rbe");
	free(path);
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) &&
	    fread(text, 1, (size_t)n, f) == (size_t)n)
		rc = cscan_note_index(s, prefix, text, (size_t)n);
	if (f)
		fclose(f);
	free(text);
	free(prefix);
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

/* The names in path that matter, sorted: the files that may be models
 * (format/naming.h: models and indexes, not a split set's later parts),
 * regular files or symlinks to them, and directories; names starting with
 * '.' are left out. */
static int
list_dir(struct cscan *s, const char *path, struct listing *l)
{
	struct dirent *d;
	int fd, rc = 0;
	DIR *dp;

	memset(l, 0, sizeof(*l));
	dp = opendir(path);
	if (!dp) {
		err_set(s->e, ERR_IO, "cannot open directory: %s",
			strerror(errno));
		return err_at(s->e, path);
	}
	fd = dirfd(dp);
	while (rc == 0 && (d = readdir(dp))) {
		int want_file = naming_shown(d->d_name, 0);
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
	size_t i, k;
	int strong = naming_strong((const char *const *)l->files, l->nfiles);
	struct naming nm;

	/* the models that yield leave the listing where others are */
	for (i = k = 0; i < l->nfiles; i++)
		if (naming_shown(l->files[i], strong))
			l->files[k++] = l->files[i];
		else
			free(l->files[i]);
	l->nfiles = k;
	/* Indexes first: the shards they name are not models. */
	for (i = 0; i < l->nfiles; i++)
		if (naming_of(l->files[i], &nm) == NAMING_INDEX &&
		    note_index(s, n->path, l->files[i]))
			return -1;
	for (i = 0; i < l->nfiles; i++) {
		int index = naming_of(l->files[i], &nm) == NAMING_INDEX;
		char *p;

		if (!index) {
			p = cnode_join(n->path, l->files[i]);
			if (!p)
				return err_set(s->e, ERR_NO_MEMORY, "out of "
					       "memory");
			if (cscan_shard_has(s, p)) {
				free(p);
				continue;
			}
			free(p);
		}
		if (s->max && s->found >= s->max) {
			err_set(s->e, ERR_USAGE, "more than %zu models",
				s->max);
			return err_at(s->e, n->path);
		}
		if (cnode_add_model(n, l->files[i]))
			return err_set(s->e, ERR_NO_MEMORY, "out of memory");
		s->found++;
	}
	for (i = 0; i < l->ndirs; i++) {
		struct cnode *kid = NULL;
		char *p = cnode_join(n->path, l->dirs[i]);

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

/* A hub cache root: a made-up node with ORG/NAME kids (NAME for a repo
 * without an organisation), each a repo's snapshot scanned as a
 * directory. */
static int
scan_hub_root(struct cscan *s, const char *path, struct cnode **out)
{
	struct hubcache_repo *v;
	struct cnode *root;
	size_t n, i;
	int rc = 0;

	if (hubcache_repos(path, &v, &n, s->e))
		return -1;
	root = cnode_new(NULL);
	if (!root) {
		hubcache_repos_free(v, n);
		return err_set(s->e, ERR_NO_MEMORY, "out of memory");
	}
	for (i = 0; rc == 0 && i < n; i++) {
		struct cnode *kid = NULL, *org = root;

		if (cscan_dir(s, v[i].snapshot, &kid)) {
			rc = -1;
			break;
		}
		if (!kid)
			continue;
		if (v[i].org && !(org = cnode_kid(root, v[i].org))) {
			org = cnode_new(NULL);
			if (!org || cnode_add_kid(root, v[i].org, org)) {
				cnode_free(org);
				org = NULL;
			}
		}
		if (!org || cnode_add_kid(org, v[i].name, kid)) {
			cnode_free(kid);
			rc = err_set(s->e, ERR_NO_MEMORY, "out of memory");
		}
	}
	hubcache_repos_free(v, n);
	if (rc == 0 && root->nkids)
		*out = root;
	else
		cnode_free(root);
	return rc;
}

/* The kid of n a '/'-separated model name's directories lead to, made
 * up on the way; NULL without memory.  *last: the name's last part. */
static struct cnode *
ollama_parent(struct cnode *n, char *name, char **last)
{
	char *slash;

	while ((slash = strchr(name, '/'))) {
		struct cnode *kid;

		*slash = '\0';
		kid = cnode_kid(n, name);
		if (!kid) {
			kid = cnode_new(NULL);
			if (!kid || cnode_add_kid(n, name, kid)) {
				cnode_free(kid);
				return NULL;
			}
		}
		n = kid;
		name = slash + 1;
	}
	*last = name;
	return n;
}

/* An Ollama store (ollama_store.h): a made-up node with a MODEL:TAG kid
 * (NAMESPACE/MODEL:TAG, ...) per model, each its (first) model blob in
 * blobs/: a split set's other parts are found from it (model_open.c). */
static int
scan_ollama_root(struct cscan *s, const char *path, struct cnode **out)
{
	struct ollama_model *v;
	struct cnode *root;
	char *blobs;
	size_t n, i;
	int rc = 0;

	if (ollama_models(path, &v, &n, s->e))
		return -1;
	root = cnode_new(NULL);
	blobs = cnode_join(path, "blobs");
	for (i = 0; rc == 0 && i < n; i++) {
		struct cnode *parent, *kid = NULL;
		char *last;

		if (s->max && s->found >= s->max) {
			err_set(s->e, ERR_USAGE, "more than %zu models",
				s->max);
			rc = err_at(s->e, path);
			break;
		}
		parent = root && blobs ?
			 ollama_parent(root, v[i].name, &last) : NULL;
		if (parent)
			kid = cnode_new(blobs);
		if (!kid || cnode_add_model(kid, v[i].blobs[0]) ||
		    cnode_add_kid(parent, last, kid)) {
			cnode_free(kid);
			rc = err_set(s->e, ERR_NO_MEMORY, "out of memory");
		}
		s->found++;
	}
	free(blobs);
	ollama_models_free(v, n);
	if (rc == 0 && root && root->nkids)
		*out = root;
	else
		cnode_free(root);
	return rc;
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
		err_set(s->e, ERR_IO, "cannot open directory: %s",
			strerror(errno));
		return err_at(s->e, path);
	}
	/* A symlink back up the tree is a loop: not followed again. */
	for (i = 0; i < s->depth; i++)
		if (s->up[i].dev == st.st_dev && s->up[i].ino == st.st_ino)
			return 0;
	if (s->depth >= CATALOG_MAX_DEPTH) {
		err_set(s->e, ERR_USAGE, "directories nested more than "
			"%d deep", CATALOG_MAX_DEPTH);
		return err_at(s->e, path);
	}
	if (hubcache_is_root(path))
		return scan_hub_root(s, path, out);
	if (ollama_is_root(path))
		return scan_ollama_root(s, path, out);
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

