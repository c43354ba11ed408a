/* http_cache.h - the block cache of remote sources (one per client,
 * http_client.h).
 *
 * Blocks of HTTP_BLOCK_BYTES (the last one of an object shorter) keyed by
 * (owner, index), bounded by the cache's size, least recently used ones
 * evicted first.  A block is LOADING (being fetched; job says by which
 * request), READY (immutable: readers copy out of it without the lock) or
 * FAILED (out of the table; freed with its last reference).
 *
 * Everything here runs under the cache lock (http_cache_lock()), which the
 * prefetcher shares: one lock for blocks and jobs keeps their states
 * consistent.
 */
#ifndef STFS_HTTP_CACHE_H
#define STFS_HTTP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

enum { HTTP_CACHE_LOADING, HTTP_CACHE_READY, HTTP_CACHE_FAILED };

struct http_prefetch_job;

struct http_cache_block {
	const void *owner;
	uint64_t idx;
	char *data;
	size_t len;
	int state;
	unsigned refs;			/* readers copying out of it */
	int hashed;			/* findable (not FAILED/dropped) */
	int in_lru;			/* READY and hashed */
	int spent;			/* read to its end (LRU's tail) */
	struct http_prefetch_job *job;		/* while LOADING */
	int failed_ahead;	/* FAILED as read-ahead no one waited for */
	LIST_ENTRY(http_cache_block) hlink;
	TAILQ_ENTRY(http_cache_block) lru;
};

struct http_cache;

/* A cache of at most bytes of block data, or NULL (no memory). */
struct http_cache *http_cache_new(uint64_t bytes);
/* Free c (every owner's blocks dropped). */
void http_cache_free(struct http_cache *c);

void http_cache_lock(struct http_cache *c);
void http_cache_unlock(struct http_cache *c);

/* Wake everyone waiting for a block or job to settle. */
void http_cache_broadcast(struct http_cache *c);

/* Wait for a broadcast until until_ms (http_conf_now_ms() clock); 0, or
 * ETIMEDOUT once the time has passed. */
int http_cache_wait(struct http_cache *c, uint64_t until_ms);

/* pthread_cond_wait(cond) on the cache lock (the workers' queue). */
void http_cache_cond_wait(struct http_cache *c, void *cond);

struct http_cache_block *http_cache_lookup(struct http_cache *c,
					   const void *owner, uint64_t idx);

/* A new LOADING block in the table, or NULL.  must_fit (read-ahead):
 * give up when the cache is full of blocks in use; demand reads may go
 * over the limit. */
struct http_cache_block *http_cache_add(struct http_cache *c,
					const void *owner, uint64_t idx,
					size_t len, int must_fit);

/* LOADING -> READY (most recently used), waking waiters. */
void http_cache_ready(struct http_cache *c, struct http_cache_block *b);

/* LOADING -> FAILED: out of the table, freed once unreferenced. */
void http_cache_failed(struct http_cache *c, struct http_cache_block *b);

/* A reader took bytes from b: the most recently used block, or, spent
 * (read up to its end: a sequential reader is done with it), the next to
 * be evicted.  Read-ahead fills the cache with blocks not read yet, which
 * a plain LRU order puts behind the blocks just read, so that a loader
 * lost 40% of what was fetched for it before it got there. */
void http_cache_touch(struct http_cache *c, struct http_cache_block *b,
		      int spent);

/* Drop a reference (b->refs--); frees a block no longer in the table. */
void http_cache_unref(struct http_cache *c, struct http_cache_block *b);

/* Free every block of owner (no job may be running for it). */
void http_cache_drop(struct http_cache *c, const void *owner);

/* Bytes of block data allocated (for tests and counters). */
uint64_t http_cache_bytes(struct http_cache *c);

/* Bytes of the block arena used so far: memory the process has touched
 * (for tests). */
uint64_t http_cache_arena_touched(struct http_cache *c);

#endif
