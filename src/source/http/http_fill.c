/* http_fill.c - a run of cache blocks from the disk cache or the network
 * (see http_fill.h). */
#include "source/http/http_fill.h"

#include <string.h>

#include "source/http/http_conf.h"
#include "source/http/http_disk.h"
#include "source/http/http_spool.h"

/* A ranged GET filling consecutive blocks; a retry asks only for the
 * bytes that did not come (the blocks before are READY and may be being
 * read; a block's first part stays where it arrived).  A block is ready
 * with its last byte, before the rest of the request, except the last
 * one: that waits for the answer's end, so that an answer longer than
 * its Content-Range said (a body that never ends) fails it. */
struct blockget {
	struct http_fetch_range g;
	const struct http_fill *f;
	struct http_cache_block **blocks;
	unsigned n;
	uint64_t *first_ms;	/* set by the first byte */
	uint64_t *fed_ms;	/* stamped by every piece */
};

/* Block b has all its bytes: on to disk (off this transfer; closing the
 * source waits for it) and to the readers. */
static void
block_complete(const struct http_fill *f, struct http_cache_block *b)
{
	http_spool_put(f->spool, f->disk, b);
	http_cache_ready(f->cache, b);	/* immutable from here on */
}

static void
blocks_data(struct http_fetch_range *g, const char *p, size_t n)
{
	struct blockget *bg = (struct blockget *)g;
	uint64_t pos = g->start + g->got, now = http_conf_now_ms();

	if (!*bg->first_ms)
		*bg->first_ms = now;
	/* a reader waiting for this request sees it move */
	__atomic_store_n(bg->fed_ms, now, __ATOMIC_RELAXED);
	while (n) {
		struct http_cache_block *b = bg->blocks[pos / HTTP_BLOCK_BYTES -
					      bg->blocks[0]->idx];
		size_t bo = (size_t)(pos % HTTP_BLOCK_BYTES);
		size_t k = b->len - bo < n ? b->len - bo : n;

		memcpy(b->data + bo, p, k);
		p += k;
		n -= k;
		pos += k;
		if (bo + k == b->len && b != bg->blocks[bg->n - 1])
			block_complete(bg->f, b);
	}
}

/* One ranged GET for n consecutive blocks: an enum http_outcome. */
static int
fetch_run(const struct http_fill *f, struct http_cache_block **blocks,
	  unsigned n, const struct http_fetch_budget *b, uint64_t *first_ms,
	  uint64_t *fed_ms)
{
	struct http_cache_block *l = blocks[n - 1];
	struct blockget bg = {
		.g = { .kind = HTTP_STATS_REQ_DATA, .resume = 1,
		       .data = blocks_data,
		       .start = blocks[0]->idx * HTTP_BLOCK_BYTES,
		       .len = (l->idx - blocks[0]->idx) * HTTP_BLOCK_BYTES +
			      l->len },
		.f = f, .blocks = blocks, .n = n, .first_ms = first_ms,
		.fed_ms = fed_ms,
	};
	int r = http_fetch_get(f->obj, &bg.g, b);

	if (r == HTTP_OK)
		block_complete(f, l);
	return r;
}

/* From the disk cache into b: 1 on a hit (b is READY then). */
static int
from_disk(const struct http_fill *f, struct http_cache_block *b)
{
	if (!f->disk || !http_disk_get(f->disk, b->idx, b->data, b->len))
		return 0;
	http_stats_add(&f->obj->stats.disk_hits, 1);
	http_cache_ready(f->cache, b);
	return 1;
}

int
http_fill_run(const struct http_fill *f, struct http_cache_block **blocks,
	      unsigned n, const struct http_fetch_budget *b,
	      uint64_t *first_ms, uint64_t *fed_ms)
{
	unsigned i = 0, j;
	int r;

	while (i < n) {
		if (from_disk(f, blocks[i])) {
			i++;
			continue;
		}
		for (j = i + 1; j < n && !from_disk(f, blocks[j]); j++)
			;
		r = fetch_run(f, blocks + i, j - i, b, first_ms, fed_ms);
		if (r != HTTP_OK)
			return r;
		i = j + 1;
	}
	return HTTP_OK;
}
