/* view_meta.h - what a model view says about a tensor besides its bytes:
 * its JSON sidecar and its extended attributes (formats in view.h:
 * view_render_sidecar(), view_xattr_list(), view_xattr_get()). */
#ifndef STFS_VIEW_META_H
#define STFS_VIEW_META_H

struct buf;
struct model;
struct model_tensor;
struct view;

/* The sidecar of tensor mt of m, appended to b.  0, or -1 (no memory). */
int view_meta_sidecar(const struct model *m, const struct model_tensor *mt,
		      struct buf *b);

/* The names of a tensor file's xattrs, each followed by a NUL, appended
 * to out.  0, or -1 (no memory). */
int view_meta_xattr_list(struct buf *out);

/* The value of xattr name of tensor mt's file appended to out.  0, 1 when
 * there is no such attribute, -1 when out of memory, -2 when the source
 * could not be read (sha256), -3 and -4 as view_xattr_get() says. */
int view_meta_xattr_get(const struct view *v, const struct model_tensor *mt,
			const char *name, struct buf *out);

#endif
