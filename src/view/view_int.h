/* view_int.h - what the files of the view layer share (not for users of
 * view.h): the mirror view table and helpers of the read path.
 */
#ifndef STFS_VIEW_INT_H
#define STFS_VIEW_INT_H

#include <stddef.h>
#include <stdint.h>

#include "view/view.h"

struct buf;
struct err;
struct model_tensor;

/* A mirror view: a root directory `dir` that mirrors the tensor
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
};

/* The registered mirror views (view.c holds the table). */
extern const struct view_mirror view_mirror_npy;	/* view_npy.c */
extern const struct view_mirror view_mirror_txt;	/* view_txt.c */
extern const struct view_mirror view_mirror_stats;	/* view_stats.c */

/* The lowercase hex SHA-256 of tensor mt's bytes appended to out,
 * computed on first use and kept (view_stats.c).  0 or -errno. */
int view_sha256(const struct view *v, const struct model_tensor *mt,
		struct buf *out);

/* The mirror view a VIEW_MIRROR inode belongs to. */
const struct view_mirror *view_mirror_of(const struct view *v, uint64_t ino);


/* Read len bytes of tensor mt at off (relative to its first byte) into
 * dst, for rendering: source_pread(), then source_verify().  0, -EIO. */
int view_fetch(const struct view *v, const struct model_tensor *mt,
	       uint64_t off, size_t len, void *dst);

/* The sidecar of tensor mt, appended to b (view_meta.c). */
int view_sidecar_render(const struct model *m, const struct model_tensor *mt,
			struct buf *b);

/* The tree of models (view_multi.c): what the public functions do when
 * v->multi is set. */
enum view_kind vm_kind(const struct view *v, uint64_t ino);
uint64_t vm_lookup(const struct view *v, uint64_t parent, const char *name,
		   size_t len);
uint64_t vm_nchildren(const struct view *v, uint64_t dir);
uint64_t vm_child(const struct view *v, uint64_t dir, uint64_t k);
size_t vm_name(const struct view *v, uint64_t ino,
	       char out[VIEW_NAME_MAX + 1]);
int vm_stat(const struct view *v, uint64_t ino, struct stat *st);
uint64_t vm_size(const struct view *v, uint64_t ino);
const char *vm_blob(const struct view *v, uint64_t ino, size_t *len);
void vm_for_source(const struct view *v, const struct source *src,
		   void (*fn)(uint64_t ino, void *arg), void *arg);
void vm_free(struct view_multi *m);
/* The model view behind ino and its inode there; NULL for the tree's own
 * nodes. */
const struct view *vm_sub(const struct view *v, uint64_t ino,
			  uint64_t *local);

/* The .safetensors/ view (view_vst.c): view.c hands every inode it
 * owns (view_vst_owns) to these. */
int view_vst_build(struct view *v, struct err *e);
void view_vst_free(struct view *v);
int view_vst_owns(const struct view *v, uint64_t ino);
enum view_kind view_vst_kind(const struct view *v, uint64_t ino);
uint64_t view_vst_lookup(const struct view *v, uint64_t parent,
			 const char *name, size_t len);
uint64_t view_vst_nchildren(const struct view *v, uint64_t dir);
uint64_t view_vst_child(const struct view *v, uint64_t dir, uint64_t k);
size_t view_vst_name(const struct view *v, uint64_t ino,
		     char out[VIEW_NAME_MAX + 1]);
uint64_t view_vst_subdirs(const struct view *v, uint64_t ino);
uint64_t view_vst_size(const struct view *v, uint64_t ino);
int view_vst_read(const struct view *v, uint64_t ino, uint64_t off,
		  size_t size, struct view_segs *out);
void view_vst_for_source(const struct view *v, const struct source *src,
			 void (*fn)(uint64_t ino, void *arg), void *arg);

/* The .stfs/ directory (view_stfs.c), inodes ino_stfs (the directory)
 * and ino_stfs + 1 (stats.json); view.c hands them to these. */
int view_stfs_owns(const struct view *v, uint64_t ino);
enum view_kind view_stfs_kind(const struct view *v, uint64_t ino);
int view_stfs_is_root_name(const char *name, size_t len);
uint64_t view_stfs_lookup(const struct view *v, uint64_t parent,
			  const char *name, size_t len);
uint64_t view_stfs_nchildren(const struct view *v, uint64_t dir);
uint64_t view_stfs_child(const struct view *v, uint64_t dir, uint64_t k);
size_t view_stfs_name(const struct view *v, uint64_t ino,
		      char out[VIEW_NAME_MAX + 1]);
uint64_t view_stfs_size(const struct view *v, uint64_t ino);
int view_stfs_read(const struct view *v, uint64_t ino, uint64_t off,
		   size_t size, struct view_segs *out);
int view_stfs_volatile(const struct view *v, uint64_t ino);

#endif
