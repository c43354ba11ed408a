/* http_fill.c - a run of cache blocks from the disk cache or the network
 * (see http_fill.h). */
#include "source/http/http_fill.h"

#include <string.h>

#include "source/http/http_conf.h"
#include "source/http/http_disk.h"
#include "source/http/http_spool.h"
#include "source/http/http_tier.h"

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
	uint64_t run_first;	/* this request's first byte came then */
	int no_memory;		/* a block got none: bytes from it on are
				   dropped, the run fails */
};

/* Block b has all its bytes from the origin: on to disk and to the
 * shared cache (both off this transfer; closing the source waits for
 * them) and to the readers. */
static void
block_complete(const struct http_fill *f, struct http_cache_block *b)
{
	http_stats_add(&f->obj->stats.origin_blocks, 1);
	if (f->disk)
		http_stats_add(&f->obj->stats.disk_puts, 1);
	http_spool_put(f->spool, f->disk, b);
	if (f->tier)
		http_tier_put(f->tier, b);
	http_cache_ready(f->cache, b);	/* immutable from here on */
}

static void
blocks_data(struct http_fetch_range *g, const char *p, size_t n)
{
	struct blockget *bg = (struct blockget *)g;
	uint64_t pos = g->start + g->got, now = http_conf_now_ms();

	if (!*bg->first_ms)
		*bg->first_ms = now;
	if (!bg->run_first)
		bg->run_first = now;
	/* a reader waiting for this request sees it move */
	__atomic_store_n(bg->fed_ms, now, __ATOMIC_RELAXED);
	while (n && !bg->no_memory) {
		struct http_cache_block *b = bg->blocks[pos / HTTP_BLOCK_BYTES -
					      bg->blocks[0]->idx];
		size_t bo = (size_t)(pos % HTTP_BLOCK_BYTES);
		size_t k = b->len - bo < n ? b->len - bo : n;

		/* a block's memory when its bytes come (http_cache.h) */
		if (!b->data && http_cache_alloc(bg->f->cache, b, 0)) {
			bg->no_memory = 1;
			break;
		}
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
	uint64_t t0 = http_conf_now_ms();
	int r = http_fetch_get(f->obj, &bg.g, b);

	if (r == HTTP_OK && bg.no_memory)
		r = HTTP_FAIL;
	if (r == HTTP_OK) {
		block_complete(f, l);
		http_tier_origin_took(f->tier, t0, bg.run_first,
				      http_conf_now_ms(), n);
	}
	return r;
}

/* From the disk cache into b: 1 on a hit (b is READY then).  A block the
 * disk does not have takes no memory here. */
static int
from_disk(const struct http_fill *f, struct http_cache_block *b)
{
	if (!f->disk)
		return 0;
	if (!http_disk_has(f->disk, b->idx) ||
	    http_cache_alloc(f->cache, b, 0) ||
	    !http_disk_get(f->disk, b->idx, b->data, b->len)) {
		http_stats_add(&f->obj->stats.disk_misses, 1);
		return 0;
	}
	http_stats_add(&f->obj->stats.disk_hits, 1);
	http_cache_ready(f->cache, b);
	return 1;
}

/* From the shared cache into b: an enum http_tier_got (b READY on a hit,
 * and on its way to the disk cache, the first tier). */
static int
from_tier(const struct http_fill *f, struct http_cache_block *b,
	  uint64_t *fed_ms)
{
	int r;

	/* the shared cache's answer is written into the block's memory,
	 * which a read-ahead block gets only now (http_cache.h) */
	if (!f->tier || http_cache_alloc(f->cache, b, 0))
		return HTTP_TIER_PASSED;
	r = http_tier_get(f->tier, b, fed_ms);
	if (r == HTTP_TIER_HIT) {
		if (f->disk)
			http_stats_add(&f->obj->stats.disk_puts, 1);
		http_spool_put(f->spool, f->disk, b);
		http_cache_ready(f->cache, b);
	}
	return r;
}

int
http_fill_run(const struct http_fill *f, struct http_cache_block **blocks,
	      unsigned n, const struct http_fetch_budget *b,
	      uint64_t *first_ms, uint64_t *fed_ms)
{
	struct http_fetch_budget origin = *b;
	unsigned i = 0, j;
	uint64_t now;
	int r, t;

	while (i < n) {
		if (from_disk(f, blocks[i])) {
			i++;
			continue;
		}
		t = from_tier(f, blocks[i], fed_ms);
		/* the time the shared cache took is not the origin's: its
		 * bound starts now */
		now = http_conf_now_ms() + http_conf_bound_ms(f->obj->conf);
		if (f->tier && now > origin.quiet_until)
			origin.quiet_until = now;
		if (t == HTTP_TIER_HIT) {
			i++;
			continue;
		}
		if (t == HTTP_TIER_REJECTED) {
			/* the shared cache has the ones after it, maybe */
			r = fetch_run(f, blocks + i, 1, &origin, first_ms,
				      fed_ms);
			if (r != HTTP_OK)
				return r;
			i++;
			continue;
		}
		/* Absent there (the blocks after it were fetched with it,
		 * so they are too), or no shared cache: one request for
		 * the blocks the disk does not have either. */
		for (j = i + 1; j < n && !from_disk(f, blocks[j]); j++)
			;
		r = fetch_run(f, blocks + i, j - i, &origin, first_ms, fed_ms);
		if (r != HTTP_OK)
			return r;
		i = j + 1;
	}
	return HTTP_OK;
}
