/* view_kinds.h - the kinds of file trees the view layer is made of, and
 * the tables they fill in (not for users of view.h).
 *
 * A view is one of two kinds, each an ops table that view.c calls through
 * struct view's ops:
 *   view_model_ops   one model (view_model.c)
 *   view_multi_ops   a tree of models, each a model view (view_multi.c),
 *                    and the tree's folder, a view_folder_ops view
 *                    (view_folder.c: the root's .files/, no model)
 * Inside a model view, two more kinds hang off the root:
 *   struct view_mirror   a mirror view: .npy/, .txt/, .stats/ (one file
 *                        per tensor, in the tensor directories' shape)
 *   struct view_hidden   a hidden directory of its own shape: .stfs/,
 *                        .safetensors/, .png/ (its own inode range, lookup,
 *                        listing, size and read)
 * view_model.c holds the two tables of them.  A new one is one file that
 * defines its struct and one line in its table (plus the extern below and
 * the file in src/meson.build).
 *
 * Calls go one way: view.c -> view_multi.c -> view_model.c, view_folder.c
 * (view.c also
 * calls view_model.c directly) -> the mirror and hidden files -> the
 * helpers below them (view_segs.c, view_fetch.c, view_meta.c,
 * view_sha256.c).  No kind calls view.c's public functions.
 */
#ifndef STFS_VIEW_KINDS_H
#define STFS_VIEW_KINDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/count.h"
#include "view/view.h"

struct buf;
struct err;
struct model;
struct model_files;
struct model_tensor;
struct source;

/* --- a kind of view: what view.c's public functions do (view.h) --------- */
struct view_ops {
	enum view_kind (*kind)(const struct view *v, uint64_t ino);
	int (*is_volatile)(const struct view *v, uint64_t ino);
	uint64_t (*lookup)(const struct view *v, uint64_t parent,
			   const char *name, size_t len);
	uint64_t (*nchildren)(const struct view *v, uint64_t dir);
	uint64_t (*child)(const struct view *v, uint64_t dir, uint64_t k);
	size_t (*name)(const struct view *v, uint64_t ino,
		       char out[VIEW_NAME_MAX + 1]);
	int (*stat)(const struct view *v, uint64_t ino, struct stat *st);
	uint64_t (*size)(const struct view *v, uint64_t ino);
	const struct model_tensor *(*tensor)(const struct view *v,
					     uint64_t ino);
	int (*data)(const struct view *v, uint64_t ino, struct source **src,
		    uint64_t *offset, uint64_t *len);
	int (*read)(const struct view *v, uint64_t ino, uint64_t off,
		    size_t size, struct view_segs *out);
	void (*for_source)(const struct view *v, const struct source *src,
			   void (*fn)(uint64_t ino, void *arg), void *arg);
	const char *(*blob)(const struct view *v, uint64_t ino, size_t *len);
	int (*render_sidecar)(const struct view *v, uint64_t ino,
			      struct buf *out);
	int (*xattr_list)(const struct view *v, uint64_t ino, struct buf *out);
	int (*xattr_get)(const struct view *v, uint64_t ino, const char *name,
			 struct buf *out);
	void (*free)(struct view *v);
	/* Build a view of this kind for one model (view_model_build());
	 * NULL for a tree of models.  The .dequant/ directory builds the
	 * view of the dequantized model through it. */
	int (*build)(const struct model *m, const struct view_opts *opts,
		     const char *label, struct view **out, struct err *e);
};

/* The ops of a model view (view_model.c); those of a tree of models are
 * view_multi.c's own. */
extern const struct view_ops view_model_ops;

/* The view of one model, with its __summary__.json "source" saying label
 * (NULL: m->arg). */
int view_model_build(const struct model *m, const struct view_opts *opts,
		     const char *label, struct view **out, struct err *e);

/* A tree of models (view_multi.c); view_build_multi() in view.h, which
 * hands a single model at the root to view_model_build() instead. */
int view_multi_build(const struct view_model *models, size_t n,
		     struct model_files *files, const struct view_opts *opts,
		     struct view **out, struct err *e);

/* The folder f of a tree (model/model_files.h, a tree's) as a view of
 * its own, without a model (view_folder.c): only .files/, at
 * view_folder_root(), taking the tree view's options, owner, mode and
 * times.  0 with *out, or -1 with *e. */
extern const struct view_ops view_folder_ops;
int view_folder_build(struct model_files *f, const struct view *tree,
		      struct view **out, struct err *e);
uint64_t view_folder_root(const struct view *v);

/* --- a mirror view: a root directory `dir` that mirrors the tensor ------
 * directories, with one file per tensor named NAME + suffix. */
struct view_mirror {
	const char *dir;	/* ".npy"; starts with '.', no tensor file
				   or tree directory can have that name
				   (names.h rule 2) */
	const char *suffix;	/* ".npy" */
	/* Size of tensor mt's file. */
	uint64_t (*size)(const struct view *v, const struct model_tensor *mt);
	/* Append bytes [off, off + len) of tensor mt's file (already
	 * clamped to its size, len > 0) to out.  0 or -errno. */
	int (*read)(const struct view *v, const struct model_tensor *mt,
		    uint64_t off, size_t len, struct view_segs *out);
	/* 1: read with direct_io (view_volatile) where the mount has a
	 * volatile file anyway: its first read computes over the whole
	 * tensor, and only a read that is the reader's own request (not
	 * readahead) tells stfs when the reader leaves.  Not in a mount
	 * without one: it would cost every open a round trip (no_open,
	 * adapter.c), and there its sources are local, read at disk speed. */
	int direct;
};

extern const struct view_mirror view_npy_mirror;	/* view_npy.c */
extern const struct view_mirror view_txt_mirror;	/* view_txt.c */
extern const struct view_mirror view_stats_mirror;	/* view_stats.c */

/* --- a hidden directory at a model view's root -------------------------
 * Its inodes are a range of its own, reserved by build after every inode
 * reserved before it; the model view hands every inode the hidden
 * directory owns to its functions.  Optional functions may be NULL. */
struct view_hidden {
	const char *dir;	/* its name at the root: ".stfs"; starts with
				   '.' (names.h rule 2) */
	/* Reserve its inodes from v->ninodes + 1 on (views not off); 0, or
	 * -1 with *e. */
	int (*build)(struct view *v, struct err *e);
	void (*free)(struct view *v);				/* optional */
	/* Its directory's inode, 0 when it does not exist. */
	uint64_t (*root)(const struct view *v);
	/* 1 when ino is in its range. */
	int (*owns)(const struct view *v, uint64_t ino);
	/* The view.h functions, for inodes it owns. */
	enum view_kind (*kind)(const struct view *v, uint64_t ino);
	uint64_t (*lookup)(const struct view *v, uint64_t parent,
			   const char *name, size_t len);
	uint64_t (*nchildren)(const struct view *v, uint64_t dir);
	uint64_t (*child)(const struct view *v, uint64_t dir, uint64_t k);
	size_t (*name)(const struct view *v, uint64_t ino,
		       char out[VIEW_NAME_MAX + 1]);
	uint64_t (*size)(const struct view *v, uint64_t ino);
	/* Bytes [off, off + size) of a file it owns, capped at its end
	 * (its size now: it may change while mounted).  0 or -errno. */
	int (*read)(const struct view *v, uint64_t ino, uint64_t off,
		    size_t size, struct view_segs *out);
	/* Subdirectories of a directory it owns (for the link count). */
	uint64_t (*subdirs)(const struct view *v, uint64_t ino); /* optional */
	/* What stat() of ino needs (a table built on first use, a file's
	 * size), computed now: 0 and a file's size in *size, or -ENOMEM when
	 * it could not be (then nothing is kept, and the next call tries
	 * again; view.h: view_stat).  Without it stat() takes size(). */
	int (*prepare)(const struct view *v, uint64_t ino,
		       uint64_t *size);				/* optional */
	/* view_volatile() for its files; ino 0: whether it has a file that
	 * needs direct_io (adapter.c: then every open reaches stfs). */
	int (*is_volatile)(const struct view *v, uint64_t ino);	/* optional */
	/* 1 with *t the time file ino last changed, when that is its own
	 * (a log: its last message), else 0: the view's. */
	int (*mtime)(const struct view *v, uint64_t ino,
		     struct timespec *t);			/* optional */
	/* view_for_source(): its files whose bytes may come from src. */
	void (*for_source)(const struct view *v, const struct source *src,
			   void (*fn)(uint64_t ino, void *arg),
			   void *arg);				/* optional */
	/* 0 with the owner (st_uid, st_gid), permission bits (st_mode) and
	 * times (st_mtim, st_ctim) of file ino's own source in *st, when
	 * it has one of its own whose these are (.files/: each file's, as
	 * a tensor's files take their shard's), else -1: the view's. */
	int (*attr)(const struct view *v, uint64_t ino,
		    struct stat *st);				/* optional */
};

/* view_safetensors.c, view_stfs.c, view_files.c, view_dequant.c */
extern const struct view_hidden view_safetensors_dir;
extern const struct view_hidden view_stfs_dir;
extern const struct view_hidden view_files_dir;
extern const struct view_hidden view_dequant_dir;
extern const struct view_hidden view_png_dir;		/* view_png.c */
extern const struct view_hidden view_html_dir;		/* view_html.c */

/* .files/ of folder f (a ref is taken) in v, a view without a model
 * (view_folder.c), its inodes from v->ninodes + 1 on (view_files.c).
 * 0, or -1 with *e. */
int view_files_folder(struct view *v, struct model_files *f,
		      struct err *e);

/* The view and tensor whose mirror view files (.npy/, .txt/, .stats/)
 * stand for tensor i of model view v: i itself, or the logical tensor
 * that replaces it in the dequantized model (view_dequant.c); NULL when
 * that model could not be built now, for want of memory. */
const struct model_tensor *view_dequant_mirror(const struct view *v,
					       size_t i,
					       const struct view **mv);

/* --- helpers shared by the kinds --------------------------------------- */

/* Files are readable by whoever may read the source, never more: with
 * allow_other a 0600 model must not become world-readable.  Directories
 * get x wherever they get r. */
static inline mode_t
view_file_mode(mode_t src)
{
	return src & 0444;
}

static inline mode_t
view_dir_mode(mode_t src)
{
	return (src & 0444) | ((src & 0444) >> 2);
}

/* The start of stat of inode ino of v: zeroed, the view's times and
 * owner, 4 KiB blocks (what each kind's stat then makes its own). */
static inline void
view_stat_begin(const struct view *v, uint64_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mtim = v->mtime;
	st->st_ctim = v->ctime;
	st->st_atim = v->mtime;
	st->st_uid = v->uid;
	st->st_gid = v->gid;
	st->st_blksize = 4096;
}

/* The end of it: a directory with nsub subdirectories, or a file of
 * size bytes, read bits from perm (view_dir_mode, view_file_mode). */
static inline void
view_stat_end(struct stat *st, int dir, mode_t perm, uint64_t nsub,
	      uint64_t size)
{
	if (dir) {
		st->st_mode = S_IFDIR | view_dir_mode(perm);
		/* "." and the parent's entry, plus each subdirectory's ".." */
		st->st_nlink = 2 + nsub;
	} else {
		st->st_mode = S_IFREG | view_file_mode(perm);
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)((size + 511) / 512);
	}
}

/* A file with a source of its own (own: a hidden file's attr): its
 * times and owner into st, its mode into *perm; the mount's uid= and
 * gid= stand over the source's owner. */
static inline void
view_stat_own(const struct view *v, const struct stat *own, struct stat *st,
	      mode_t *perm)
{
	st->st_mtim = own->st_mtim;
	st->st_ctim = own->st_ctim;
	*perm = own->st_mode;
	st->st_uid = v->opts.set_uid ? v->opts.uid : own->st_uid;
	st->st_gid = v->opts.set_gid ? v->opts.gid : own->st_gid;
}

/* Add n to v->total_bytes, which stops at UINT64_MAX: a sum over many
 * tensors of up to 2^62 bytes each (format/tensor_size.h) need not fit,
 * and statfs then shows the most it can rather than a wrapped sum. */
static inline void
view_total_add(struct view *v, uint64_t n)
{
	v->total_bytes = count_add(v->total_bytes, n);
}

/* 1 when time a is later than time b (generated files and directories
 * take the newest times of the sources behind them). */
static inline int
view_newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

#endif
