/* view_fetch.c - a tensor's bytes read for rendering (view_fetch.h). */
#include "view/view_fetch.h"

#include <errno.h>

#include "model/model.h"
#include "source/source.h"
#include "view/view.h"

int
view_fetch(const struct view *v, const struct model_tensor *mt, uint64_t off,
	   size_t len, void *dst)
{
	struct source *src = v->model->shards[mt->shard].src;
	int rc;

	if (len == 0)
		return 0;
	rc = model_tensor_read(v->model, mt, off, len, dst);
	/* After the read: a change that raced with it shows now. */
	if (source_verify(src) != 0 || rc < 0)
		return -EIO;
	return 0;
}

int
view_fetch_stored_at(void *arg, uint64_t off, size_t len, void *dst)
{
	const struct view_fetch_at *f = arg;
	const struct model *m = f->m ? f->m : f->v->model;
	struct source *src = m->shards[f->mt->shard].src;
	int rc;

	if (len == 0)
		return 0;
	rc = source_pread(src, dst, len, model_tensor_offset(m, f->mt) + off);
	if (source_verify(src) != 0 || rc < 0)
		return -EIO;
	return 0;
}

int
view_fetch_at(void *arg, uint64_t off, size_t len, void *dst)
{
	const struct view_fetch_at *f = arg;

	return view_fetch(f->v, f->mt, off, len, dst);
}
