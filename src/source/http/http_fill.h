/* http_fill.h - filling a run of cache blocks: from the disk cache, else
 * from the shared cache (http_tier.h), else with one ranged GET
 * (http_fetch.h) per run of blocks neither has.
 *
 * The read path goes down and comes back once: the prefetcher hands a
 * job's blocks here, the bytes go straight into their memory as they
 * arrive, each block is READY for its readers (and queued for the disk
 * cache's writers) as soon as its last byte is in, and the outcome is
 * the return value.  Nothing calls back into the prefetcher or the
 * source.
 */
#ifndef STFS_HTTP_FILL_H
#define STFS_HTTP_FILL_H

#include <stdint.h>

#include "source/http/http_cache.h"
#include "source/http/http_fetch.h"

struct http_disk_object;
struct http_spool;
struct http_tier_src;

/* Where a source's blocks come from, and where they go. */
struct http_fill {
	struct http_fetch_object *obj;	/* the remote object */
	struct http_disk_object *disk;	/* NULL: no disk cache */
	struct http_cache *cache;	/* the blocks' */
	struct http_spool *spool;	/* on their way to the disk cache */
	struct http_tier_src *tier;	/* NULL: no shared cache */
};

/* Fill n consecutive LOADING blocks within budget b (no lock held), each
 * READY as it completes; *fed_ms (atomic) is stamped with
 * http_conf_now_ms() whenever bytes come, so that a reader waiting for
 * the request sees it move; *first_ms is set when the first byte came
 * from the network (left 0 when none did).  HTTP_OK, or the enum
 * http_outcome of the failure (the blocks not READY are the caller's to
 * settle). */
int http_fill_run(const struct http_fill *f, struct http_cache_block **blocks,
		  unsigned n, const struct http_fetch_budget *b,
		  uint64_t *first_ms, uint64_t *fed_ms);

#endif
