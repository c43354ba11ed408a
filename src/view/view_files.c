/* view_files.c - the hidden .files/ directory (struct view_hidden,
 * view_kinds.h): the model's own files as they are at the source, so a
 * loader pointed at MNT/.files/ reads the model as it reads its folder
 * (transformers' from_pretrained, vLLM, llama.cpp, safe_open).
 *
 * It holds the model's own files (each shard, served whole from the
 * source the model reads it from, so reads follow the model's order of
 * read-ahead: view_hint.h) and the files of its folder
 * (model/model_files.h: a local folder, a listing, the names probed
 * beside a URL), except the other models' files: its index, config.json,
 * the tokenizer's files, README.md, subfolders without models.  A file
 * named alone (a path, an hf:// file, an Ollama blob) has only itself.
 * The root of a tree of models (view_folder.c: a view without a model)
 * has the tree's folder, all of it (model_files_set_tree).
 *
 * In .dequant/ (the view of a derived model, model/quant_model.h) it is
 * the folder of the model the quantized one stands for: the base
 * model's folder without its model files and quantize_config.json, its
 * config.json without quantization_config (model/quant_plain.h), and
 * model.safetensors, the dequantized model as one safetensors file
 * (repack.h) whose quantized weights are their values in the config's
 * torch_dtype (BF16 when it names none; F16 and F32 kept), every other
 * tensor as stored.
 *
 * Built on the first look inside (a mount pays nothing; a local folder
 * is read then): a table of nodes, node 0 the directory .files/ itself,
 * then every folder and file under it, looked up by (parent, name) in a
 * keyed nametab; node k is inode ino_files + k, in a range of
 * FILES_INODES reserved at build.  Probed names that are not there do not
 * exist; a listing of a probed folder probes them all at once first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/nametab.h"
#include "base/text.h"
#include "model/model.h"
#include "model/model_beside.h"
#include "model/model_files.h"
#include "model/quant_model.h"
#include "model/quant_plain.h"
#include "model/repack.h"
#include "source/source.h"
#include "view/view.h"
#include "view/view_kinds.h"
#include "view/view_repack.h"

#define FILES_DIR ".files"
#define FILES_INODES (1u << 21)	/* .files/ and what it holds, at most */

enum vf_kind {
	VF_SOURCE,	/* a shard: its source, whole */
	VF_FOLDER,	/* file i of the folder */
	VF_CONFIG,	/* .dequant/: the plain config */
	VF_PLAIN,	/* .dequant/: the dequantized model, one file */
};

struct vf_file {
	enum vf_kind kind;
	const char *rel;
	struct source *src;	/* VF_SOURCE */
	size_t i;		/* VF_FOLDER */
	size_t order;		/* the order added: the first of a path wins */
};

struct vf_node {
	const char *name;
	uint32_t len;
	uint32_t parent;
	uint32_t file;		/* file index + 1; 0: a folder */
	uint32_t first, n;	/* a folder's children: kids[first ..] */
	uint32_t nsub;		/* its subfolders */
};

struct view_files {
	pthread_mutex_t lock;
	int built;		/* atomic: the table is final */
	struct model_files *folder;	/* the model's (or base's), a ref */
	int probes;		/* the folder has probed names */
	int probed;		/* atomic: probed all, root_vis final */
	struct vf_file *f;
	size_t nf;
	struct vf_node *node;
	size_t nnodes;
	uint32_t *kids;
	uint32_t *root_vis;	/* the root's children that are there */
	uint32_t nroot_vis;
	struct nametab tab;	/* (parent, name) -> node */
	char *index_rel;	/* the model's index, by its path */
	size_t capf, capnodes;
	/* .dequant/'s: the plain config, the model in its dtype (NULL:
	 * the view's own, F32) and its one file */
	char *config;
	size_t config_len;
	struct model *plain_model;
	struct repack *plain;
};

/* --- the table ---------------------------------------------------------- */

/* The path of the model's own file (shard k) in its folder: as its index
 * names it, else its source's name. */
static const char *
own_rel(const struct model *m, size_t k)
{
	return m->index_path ? m->shards[k].name : m->shards[k].src->base;
}

/* The path of the model's index in its folder (malloc'd), or NULL: the
 * last component of its path or URL (decoded; without a query). */
static char *
index_rel(const struct model *m)
{
	const char *p = m->index_path, *end, *s;

	if (!p)
		return NULL;
	end = p + (source_is_url(p) ? strcspn(p, "?#") : strlen(p));
	for (s = end; s > p && s[-1] != '/'; s--)
		;
	if (source_is_url(p))
		return text_pct_decode(s, (size_t)(end - s), "/", NULL);
	return strndup(s, (size_t)(end - s));
}

static int
add_file(struct view_files *t, const struct vf_file *x)
{
	struct vf_file *f;

	if (!model_files_path_ok(x->rel))
		return 0;
	if (t->nf == t->capf) {
		f = realloc(t->f, (t->capf ? 2 * t->capf : 16) * sizeof(*f));
		if (!f)
			return -1;
		t->f = f;
		t->capf = t->capf ? 2 * t->capf : 16;
	}
	t->f[t->nf] = *x;
	t->f[t->nf].order = t->nf;
	t->nf++;
	return 0;
}

static int
cmp_vf(const void *a, const void *b)
{
	const struct vf_file *x = a, *y = b;
	int c = strcmp(x->rel, y->rel);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* The model's files: its own, then its folder's but other models'; a
 * tree's folder (no model): all of it. */
static int
files_of(const struct view *v, struct view_files *t)
{
	const struct model *m = v->model;
	size_t k, n = 0;

	for (k = 0; m && k < m->nshards; k++) {
		struct vf_file x = { .kind = VF_SOURCE };

		x.rel = own_rel(m, k);
		x.src = m->shards[k].src;
		if (add_file(t, &x))
			return -1;
	}
	if (!t->folder)
		return 0;
	if (model_files_list(t->folder, &n))
		return -1;
	for (k = 0; k < n; k++) {
		struct vf_file x = { .kind = VF_FOLDER };

		x.rel = model_files_rel(t->folder, k);
		x.i = k;
		t->probes |= model_files_is_probed(t->folder, k);
		if (m && model_files_is_model(t->folder, k) &&
		    (!t->index_rel || strcmp(x.rel, t->index_rel) != 0))
			continue;	/* another model's */
		if (add_file(t, &x))
			return -1;
	}
	return 0;
}

/* The whole of file i of the folder (a config), malloc'd in *text; 0,
 * -ENOMEM, or -1 (unreadable, larger than MODEL_BESIDE_MAX). */
static int
folder_read(struct model_files *f, size_t i, char **text, size_t *len)
{
	struct source *src;
	const char *kept;
	uint64_t size;
	int rc;

	if (model_files_size(f, i, &size) || size > MODEL_BESIDE_MAX ||
	    model_files_bytes(f, i, &kept, len, &src))
		return -1;
	if (!(*text = malloc((size_t)size + 1)))
		return -ENOMEM;
	*len = (size_t)size;
	if (kept) {
		memcpy(*text, kept, *len);
		return 0;
	}
	rc = source_pread(src, *text, *len, 0);
	if (rc == 0)
		rc = source_verify(src);
	if (rc) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

/* .dequant/'s files (see the top): the base's folder but its model files
 * and quantize_config.json, the plain config.json, model.safetensors. */
static int
plain_files(const struct view *v, struct view_files *t)
{
	const struct model *base = quant_model_base(v->model);
	struct err e = { 0 };
	struct vf_file x = { .kind = VF_PLAIN, .rel = "model.safetensors" };
	enum dtype dt = DTYPE_BF16;
	size_t k, n = 0;
	char *text = NULL;
	size_t len;

	if (t->folder && model_files_list(t->folder, &n))
		return -1;
	for (k = 0; k < n; k++) {
		struct vf_file y = { .kind = VF_FOLDER, .i = k };

		y.rel = model_files_rel(t->folder, k);
		if (model_files_is_model(t->folder, k) ||
		    !strcmp(y.rel, "quantize_config.json"))
			continue;
		if (!strcmp(y.rel, "config.json")) {
			int rc = folder_read(t->folder, k, &text, &len);

			/* short of memory: the config is unknown, not
			 * absent (its torch_dtype decides the bytes) */
			if (rc == -ENOMEM ||
			    (rc == 0 && quant_plain_config(text, len,
							   &t->config,
							   &t->config_len,
							   &dt))) {
				free(text);
				return -1;
			}
			free(text);
			if (!t->config)
				continue;	/* unreadable: none */
			y.kind = VF_CONFIG;
		}
		if (add_file(t, &y))
			return -1;
	}
	if (dt != DTYPE_F32 &&
	    (quant_model_open(base, dt, &t->plain_model, &e) ||
	     !t->plain_model))
		return -1;
	if (repack_open(t->plain_model ? t->plain_model : v->model,
			&t->plain, &e))
		return -1;
	return add_file(t, &x);
}

static int
node_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct view_files *t = ctx;
	const struct vf_node *x = &t->node[id];

	return x->parent == k->space && x->len == k->len &&
	       memcmp(x->name, k->name, k->len) == 0;
}

/* The node called name[0..len) in folder parent, or -1. */
static long
find(const struct view_files *t, uint32_t parent, const char *name,
     size_t len)
{
	struct nametab_key k;

	nametab_key(&k, parent, name, len);
	return nametab_find(&t->tab, &k);
}

/* The node for name[0..len) in parent, added when new (file: its index
 * + 1, 0 for a folder).  Its id, or -1 (out of memory, a file and a
 * folder of one name, too many nodes). */
static long
node_add(struct view_files *t, uint32_t parent, const char *name,
	 size_t len, uint32_t file)
{
	struct nametab_key k;
	struct vf_node *x;
	long id = find(t, parent, name, len);

	if (id >= 0)
		return t->node[id].file || file ? -1 : id;
	if (t->nnodes >= t->capnodes)
		return -1;
	x = &t->node[t->nnodes];
	memset(x, 0, sizeof(*x));
	x->name = name;
	x->len = (uint32_t)len;
	x->parent = parent;
	x->file = file;
	nametab_key(&k, parent, name, len);
	if (nametab_put(&t->tab, &k, (uint32_t)t->nnodes) == -2)
		return -1;
	t->node[parent].n++;
	t->node[parent].nsub += !file;
	return (long)t->nnodes++;
}

/* The nodes of the files (sorted, one per path), and each folder's
 * children.  A file whose path a file of another path already takes
 * as a folder is left out.  0, or -1 when out of memory. */
static int
build_nodes(struct view_files *t)
{
	uint32_t *fill;
	const char *p;
	size_t i, cap = 1;

	for (i = 0; i < t->nf; i++)
		for (p = t->f[i].rel, cap++; (p = strchr(p, '/')); p++)
			cap++;
	if (cap > FILES_INODES)
		cap = FILES_INODES;
	t->node = calloc(cap, sizeof(*t->node));
	if (!t->node || nametab_init(&t->tab, cap, node_eq, t))
		return -1;
	t->capnodes = cap;
	t->nnodes = 1;	/* .files/ itself */
	for (i = 0; i < t->nf && t->nnodes < cap; i++) {
		const char *p = t->f[i].rel, *slash;
		long parent = 0;

		while (parent >= 0 && (slash = strchr(p, '/'))) {
			parent = node_add(t, (uint32_t)parent, p,
					  (size_t)(slash - p), 0);
			p = slash + 1;
		}
		if (parent >= 0)
			node_add(t, (uint32_t)parent, p, strlen(p),
				 (uint32_t)i + 1);
	}
	t->kids = calloc(t->nnodes, sizeof(*t->kids));
	fill = calloc(t->nnodes, sizeof(*fill));
	if (!t->kids || !fill) {
		free(fill);
		return -1;
	}
	for (i = 0; i + 1 < t->nnodes; i++)
		t->node[i + 1].first = t->node[i].first + t->node[i].n;
	for (i = 1; i < t->nnodes; i++) {
		struct vf_node *p = &t->node[t->node[i].parent];

		t->kids[p->first + fill[t->node[i].parent]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

static void
table_free(struct view_files *t)
{
	free(t->f);
	free(t->node);
	free(t->kids);
	free(t->root_vis);
	free(t->config);
	repack_free(t->plain);
	model_free(t->plain_model);
	t->config = NULL;
	t->plain = NULL;
	t->plain_model = NULL;
	if (t->tab.slot)
		nametab_free(&t->tab);
	t->f = NULL;
	t->node = NULL;
	t->kids = NULL;
	t->root_vis = NULL;
	t->nf = t->nnodes = t->capf = t->capnodes = 0;
	t->nroot_vis = 0;
	memset(&t->tab, 0, sizeof(t->tab));
}

/* Build the table: 0, or -1 (out of memory: the next use tries again). */
static int
build(const struct view *v, struct view_files *t)
{
	size_t i, k;
	int rc;

	rc = v->model && quant_model_base(v->model) ? plain_files(v, t) :
	     files_of(v, t);
	if (rc == 0 && t->nf)
		qsort(t->f, t->nf, sizeof(*t->f), cmp_vf);
	for (i = k = 0; rc == 0 && i < t->nf; i++)
		if (!k || strcmp(t->f[k - 1].rel, t->f[i].rel) != 0)
			t->f[k++] = t->f[i];
	if (rc == 0)
		t->nf = k;
	if (rc == 0)
		rc = build_nodes(t);
	if (rc)
		table_free(t);
	return rc;
}

/* The table, built on the first call; NULL when out of memory. */
static struct view_files *
get(const struct view *v)
{
	struct view_files *t = v->files;

	if (__atomic_load_n(&t->built, __ATOMIC_ACQUIRE))
		return t;
	pthread_mutex_lock(&t->lock);
	if (!t->built && build(v, t) == 0)
		__atomic_store_n(&t->built, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
	return t->built ? t : NULL;
}

/* --- files ------------------------------------------------------------- */

/* The file of node k, or NULL (a folder, no such node). */
static const struct vf_file *
file_of(const struct view_files *t, uint64_t k)
{
	if (k >= t->nnodes || !t->node[k].file)
		return NULL;
	return &t->f[t->node[k].file - 1];
}

/* Its size: 0, -ENOENT (a probed name not there), -ENOMEM, -EIO. */
static int
file_size(const struct view_files *t, const struct vf_file *x,
	  uint64_t *size)
{
	struct err e = { 0 };

	switch (x->kind) {
	case VF_SOURCE:
		*size = x->src->size;
		return 0;
	case VF_CONFIG:
		*size = t->config_len;
		return 0;
	case VF_PLAIN:
		if (repack_size(t->plain, REPACK_WHOLE, 0, size, &e))
			return e.code == ERR_NO_MEMORY ? -ENOMEM : -EIO;
		return 0;
	default:
		return model_files_size(t->folder, x->i, size);
	}
}

/* 1 when node k exists: a folder, or a file that is there. */
static int
exists(const struct view_files *t, uint32_t k)
{
	const struct vf_file *x = file_of(t, k);
	uint64_t size;

	return !x || x->kind != VF_FOLDER ||
	       !model_files_is_probed(t->folder, x->i) ||
	       file_size(t, x, &size) != -ENOENT;
}

/* A listing of the root of a probed folder: every name probed at once,
 * then the children that are there, once. */
static void
probe_root(struct view_files *t)
{
	const struct vf_node *r = &t->node[0];
	uint32_t *vis;
	size_t i;

	if (!t->probes || __atomic_load_n(&t->probed, __ATOMIC_ACQUIRE))
		return;
	model_files_probe_all(t->folder);
	pthread_mutex_lock(&t->lock);
	if (!t->probed && (vis = calloc(r->n + 1, sizeof(*vis)))) {
		for (i = 0; i < r->n; i++)
			if (exists(t, t->kids[r->first + i]))
				vis[t->nroot_vis++] = t->kids[r->first + i];
		t->root_vis = vis;
		__atomic_store_n(&t->probed, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&t->lock);
}

/* --- the hidden directory ---------------------------------------------- */

/* .files/ of folder f (NULL: none) in v, from v->ninodes + 1 on; the
 * model's index (v->model's, if any) by its path.  0, or -1 with *e. */
static int
files_setup(struct view *v, struct model_files *f, struct err *e)
{
	struct view_files *t;

	t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	pthread_mutex_init(&t->lock, NULL);
	t->folder = model_files_ref(f);
	t->index_rel = v->model ? index_rel(v->model) : NULL;
	if (v->model && v->model->index_path && !t->index_rel) {
		model_files_unref(t->folder);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	v->files = t;
	v->ino_files = v->ninodes + 1;
	v->ninodes += FILES_INODES;
	return 0;
}

static int
files_build(struct view *v, struct err *e)
{
	const struct model *base = quant_model_base(v->model);

	return files_setup(v, base ? base->files : v->model->files, e);
}

int
view_files_folder(struct view *v, struct model_files *f, struct err *e)
{
	return files_setup(v, f, e);
}

static void
files_free(struct view *v)
{
	struct view_files *t = v->files;

	if (!t)
		return;
	table_free(t);
	model_files_unref(t->folder);
	free(t->index_rel);
	pthread_mutex_destroy(&t->lock);
	free(t);
	v->files = NULL;
}

static uint64_t
files_root(const struct view *v)
{
	return v->ino_files;
}

static int
files_owns(const struct view *v, uint64_t ino)
{
	return v->ino_files && ino >= v->ino_files &&
	       ino - v->ino_files < FILES_INODES;
}

static enum view_kind
files_kind(const struct view *v, uint64_t ino)
{
	const struct view_files *t;
	uint64_t k = ino - v->ino_files;

	if (k == 0)
		return VIEW_DIR;
	t = get(v);
	if (!t || k >= t->nnodes || !exists(t, (uint32_t)k))
		return VIEW_NONE;
	return t->node[k].file ? VIEW_HIDDEN_FILE : VIEW_DIR;
}

static uint64_t
files_lookup(const struct view *v, uint64_t parent, const char *name,
	     size_t len)
{
	const struct view_files *t = get(v);
	uint64_t p = parent - v->ino_files;
	long k;

	if (!t)
		return VIEW_INO_AGAIN;	/* not built: out of memory */
	if (p >= t->nnodes || t->node[p].file)
		return 0;
	k = find(t, (uint32_t)p, name, len);
	if (k < 0 || !exists(t, (uint32_t)k))
		return 0;
	return v->ino_files + (uint64_t)k;
}

static uint64_t
files_nchildren(const struct view *v, uint64_t dir)
{
	struct view_files *t = get(v);
	uint64_t k = dir - v->ino_files;

	if (!t || k >= t->nnodes || t->node[k].file)
		return 0;
	if (k == 0 && t->probes) {
		probe_root(t);
		return t->probed ? t->nroot_vis : 0;
	}
	return t->node[k].n;
}

static uint64_t
files_child(const struct view *v, uint64_t dir, uint64_t i)
{
	const struct view_files *t;
	uint64_t k = dir - v->ino_files;

	if (i >= files_nchildren(v, dir))
		return 0;
	t = v->files;
	if (k == 0 && t->probes)
		return v->ino_files + t->root_vis[i];
	return v->ino_files + t->kids[t->node[k].first + i];
}

static size_t
files_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const struct view_files *t;
	uint64_t k = ino - v->ino_files;
	size_t n = 0;

	if (k == 0) {
		memcpy(out, FILES_DIR, sizeof(FILES_DIR));
		return sizeof(FILES_DIR) - 1;
	}
	t = get(v);
	if (t && k < t->nnodes && t->node[k].len <= VIEW_NAME_MAX) {
		n = t->node[k].len;
		memcpy(out, t->node[k].name, n);
	}
	out[n] = '\0';
	return n;
}

/* stat(): the table built (its listing, its names), a file's size.  0,
 * or -ENOMEM (never a size of 0 for a file that is not empty). */
static int
files_prepare(const struct view *v, uint64_t ino, uint64_t *size)
{
	const struct view_files *t = get(v);
	const struct vf_file *x;
	int rc;

	*size = 0;
	if (!t)
		return -ENOMEM;
	if (!(x = file_of(t, ino - v->ino_files)))
		return 0;
	rc = file_size(t, x, size);
	if (rc)
		*size = 0;
	return rc == -ENOMEM ? rc : 0;
}

static uint64_t
files_size(const struct view *v, uint64_t ino)
{
	const struct view_files *t = get(v);
	const struct vf_file *x;
	uint64_t size;

	if (!t || !(x = file_of(t, ino - v->ino_files)) ||
	    file_size(t, x, &size))
		return 0;
	return size;
}

static int
files_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	   struct view_segs *out)
{
	const struct view_files *t = get(v);
	const struct vf_file *x;
	struct source *src = NULL;
	const char *text = NULL;
	uint64_t len;
	size_t tlen;
	int rc;

	if (!t)
		return -ENOMEM;		/* not built */
	if (!(x = file_of(t, ino - v->ino_files)))
		return -ENOENT;
	rc = file_size(t, x, &len);
	if (rc || off >= len || size == 0)
		return rc;
	if (size > len - off)
		size = (size_t)(len - off);
	switch (x->kind) {
	case VF_SOURCE:
		return view_segs_add_source(out, x->src, off, size);
	case VF_CONFIG:
		return view_segs_add_mem(out, t->config + off, size);
	case VF_PLAIN:
		return view_repack_read(v, t->plain, REPACK_WHOLE, 0, off,
					size, out);
	default:
		break;
	}
	rc = model_files_bytes(t->folder, x->i, &text, &tlen, &src);
	if (rc)
		return rc;
	if (text)
		return view_segs_add_mem(out, text + off, size);
	return view_segs_add_source(out, src, off, size);
}

static uint64_t
files_subdirs(const struct view *v, uint64_t ino)
{
	const struct view_files *t = get(v);
	uint64_t k = ino - v->ino_files;

	return t && k < t->nnodes ? t->node[k].nsub : 0;
}

/* The files whose bytes come from src: a shard, a file opened. */
static void
files_for_source(const struct view *v, const struct source *src,
		 void (*fn)(uint64_t ino, void *arg), void *arg)
{
	const struct view_files *t = v->files;
	size_t k;

	if (!t || !__atomic_load_n(&t->built, __ATOMIC_ACQUIRE))
		return;
	for (k = 1; k < t->nnodes; k++) {
		const struct vf_file *x = file_of(t, k);

		/* the dequantized file: any source may be behind it */
		if (x && ((x->kind == VF_SOURCE && x->src == src) ||
			  (x->kind == VF_FOLDER &&
			   model_files_opened(t->folder, x->i) == src) ||
			  x->kind == VF_PLAIN))
			fn(v->ino_files + k, arg);
	}
}

/* A file's owner, mode and times: its own source's (a shard's, a
 * folder's file's), not the view's: a 0600 file beside a 0644 model
 * stays readable only by its owner. */
static int
files_attr(const struct view *v, uint64_t ino, struct stat *st)
{
	const struct view_files *t = v->files;
	const struct vf_file *x;

	if (!t || !__atomic_load_n(&t->built, __ATOMIC_ACQUIRE) ||
	    !(x = file_of(t, ino - v->ino_files)))
		return -1;
	if (x->kind == VF_FOLDER)
		return model_files_attr(t->folder, x->i, st);
	if (x->kind != VF_SOURCE)
		return -1;
	st->st_mode = x->src->mode;
	st->st_uid = x->src->uid;
	st->st_gid = x->src->gid;
	st->st_mtim = x->src->mtime;
	st->st_ctim = x->src->ctime;
	return 0;
}

const struct view_hidden view_files_dir = {
	.dir = FILES_DIR,
	.build = files_build,
	.free = files_free,
	.root = files_root,
	.owns = files_owns,
	.kind = files_kind,
	.lookup = files_lookup,
	.nchildren = files_nchildren,
	.child = files_child,
	.name = files_name,
	.size = files_size,
	.read = files_read,
	.subdirs = files_subdirs,
	.prepare = files_prepare,
	.for_source = files_for_source,
	.attr = files_attr,
};
