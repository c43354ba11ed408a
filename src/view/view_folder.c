/* view_folder.c - the folder of a tree of models as a view of its own
 * (view_folder_ops, view_kinds.h): the root's .files/ of a mount that
 * holds several models (a diffusers pipeline: model_index.json, unet/,
 * vae/, text_encoder/, scheduler/ ...), so that a loader pointed at
 * MNT/.files/ reads the tree as it reads its folder.
 *
 * It is a view without a model whose only inodes are those of .files/
 * (view_files.c, which serves a tree's folder, model/model_files.h, all
 * of it: every file, the models' too, as at the source); a tree of
 * models (view_multi.c) keeps it in the slot after its models' and
 * hands it the inodes of that slot.  Inode 1 is not used (a slot's 1 is
 * a model's directory in view_multi.c); .files/ is 2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "view/view.h"
#include "view/view_kinds.h"

static const struct view_hidden *const h = &view_files_dir;

int
view_folder_build(struct model_files *f, const struct view *tree,
		  struct view **out, struct err *e)
{
	struct view *v = calloc(1, sizeof(*v));

	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	v->ops = &view_folder_ops;
	v->opts = tree->opts;
	v->ninodes = 1;
	v->mtime = tree->mtime;
	v->ctime = tree->ctime;
	v->uid = tree->uid;
	v->gid = tree->gid;
	v->mode = tree->mode;
	if (view_files_folder(v, f, e)) {
		free(v);
		return -1;
	}
	*out = v;
	return 0;
}

uint64_t
view_folder_root(const struct view *v)
{
	return h->root(v);
}

static enum view_kind
folder_kind(const struct view *v, uint64_t ino)
{
	return h->owns(v, ino) ? h->kind(v, ino) : VIEW_NONE;
}

static int
folder_is_volatile(const struct view *v, uint64_t ino)
{
	(void)v;
	(void)ino;
	return 0;
}

static uint64_t
folder_lookup(const struct view *v, uint64_t parent, const char *name,
	      size_t len)
{
	return h->owns(v, parent) ? h->lookup(v, parent, name, len) : 0;
}

static uint64_t
folder_nchildren(const struct view *v, uint64_t dir)
{
	return h->owns(v, dir) ? h->nchildren(v, dir) : 0;
}

static uint64_t
folder_child(const struct view *v, uint64_t dir, uint64_t k)
{
	return h->owns(v, dir) ? h->child(v, dir, k) : 0;
}

static size_t
folder_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	if (h->owns(v, ino))
		return h->name(v, ino, out);
	out[0] = '\0';
	return 0;
}

static uint64_t
folder_size(const struct view *v, uint64_t ino)
{
	return h->owns(v, ino) ? h->size(v, ino) : 0;
}

/* As a model view's hidden files (view_model.c): the tree's owner, mode
 * and times, each file's own where its source has them. */
static int
folder_stat(const struct view *v, uint64_t ino, struct stat *st)
{
	mode_t perm = v->mode;
	enum view_kind k;
	struct stat own;
	uint64_t size = 0;
	int rc;

	if (!h->owns(v, ino))
		return -ENOENT;
	if ((rc = h->prepare(v, ino, &size)) != 0)
		return rc;
	k = h->kind(v, ino);
	if (k == VIEW_NONE)
		return -ENOENT;
	view_stat_begin(v, ino, st);
	if (h->attr(v, ino, &own) == 0)
		view_stat_own(v, &own, st, &perm);
	st->st_atim = st->st_mtim;
	view_stat_end(st, k == VIEW_DIR, perm,
		      k == VIEW_DIR ? h->subdirs(v, ino) : 0, size);
	return 0;
}

static const struct model_tensor *
folder_tensor(const struct view *v, uint64_t ino)
{
	(void)v;
	(void)ino;
	return NULL;
}

static int
folder_data(const struct view *v, uint64_t ino, struct source **src,
	    uint64_t *offset, uint64_t *len)
{
	(void)v;
	(void)ino;
	(void)src;
	(void)offset;
	(void)len;
	return -1;
}

static int
folder_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	    struct view_segs *out)
{
	if (!h->owns(v, ino))
		return -ENOENT;
	if (h->kind(v, ino) == VIEW_DIR)
		return -EISDIR;
	return h->read(v, ino, off, size, out);
}

static void
folder_for_source(const struct view *v, const struct source *src,
		  void (*fn)(uint64_t ino, void *arg), void *arg)
{
	h->for_source(v, src, fn, arg);
}

static const char *
folder_blob(const struct view *v, uint64_t ino, size_t *len)
{
	(void)v;
	(void)ino;
	(void)len;
	return NULL;
}

static int
folder_render_sidecar(const struct view *v, uint64_t ino, struct buf *out)
{
	(void)v;
	(void)ino;
	(void)out;
	return -1;
}

static int
folder_xattr_list(const struct view *v, uint64_t ino, struct buf *out)
{
	(void)v;
	(void)ino;
	(void)out;
	return 0;
}

static int
folder_xattr_get(const struct view *v, uint64_t ino, const char *name,
		 struct buf *out)
{
	(void)v;
	(void)ino;
	(void)name;
	(void)out;
	return 1;
}

static void
folder_free(struct view *v)
{
	h->free(v);
	free(v);
}

const struct view_ops view_folder_ops = {
	.kind = folder_kind,
	.is_volatile = folder_is_volatile,
	.lookup = folder_lookup,
	.nchildren = folder_nchildren,
	.child = folder_child,
	.name = folder_name,
	.stat = folder_stat,
	.size = folder_size,
	.tensor = folder_tensor,
	.data = folder_data,
	.read = folder_read,
	.for_source = folder_for_source,
	.blob = folder_blob,
	.render_sidecar = folder_render_sidecar,
	.xattr_list = folder_xattr_list,
	.xattr_get = folder_xattr_get,
	.free = folder_free,
};
