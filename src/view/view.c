/* view.c - the view's public functions (view.h): each builds a kind of
 * view or calls the kind's ops table (view_kinds.h).  Nothing else lives
 * here, and no kind calls back into this file.
 */
#include "view/view.h"

#include "view/view_kinds.h"

int
view_build(const struct model *m, const struct view_opts *opts,
	   struct view **out, struct err *e)
{
	return view_model_build(m, opts, NULL, out, e);
}

int
view_build_multi(const struct view_model *models, size_t n,
		 struct model_files *files, const struct view_opts *opts,
		 struct view **out, struct err *e)
{
	/* One model at the root is the single-model mount, exactly; its
	 * summary's "source" is the label (the absolute path of its file or
	 * index), as in a tree and in stfs-inspect --json. */
	if (n == 1 && !models[0].dir[0])
		return view_model_build(models[0].model, opts, models[0].label,
					out, e);
	return view_multi_build(models, n, files, opts, out, e);
}

void
view_free(struct view *v)
{
	if (v)
		v->ops->free(v);
}

enum view_kind
view_kind(const struct view *v, uint64_t ino)
{
	return v->ops->kind(v, ino);
}

int
view_volatile(const struct view *v, uint64_t ino)
{
	return v->ops->is_volatile(v, ino);
}

uint64_t
view_lookup(const struct view *v, uint64_t parent, const char *name,
	    size_t len)
{
	return v->ops->lookup(v, parent, name, len);
}

uint64_t
view_child(const struct view *v, uint64_t dir, uint64_t k)
{
	return v->ops->child(v, dir, k);
}

uint64_t
view_nchildren(const struct view *v, uint64_t dir)
{
	return v->ops->nchildren(v, dir);
}

size_t
view_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	return v->ops->name(v, ino, out);
}

int
view_stat(const struct view *v, uint64_t ino, struct stat *st)
{
	return v->ops->stat(v, ino, st);
}

uint64_t
view_size(const struct view *v, uint64_t ino)
{
	return v->ops->size(v, ino);
}

const struct model_tensor *
view_tensor(const struct view *v, uint64_t ino)
{
	return v->ops->tensor(v, ino);
}

int
view_data(const struct view *v, uint64_t ino, struct source **src,
	  uint64_t *offset, uint64_t *len)
{
	return v->ops->data(v, ino, src, offset, len);
}

int
view_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	  struct view_segs *out)
{
	view_segs_reset(out);
	return v->ops->read(v, ino, off, size, out);
}

void
view_for_source(const struct view *v, const struct source *src,
		void (*fn)(uint64_t ino, void *arg), void *arg)
{
	v->ops->for_source(v, src, fn, arg);
}

const char *
view_blob(const struct view *v, uint64_t ino, size_t *len)
{
	return v->ops->blob(v, ino, len);
}

int
view_render_sidecar(const struct view *v, uint64_t ino, struct buf *out)
{
	return v->ops->render_sidecar(v, ino, out);
}

int
view_xattr_list(const struct view *v, uint64_t ino, struct buf *out)
{
	return v->ops->xattr_list(v, ino, out);
}

int
view_xattr_get(const struct view *v, uint64_t ino, const char *name,
	       struct buf *out)
{
	return v->ops->xattr_get(v, ino, name, out);
}
