/* view_segs.c - the segments a read of a view file answers (view_segs.h). */
#include "view/view_segs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

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

struct buf *
view_segs_mem(struct view_segs *s)
{
	if (!s->mem)
		s->mem = calloc(1, sizeof(*s->mem));
	return s->mem;
}

int
view_segs_add_rendered(struct view_segs *s, size_t at, size_t len)
{
	struct view_seg *g;

	if (len == 0)
		return 0;
	g = seg_new(s, VIEW_SEG_MEM, len);
	if (!g)
		return -ENOMEM;
	g->off = at;
	return 0;
}

char *
view_segs_render(struct view_segs *s, size_t len)
{
	struct view_seg *g;
	size_t at;

	if (!view_segs_mem(s))
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

int
view_segs_add_copy(struct view_segs *s, const char *data, size_t len,
		   uint64_t off, size_t size)
{
	char *p;

	if (off >= len || !size)
		return 0;
	if (size > len - off)
		size = (size_t)(len - off);
	p = view_segs_render(s, size);
	if (!p)
		return -ENOMEM;
	memcpy(p, data + off, size);
	return 0;
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
