/* http_stream.c - see http_stream.h. */
#include "source/http/http_stream.h"

#include <stddef.h>

#include "source/http/http_options.h"

#define SEQ_BACK	(1u << 20)	/* reordering a stream tolerates */
#define SEQ_GAP		(2u << 20)	/* forward skip still "sequential" */

/* The least recently used slot, for a new stream. */
static struct http_stream *
victim(struct http_stream *s)
{
	struct http_stream *v = &s[0];
	int i;

	for (i = 0; i < HTTP_STREAMS; i++)
		if (!s[i].live || (v->live && s[i].used < v->used))
			v = &s[i];
	return v;
}

struct http_stream *
http_stream_read(struct http_stream *s, uint64_t off, uint64_t end,
		 uint64_t now, int missed)
{
	struct http_stream *st = NULL;
	int i;

	for (i = 0; i < HTTP_STREAMS && !st; i++)
		if (s[i].live && off + SEQ_BACK >= s[i].next &&
		    off <= s[i].next + SEQ_GAP)
			st = &s[i];
	if (!st) {
		st = victim(s);
		st->live = 1;
		st->next = end;
		st->window = HTTP_BLOCK_BYTES;
		st->ra_end = end;
		st->kept = end;
		st->used = now;
		st->read_at = now;
		return NULL;
	}
	/* A block the stream had queued was missing: evicted before it was
	 * read (or never queued, the cache being full).  Queue again from
	 * here rather than leave the reader to fetch block after block. */
	if (missed && st->ra_end > end)
		st->ra_end = end;
	st->used = now;
	st->read_at = now;
	if (end > st->next)
		st->next = end;
	if (st->ra_end < st->next)
		st->ra_end = st->next;
	return st;
}

struct http_stream *
http_stream_hinted(struct http_stream *s, uint64_t off, uint64_t now)
{
	struct http_stream *st;
	int i;

	for (i = 0; i < HTTP_STREAMS; i++)
		if (s[i].live && off + SEQ_BACK >= s[i].next &&
		    off <= s[i].ra_end + SEQ_GAP)
			return &s[i];
	st = victim(s);
	st->live = 1;
	st->next = off;
	st->window = HTTP_BLOCK_BYTES;
	st->ra_end = off / HTTP_BLOCK_BYTES * HTTP_BLOCK_BYTES;
	st->kept = st->ra_end;
	st->used = now;
	st->read_at = 0;
	return st;
}

int
http_stream_reading(const struct http_stream *st, uint64_t now)
{
	return st->live && st->window > HTTP_BLOCK_BYTES &&
	       st->read_at + 1000 > now;
}

void
http_stream_grow(struct http_stream *st, uint64_t cap)
{
	st->window = st->window * 2 < cap ? st->window * 2 : cap;
}

uint64_t
http_stream_target(const struct http_stream *st, uint64_t size)
{
	uint64_t target = st->next + st->window;

	if (st->ra_end >= size)
		return 0;
	/* Topped up by an eighth of the window at least, so that requests
	 * stay whole parts rather than a read's size each. */
	target = (target + HTTP_BLOCK_BYTES - 1) / HTTP_BLOCK_BYTES *
		 HTTP_BLOCK_BYTES;
	if (target > size)
		target = size;
	if (target <= st->ra_end || (target < size &&
				     target - st->ra_end < st->window / 8))
		return 0;
	return target;
}
