/* view_read.c - the contents of the view's files, as segments (view.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "model/model.h"
#include "source/source.h"
#include "view/view.h"
#include "view/view_int.h"

/* --- segments ----------------------------------------------------------- */

void
view_segs_reset(struct view_segs *s)
{
	s->n = 0;
	s->len = 0;
	if (s->mem)
		s->mem->len = 0;
}

void
view_segs_free(struct view_segs *s)
{
	free(s->seg);
	if (s->mem) {
		buf_free(s->mem);
		free(s->mem);
	}
	memset(s, 0, sizeof(*s));
}

static struct view_seg *
seg_new(struct view_segs *s, enum view_seg_kind kind, size_t len)
{
	struct view_seg *g;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4;

		g = realloc(s->seg, cap * sizeof(*g));
		if (!g)
			return NULL;
		s->seg = g;
		s->cap = cap;
	}
	g = &s->seg[s->n++];
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->len = len;
	s->len += len;
	return g;
}

int
view_segs_add_source(struct view_segs *s, struct source *src, uint64_t off,
		     size_t len)
{
	struct view_seg *g;

	if (len == 0)
		return 0;
	g = seg_new(s, VIEW_SEG_SOURCE, len);
	if (!g)
		return -ENOMEM;
	g->src = src;
	g->off = off;
	return 0;
}

int
view_segs_add_mem(struct view_segs *s, const char *p, size_t len)
{
	struct view_seg *g;

	if (len == 0)
		return 0;
	g = seg_new(s, VIEW_SEG_MEM, len);
	if (!g)
		return -ENOMEM;
	g->ptr = p;
	return 0;
}

char *
view_segs_render(struct view_segs *s, size_t len)
{
	struct view_seg *g;
	size_t at;

	if (!s->mem && !(s->mem = calloc(1, sizeof(*s->mem))))
		return NULL;
	at = s->mem->len;
	if (buf_reserve(s->mem, len))
		return NULL;
	g = seg_new(s, VIEW_SEG_MEM, len);
	if (!g)
		return NULL;
	g->off = at;
	s->mem->len += len;
	return s->mem->data + at;
}

void
view_segs_trim(struct view_segs *s, size_t len)
{
	struct view_seg *g = &s->seg[s->n - 1];

	s->len -= g->len - len;
	if (!g->ptr && g->kind == VIEW_SEG_MEM)
		s->mem->len -= g->len - len;
	g->len = len;
}

const char *
view_seg_mem(const struct view_segs *s, const struct view_seg *g)
{
	return g->ptr ? g->ptr : s->mem->data + g->off;
}

/* --- reads --------------------------------------------------------------- */

int
view_fetch(const struct view *v, const struct model_tensor *mt, uint64_t off,
	   size_t len, void *dst)
{
	struct source *src = v->model->shards[mt->shard].src;
	int rc;

	if (len == 0)
		return 0;
	rc = source_pread(src, dst, len, model_tensor_offset(v->model, mt) +
			  off);
	/* After the read: a change that raced with it shows now. */
	if (source_verify(src) != 0 || rc < 0)
		return -EIO;
	return 0;
}

int
view_volatile(const struct view *v, uint64_t ino)
{
	const struct view *sv;
	uint64_t l;

	if (v->multi)
		return (sv = vm_sub(v, ino, &l)) ? view_volatile(sv, l) : 0;
	return view_stfs_volatile(v, ino);
}

int
view_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	  struct view_segs *out)
{
	enum view_kind k = view_kind(v, ino);
	const struct model_tensor *mt;
	uint64_t len = view_size(v, ino), base;
	struct source *src;
	const struct view *sv;
	struct view_seg *g;
	const char *mem;
	size_t n, at;
	uint64_t l;

	view_segs_reset(out);
	if (v->multi && (sv = vm_sub(v, ino, &l)))
		return view_read(sv, l, off, size, out);
	if (k == VIEW_NONE)
		return -ENOENT;
	if (k == VIEW_DIR)
		return -EISDIR;
	/* rendered now, at its current length, not the one stat saw */
	if (view_stfs_owns(v, ino))
		return view_stfs_read(v, ino, off, size, out);
	if (off >= len || size == 0)
		return 0;
	if (size > len - off)
		size = (size_t)(len - off);
	switch (k) {
	case VIEW_TENSOR:
		view_data(v, ino, &src, &base, &len);
		return view_segs_add_source(out, src, base + off, size);
	case VIEW_SIDECAR:
		/* A few hundred bytes, usually read once (the kernel keeps
		 * the page): rendering on demand beats keeping 100k. */
		if (!out->mem && !(out->mem = calloc(1, sizeof(*out->mem))))
			return -ENOMEM;
		at = out->mem->len;
		if (view_render_sidecar(v, ino, out->mem) != 0)
			return -ENOMEM;
		if (out->mem->len - at != len)
			return -EIO;	/* never: sizes are rendered at build */
		g = seg_new(out, VIEW_SEG_MEM, size);
		if (!g)
			return -ENOMEM;
		g->off = at + off;
		return 0;
	case VIEW_BLOB:
		mem = view_blob(v, ino, &n);
		return view_segs_add_mem(out, mem + off, size);
	case VIEW_VST:
		return view_vst_read(v, ino, off, size, out);
	case VIEW_MIRROR:
		mt = view_tensor(v, ino);
		return view_mirror_of(v, ino)->read(v, mt, off, size, out);
	default:
		return -ENOENT;
	}
}

void
view_for_source(const struct view *v, const struct source *src,
		void (*fn)(uint64_t ino, void *arg), void *arg)
{
	const struct model_tensor *mt;
	uint64_t ino;

	if (v->multi) {
		vm_for_source(v, src, fn, arg);
		return;
	}
	view_vst_for_source(v, src, fn, arg);
	for (ino = VIEW_ROOT_INO; ino < (v->ino_vst ? v->ino_vst : v->ninodes + 1);
	     ino++) {
		mt = view_tensor(v, ino);
		if (mt && view_kind(v, ino) != VIEW_SIDECAR &&
		    v->model->shards[mt->shard].src == src)
			fn(ino, arg);
	}
}
