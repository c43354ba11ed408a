/* http_prefetch.h - reads through the block cache, read-ahead, workers.
 *
 * A read takes the blocks it needs; the missing ones are fetched with one
 * request per run of neighbouring blocks, the first by the reading thread
 * itself.  Each source keeps a few read streams; a read that continues a
 * stream doubles the stream's read-ahead window (1 MiB up to a cap) and
 * queues the blocks ahead of it for a pool of worker threads, which fetch
 * them in parallel: as many requests at once, and as large, as the pace
 * (http_pace.h) finds the link wants.  A view that knows what a loader
 * reads next hints it (http_prefetch_hint()), and the hinted bytes are
 * queued the same way.  A block can be read as soon as its last byte has
 * arrived, before the rest of its request.  Worker threads start on the
 * first read-ahead (stfs forks into the background before it opens any
 * source: threads do not follow a fork).
 *
 * Demand comes first (issue 29.1): a reader's requests go before
 * read-ahead in the queue and are not held back by the pace's level, and
 * while one for blocks that were not on their way is queued or in flight
 * no read-ahead request starts, so that on a saturated link read-ahead
 * does not take the bandwidth from the block a reader waits for.  A reader
 * waits as long as the request filling its block moves.  Read-ahead no
 * one waits for is tried three times at most (once when other requests of
 * the source fail too); a source whose request failed queues none for a
 * while (1 s, doubling up to 30 s), and until one of its requests
 * succeeds again it has no more than four read-ahead requests in flight;
 * a reader that needs the bytes fetches them itself.
 *
 * The blocks of a job are filled by http_fill.h (the disk cache, else the
 * network) and come back by its return value: the read path goes down
 * once, without callbacks into the source.
 */
#ifndef STFS_HTTP_PREFETCH_H
#define STFS_HTTP_PREFETCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "source/http/http_cache.h"
#include "source/http/http_fill.h"
#include "source/http/http_pace.h"
#include "source/http/http_stats.h"
#include "source/http/http_stream.h"

struct http_prefetch;

struct http_prefetch_src {
	struct http_prefetch *pf;	/* http_prefetch_add() sets it */
	struct http_fill fill;		/* where its blocks come from */
	uint64_t size;
	struct http_stats *stats;	/* hits, misses, ra_window */
	/* under the prefetcher's lock */
	TAILQ_HEAD(, http_prefetch_job) jobs;	/* queued or running */
	unsigned running;		/* jobs being transferred */
	uint64_t ra_pause_until;	/* read-ahead failed: none before */
	uint64_t ra_backoff_ms;		/* the last such pause */
	int proven;			/* a request succeeded since the last
					   failure (or the open) */
	struct http_pace_conn conn;	/* what its connections deliver */
	struct http_stream streams[HTTP_STREAMS];
	TAILQ_ENTRY(http_prefetch_src) link;
};

/* The prefetcher of a client (http_client.h), with its settings (conf
 * stays the caller's), reading through cache: its queue, its workers
 * (started with the first read-ahead), its pace; NULL without memory. */
struct http_conf;
struct http_prefetch *http_prefetch_new(const struct http_conf *conf,
					struct http_cache *cache);

/* Stop the worker threads, wait for them and free p (no source may be
 * added any more). */
void http_prefetch_free(struct http_prefetch *p);

/* Start serving ps (fill, size, stats set) through p. */
void http_prefetch_add(struct http_prefetch *p, struct http_prefetch_src *ps);

/* Stop: cancel its queued jobs, wait for running ones, free its blocks. */
void http_prefetch_remove(struct http_prefetch_src *ps);

/* Bytes [off, off + len) will be read soon: queue what is missing of them
 * (at most one stream's window, as far as the cache has room), as a read
 * stream that a reader arriving at off continues.  Never waits. */
void http_prefetch_hint(struct http_prefetch_src *ps, uint64_t off,
			uint64_t len);


#endif
