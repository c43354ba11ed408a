/* view_model.c - the view of one model (view_model_ops, view_kinds.h):
 * the immutable node table of a mounted model (inode numbers, lookup,
 * listing, attributes) and what each file holds.  The mirror views and
 * the hidden directories are tables of kinds (view_kinds.h) this file
 * hands their inodes to; sidecars and xattrs are view_meta.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/memo.h"
#include "model/model.h"
#include "model/summary.h"
#include "source/source.h"
#include "view/layout.h"
#include "view/names.h"
#include "view/view.h"
#include "view/view_fetch.h"
#include "view/view_hint.h"
#include "view/view_kinds.h"
#include "view/view_meta.h"

#define META_NAME "__metadata__.json"
#define SUMMARY_NAME "__summary__.json"
#define SHARDS_NAME "__shards__"

#define INO_META 2
#define INO_SUMMARY 3
#define INO_FIRST_TENSOR 4	/* tensor i: 4 + 2i data, 5 + 2i sidecar */

/* The mirror views, in listing and numbering order.  A new mirror view
 * is one line here (view_kinds.h). */
static const struct view_mirror *const mirrors[] = {
	&view_npy_mirror,
	&view_txt_mirror,
	&view_stats_mirror,
};

#define NMIRRORS (sizeof(mirrors) / sizeof(mirrors[0]))

/* The hidden directories of their own shape, listed (views=visible) after
 * the mirror views and numbered after every other inode, in this order.
 * A new one is one line here (view_kinds.h). */
static const struct view_hidden *const hiddens[] = {
	&view_safetensors_dir,
	&view_stfs_dir,
	&view_png_dir,
	&view_html_dir,
	&view_files_dir,
	&view_dequant_dir,
};

#define NHIDDENS (sizeof(hiddens) / sizeof(hiddens[0]))

/* The hidden directory that owns ino, else NULL. */
static const struct view_hidden *
hidden_of(const struct view *v, uint64_t ino)
{
	size_t j;

	for (j = 0; j < NHIDDENS; j++)
		if (hiddens[j]->owns(v, ino))
			return hiddens[j];
	return NULL;
}

/* Which tree a directory or view file belongs to: the main tree, or
 * mirror view tree - 1. */
#define TREE_MAIN 0

/* What an inode is: its kind, and the tensor or directory behind it. */
struct node {
	enum view_kind kind;
	unsigned tree;		/* directories and mirror files */
	uint32_t idx;		/* tensor index, or layout directory */
	int shards;		/* the __shards__ directory */
};

static inline uint64_t
ntensors(const struct view *v)
{
	return v->model->ntensors;
}

/* The __shards__/SHARD.json behind ino, else NULL. */
static const struct view_file *
shard_file(const struct view *v, uint64_t ino)
{
	if (!v->ino_shards || ino <= v->ino_shards ||
	    ino > v->ino_shards + v->nshard_files)
		return NULL;
	return &v->shard_files[ino - v->ino_shards - 1];
}

/* Classify ino; 0, or -1 when it does not exist. */
static int
classify(const struct view *v, uint64_t ino, struct node *n)
{
	const struct view_hidden *h;
	uint64_t k;

	memset(n, 0, sizeof(*n));
	if (ino == VIEW_ROOT_INO) {
		n->kind = VIEW_DIR;
		return 0;
	}
	if (ino == INO_META || ino == INO_SUMMARY || shard_file(v, ino)) {
		n->kind = VIEW_BLOB;
		return 0;
	}
	if (ino >= INO_FIRST_TENSOR &&
	    ino < INO_FIRST_TENSOR + 2 * ntensors(v)) {
		k = ino - INO_FIRST_TENSOR;
		n->kind = k % 2 ? VIEW_SIDECAR : VIEW_TENSOR;
		n->idx = (uint32_t)(k / 2);
		return 0;
	}
	if (ino && ino == v->ino_shards) {
		n->kind = VIEW_DIR;
		n->shards = 1;
		return 0;
	}
	if (ino >= v->ino_views && ino < v->ino_views + v->nmirrors) {
		n->kind = VIEW_DIR;
		n->tree = 1 + (unsigned)(ino - v->ino_views);
		return 0;
	}
	if (ino >= v->ino_vfiles && ino < v->ino_dirs) {
		k = ino - v->ino_vfiles;
		n->kind = VIEW_MIRROR;
		n->tree = 1 + (unsigned)(k % v->nmirrors);
		n->idx = (uint32_t)(k / v->nmirrors);
		return 0;
	}
	if ((h = hidden_of(v, ino))) {
		n->kind = h->kind(v, ino);
		return n->kind == VIEW_NONE ? -1 : 0;
	}
	if (ino >= v->ino_dirs && ino <= v->ninodes) {
		k = ino - v->ino_dirs;
		n->kind = VIEW_DIR;
		n->tree = (unsigned)(k % (1 + v->nmirrors));
		n->idx = (uint32_t)(1 + k / (1 + v->nmirrors));
		return 0;
	}
	return -1;
}

static enum view_kind
view_model_kind(const struct view *v, uint64_t ino)
{
	struct node n;

	if (classify(v, ino, &n))
		return VIEW_NONE;
	return n.kind;
}

static int
has_tensor(enum view_kind k)
{
	return k == VIEW_TENSOR || k == VIEW_SIDECAR || k == VIEW_MIRROR;
}

static const struct model_tensor *
view_model_tensor(const struct view *v, uint64_t ino)
{
	struct node n;

	if (classify(v, ino, &n) || !has_tensor(n.kind))
		return NULL;
	return &v->model->tensors[n.idx];
}

/* Inodes of tensor i's files (its file in tree t for a mirror) and of
 * directory d's faces. */
static uint64_t
tensor_ino(const struct view *v, uint32_t i, enum view_kind k, unsigned t)
{
	switch (k) {
	case VIEW_TENSOR:
		return INO_FIRST_TENSOR + 2 * (uint64_t)i;
	case VIEW_SIDECAR:
		return INO_FIRST_TENSOR + 2 * (uint64_t)i + 1;
	default:
		return v->ino_vfiles + v->nmirrors * (uint64_t)i + t - 1;
	}
}

static uint64_t
dir_ino(const struct view *v, uint32_t d, unsigned t)
{
	if (d == LAYOUT_ROOT)
		return t == TREE_MAIN ? VIEW_ROOT_INO : v->ino_views + t - 1;
	return v->ino_dirs + (1 + v->nmirrors) * (uint64_t)(d - 1) + t;
}

/* The directory name and file suffix of tree t. */
static const char *
tree_suffix(unsigned t)
{
	return t == TREE_MAIN ? NAMES_SUFFIX : mirrors[t - 1]->suffix;
}

/* Mirror directories listed at the root. */
static uint64_t
listed_mirrors(const struct view *v)
{
	return v->opts.views == VIEW_VIEWS_VISIBLE ? v->nmirrors : 0;
}

/* Hidden directories listed at the root (after the mirror views): their
 * number, and the k-th one's inode. */
static uint64_t
listed_hiddens(const struct view *v)
{
	uint64_t n = 0;
	size_t j;

	if (v->opts.views != VIEW_VIEWS_VISIBLE)
		return 0;
	for (j = 0; j < NHIDDENS; j++)
		n += hiddens[j]->root(v) != 0;
	return n;
}

static uint64_t
listed_hidden(const struct view *v, uint64_t k)
{
	size_t j;

	for (j = 0; j < NHIDDENS; j++)
		if (hiddens[j]->root(v) && k-- == 0)
			return hiddens[j]->root(v);
	return 0;
}

/* --- lookup ---------------------------------------------------------------- */

static int
is(const char *name, size_t len, const char *lit)
{
	return len == strlen(lit) && memcmp(name, lit, len) == 0;
}

static int
ends(const char *name, size_t len, const char *suffix, size_t slen)
{
	return len > slen && memcmp(name + len - slen, suffix, slen) == 0;
}

static uint64_t
view_model_lookup(const struct view *v, uint64_t parent, const char *name,
		  size_t len)
{
	const struct view_hidden *hd = hidden_of(v, parent);
	struct node n;
	enum layout_hit h;
	const char *suffix;
	size_t slen, j;
	uint32_t idx;

	if (hd)
		return hd->lookup(v, parent, name, len);
	if (classify(v, parent, &n) || n.kind != VIEW_DIR)
		return 0;
	if (n.shards) {
		/* A handful of shards: a scan is fine. */
		for (j = 0; j < v->nshard_files; j++)
			if (v->shard_files[j].name_len == len &&
			    memcmp(v->shard_files[j].name, name, len) == 0)
				return v->ino_shards + 1 + j;
		return 0;
	}
	if (n.tree == TREE_MAIN && n.idx == LAYOUT_ROOT) {
		if (is(name, len, META_NAME))
			return INO_META;
		if (is(name, len, SUMMARY_NAME))
			return INO_SUMMARY;
		if (v->ino_shards && is(name, len, SHARDS_NAME))
			return v->ino_shards;
		/* Hidden views are found by name even when not listed. */
		for (j = 0; j < v->nmirrors; j++)
			if (is(name, len, mirrors[j]->dir))
				return v->ino_views + j;
		for (j = 0; j < NHIDDENS; j++)
			if (hiddens[j]->root(v) &&
			    is(name, len, hiddens[j]->dir))
				return hiddens[j]->root(v);
	}
	/* Encoded tensor names never end in ".json" (rule 3), and no tree
	 * component holds a '.', so the suffix always means "this file of
	 * the tensor before it"; in a mirror view every file has one. */
	suffix = tree_suffix(n.tree);
	slen = strlen(suffix);
	if (ends(name, len, suffix, slen)) {
		h = layout_find(v->layout, n.idx, name, len - slen, &idx);
		if (h == LAYOUT_TENSOR)
			return tensor_ino(v, idx, n.tree == TREE_MAIN ?
					  VIEW_SIDECAR : VIEW_MIRROR, n.tree);
		if (n.tree != TREE_MAIN)
			return 0;
	}
	h = layout_find(v->layout, n.idx, name, len, &idx);
	if (h == LAYOUT_DIR)
		return dir_ino(v, idx, n.tree);
	if (h == LAYOUT_TENSOR && n.tree == TREE_MAIN)
		return tensor_ino(v, idx, VIEW_TENSOR, TREE_MAIN);
	return 0;
}

/* --- directory listing and names --------------------------------------- */

/* Entries before the subdirectories (root only) and after the files. */
static uint64_t
root_head(const struct view *v)
{
	return 2 + (v->ino_shards != 0);
}

static uint64_t
view_model_nchildren(const struct view *v, uint64_t dir)
{
	const struct view_hidden *h = hidden_of(v, dir);
	const struct layout_dir *d;
	struct node n;

	if (h)
		return h->nchildren(v, dir);
	if (classify(v, dir, &n) || n.kind != VIEW_DIR)
		return 0;
	if (n.shards)
		return v->nshard_files;
	d = &v->layout->dirs[n.idx];
	if (n.tree != TREE_MAIN)
		return (uint64_t)d->nsub + d->nfile;
	return (uint64_t)d->nsub + 2 * (uint64_t)d->nfile +
	       (n.idx == LAYOUT_ROOT ? root_head(v) + listed_mirrors(v) +
		listed_hiddens(v) : 0);
}

static uint64_t
view_model_child(const struct view *v, uint64_t dir, uint64_t k)
{
	const struct view_hidden *h = hidden_of(v, dir);
	const struct layout *l = v->layout;
	const struct layout_dir *d;
	struct node n;

	if (h)
		return h->child(v, dir, k);
	if (k >= view_model_nchildren(v, dir))
		return 0;
	classify(v, dir, &n);
	if (n.shards)
		return v->ino_shards + 1 + k;
	d = &l->dirs[n.idx];
	if (n.tree == TREE_MAIN && n.idx == LAYOUT_ROOT) {
		if (k < 2)
			return INO_META + k;
		/* __shards__ is listed third but numbered after the
		 * tensors, so tensor inodes do not depend on it. */
		if (v->ino_shards && k == 2)
			return v->ino_shards;
		k -= root_head(v);
		/* mirror views come last: out of the way of `ls -f` */
		if (k >= d->nsub + 2 * (uint64_t)d->nfile) {
			k -= d->nsub + 2 * (uint64_t)d->nfile;
			if (k < listed_mirrors(v))
				return v->ino_views + k;
			return listed_hidden(v, k - listed_mirrors(v));
		}
	}
	if (k < d->nsub)
		return dir_ino(v, l->subs[d->sub + k], n.tree);
	k -= d->nsub;
	if (n.tree != TREE_MAIN)
		return tensor_ino(v, layout_file(l, n.idx, k), VIEW_MIRROR,
				  n.tree);
	return tensor_ino(v, layout_file(l, n.idx, k / 2),
			  k % 2 ? VIEW_SIDECAR : VIEW_TENSOR, TREE_MAIN);
}

static size_t
view_model_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const struct view_hidden *h = hidden_of(v, ino);
	const struct layout_leaf *lf;
	const char *s = NULL, *suffix = NULL;
	struct node n;
	size_t len = 0;

	if (h)
		return h->name(v, ino, out);
	if (classify(v, ino, &n))
		goto none;
	switch (n.kind) {
	case VIEW_DIR:
		if (n.shards) {
			s = SHARDS_NAME;
		} else if (n.idx != LAYOUT_ROOT) {
			s = v->layout->dirs[n.idx].name;
			len = v->layout->dirs[n.idx].name_len;
		} else if (n.tree != TREE_MAIN) {
			s = mirrors[n.tree - 1]->dir;
		}
		break;
	case VIEW_BLOB:
		if (shard_file(v, ino)) {
			s = shard_file(v, ino)->name;
			len = shard_file(v, ino)->name_len;
		} else {
			s = ino == INO_META ? META_NAME : SUMMARY_NAME;
		}
		break;
	default:
		lf = &v->layout->leaves[n.idx];
		s = lf->name;
		len = lf->name_len;
		suffix = n.kind == VIEW_SIDECAR ? NAMES_SUFFIX :
			 n.kind == VIEW_MIRROR ? mirrors[n.tree - 1]->suffix :
			 "";
		break;
	}
	if (!s)
		goto none;
	if (!len)
		len = strlen(s);
	memcpy(out, s, len);
	if (suffix) {
		memcpy(out + len, suffix, strlen(suffix));
		len += strlen(suffix);
	}
	out[len] = '\0';
	return len;
none:
	out[0] = '\0';
	return 0;
}

/* --- attributes and content -------------------------------------------- */

static uint64_t
view_model_size(const struct view *v, uint64_t ino)
{
	const struct view_hidden *h = hidden_of(v, ino);
	const struct model_tensor *mt;
	const struct view *mv;
	struct node n;

	if (h)
		return h->size(v, ino);
	if (classify(v, ino, &n))
		return 0;
	mt = has_tensor(n.kind) ? &v->model->tensors[n.idx] : NULL;
	switch (n.kind) {
	case VIEW_BLOB:
		if (ino == INO_META)
			return strlen(v->model->metadata_json);
		if (ino == INO_SUMMARY)
			return v->summary_len;
		return shard_file(v, ino)->len;
	case VIEW_TENSOR:
		return model_tensor_nbytes(mt);
	case VIEW_SIDECAR:
		return v->sidecar_sizes[n.idx];
	case VIEW_MIRROR:
		/* a replaced tensor's mirror files are its logical one's (a
		 * stat that succeeded built what that takes) */
		mt = view_dequant_mirror(v, n.idx, &mv);
		return mt ? mirrors[n.tree - 1]->size(mv, mt) : 0;
	default:
		return 0;
	}
}

/* Subdirectories of a directory inode. */
static uint64_t
dir_subdirs(const struct view *v, uint64_t ino)
{
	const struct view_hidden *h = hidden_of(v, ino);
	struct node n;
	uint64_t k;

	if (h)
		return h->subdirs ? h->subdirs(v, ino) : 0;
	if (classify(v, ino, &n) || n.kind != VIEW_DIR || n.shards)
		return 0;
	k = v->layout->dirs[n.idx].nsub;
	if (ino == VIEW_ROOT_INO)	/* listed mirror views, __shards__ */
		k += listed_mirrors(v) + listed_hiddens(v) +
		     (v->ino_shards != 0);
	return k;
}

static int
view_model_stat(const struct view *v, uint64_t ino, struct stat *st)
{
	const struct view_hidden *h = hidden_of(v, ino);
	const struct model_tensor *mt;
	const struct view *mv;
	mode_t perm = v->mode;
	struct stat own;
	enum view_kind k;
	struct node n;
	uint64_t size = 0;
	int rc;

	if (h && h->prepare && (rc = h->prepare(v, ino, &size)) != 0)
		return rc;
	k = view_model_kind(v, ino);
	if (k == VIEW_NONE)
		return -ENOENT;
	/* a mirror file of a tensor that .dequant/ may replace: what it
	 * stands for is known once .dequant/ is built */
	if (k == VIEW_MIRROR && !classify(v, ino, &n) &&
	    !view_dequant_mirror(v, n.idx, &mv))
		return -ENOMEM;
	view_stat_begin(v, ino, st);
	mt = view_model_tensor(v, ino);
	if (mt) {
		/* A tensor's files carry the times of the shard they live in. */
		const struct source *src = v->model->shards[mt->shard].src;

		st->st_mtim = src->mtime;
		st->st_ctim = src->ctime;
		perm = src->mode;
		st->st_uid = v->opts.set_uid ? v->opts.uid : src->uid;
		st->st_gid = v->opts.set_gid ? v->opts.gid : src->gid;
	}
	if (h && h->mtime && h->mtime(v, ino, &st->st_mtim))
		st->st_ctim = st->st_mtim;
	if (h && h->attr && h->attr(v, ino, &own) == 0)
		view_stat_own(v, &own, st, &perm);
	st->st_atim = st->st_mtim;
	if (k == VIEW_DIR)
		view_stat_end(st, 1, perm, dir_subdirs(v, ino), 0);
	else
		view_stat_end(st, 0, perm, 0, h && h->prepare ? size :
			      view_model_size(v, ino));
	return 0;
}

static int
view_model_data(const struct view *v, uint64_t ino, struct source **src,
		uint64_t *offset, uint64_t *len)
{
	const struct model_tensor *mt = view_model_tensor(v, ino);
	enum view_kind k = view_model_kind(v, ino);

	if (!mt || k == VIEW_SIDECAR)
		return -1;
	*src = v->model->shards[mt->shard].src;
	*offset = model_tensor_offset(v->model, mt);
	*len = model_tensor_nbytes(mt);
	return 0;
}

static const char *
view_model_blob(const struct view *v, uint64_t ino, size_t *len)
{
	if (ino == INO_META) {
		*len = strlen(v->model->metadata_json);
		return v->model->metadata_json;
	}
	if (ino == INO_SUMMARY) {
		*len = v->summary_len;
		return v->summary;
	}
	if (shard_file(v, ino)) {
		*len = shard_file(v, ino)->len;
		return shard_file(v, ino)->data;
	}
	return NULL;
}

/* --- build ------------------------------------------------------------- */

/* __shards__/SHARD.json: the summary's per-shard objects, each rendered
 * once (a sharded set has few shards), named like tensors. */
static int
build_shards(struct view *v, struct err *e)
{
	const struct model *m = v->model;
	char enc[NAMES_MAX + 1];
	size_t j, n;

	v->shard_files = calloc(m->nshards, sizeof(*v->shard_files));
	if (!v->shard_files)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	v->nshard_files = m->nshards;
	for (j = 0; j < m->nshards; j++) {
		struct view_file *f = &v->shard_files[j];
		const char *sn = m->shards[j].name;

		n = names_encode(sn, strlen(sn), enc);
		f->name = malloc(n + NAMES_SUFFIX_LEN + 1);
		f->data = summary_shard_json(m, j);
		if (!f->name || !f->data)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		memcpy(f->name, enc, n);
		memcpy(f->name + n, NAMES_SUFFIX, NAMES_SUFFIX_LEN + 1);
		f->name_len = n + NAMES_SUFFIX_LEN;
		f->len = strlen(f->data);
		view_total_add(v, f->len);
		for (n = 0; n < j; n++)
			if (strcmp(v->shard_files[n].name, f->name) == 0)
				return err_set(e, ERR_USAGE, "two shards map "
					       "to the file name %s", f->name);
	}
	return 0;
}

static int
build_sidecar_sizes(struct view *v, struct err *e)
{
	struct buf scratch = BUF_INIT;
	size_t i;

	for (i = 0; i < v->model->ntensors; i++) {
		scratch.len = 0;
		if (view_meta_sidecar(v->model, &v->model->tensors[i],
				      &scratch)) {
			buf_free(&scratch);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		v->sidecar_sizes[i] = (uint32_t)scratch.len;
		view_total_add(v, scratch.len);
		view_total_add(v, model_tensor_nbytes(&v->model->tensors[i]));
	}
	buf_free(&scratch);
	return 0;
}

static void view_model_free(struct view *v);

int
view_model_build(const struct model *m, const struct view_opts *opts,
		 const char *label, struct view **out, struct err *e)
{
	struct layout *l = NULL;
	struct view *v;
	size_t i;

	/* Inodes and table slots are 32-bit tensor indexes underneath. */
	if (m->ntensors > (UINT32_MAX - INO_FIRST_TENSOR) / (2 + NMIRRORS))
		return err_set(e, ERR_USAGE, "too many tensors (%zu)",
			       m->ntensors);
	v = calloc(1, sizeof(*v));
	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	v->ops = &view_model_ops;
	v->model = m;
	if (opts)
		v->opts = *opts;
	if (layout_build(m, v->opts.tree, &l, e))
		goto fail;
	v->layout = l;
	v->sidecar_sizes = calloc(m->ntensors ? m->ntensors : 1,
				  sizeof(*v->sidecar_sizes));
	/* computed on demand: .stats/ files and the sha256 xattr */
	v->memo_stats = memo_new(m->ntensors);
	v->memo_sha256 = memo_new(m->ntensors);
	v->summary = summary_json_source(m, label);
	if (!v->sidecar_sizes || !v->summary || !v->memo_stats ||
	    !v->memo_sha256) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	v->summary_len = strlen(v->summary);
	v->ninodes = INO_FIRST_TENSOR - 1 + 2 * (uint64_t)m->ntensors;
	if (m->sharded) {
		v->ino_shards = v->ninodes + 1;
		v->ninodes += 1 + m->nshards;
	}
	v->nmirrors = v->opts.views == VIEW_VIEWS_OFF ? 0 : NMIRRORS;
	v->ino_views = v->ninodes + 1;
	v->ino_vfiles = v->ino_views + v->nmirrors;
	v->ino_dirs = v->ino_vfiles + v->nmirrors * (uint64_t)m->ntensors;
	v->ninodes = v->ino_dirs - 1 +
		     (1 + v->nmirrors) * (uint64_t)(l->ndirs - 1);
	for (i = 0; v->opts.views != VIEW_VIEWS_OFF && i < NHIDDENS; i++)
		if (hiddens[i]->build(v, e))
			goto fail;
	if (build_sidecar_sizes(v, e) || (m->sharded && build_shards(v, e)))
		goto fail;
	view_total_add(v, strlen(m->metadata_json) + v->summary_len);

	/* Generated files and directories tell about every shard: only
	 * who may read all of them may read those. */
	v->mode = 0777;
	for (i = 0; i < m->nshards; i++) {
		const struct source *src = m->shards[i].src;

		v->mode &= src->mode;
		if (i == 0 || view_newer(&src->mtime, &v->mtime))
			v->mtime = src->mtime;
		if (i == 0 || view_newer(&src->ctime, &v->ctime))
			v->ctime = src->ctime;
	}
	if (m->nshards) {
		v->uid = m->shards[0].src->uid;
		v->gid = m->shards[0].src->gid;
	}
	if (v->opts.set_uid)
		v->uid = v->opts.uid;
	if (v->opts.set_gid)
		v->gid = v->opts.gid;
	*out = v;
	return 0;
fail:
	view_model_free(v);
	return -1;
}

static void
view_model_free(struct view *v)
{
	size_t i;

	for (i = 0; i < NHIDDENS; i++)
		if (hiddens[i]->free)
			hiddens[i]->free(v);
	layout_free((struct layout *)v->layout);
	for (i = 0; i < v->nshard_files; i++) {
		free(v->shard_files[i].name);
		free(v->shard_files[i].data);
	}
	free(v->shard_files);
	free(v->sidecar_sizes);
	free(v->summary);
	memo_free(v->memo_stats);
	memo_free(v->memo_sha256);
	view_hint_free(v);
	free(v);
}

/* --- contents ---------------------------------------------------------- */

static int
view_model_is_volatile(const struct view *v, uint64_t ino)
{
	const struct view_hidden *h;
	struct node n;
	size_t j;

	if (ino == 0) {
		for (j = 0; j < NHIDDENS; j++)
			if (hiddens[j]->is_volatile &&
			    hiddens[j]->is_volatile(v, 0))
				return 1;
		return 0;
	}
	h = hidden_of(v, ino);
	/* a direct mirror file only where opens reach stfs anyway (see
	 * view_mirror.direct) */
	if (!h && classify(v, ino, &n) == 0 && n.kind == VIEW_MIRROR)
		return mirrors[n.tree - 1]->direct &&
		       view_model_is_volatile(v, 0);
	return h && h->is_volatile ? h->is_volatile(v, ino) : 0;
}

static int
view_model_render_sidecar(const struct view *v, uint64_t ino, struct buf *out)
{
	const struct model_tensor *mt = view_model_tensor(v, ino);

	if (!mt)
		return -1;
	return view_meta_sidecar(v->model, mt, out);
}

static int
model_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	   struct view_segs *out)
{
	const struct view_hidden *h = hidden_of(v, ino);
	const struct model_tensor *mt;
	const struct view *mv;
	uint64_t len, base;
	struct source *src;
	const char *mem;
	struct buf *mem_buf;
	struct node n;
	size_t blen, at;

	if (classify(v, ino, &n))
		return -ENOENT;
	if (n.kind == VIEW_DIR)
		return -EISDIR;
	if (h)
		return h->read(v, ino, off, size, out);
	len = view_model_size(v, ino);
	if (off >= len || size == 0)
		return 0;
	if (size > len - off)
		size = (size_t)(len - off);
	switch (n.kind) {
	case VIEW_TENSOR:
		if (view_model_tensor(v, ino)->t->strides) {
			/* a strided view: its elements gathered */
			char *dst = view_segs_render(out, size);

			return !dst ? -ENOMEM : view_fetch(v,
				view_model_tensor(v, ino), off, size, dst);
		}
		view_model_data(v, ino, &src, &base, &len);
		return view_segs_add_source(out, src, base + off, size);
	case VIEW_SIDECAR:
		/* A few hundred bytes, usually read once (the kernel keeps
		 * the page): rendering on demand beats keeping 100k.  The
		 * whole sidecar is rendered, the part asked for kept. */
		mem_buf = view_segs_mem(out);
		if (!mem_buf)
			return -ENOMEM;
		at = mem_buf->len;
		if (view_model_render_sidecar(v, ino, mem_buf) != 0)
			return -ENOMEM;
		if (mem_buf->len - at != len)
			return -EIO;	/* never: sizes are rendered at build */
		return view_segs_add_rendered(out, at + (size_t)off, size);
	case VIEW_BLOB:
		mem = view_model_blob(v, ino, &blen);
		return view_segs_add_mem(out, mem + off, size);
	case VIEW_MIRROR:
		mt = view_dequant_mirror(v, n.idx, &mv);
		if (!mt)
			return -ENOMEM;
		return mirrors[n.tree - 1]->read(mv, mt, off, size, out);
	default:
		return -ENOENT;
	}
}

static int
view_model_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
		struct view_segs *out)
{
	int rc = model_read(v, ino, off, size, out);

	if (rc == 0)
		view_hint_after(v, out);
	return rc;
}

static void
view_model_for_source(const struct view *v, const struct source *src,
		      void (*fn)(uint64_t ino, void *arg), void *arg)
{
	const struct model_tensor *mt;
	uint64_t ino;
	size_t j;

	for (j = 0; j < NHIDDENS; j++)
		if (hiddens[j]->for_source)
			hiddens[j]->for_source(v, src, fn, arg);
	/* the hidden directories are numbered last */
	for (ino = VIEW_ROOT_INO; ino <= v->ninodes; ino++) {
		if (hidden_of(v, ino))
			break;
		mt = view_model_tensor(v, ino);
		if (mt && view_model_kind(v, ino) != VIEW_SIDECAR &&
		    v->model->shards[mt->shard].src == src)
			fn(ino, arg);
	}
}

static int
view_model_xattr_list(const struct view *v, uint64_t ino, struct buf *out)
{
	if (view_model_kind(v, ino) != VIEW_TENSOR)
		return 0;
	return view_meta_xattr_list(out);
}

static int
view_model_xattr_get(const struct view *v, uint64_t ino, const char *name,
		     struct buf *out)
{
	if (view_model_kind(v, ino) != VIEW_TENSOR)
		return 1;
	return view_meta_xattr_get(v, view_model_tensor(v, ino), name, out);
}

const struct view_ops view_model_ops = {
	.kind = view_model_kind,
	.is_volatile = view_model_is_volatile,
	.lookup = view_model_lookup,
	.nchildren = view_model_nchildren,
	.child = view_model_child,
	.name = view_model_name,
	.stat = view_model_stat,
	.size = view_model_size,
	.tensor = view_model_tensor,
	.data = view_model_data,
	.read = view_model_read,
	.for_source = view_model_for_source,
	.blob = view_model_blob,
	.render_sidecar = view_model_render_sidecar,
	.xattr_list = view_model_xattr_list,
	.xattr_get = view_model_xattr_get,
	.free = view_model_free,
	.build = view_model_build,
};
