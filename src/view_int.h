/* view_int.h - what the files of the view layer share (not for users of
 * view.h): the mirror view table and helpers of the read path.
 */
#ifndef STFS_VIEW_INT_H
#define STFS_VIEW_INT_H

#include <stddef.h>
#include <stdint.h>

#include "view.h"

struct buf;
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

/* The mirror view a VIEW_MIRROR inode belongs to. */
const struct view_mirror *view_mirror_of(const struct view *v, uint64_t ino);


/* Read len bytes of tensor mt at off (relative to its first byte) into
 * dst, for rendering: source_pread(), then source_verify().  0, -EIO. */
int view_fetch(const struct view *v, const struct model_tensor *mt,
	       uint64_t off, size_t len, void *dst);

/* The sidecar of tensor mt, appended to b (view_meta.c). */
int view_sidecar_render(const struct model *m, const struct model_tensor *mt,
			struct buf *b);

#endif
