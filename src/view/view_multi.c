/* view_multi.c - a tree of models (view_multi_ops, view_kinds.h;
 * view_build_multi(), view.h): directories that lead to models, each
 * model a view of its own under its directory, which this file calls
 * through view_model_ops (view_model.c).
 *
 * Inode numbers: the model in slot s (1-based, in the order given) owns
 * (s << 32) | i for each inode i of its own view, so its root directory is
 * (s << 32) | 1 and every lookup is a shift and an array index.  Slot 0
 * holds the tree's own nodes: 1 the root, 2 the root __summary__.json,
 * 2 + d the tree directory d >= 1; then, when the front end keeps a log
 * (view_opts.log) and views are not off, the root's hidden .stfs/ and
 * its log (what the daemon said, as in every model's .stfs/: a tree's
 * mount has one at its root too).  The slot after the models' holds the
 * tree's folder (view_folder.c) when it has one and views are not off:
 * the root's .files/, a view of its own called through its ops as the
 * models' are.
 *
 * Memory: per model its view (view.h) and two copied strings; per tree
 * directory 32 bytes; a table of 32-bit slots for lookups by (directory,
 * name), hashed with the process key of nametab.h.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/count.h"
#include "base/jsonmem.h"
#include "base/msglog.h"
#include "format/dtype.h"
#include "base/error.h"
#include "format/safetensors/header.h"
#include "model/model.h"
#include "model/summary.h"
#include "base/nametab.h"
#include "view/view.h"
#include "view/view_kinds.h"

#define SUMMARY_NAME "__summary__.json"
#define INO_SUMMARY 2
#define SLOT_SHIFT 32
#define LOCAL_MASK 0xffffffffull

/* A name in a tree directory: a subdirectory or a model's directory. */
struct edge {
	uint32_t parent;	/* tree directory */
	uint32_t name_len;
	const char *name;	/* in the owning dir string, not terminated */
	uint64_t ino;
};

struct tdir {
	uint32_t kid, nkid;	/* kids[kid .. kid + nkid): inodes, by name */
	uint32_t nsubdirs;
	uint32_t edge;		/* its own edge (not for the root) */
};

struct multi_model {
	char *dir;
	char *label;
	struct view *view;
};

struct view_multi {
	size_t n;
	struct multi_model *models;
	size_t ndirs;		/* tree directories, the root included */
	struct tdir *dirs;
	size_t nedges;
	struct edge *edges;
	uint64_t *kids;
	uint32_t *table;	/* edge index + 1, 0 empty */
	size_t mask;
	char *summary;
	size_t summary_len;
	uint64_t ino_stfs;	/* the root's .stfs/, + 1 its log; 0: none */
	struct view *folder;	/* the root's .files/, slot n + 1; or NULL */
};

/* --- inode arithmetic --------------------------------------------------- */

static inline uint64_t
slot_of(uint64_t ino)
{
	return ino >> SLOT_SHIFT;
}

static inline uint64_t
local_of(uint64_t ino)
{
	return ino & LOCAL_MASK;
}

/* The model view (or the folder's) behind ino and its local inode, or
 * NULL for slot 0 and unknown slots. */
static const struct view *
sub(const struct view *v, uint64_t ino, uint64_t *local)
{
	uint64_t s = slot_of(ino);

	*local = local_of(ino);
	if (s == v->multi->n + 1 && v->multi->folder)
		return v->multi->folder;
	if (s == 0 || s > v->multi->n)
		return NULL;
	return v->multi->models[s - 1].view;
}

static inline uint64_t
global(uint64_t slot, uint64_t local)
{
	if (local == VIEW_INO_AGAIN)
		return local;
	return local ? (slot << SLOT_SHIFT) | local : 0;
}

/* Tree directory d of a slot-0 inode, or -1. */
static long
tdir_of(const struct view *v, uint64_t ino)
{
	if (ino == VIEW_ROOT_INO)
		return 0;
	if (ino > INO_SUMMARY && ino - INO_SUMMARY < v->multi->ndirs)
		return (long)(ino - INO_SUMMARY);
	return -1;
}

static uint64_t
tdir_ino(size_t d)
{
	return d == 0 ? VIEW_ROOT_INO : INO_SUMMARY + d;
}

/* --- the (directory, name) table ---------------------------------------- */

static uint64_t
edge_hash(const struct view_multi *m, uint32_t parent, const char *name,
	  size_t len)
{
	/* The process's keyed hash (nametab.h): names come from directory
	 * trees, listings and the Hub, which an adversary may choose. */
	struct nametab_key k;

	(void)m;
	nametab_key(&k, parent, name, len);
	return k.hash;
}

/* Index of the edge (parent, name), or -1; *slot gets its table slot or
 * the empty one it would take. */
static long
edge_find(const struct view_multi *m, uint32_t parent, const char *name,
	  size_t len, size_t *slot)
{
	size_t i = (size_t)edge_hash(m, parent, name, len) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		const struct edge *e;

		if (!m->table[i]) {
			if (slot)
				*slot = i;
			return -1;
		}
		e = &m->edges[m->table[i] - 1];
		if (e->parent == parent && e->name_len == len &&
		    memcmp(e->name, name, len) == 0)
			return (long)(m->table[i] - 1);
	}
}

/* --- the ops: a model's inodes go to its view, the tree's own are here -- */

/* The root's .stfs/ (0) or its log (1), else -1. */
static int
stfs_of(const struct view *v, uint64_t ino)
{
	uint64_t s = v->multi->ino_stfs;

	return s && ino >= s && ino <= s + 1 ? (int)(ino - s) : -1;
}

/* The root's .files/ (the folder's slot), or 0; listed with
 * views=visible. */
static uint64_t
folder_ino(const struct view *v)
{
	const struct view_multi *m = v->multi;

	return m->folder ? global(m->n + 1, view_folder_root(m->folder)) : 0;
}

static int
listed_folder(const struct view *v)
{
	return v->multi->folder && v->opts.views == VIEW_VIEWS_VISIBLE;
}

static enum view_kind
view_multi_kind(const struct view *v, uint64_t ino)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	if (s)
		return s->ops->kind(s, l);
	if (ino == INO_SUMMARY)
		return VIEW_BLOB;
	if (stfs_of(v, ino) >= 0)
		return stfs_of(v, ino) ? VIEW_HIDDEN_FILE : VIEW_DIR;
	return tdir_of(v, ino) >= 0 ? VIEW_DIR : VIEW_NONE;
}

static uint64_t
view_multi_lookup(const struct view *v, uint64_t parent, const char *name,
		  size_t len)
{
	const struct view_multi *m = v->multi;
	uint64_t l;
	const struct view *s = sub(v, parent, &l);
	long d, e;

	if (s)
		return global(slot_of(parent),
			      s->ops->lookup(s, l, name, len));
	if (stfs_of(v, parent) == 0)
		return len == 3 && memcmp(name, "log", 3) == 0 ?
		       m->ino_stfs + 1 : 0;
	if (parent == VIEW_ROOT_INO && m->ino_stfs && len == 5 &&
	    memcmp(name, ".stfs", 5) == 0)
		return m->ino_stfs;
	if (parent == VIEW_ROOT_INO && m->folder && len == 6 &&
	    memcmp(name, ".files", 6) == 0)
		return folder_ino(v);
	d = tdir_of(v, parent);
	if (d < 0)
		return 0;
	if (d == 0 && len == strlen(SUMMARY_NAME) &&
	    memcmp(name, SUMMARY_NAME, len) == 0)
		return INO_SUMMARY;
	e = edge_find(m, (uint32_t)d, name, len, NULL);
	return e < 0 ? 0 : m->edges[e].ino;
}

/* The root lists its .stfs/ (views=visible). */
static int
listed_stfs(const struct view *v)
{
	return v->multi->ino_stfs && v->opts.views == VIEW_VIEWS_VISIBLE;
}

static uint64_t
view_multi_nchildren(const struct view *v, uint64_t dir)
{
	uint64_t l;
	const struct view *s = sub(v, dir, &l);
	long d;

	if (s)
		return s->ops->nchildren(s, l);
	if (stfs_of(v, dir) == 0)
		return 1;
	d = tdir_of(v, dir);
	if (d < 0)
		return 0;
	return v->multi->dirs[d].nkid + (d == 0) +
	       (d == 0 ? listed_stfs(v) + listed_folder(v) : 0);
}

static uint64_t
view_multi_child(const struct view *v, uint64_t dir, uint64_t k)
{
	const struct view_multi *m = v->multi;
	uint64_t l;
	const struct view *s = sub(v, dir, &l);
	long d;

	if (s)
		return global(slot_of(dir), s->ops->child(s, l, k));
	if (stfs_of(v, dir) == 0)
		return k == 0 ? m->ino_stfs + 1 : 0;
	d = tdir_of(v, dir);
	if (d < 0)
		return 0;
	if (d == 0) {
		if (k == 0)
			return INO_SUMMARY;
		k--;
	}
	if (k < m->dirs[d].nkid)
		return m->kids[m->dirs[d].kid + k];
	/* listed last, as a model view lists its hidden directories */
	if (d != 0 || k < m->dirs[d].nkid)
		return 0;
	k -= m->dirs[d].nkid;
	if (listed_stfs(v) && k-- == 0)
		return m->ino_stfs;
	return listed_folder(v) && k == 0 ? folder_ino(v) : 0;
}

static size_t
view_multi_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const struct view_multi *m = v->multi;
	const struct edge *e = NULL;
	uint64_t l;
	const struct view *s = sub(v, ino, &l);
	const char *dir, *slash;
	long d;

	if (s && (l != VIEW_ROOT_INO || s == m->folder))
		return s->ops->name(s, l, out);
	if (s) {
		dir = m->models[slot_of(ino) - 1].dir;
		slash = strrchr(dir, '/');
		dir = slash ? slash + 1 : dir;
		strcpy(out, dir);	/* checked <= VIEW_NAME_MAX at build */
		return strlen(out);
	}
	if (ino == INO_SUMMARY) {
		strcpy(out, SUMMARY_NAME);
		return strlen(out);
	}
	if (stfs_of(v, ino) >= 0) {
		strcpy(out, stfs_of(v, ino) ? "log" : ".stfs");
		return strlen(out);
	}
	d = tdir_of(v, ino);
	if (d > 0)
		e = &m->edges[m->dirs[d].edge];
	if (!e) {
		out[0] = '\0';
		return 0;
	}
	memcpy(out, e->name, e->name_len);
	out[e->name_len] = '\0';
	return e->name_len;
}

static int
view_multi_stat(const struct view *v, uint64_t ino, struct stat *st)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);
	long d;
	int rc;

	if (s) {
		rc = s->ops->stat(s, l, st);
		if (rc)
			return rc;
		st->st_ino = ino;
		return 0;
	}
	d = tdir_of(v, ino);
	if (d < 0 && ino != INO_SUMMARY && stfs_of(v, ino) < 0)
		return -ENOENT;
	view_stat_begin(v, ino, st);
	if (d >= 0 || stfs_of(v, ino) == 0) {
		view_stat_end(st, 1, v->mode, d >= 0 ?
			      v->multi->dirs[d].nsubdirs + (d == 0 ?
			      listed_stfs(v) + listed_folder(v) : 0) : 0, 0);
	} else if (stfs_of(v, ino) == 1) {
		/* the log: its time is its last message's (view_stfs.c) */
		view_stat_end(st, 0, v->mode, 0,
			      msglog_size(v->opts.log, &st->st_mtim));
		st->st_ctim = st->st_atim = st->st_mtim;
	} else {
		view_stat_end(st, 0, v->mode, 0, v->multi->summary_len);
	}
	return 0;
}

static uint64_t
view_multi_size(const struct view *v, uint64_t ino)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	if (s)
		return s->ops->size(s, l);
	if (stfs_of(v, ino) == 1)
		return msglog_size(v->opts.log, NULL);
	return ino == INO_SUMMARY ? v->multi->summary_len : 0;
}

static const char *
view_multi_blob(const struct view *v, uint64_t ino, size_t *len)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	if (s)
		return s->ops->blob(s, l, len);
	if (ino != INO_SUMMARY)
		return NULL;
	*len = v->multi->summary_len;
	return v->multi->summary;
}

struct map_arg {
	uint64_t slot;
	void (*fn)(uint64_t ino, void *arg);
	void *arg;
};

static void
map_one(uint64_t ino, void *arg)
{
	struct map_arg *a = arg;

	a->fn(global(a->slot, ino), a->arg);
}

static void
view_multi_for_source(const struct view *v, const struct source *src,
		      void (*fn)(uint64_t ino, void *arg), void *arg)
{
	struct map_arg a = { 0, fn, arg };
	size_t i;

	for (i = 0; i < v->multi->n; i++) {
		a.slot = i + 1;
		view_model_ops.for_source(v->multi->models[i].view, src,
					  map_one, &a);
	}
	if (v->multi->folder) {
		a.slot = v->multi->n + 1;
		v->multi->folder->ops->for_source(v->multi->folder, src,
						  map_one, &a);
	}
}

/* --- build ------------------------------------------------------------- */

/* A mount-relative directory: components joined by '/', each a valid
 * file name (not empty, not "." or "..", at most VIEW_NAME_MAX bytes).
 * Returns the number of components, or 0 when it is not valid. */
static size_t
dir_components(const char *dir)
{
	const char *p = dir, *q;
	size_t n = 0;

	if (!*dir)
		return 0;
	for (;;) {
		q = strchr(p, '/');
		if (!q)
			q = p + strlen(p);
		if (q == p || q - p > VIEW_NAME_MAX ||
		    (q - p == 1 && p[0] == '.') ||
		    (q - p == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		n++;
		if (!*q)
			return n;
		p = q + 1;
	}
}

static int
cmp_kid_names(const void *a, const void *b, void *arg)
{
	const struct view *v = arg;
	char na[VIEW_NAME_MAX + 1], nb[VIEW_NAME_MAX + 1];

	view_multi_name(v, *(const uint64_t *)a, na);
	view_multi_name(v, *(const uint64_t *)b, nb);
	return strcmp(na, nb);
}

/* Place model slot s at its directory: intermediate directories as
 * needed; refuse two things at one path. */
static int
place(struct view *v, size_t s, struct err *e)
{
	struct view_multi *m = v->multi;
	const char *dir = m->models[s].dir, *p = dir, *q;
	uint32_t parent = 0;
	size_t slot;
	long hit;

	for (;;) {
		int last;
		struct edge *ed;

		q = strchr(p, '/');
		last = !q;
		if (!q)
			q = p + strlen(p);
		hit = edge_find(m, parent, p, (size_t)(q - p), &slot);
		if (hit >= 0) {
			uint64_t ino = m->edges[hit].ino;

			if (last)
				return err_set(e, ERR_USAGE, "two things at the "
					       "path %s: model %s and %s", dir,
					       m->models[s].label,
					       slot_of(ino) ? m->models[
					       slot_of(ino) - 1].label :
					       "a directory of other models");
			if (slot_of(ino) != 0)
				return err_set(e, ERR_USAGE, "model %s (at %s) "
					       "would lie inside the directory "
					       "of model %s (%.*s): nested "
					       "models are not supported",
					       m->models[s].label, dir,
					       m->models[slot_of(ino) - 1].label,
					       (int)(q - dir), dir);
			parent = (uint32_t)tdir_of(v, ino);
			p = q + 1;
			continue;
		}
		if (parent == 0 && (size_t)(q - p) == strlen(SUMMARY_NAME) &&
		    memcmp(p, SUMMARY_NAME, (size_t)(q - p)) == 0)
			return err_set(e, ERR_USAGE, "model %s: its directory "
				       "%s would hide the root's %s",
				       m->models[s].label, dir, SUMMARY_NAME);
		ed = &m->edges[m->nedges];
		ed->parent = parent;
		ed->name = p;
		ed->name_len = (uint32_t)(q - p);
		m->table[slot] = (uint32_t)++m->nedges;
		m->dirs[parent].nkid++;
		if (last) {
			ed->ino = global(s + 1, VIEW_ROOT_INO);
			m->dirs[parent].nsubdirs++;
			return 0;
		}
		m->dirs[m->ndirs].edge = (uint32_t)(m->nedges - 1);
		ed->ino = tdir_ino(m->ndirs);
		m->dirs[parent].nsubdirs++;
		parent = (uint32_t)m->ndirs++;
		p = q + 1;
	}
}

/* The root's __summary__.json: every model's path, source, tensors and
 * parameters per dtype, in path order. */
static int
build_summary(struct view *v, const size_t *order)
{
	unsigned long jf = jsonmem_failures();
	struct view_multi *m = v->multi;
	json_t *root = json_object(), *arr = json_array();
	uint64_t tensors = 0;
	size_t i, j;
	char *text;

	if (!root || !arr)
		goto fail;
	for (i = 0; i < m->n; i++) {
		const struct multi_model *vm = &m->models[order[i]];
		const struct model *md = vm->view->model;
		json_t *o = json_object(), *params = json_object();
		uint64_t by[DTYPE__COUNT] = { 0 };
		int seen[DTYPE__COUNT] = { 0 }, d;

		if (!o || !params) {
			json_decref(o);
			json_decref(params);
			goto fail;
		}
		for (j = 0; j < md->ntensors; j++) {
			const struct tensor *t = md->tensors[j].t;

			by[t->dtype] = count_add(by[t->dtype], t->numel);
			seen[t->dtype] = 1;
		}
		/* in the order the first tensor of each dtype comes */
		for (j = 0; j < md->ntensors; j++) {
			d = md->tensors[j].t->dtype;
			if (seen[d]) {
				json_object_set_new(params,
						    dtype_info((enum dtype)d)->name,
						    summary_count_json(by[d]));
				seen[d] = 0;
			}
		}
		tensors += md->ntensors;
		json_object_set_new(o, "path", json_string(vm->dir));
		json_object_set_new(o, "source", json_string(vm->label));
		json_object_set_new(o, "tensors", json_integer(
			(json_int_t)md->ntensors));
		json_object_set_new(o, "parameters", params);
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "format", json_string("stfs-tree"));
	json_object_set_new(root, "models", json_integer((json_int_t)m->n));
	json_object_set_new(root, "tensors", json_integer((json_int_t)tensors));
	json_object_set_new(root, "model_list", arr);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	/* jansson short of memory may leave a key out (jsonmem.h) */
	if (text && jsonmem_failures() != jf) {
		free(text);
		return -1;
	}
	if (!text)
		return -1;
	m->summary_len = strlen(text) + 1;
	m->summary = realloc(text, m->summary_len + 1);
	if (!m->summary) {
		free(text);
		return -1;
	}
	memcpy(m->summary + m->summary_len - 1, "\n", 2);
	return 0;
fail:
	json_decref(root);
	json_decref(arr);
	return -1;
}

static const struct view_model *sort_base;

static int
cmp_dirs(const void *a, const void *b)
{
	return strcmp(sort_base[*(const size_t *)a].dir,
		      sort_base[*(const size_t *)b].dir);
}

static const struct view_ops view_multi_ops;
static void view_multi_free(struct view *v);

int
view_multi_build(const struct view_model *models, size_t n,
		 struct model_files *files, const struct view_opts *opts,
		 struct view **out, struct err *e)
{
	struct view_multi *m;
	struct view *v;
	size_t i, d, bound = 1, tsize = 4, *order = NULL;

	if (n == 0)
		return err_set(e, ERR_USAGE, "no model to mount");
	if (n >= (1ull << 31))
		return err_set(e, ERR_USAGE, "too many models (%zu)", n);
	for (i = 0; i < n; i++) {
		size_t c = dir_components(models[i].dir);

		if (!c)
			return err_set(e, ERR_USAGE, "model %s: %s is not a "
				       "directory inside the mount%s",
				       models[i].label, models[i].dir[0] ?
				       models[i].dir : "\"\"", models[i].dir[0]
				       ? "" : " (the root holds other models)");
		bound += c;
	}
	if (bound >= UINT32_MAX / 4)
		return err_set(e, ERR_USAGE, "too many directories");
	while (tsize < 2 * bound)
		tsize *= 2;
	v = calloc(1, sizeof(*v));
	m = calloc(1, sizeof(*m));
	if (!v || !m) {
		free(v);
		free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	v->ops = &view_multi_ops;
	v->multi = m;
	if (opts)
		v->opts = *opts;
	m->models = calloc(n, sizeof(*m->models));
	m->dirs = calloc(bound + 1, sizeof(*m->dirs));
	m->edges = calloc(bound, sizeof(*m->edges));
	m->table = calloc(tsize, sizeof(*m->table));
	order = malloc(n * sizeof(*order));
	if (!m->models || !m->dirs || !m->edges || !m->table || !order)
		goto oom;
	m->mask = tsize - 1;
	m->ndirs = 1;
	m->n = n;
	for (i = 0; i < n; i++) {
		m->models[i].dir = strdup(models[i].dir);
		m->models[i].label = strdup(models[i].label);
		if (!m->models[i].dir || !m->models[i].label)
			goto oom;
		order[i] = i;
	}
	sort_base = models;
	qsort(order, n, sizeof(*order), cmp_dirs);
	for (i = 0; i < n; i++)
		if (place(v, order[i], e))
			goto fail;
	/* kids: count, offsets, fill, sort by name */
	m->kids = malloc((m->nedges ? m->nedges : 1) * sizeof(*m->kids));
	if (!m->kids)
		goto oom;
	for (d = 0, i = 0; d < m->ndirs; d++) {
		m->dirs[d].kid = (uint32_t)i;
		i += m->dirs[d].nkid;
		m->dirs[d].nkid = 0;
	}
	for (i = 0; i < m->nedges; i++) {
		struct tdir *td = &m->dirs[m->edges[i].parent];

		m->kids[td->kid + td->nkid++] = m->edges[i].ino;
	}
	for (i = 0; i < n; i++) {
		const struct view *s;

		if (view_model_build(models[i].model, opts, models[i].label,
				     &m->models[i].view, e))
			goto fail;
		s = m->models[i].view;
		if (s->ninodes > LOCAL_MASK) {
			err_set(e, ERR_USAGE, "model %s: too many files",
				models[i].label);
			goto fail;
		}
		v->ninodes += s->ninodes;
		view_total_add(v, s->total_bytes);
		v->mode = i ? v->mode & s->mode : s->mode;
		if (i == 0 || view_newer(&s->mtime, &v->mtime))
			v->mtime = s->mtime;
		if (i == 0 || view_newer(&s->ctime, &v->ctime))
			v->ctime = s->ctime;
		if (i == 0) {
			v->uid = s->uid;
			v->gid = s->gid;
		}
	}
	for (d = 0; d < m->ndirs; d++)
		qsort_r(m->kids + m->dirs[d].kid, m->dirs[d].nkid,
			sizeof(*m->kids), cmp_kid_names, v);
	if (build_summary(v, order))
		goto oom;
	if (files && v->opts.views != VIEW_VIEWS_OFF) {
		if (view_folder_build(files, v, &m->folder, e))
			goto fail;
		v->ninodes += m->folder->ninodes;
	}
	v->ninodes += m->ndirs + 1;
	if (v->opts.log && v->opts.views != VIEW_VIEWS_OFF) {
		m->ino_stfs = INO_SUMMARY + m->ndirs;
		v->ninodes += 2;
	}
	view_total_add(v, m->summary_len);
	free(order);
	*out = v;
	return 0;
oom:
	err_set(e, ERR_NO_MEMORY, "out of memory");
fail:
	free(order);
	view_multi_free(v);
	return -1;
}

static void
view_multi_free(struct view *v)
{
	struct view_multi *m = v->multi;
	size_t i;

	for (i = 0; m->models && i < m->n; i++) {
		if (m->models[i].view)
			view_model_ops.free(m->models[i].view);
		free(m->models[i].dir);
		free(m->models[i].label);
	}
	if (m->folder)
		m->folder->ops->free(m->folder);
	free(m->models);
	free(m->dirs);
	free(m->edges);
	free(m->kids);
	free(m->table);
	free(m->summary);
	free(m);	free(v);
}

/* --- the ops a tree hands to the model an inode belongs to --------------- */

static int
view_multi_is_volatile(const struct view *v, uint64_t ino)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);
	size_t i;

	if (s)
		return s->ops->is_volatile(s, l);
	if (ino != 0)
		return stfs_of(v, ino) == 1;	/* the log (no direct_io) */
	for (i = 0; i < v->multi->n; i++)
		if (view_model_ops.is_volatile(v->multi->models[i].view, 0))
			return 1;
	return 0;
}

static const struct model_tensor *
view_multi_tensor(const struct view *v, uint64_t ino)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	return s ? s->ops->tensor(s, l) : NULL;
}

static int
view_multi_data(const struct view *v, uint64_t ino, struct source **src,
		uint64_t *offset, uint64_t *len)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	return s ? s->ops->data(s, l, src, offset, len) : -1;
}

/* Bytes [off, off + size) of the log, as it is now. */
static int
read_log(const struct view *v, uint64_t off, size_t size,
	 struct view_segs *out)
{
	struct buf b = BUF_INIT;
	int rc = msglog_render(v->opts.log, &b) ? -ENOMEM : 0;

	if (!rc)
		rc = view_segs_add_copy(out, b.data, b.len, off, size);
	buf_free(&b);
	return rc;
}

static int
view_multi_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
		struct view_segs *out)
{
	uint64_t l, len;
	const struct view *s = sub(v, ino, &l);

	if (s)
		return s->ops->read(s, l, off, size, out);
	if (ino == INO_SUMMARY) {
		len = v->multi->summary_len;
		if (off >= len)
			return 0;
		if (size > len - off)
			size = (size_t)(len - off);
		return view_segs_add_mem(out, v->multi->summary + off, size);
	}
	if (stfs_of(v, ino) == 1)
		return read_log(v, off, size, out);
	return tdir_of(v, ino) >= 0 || stfs_of(v, ino) == 0 ? -EISDIR :
	       -ENOENT;
}

static int
view_multi_render_sidecar(const struct view *v, uint64_t ino, struct buf *out)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	return s ? s->ops->render_sidecar(s, l, out) : -1;
}

static int
view_multi_xattr_list(const struct view *v, uint64_t ino, struct buf *out)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	return s ? s->ops->xattr_list(s, l, out) : 0;
}

static int
view_multi_xattr_get(const struct view *v, uint64_t ino, const char *name,
		     struct buf *out)
{
	uint64_t l;
	const struct view *s = sub(v, ino, &l);

	return s ? s->ops->xattr_get(s, l, name, out) : 1;
}

static const struct view_ops view_multi_ops = {
	.kind = view_multi_kind,
	.is_volatile = view_multi_is_volatile,
	.lookup = view_multi_lookup,
	.nchildren = view_multi_nchildren,
	.child = view_multi_child,
	.name = view_multi_name,
	.stat = view_multi_stat,
	.size = view_multi_size,
	.tensor = view_multi_tensor,
	.data = view_multi_data,
	.read = view_multi_read,
	.for_source = view_multi_for_source,
	.blob = view_multi_blob,
	.render_sidecar = view_multi_render_sidecar,
	.xattr_list = view_multi_xattr_list,
	.xattr_get = view_multi_xattr_get,
	.free = view_multi_free,
};
