/* view_fetch.h - a tensor's bytes read for rendering (the mirror views'
 * files, the .stats/ computation). */
#ifndef STFS_VIEW_FETCH_H
#define STFS_VIEW_FETCH_H

#include <stddef.h>
#include <stdint.h>

struct view;
struct model_tensor;

/* Read len bytes of tensor mt's file at off into dst (gathered for a
 * strided view: model_tensor_read()), then source_verify().  0, -EIO. */
int view_fetch(const struct view *v, const struct model_tensor *mt,
	       uint64_t off, size_t len, void *dst);

/* view_fetch() as a read callback (tensor_render_read_fn,
 * tensor_stats_read_fn): arg is a struct view_fetch_at. */
struct model;
struct view_fetch_at {
	const struct view *v;
	const struct model_tensor *mt;
	const struct model *m;	/* mt's model when not v's (a virtual
				   file of another model: stored reads
				   only), else NULL */
};
int view_fetch_at(void *arg, uint64_t off, size_t len, void *dst);

/* The same over the tensor's stored bytes [begin, end) as they are (what
 * tensor_render_read() renders from); they differ from its file's for a
 * strided view only. */
int view_fetch_stored_at(void *arg, uint64_t off, size_t len, void *dst);

#endif
