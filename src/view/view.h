/* view.h - the mounted tree of a model: which inodes exist, their names,
 * attributes and bytes.  Built once from a struct model, then immutable
 * and read without locks by every FUSE worker thread.  No FUSE in here.
 *
 * Flat layout (the default): the root directory holds
 *   __metadata__.json   the model's __metadata__ (model->metadata_json)
 *   __summary__.json    summary_json(model, pretty)
 *   __shards__/         sharded sets only: SHARD.json per shard, that
 *                       shard's entry of the summary (its own totals and
 *                       its header's __metadata__)
 *   NAME                per tensor, in model order: exactly its bytes
 *   NAME.json           per tensor: a JSON sidecar (name, dtype, shape, ...)
 *   .npy/NAME.npy       per tensor: an NPY file (npy.h, view_npy.c)
 *   .txt/NAME.txt       per tensor: its values as text (txt.h, view_txt.c)
 *   .stats/NAME.json    per tensor: statistics of its values (tensor_stats.h,
 *                       view_stats.c), computed on first read and kept
 * where NAME = names_encode(tensor name) (see names.h) and SHARD the
 * shard's file name, encoded the same way.  Tree layout (opts.tree): the
 * tensors and their sidecars are spread over directories (layout.h), and
 * .npy/ and .txt/ mirror those directories.
 *
 * Hidden views.  .npy/, .txt/ and .stats/ are "mirror views": a directory
 * at the root that mirrors the tensor directories with one generated file
 * per tensor.  .safetensors/ (virtual safetensors files, repack.h),
 * .stfs/ (stats.json), .png/ (two pictures per tensor, view_png.c) and,
 * for a model with quantized weights, .dequant/
 * .stfs/ (stats.json, log) and, for a model with quantized weights, .dequant/
 * (the view of its dequantized model, model/quant_model.h) are hidden
 * directories of their own shape.  The mirror files of a stored tensor
 * that a quantized weight's logical tensor is named after are the logical
 * tensor's (view_dequant.c).
 * opts.views says whether readdir lists them (VIEW_VIEWS_VISIBLE), only
 * lookup by path finds them (VIEW_VIEWS_HIDDEN, so du, cp -r, tar and find
 * see exactly the model), or they do not exist (VIEW_VIEWS_OFF).
 *
 * Kinds.  A view is a model view (view_model.c) or a tree of model views
 * (view_multi.c); the functions below call the kind's ops table.  Mirror
 * views and hidden directories are tables in view_model.c.  To add one
 * (say .stats/NAME.json):
 *   1. write view_stats.c defining a `const struct view_mirror
 *      view_stats_mirror` (view_kinds.h): its directory name, the suffix
 *      of its files, a size function and a read function that appends
 *      the bytes of a window to a struct view_segs (rendered memory, or
 *      byte ranges of sources that the FUSE adapter splices); a hidden
 *      directory of another shape defines a `struct view_hidden` instead
 *      (its own inode range, lookup, listing, size and read);
 *   2. add one line to the table in view_model.c (and its extern
 *      declaration in view_kinds.h), and the file to src/meson.build.
 * Nothing else changes: inode numbers, lookup, listing, attributes and
 * the read path are generic over the tables.  Every view file is read
 * through view_read(), which answers segments (view_segs.h); adapter.c
 * only executes them.
 *
 * Inode numbers are stable for a given model, layout and views option: 1
 * is the root, 2 and 3 the two root JSON files, 4 + 2i the data file of
 * tensor i and 5 + 2i its sidecar; then __shards__ and its files (sharded
 * sets), the mirror directories, the M view files of each tensor, and
 * 1 + M inodes per directory of the tree layout (M = number of mirror
 * views, 0 with VIEW_VIEWS_OFF); last the hidden directories' ranges
 * (none with VIEW_VIEWS_OFF).  Callers should not rely on that arithmetic;
 * use the functions.
 *
 * Memory: a 4-byte sidecar size per tensor, the layout (16 bytes per
 * tensor, 32 per tree directory, names only where they differ from the
 * tensor name, an open-addressed table of 32-bit slots); sidecars, NPY
 * headers and text are rendered on demand.
 */
#ifndef STFS_VIEW_H
#define STFS_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "view/names.h"
#include "view/view_segs.h"

struct buf;
struct layout;
struct msglog;
struct memo;
struct model_order;
struct err;
struct model;
struct model_tensor;
struct source;
struct view_multi;
struct view_ops;
struct view_safetensors;
struct view_dequant;
struct view_png;
struct view_html;
struct view_files;

#define VIEW_ROOT_INO 1
#define VIEW_NAME_MAX (NAMES_MAX + NAMES_SUFFIX_LEN)	/* 255 */

enum view_kind {
	VIEW_NONE = 0,		/* no such inode */
	VIEW_DIR,
	VIEW_TENSOR,		/* a tensor's bytes, read from its source */
	VIEW_SIDECAR,		/* a tensor's JSON description, rendered */
	VIEW_BLOB,		/* generated once at build: the root JSON files
				   and __shards__/SHARD.json */
	VIEW_MIRROR,		/* a tensor's file in a mirror view (.npy/,
				   .txt/): generated from its bytes */
	VIEW_HIDDEN_FILE,	/* a file of a hidden directory: a virtual
				   safetensors file in .safetensors/ (a
				   header, then source ranges), or
				   .stfs/stats.json and .stfs/log (rendered
				   on every read) */
};

/* Which hidden view directories exist and whether readdir lists them. */
enum view_views {
	VIEW_VIEWS_HIDDEN = 0,	/* reachable by path only (the default) */
	VIEW_VIEWS_VISIBLE,	/* listed too */
	VIEW_VIEWS_OFF,		/* absent */
};

struct view_opts {
	int set_uid, set_gid;	/* else owner/group of the source file */
	uid_t uid;
	gid_t gid;
	int tree;		/* tree layout (layout.h) instead of flat */
	enum view_views views;
	unsigned png_px;	/* .png/ heatmaps: largest side (0: default) */
	unsigned png_cache_mb;	/* .png/ pictures kept (0: default) */
	/* What the daemon said (base/msglog.h), shown as .stfs/log; NULL:
	 * no such file.  Borrowed: it must outlive the view. */
	struct msglog *log;
};

#define VIEW_PNG_CACHE_MB 128	/* default of png_cache_mb */

/* A file generated once at build (the JSON of one shard). */
struct view_file {
	char *name;		/* NUL-terminated file name */
	size_t name_len;
	char *data;
	size_t len;
};

struct view {
	const struct view_ops *ops;	/* its kind (view_kinds.h) */
	const struct model *model;	/* borrowed; must outlive the view;
					   NULL for a tree of models */
	struct view_multi *multi;	/* a tree of models, else NULL */
	struct view_opts opts;

	uint64_t ninodes;	/* inodes 1..ninodes exist */
	uint64_t total_bytes;	/* sum of the sizes of all files but the
				   hidden views': the model as stored, for
				   statfs */

	/* The rest is a model view's (view_model.c); a tree of models
	 * keeps one model view per model in multi. */
	const struct layout *layout;	/* directories and file names */
	uint32_t *sidecar_sizes;	/* rendered sidecar length, per tensor */

	/* Values computed on first use and kept (memo.h), per tensor: the
	 * .stats/ files and the sha256 xattr; the only state that changes
	 * after the build, behind memo.c's own lock. */
	struct memo *memo_stats, *memo_sha256;

	struct model_order *order;	/* view_hint.c: built on first use */

	char *summary;		/* __summary__.json content */
	size_t summary_len;

	uint64_t ino_shards;	/* the __shards__ directory, 0 if unsharded */
	size_t nshard_files;
	struct view_file *shard_files;	/* one per shard, in model order */

	/* the hidden directories (view_kinds.h); 0 when views are off */
	uint64_t ino_safetensors;	/* .safetensors/ and its files
					   (view_safetensors.c) */
	struct view_safetensors *safetensors;	/* its prefix table, built
						   on first use */
	uint64_t ino_stfs;	/* .stfs/, ino_stfs + 1 its stats.json,
				   ino_stfs + 2 its log (view_stfs.c) */
	uint64_t ino_files;	/* .files/ and its range (view_files.c) */
	struct view_files *files;	/* its table, built on first use */
	uint64_t ino_dequant;	/* .dequant/ (view_dequant.c): the view of
				   the dequantized model, built on first
				   use, its inode c at ino_dequant + c - 1
				   (the rest of the 32-bit inode space is
				   reserved for it); 0 when none */
	struct view_dequant *dequant;
	uint64_t ino_png;	/* .png/ (view_png.c) */
	struct view_png *png;
	uint64_t ino_html;	/* .html/ (view_html.c) */
	struct view_html *html;

	unsigned nmirrors;	/* mirror views (0 when views are off) */
	uint64_t ino_views;	/* mirror view j's directory: ino_views + j */
	uint64_t ino_vfiles;	/* tensor i's file in mirror j:
				   ino_vfiles + nmirrors * i + j */
	uint64_t ino_dirs;	/* tree directory d >= 1:
				   ino_dirs + (1 + nmirrors)(d - 1), its
				   mirror in view j + 1 + j */

	/* Both kinds again.  Root directory and generated files take the
	 * newest times of all sources, the owner of the first one and the
	 * permissions all of them grant; a tensor's files those of its own
	 * source.  Files get the source's read bits (0444 at most),
	 * directories also x. */
	struct timespec mtime, ctime;
	uid_t uid;
	gid_t gid;
	mode_t mode;
};

/* Build the view of m.  Fails (ERR_USAGE) when two tensors get the same
 * path, which only rule 6 (hashed long names) can cause, or with
 * ERR_NO_MEMORY.  0 with *out set, or -1 with *e. */
int view_build(const struct model *m, const struct view_opts *opts,
	       struct view **out, struct err *e);

/* A tree of models: each model under its own mount-relative directory
 * (components joined by '/', each a file name; "" is the root, only for a
 * single model, which then is view_build() with that label).  Intermediate
 * directories exist as needed, directories without models do not.  Every
 * model directory holds the model's view (tensor files, sidecars,
 * __metadata__.json, __summary__.json whose "source" is the label, hidden
 * views); the root also holds a __summary__.json listing the models:
 *   {"format": "stfs-tree", "models": N, "tensors": N,
 *    "model_list": [{"path", "source", "tensors", "parameters"}, ...]}
 * in path order.  Two models at one path, a model inside another's
 * directory, or a model directory named __summary__.json at the root are
 * refused (ERR_USAGE, naming both).  Lookups stay O(1): a model's inodes
 * are its own view's, shifted by its slot (view_multi.c).  The models and
 * their sources are borrowed; dir and label are copied.  files (NULL:
 * none) is the tree's folder (model/model_files.h, a tree's), which the
 * root shows as its .files/ beside its .stfs/ (a ref is taken; not when
 * views are off). */
struct model_files;
struct view_model {
	const char *dir;
	const char *label;
	const struct model *model;
};

int view_build_multi(const struct view_model *models, size_t n,
		     struct model_files *files, const struct view_opts *opts,
		     struct view **out, struct err *e);

void view_free(struct view *v);

/* What an inode is (VIEW_NONE when it does not exist). */
enum view_kind view_kind(const struct view *v, uint64_t ino);

/* 1 when ino must be opened with direct_io, its pages never cached: its
 * content changes while mounted (.stfs/stats.json of a remote model), or
 * its first read computes over a whole tensor from a remote source
 * (.stats/ of a model that has a file of the first kind): a read through
 * the page cache arrives as readahead, which the kernel never
 * interrupts, so a reader's Ctrl-C would not reach the computation (it
 * went on for minutes).  ino 0: 1 when any file is (then opens must
 * reach the file system). */
int view_volatile(const struct view *v, uint64_t ino);

/* Inode of name[0..len) in directory parent, or 0 when absent (or when
 * parent is not a directory), or VIEW_INO_AGAIN when it cannot tell now:
 * a directory built on first use (.safetensors/, .dequant/) could not be
 * built, or a file's size not computed, for want of memory; nothing is
 * kept, and the next lookup tries again.  O(1) once built. */
uint64_t view_lookup(const struct view *v, uint64_t parent, const char *name,
		     size_t len);

/* view_lookup()'s "out of memory, ask again": never an inode (inodes are
 * below 2^63, view_multi.c). */
#define VIEW_INO_AGAIN UINT64_MAX

/* The k-th entry (0-based, "." and ".." not counted) of directory dir, or
 * 0 past the end.  Root order: the root JSON files, __shards__ (sharded
 * sets), the subdirectories (tree layout), then per tensor its data file
 * and its sidecar, in model order, and last the mirror view directories
 * when opts.views is VIEW_VIEWS_VISIBLE.  Other directories:
 * subdirectories, then the files. */
uint64_t view_child(const struct view *v, uint64_t dir, uint64_t k);

/* Number of entries of directory dir (as view_child counts them). */
uint64_t view_nchildren(const struct view *v, uint64_t dir);

/* File name of ino, NUL-terminated in out; returns its length (0 for the
 * root or an unknown inode). */
size_t view_name(const struct view *v, uint64_t ino,
		 char out[VIEW_NAME_MAX + 1]);

/* Attributes of ino (see struct view for owner, mode and times).  0, or
 * -ENOENT for an unknown inode, or -ENOMEM when what the attributes say
 * (a virtual file's size, a directory built on first use) could not be
 * computed now: nothing is kept, and the next call tries again.  Every
 * inode the kernel learns of is stat'ed first (lookup, READDIRPLUS), so
 * after a stat of ino that succeeded its size, listing and lookups need
 * no memory they could fail to get. */
int view_stat(const struct view *v, uint64_t ino, struct stat *st);

/* File size of ino (0 for directories and unknown inodes). */
uint64_t view_size(const struct view *v, uint64_t ino);

/* The tensor behind a VIEW_TENSOR, VIEW_SIDECAR or VIEW_MIRROR inode,
 * else NULL. */
const struct model_tensor *view_tensor(const struct view *v, uint64_t ino);

/* Where the tensor bytes behind a VIEW_TENSOR or VIEW_MIRROR inode live: *src, absolute *offset and *len.  0, or -1 for another
 * kind of inode. */
int view_data(const struct view *v, uint64_t ino, struct source **src,
	      uint64_t *offset, uint64_t *len);

/* Bytes [off, off + size) of file ino, capped at its end, as segments
 * (out is reset first; out->len is the reply's length, 0 at or past the
 * end).  0, or -ENOENT (no such inode), -EISDIR, -ENOMEM, -EIO (a source
 * read for rendering failed, or the source changed: source_verify()).
 * Bytes of SOURCE segments are not read here: the caller reads them and
 * must call source_verify() on their source afterwards. */
int view_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	      struct view_segs *out);

/* Call fn(ino, arg) for every file whose bytes come from src (tensor
 * files and their mirror view files), e.g. to drop the kernel's cached
 * pages once src changed. */
void view_for_source(const struct view *v, const struct source *src,
		     void (*fn)(uint64_t ino, void *arg), void *arg);

/* Content of a VIEW_BLOB inode (not owned by the caller), else NULL. */
const char *view_blob(const struct view *v, uint64_t ino, size_t *len);

/* Append the sidecar of a VIEW_TENSOR or VIEW_SIDECAR inode's tensor to
 * out: pretty JSON (2-space indent, jansson's layout) with a trailing
 * newline; keys name, dtype, shape, data_offsets, nbytes, numel, offset,
 * numpy, decode (only when numpy is null), source.  0, or -1 (no memory,
 * or not a tensor inode). */
int view_render_sidecar(const struct view *v, uint64_t ino, struct buf *out);

/* Extended attributes of a VIEW_TENSOR inode:
 *   user.safetensors.name    the exact tensor name (may hold NUL)
 *   user.safetensors.dtype   "F32"
 *   user.safetensors.shape   compact JSON array: "[2,3]", "[]"
 *   user.safetensors.offset  absolute byte offset in the source, decimal
 *   user.safetensors.nbytes  byte length, decimal
 *   user.safetensors.sha256  lowercase hex SHA-256 of the tensor's bytes,
 *                            computed on first get and kept; not listed
 *                            (it reads the whole tensor)
 * Other inodes have none. */

/* Append the names, each followed by a NUL (the listxattr(2) format). */
int view_xattr_list(const struct view *v, uint64_t ino, struct buf *out);

/* Append the value of xattr name (NUL-terminated).  0, 1 when ino has no
 * such attribute, -1 when out of memory, -2 when the source could not be
 * read (sha256); -3 when it must be computed and this thread's asker may
 * not wait, -4 when the asker is gone (base/memo.h). */
int view_xattr_get(const struct view *v, uint64_t ino, const char *name,
		   struct buf *out);

#endif
