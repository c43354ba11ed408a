/* model_files.c - the files of a model's folder (model_files.h). */
#include "model/model_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/parallel.h"
#include "format/naming.h"
#include "source/source.h"

#define STRIPES 16

/* The names a loader reads beside a model (transformers' config,
 * generation config and tokenizers, llama.cpp's converters, AutoGPTQ):
 * what a probed folder asks for. */
static const char *const probe_names[] = {
	"config.json",
	"generation_config.json",
	"tokenizer.json",
	"tokenizer_config.json",
	"special_tokens_map.json",
	"added_tokens.json",
	"tokenizer.model",
	"vocab.json",
	"merges.txt",
	"vocab.txt",
	"chat_template.jinja",
	"preprocessor_config.json",
	"quantize_config.json",
};
#define NPROBES (sizeof(probe_names) / sizeof(probe_names[0]))

struct mf_file {
	char *rel;
	char *name;		/* what op opens it by; NULL: text */
	char *etag;		/* pinned, or NULL */
	char *text;		/* its bytes, when kept */
	size_t len;
	uint64_t size;		/* MODEL_FILES_UNKNOWN until opened */
	int model;
	int probe;
	int has_attr;		/* a scan saw the rest: */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec mtime, ctime;
	struct source *src;	/* once opened (atomic); owned */
	int absent;		/* a probe failed (atomic) */
};

struct model_files {
	enum model_files_kind kind;
	char *where;
	struct source_opener op;
	int refs;					/* atomic */
	const struct source_watch *watch;		/* atomic */
	pthread_mutex_t lock;		/* building the list */
	pthread_mutex_t stripe[STRIPES];	/* opening file i: i % STRIPES */
	int built;					/* atomic */
	int tree;		/* a tree's folder: all of it */
	struct mf_file *v;
	size_t n, cap;
};

/* --- paths --------------------------------------------------------------- */

int
model_files_path_ok(const char *rel)
{
	const char *p = rel;

	if (!*p)
		return 0;
	while (*p) {
		size_t k = strcspn(p, "/");

		if (k == 0 || k > 255 || p[0] == '.')
			return 0;
		p += k;
		if (*p == '/' && !*++p)
			return 0;	/* a trailing '/' */
	}
	return 1;
}

/* --- the list ------------------------------------------------------------ */

static void
file_free(struct mf_file *x)
{
	free(x->rel);
	free(x->name);
	free(x->etag);
	free(x->text);
	source_close(x->src);
}

/* Append a file (strings copied); 0 or -1. */
static int
push(struct model_files *f, const char *rel, const char *name,
     const char *etag, uint64_t size, const char *text, size_t len,
     int model, int probe)
{
	struct mf_file *x;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;

		x = realloc(f->v, cap * sizeof(*x));
		if (!x)
			return -1;
		f->v = x;
		f->cap = cap;
	}
	x = &f->v[f->n];
	memset(x, 0, sizeof(*x));
	x->rel = strdup(rel);
	x->name = name ? strdup(name) : NULL;
	x->etag = etag ? strdup(etag) : NULL;
	if (text) {
		x->text = malloc(len ? len : 1);
		if (x->text)
			memcpy(x->text, text, len);
		x->len = len;
		size = len;
	}
	x->size = size;
	x->model = model;
	x->probe = probe;
	if (!x->rel || (name && !x->name) || (etag && !x->etag) ||
	    (text && !x->text)) {
		file_free(x);
		return -1;
	}
	f->n++;
	return 0;
}

struct model_files *
model_files_new(enum model_files_kind k, const char *where,
		const struct source_opener *op)
{
	struct model_files *f = calloc(1, sizeof(*f));
	size_t i;

	if (!f)
		return NULL;
	f->kind = k;
	f->op = *op;
	f->op.meter = NULL;
	f->op.keep = NULL;
	f->refs = 1;
	pthread_mutex_init(&f->lock, NULL);
	for (i = 0; i < STRIPES; i++)
		pthread_mutex_init(&f->stripe[i], NULL);
	if (where && !(f->where = strdup(where))) {
		model_files_unref(f);
		return NULL;
	}
	for (i = 0; k == MODEL_FILES_PROBED && i < NPROBES; i++) {
		char *url;

		if (asprintf(&url, "%s%s", where, probe_names[i]) < 0) {
			model_files_unref(f);
			return NULL;
		}
		if (push(f, probe_names[i], url, NULL, MODEL_FILES_UNKNOWN,
			 NULL, 0, 0, 1)) {
			free(url);
			model_files_unref(f);
			return NULL;
		}
		free(url);
	}
	return f;
}

void
model_files_set_tree(struct model_files *f)
{
	f->tree = 1;
}

int
model_files_is_tree(const struct model_files *f)
{
	return f->tree;
}

int
model_files_add(struct model_files *f, const char *rel, const char *name,
		const char *etag, uint64_t size, const char *text, size_t len,
		int model)
{
	const char *p;
	size_t depth = 1;

	if (!model_files_path_ok(rel) || f->n >= MODEL_FILES_MAX)
		return 0;
	for (p = rel; f->tree && (p = strchr(p, '/')); p++)
		if (++depth > MODEL_FILES_DEPTH)
			return 0;	/* deeper than a scan goes */
	return push(f, rel, name, etag, size, text, len, model, 0);
}

struct model_files *
model_files_ref(struct model_files *f)
{
	if (f)
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	return f;
}

void
model_files_unref(struct model_files *f)
{
	size_t i;

	if (!f || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (i = 0; i < f->n; i++)
		file_free(&f->v[i]);
	free(f->v);
	free(f->where);
	pthread_mutex_destroy(&f->lock);
	for (i = 0; i < STRIPES; i++)
		pthread_mutex_destroy(&f->stripe[i]);
	free(f);
}

void
model_files_watch(struct model_files *f, const struct source_watch *w)
{
	size_t i, n;

	__atomic_store_n(&f->watch, w, __ATOMIC_RELEASE);
	n = __atomic_load_n(&f->built, __ATOMIC_ACQUIRE) ? f->n : 0;
	for (i = 0; i < n; i++) {
		struct source *s = model_files_opened(f, i);

		if (s)
			source_watch(s, w);
	}
}

/* --- a local folder, scanned --------------------------------------------- */

struct scan {
	struct model_files *f;
	struct {
		dev_t dev;
		ino_t ino;
	} up[MODEL_FILES_DEPTH + 1];
	int depth;
};

struct dentry {
	char *name;
	int dir;
	struct stat st;
};

static int
cmp_dentry(const void *a, const void *b)
{
	return strcmp(((const struct dentry *)a)->name,
		      ((const struct dentry *)b)->name);
}

/* The entries of path that may be shown (regular files and directories,
 * symlinks followed, no '.' names), sorted.  -1 when out of memory; a
 * directory that cannot be read has none. */
static int
read_dir(const char *path, struct dentry **out, size_t *nout)
{
	struct dentry *v = NULL, *t;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dp = opendir(path);
	int rc = 0;

	*out = NULL;
	*nout = 0;
	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		struct stat st;

		if (d->d_name[0] == '.' ||
		    fstatat(dirfd(dp), d->d_name, &st, 0) != 0 ||
		    (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			t = realloc(v, cap * sizeof(*v));
			if (!t) {
				rc = -1;
				break;
			}
			v = t;
		}
		v[n].name = strdup(d->d_name);
		v[n].dir = S_ISDIR(st.st_mode);
		v[n].st = st;
		if (!v[n].name) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(dp);
	if (n)
		qsort(v, n, sizeof(*v), cmp_dentry);
	*out = v;
	*nout = n;
	return rc;
}

static void
dentries_free(struct dentry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* What the scan saw of x's owner, mode and times. */
static void
keep_attr(struct mf_file *x, const struct stat *st)
{
	x->has_attr = 1;
	x->mode = st->st_mode;
	x->uid = st->st_uid;
	x->gid = st->st_gid;
	x->mtime = st->st_mtim;
	x->ctime = st->st_ctim;
}

/* Drop the files added from mark on. */
static void
truncate_to(struct model_files *f, size_t mark)
{
	while (f->n > mark)
		file_free(&f->v[--f->n]);
}

/* Add the files of directory path (prefix: its path below the folder,
 * "" or ending in '/').  1 when it or a subdirectory holds a model file
 * (a folder below the top then adds nothing: it is another model's;
 * in a tree's folder every level is the top), 0, or -1 when out of
 * memory. */
static int
scan_dir(struct scan *s, const char *path, const char *prefix, int top)
{
	struct model_files *f = s->f;
	const char **names = NULL;
	struct dentry *v;
	size_t n, i, nf = 0, mark = f->n;
	int rc = 0, holds = 0, strong;
	struct stat st;

	if (stat(path, &st) != 0)
		return 0;
	for (i = 0; i < (size_t)s->depth; i++)
		if (s->up[i].dev == st.st_dev && s->up[i].ino == st.st_ino)
			return 0;	/* a symlink back up: a loop */
	if (s->depth >= MODEL_FILES_DEPTH)
		return 0;
	if (read_dir(path, &v, &n))
		rc = -1;
	names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		rc = -1;
	for (i = 0; rc == 0 && i < n; i++)
		if (!v[i].dir)
			names[nf++] = v[i].name;
	strong = rc == 0 ? naming_strong(names, nf) : 0;
	for (i = 0; rc == 0 && i < n; i++) {
		struct naming nm;
		char *rel = NULL, *full = NULL;
		int model;

		if (v[i].dir)
			continue;
		model = naming_shown(v[i].name, strong) ||
			naming_of(v[i].name, &nm) == NAMING_PART;
		holds |= model;
		if (!top && holds)
			break;	/* another model's folder */
		if (asprintf(&rel, "%s%s", prefix, v[i].name) < 0 ||
		    asprintf(&full, "%s/%s", path, v[i].name) < 0)
			rc = -1;
		else if (model_files_add(f, rel, full, NULL,
					 (uint64_t)v[i].st.st_size, NULL, 0,
					 model))
			rc = -1;
		else if (f->n > mark && !strcmp(f->v[f->n - 1].rel, rel))
			keep_attr(&f->v[f->n - 1], &v[i].st);
		free(rel);
		free(full);
	}
	s->up[s->depth].dev = st.st_dev;
	s->up[s->depth].ino = st.st_ino;
	s->depth++;
	for (i = 0; rc == 0 && (top || !holds) && i < n; i++) {
		char *sub = NULL, *full = NULL;
		size_t before = f->n;
		int r;

		if (!v[i].dir)
			continue;
		if (asprintf(&sub, "%s%s/", prefix, v[i].name) < 0 ||
		    asprintf(&full, "%s/%s", path, v[i].name) < 0) {
			rc = -1;
		} else if ((r = scan_dir(s, full, sub, f->tree)) < 0) {
			rc = -1;
		} else if (r && !f->tree) {
			truncate_to(f, before);
			holds = 1;
		}
		free(sub);
		free(full);
	}
	s->depth--;
	free(names);
	dentries_free(v, n);
	if (!top && holds)
		truncate_to(f, mark);
	return rc < 0 ? -1 : holds;
}

static int
cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct mf_file *)a)->rel,
		      ((const struct mf_file *)b)->rel);
}

int
model_files_list(struct model_files *f, size_t *n)
{
	struct scan *s;
	size_t i, k;
	int rc = 0;

	if (__atomic_load_n(&f->built, __ATOMIC_ACQUIRE)) {
		*n = f->n;
		return 0;
	}
	pthread_mutex_lock(&f->lock);
	if (!f->built && f->kind == MODEL_FILES_LOCAL) {
		s = calloc(1, sizeof(*s));
		if (!s) {
			rc = -ENOMEM;
		} else {
			s->f = f;
			if (scan_dir(s, f->where, "", 1) < 0) {
				truncate_to(f, 0);
				rc = -ENOMEM;
			}
		}
		free(s);
	}
	if (!f->built && rc == 0) {
		if (f->n)
			qsort(f->v, f->n, sizeof(*f->v), cmp_file);
		/* one file per path: the first added (a listing's) */
		for (i = k = 0; i < f->n; i++) {
			if (k && strcmp(f->v[k - 1].rel, f->v[i].rel) == 0) {
				file_free(&f->v[i]);
				continue;
			}
			f->v[k++] = f->v[i];
		}
		f->n = k;
		__atomic_store_n(&f->built, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&f->lock);
	*n = f->n;
	return rc;
}

const char *
model_files_rel(const struct model_files *f, size_t i)
{
	return f->v[i].rel;
}

int
model_files_is_model(const struct model_files *f, size_t i)
{
	return f->v[i].model;
}

int
model_files_is_probed(const struct model_files *f, size_t i)
{
	return f->v[i].probe;
}

/* --- opening ------------------------------------------------------------- */

struct source *
model_files_opened(const struct model_files *f, size_t i)
{
	return __atomic_load_n(&f->v[i].src, __ATOMIC_ACQUIRE);
}

int
model_files_attr(const struct model_files *f, size_t i, struct stat *st)
{
	const struct mf_file *x = &f->v[i];
	const struct source *s;

	if (x->has_attr) {
		st->st_mode = x->mode;
		st->st_uid = x->uid;
		st->st_gid = x->gid;
		st->st_mtim = x->mtime;
		st->st_ctim = x->ctime;
		return 0;
	}
	if (!(s = model_files_opened(f, i)))
		return -1;
	st->st_mode = s->mode;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
	st->st_mtim = s->mtime;
	st->st_ctim = s->ctime;
	return 0;
}

/* Open file i (under its stripe's lock): 0, -ENOENT (a probe that found
 * nothing, for good), -EIO (a failure, tried again next time). */
static int
open_file(struct model_files *f, size_t i)
{
	struct mf_file *x = &f->v[i];
	struct err e = { 0 };
	struct source *s = NULL;
	int rc = 0;

	if (x->text || model_files_opened(f, i))
		return 0;
	if (__atomic_load_n(&x->absent, __ATOMIC_ACQUIRE))
		return -ENOENT;
	pthread_mutex_lock(&f->stripe[i % STRIPES]);
	if (model_files_opened(f, i) || x->absent) {
		rc = x->absent ? -ENOENT : 0;
	} else if ((x->etag && f->op.open_pinned ?
		    f->op.open_pinned(f->op.arg, x->name, x->etag, x->size,
				      &s, &e) :
		    source_opener_open(&f->op, x->name, &s, &e)) != 0) {
		s = NULL;
		if (x->probe) {
			__atomic_store_n(&x->absent, 1, __ATOMIC_RELEASE);
			rc = -ENOENT;
		} else {
			rc = -EIO;
		}
	} else if (x->size != MODEL_FILES_UNKNOWN && s->size != x->size) {
		/* not what was listed: it changed since */
		source_close(s);
		rc = -EIO;
	} else {
		source_watch(s, __atomic_load_n(&f->watch, __ATOMIC_ACQUIRE));
		__atomic_store_n(&x->src, s, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&f->stripe[i % STRIPES]);
	return rc;
}

int
model_files_size(struct model_files *f, size_t i, uint64_t *size)
{
	const struct mf_file *x = &f->v[i];
	int rc;

	if (x->text || (!x->probe && x->size != MODEL_FILES_UNKNOWN)) {
		*size = x->size;
		return 0;
	}
	rc = open_file(f, i);
	if (rc == 0)
		*size = model_files_opened(f, i)->size;
	return rc;
}

static void
probe_one(void *arg, size_t i)
{
	struct model_files *f = arg;

	if (f->v[i].probe)
		open_file(f, i);
}

void
model_files_probe_all(struct model_files *f)
{
	size_t n, i, k = 0;

	if (model_files_list(f, &n))
		return;
	for (i = 0; i < n; i++)
		k += f->v[i].probe && !model_files_opened(f, i) &&
		     !__atomic_load_n(&f->v[i].absent, __ATOMIC_ACQUIRE);
	if (k)
		parallel_run(n, (unsigned)(k < NPROBES ? k : NPROBES),
			     probe_one, f);
}

int
model_files_bytes(struct model_files *f, size_t i, const char **text,
		  size_t *len, struct source **src)
{
	const struct mf_file *x = &f->v[i];
	int rc;

	*text = NULL;
	*src = NULL;
	if (x->text) {
		*text = x->text;
		*len = x->len;
		return 0;
	}
	rc = open_file(f, i);
	if (rc == 0)
		*src = model_files_opened(f, i);
	return rc;
}
