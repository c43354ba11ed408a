/* http_cache.h - the block cache of remote sources (one per client,
 * http_client.h).
 *
 * Blocks of HTTP_BLOCK_BYTES (the last one of an object shorter) keyed by
 * (owner, index), bounded by the cache's size, least recently used ones
 * evicted first (except that a block read up to its end goes first: a
 * sequential reader is done with it, and in plain LRU order the blocks
 * read-ahead fetched but no one had read yet were the oldest, so that a
 * loader lost 40% of what was fetched for it before it got there).  A
 * block is LOADING (being filled), READY (immutable: readers copy out of
 * it without any lock) or FAILED (out of the table; freed with its last
 * reference).  A referenced block is never evicted: readers, the
 * request filling it and the disk cache's writers each hold one.
 *
 * The size bounds the memory of the blocks' bytes, not the blocks: a
 * block of read-ahead is an entry until the request that fills it starts
 * (http_cache_reserve(): a request starts when the cache has room for
 * all its blocks), so that with the disk cache on a read-ahead window
 * larger than the memory can be queued, and what is on its way fits in
 * the size (issue 38.1).  Such a block added as HTTP_CACHE_FAR (further ahead
 * than the memory holds) is, once READY and unreferenced (written to the
 * disk cache), the first to go: it waits on the disk, and comes back to
 * memory when the reader gets near (the prefetcher queues it again).
 *
 * The cache's lock is its own: each function takes it for what it does,
 * atomically (a reader's pin, a job's blocks added and settled), and
 * nothing else holds it.  The prefetcher keeps its own state under a lock
 * of its own.
 */
#ifndef STFS_HTTP_CACHE_H
#define STFS_HTTP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

enum { HTTP_CACHE_LOADING, HTTP_CACHE_READY, HTTP_CACHE_FAILED };

/* What http_cache_add() did. */
enum { HTTP_CACHE_ADDED, HTTP_CACHE_PRESENT, HTTP_CACHE_FULL };

/* How http_cache_add() adds a block. */
enum {
	HTTP_CACHE_NOW,		/* its memory now (a reader's block: may go
				   over the size when the cache is full of
				   blocks in use) */
	HTTP_CACHE_LATER,	/* its memory when its bytes come
				   (http_cache_alloc()): read-ahead */
	HTTP_CACHE_FAR,		/* as LATER, and once READY the first to go
				   (read-ahead further than memory keeps,
				   which waits in the disk cache) */
};

struct http_cache_block {
	/* Set when added, then fixed: read them freely (data from when the
	 * block is READY, or by the request filling it). */
	const void *owner;
	uint64_t idx;
	char *data;		/* NULL until http_cache_alloc() */
	size_t len;
	/* The cache's, under its lock; state is read with
	 * http_cache_state(), failed_ahead once it says FAILED. */
	int state;
	int failed_ahead;	/* FAILED as read-ahead no one waited for */
	unsigned refs;
	int hashed;			/* findable (not FAILED/dropped) */
	int in_lru;			/* READY and hashed */
	int spent;			/* read to its end (LRU's tail) */
	int far;			/* read-ahead memory does not keep
					   (LRU's tail once READY) */
	int idle;			/* READY, hashed, unreferenced, with
					   its bytes: evictable, counted in
					   the cache's idle */
	LIST_ENTRY(http_cache_block) hlink;
	TAILQ_ENTRY(http_cache_block) lru;
};

struct http_cache;

/* A cache of at most bytes of block data, or NULL (no memory). */
struct http_cache *http_cache_new(uint64_t bytes);
/* Free c (every owner's blocks dropped). */
void http_cache_free(struct http_cache *c);

/* b's state; once READY its bytes are in and fixed. */
static inline int
http_cache_state(const struct http_cache_block *b)
{
	return __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
}

/* Block idx of owner (LOADING or READY), referenced; NULL when the table
 * has none. */
struct http_cache_block *http_cache_pin(struct http_cache *c,
					const void *owner, uint64_t idx);

/* A new LOADING block with refs references into *out, its memory had as
 * mode says (HTTP_CACHE_NOW, _LATER, _FAR): HTTP_CACHE_ADDED;
 * HTTP_CACHE_PRESENT (*out NULL) when the table has one; HTTP_CACHE_FULL
 * (*out NULL) without memory. */
int http_cache_add(struct http_cache *c, const void *owner, uint64_t idx,
		   size_t len, int mode, unsigned refs,
		   struct http_cache_block **out);

/* b (LOADING, referenced by the caller, which fills it) gets the memory
 * for its bytes, when it has none yet: unreferenced READY blocks make
 * room, the furthest read-ahead and those read to their end first.  0;
 * -1 when there is no memory at all, or, fit, when the cache is full of
 * blocks in use (else b may go over the size: the request filling it
 * is under way). */
int http_cache_alloc(struct http_cache *c, struct http_cache_block *b,
		     int fit);

/* The blocks[0..n) of one request about to start (LOADING, referenced
 * by the caller) get the memory for their bytes, if there is room in
 * the size for all of them (for half the size, when they need more:
 * the rest then goes over it as the bytes come, http_cache_alloc()).
 * 0; -1 when there is no room (blocks in use fill the cache: no
 * block's memory taken) or no memory at all (what was taken stays with
 * its blocks). */
int http_cache_reserve(struct http_cache *c, struct http_cache_block **blocks,
		       unsigned n);

/* b, LOADING, has all its bytes: READY (the most recently used), and
 * its waiters wake. */
void http_cache_ready(struct http_cache *c, struct http_cache_block *b);

/* The end of the request that filled blocks[0..n): each still LOADING
 * becomes READY (ok) or FAILED (out of the table; ahead: as read-ahead
 * no one waited for), each loses the request's reference, and the
 * waiters wake. */
void http_cache_settle(struct http_cache *c, struct http_cache_block **blocks,
		       unsigned n, int ok, int ahead);

/* One more reference to b. */
void http_cache_ref(struct http_cache *c, struct http_cache_block *b);

/* Drop a reference to each of blocks[0..n) (NULL ones skipped); a block
 * out of the table goes with its last one.  read_end (not 0): a reader
 * took bytes up to there from them: each READY one becomes the most
 * recently used, or, read to its end, the next to be evicted. */
void http_cache_release(struct http_cache *c, struct http_cache_block **blocks,
			uint64_t n, uint64_t read_end);

/* While some of blocks[0..n) (NULL ones skipped) is LOADING, wait until
 * a block settles or until_ms (http_conf_now_ms() clock), once.  1 when
 * none was LOADING. */
int http_cache_wait(struct http_cache *c, struct http_cache_block *const *blocks,
		    uint64_t n, uint64_t until_ms);

/* Free every block of owner (no request may be filling one). */
void http_cache_drop(struct http_cache *c, const void *owner);

/* Bytes of block data allocated now, and the most at once (for tests and
 * counters). */
uint64_t http_cache_bytes(struct http_cache *c);
uint64_t http_cache_peak(struct http_cache *c);

/* The size the cache keeps its blocks' bytes within. */
uint64_t http_cache_limit(const struct http_cache *c);

/* Bytes of the block arena used so far: memory the process has touched
 * (for tests). */
uint64_t http_cache_arena_touched(struct http_cache *c);

#endif
