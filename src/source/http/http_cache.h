/* http_cache.h - the process-wide block cache of remote sources.
 *
 * Blocks of HTTP_BLOCK_BYTES (the last one of an object shorter) keyed by
 * (owner, index), bounded by hconf.cache_bytes, least recently used ones
 * evicted first.  A block is LOADING (being fetched; job says by which
 * request), READY (immutable: readers copy out of it without the lock) or
 * FAILED (out of the table; freed with its last reference).
 *
 * Everything here runs under the cache lock (hcache_lock()), which the
 * prefetcher shares: one lock for blocks and jobs keeps their states
 * consistent.
 */
#ifndef STFS_HTTP_CACHE_H
#define STFS_HTTP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

enum { HB_LOADING, HB_READY, HB_FAILED };

struct hjob;

struct hblock {
	const void *owner;
	uint64_t idx;
	char *data;
	size_t len;
	int state;
	unsigned refs;			/* readers copying out of it */
	int hashed;			/* findable (not FAILED/dropped) */
	int in_lru;			/* READY and hashed */
	struct hjob *job;		/* while LOADING */
	LIST_ENTRY(hblock) hlink;
	TAILQ_ENTRY(hblock) lru;
};

void hcache_lock(void);
void hcache_unlock(void);

/* Wake everyone waiting for a block or job to settle. */
void hcache_broadcast(void);

/* Wait for a broadcast until until_ms (hconf_now_ms() clock); 0, or
 * ETIMEDOUT once the time has passed. */
int hcache_wait(uint64_t until_ms);

/* pthread_cond_wait(c) on the cache lock (the workers' queue). */
void hcache_cond_wait(void *cond);

struct hblock *hcache_lookup(const void *owner, uint64_t idx);

/* A new LOADING block in the table, or NULL.  must_fit (read-ahead):
 * give up when the cache is full of blocks in use; demand reads may go
 * over the limit. */
struct hblock *hcache_new(const void *owner, uint64_t idx, size_t len,
			  int must_fit);

/* LOADING -> READY (most recently used), waking waiters. */
void hcache_ready(struct hblock *b);

/* LOADING -> FAILED: out of the table, freed once unreferenced. */
void hcache_failed(struct hblock *b);

/* A reader took bytes from b: most recently used. */
void hcache_touch(struct hblock *b);

/* Drop a reference (b->refs--); frees a block no longer in the table. */
void hcache_unref(struct hblock *b);

/* Free every block of owner (no job may be running for it). */
void hcache_drop(const void *owner);

/* Bytes of block data allocated (for tests and counters). */
uint64_t hcache_bytes(void);

#endif
