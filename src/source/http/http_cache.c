/* http_cache.c - the block cache: hash table, LRU list, arena.
 *
 * Its lock is its own: every function here takes it for what it does,
 * and nothing outside this file holds it (the prefetcher has a lock of
 * its own, taken before this one when both are).  A block's state is
 * stored with release order under the lock, so that whoever loads it
 * with acquire order (http_cache_state()) sees the bytes of a READY one.
 */
#include "source/http/http_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "source/http/http_conf.h"
#include "source/http/http_options.h"

#define BUCKETS		4096
#define HUGE_PAGE	(2u << 20)	/* transparent huge page size */

LIST_HEAD(hbucket, http_cache_block);
TAILQ_HEAD(hlru, http_cache_block);

struct http_cache {
	uint64_t limit;			/* bytes of block data at most */
	pthread_mutex_t lock;		/* everything below, and the blocks'
					   table, LRU and reference fields */
	pthread_cond_t settled;		/* a block settled */
	struct hbucket buckets[BUCKETS];
	struct hlru lru;		/* most recent first */
	uint64_t bytes;			/* block data allocated */
	uint64_t peak;			/* ... at most, so far */
	uint64_t idle;			/* ... of blocks that may go */
	/* Full blocks live in one arena of cache size, mapped at the first
	 * block and asked for transparent huge pages: a fresh 1 MiB malloc
	 * costs 256 page faults, a fifth of the time of a cold read. */
	char *arena;
	size_t arena_bytes;
	void *arena_map;		/* the mapping, for munmap */
	size_t arena_map_bytes;
	unsigned *free_slot;		/* stack of free arena slots */
	unsigned nfree;
	unsigned touched;		/* slots below this were used */
	int arena_tried;
};

struct http_cache *
http_cache_new(uint64_t bytes)
{
	struct http_cache *c = calloc(1, sizeof(*c));
	size_t k;

	if (!c)
		return NULL;
	c->limit = bytes;
	pthread_mutex_init(&c->lock, NULL);
	http_conf_cond_init(&c->settled);
	for (k = 0; k < BUCKETS; k++)
		LIST_INIT(&c->buckets[k]);
	TAILQ_INIT(&c->lru);
	return c;
}

void
http_cache_free(struct http_cache *c)
{
	if (!c)
		return;
	if (c->arena)
		munmap(c->arena_map, c->arena_map_bytes);
	free(c->free_slot);
	pthread_cond_destroy(&c->settled);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

uint64_t
http_cache_bytes(struct http_cache *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = c->bytes;
	pthread_mutex_unlock(&c->lock);
	return n;
}

uint64_t
http_cache_peak(struct http_cache *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = c->peak;
	pthread_mutex_unlock(&c->lock);
	return n;
}

uint64_t
http_cache_limit(const struct http_cache *c)
{
	return c->limit;
}

uint64_t
http_cache_arena_touched(struct http_cache *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = (uint64_t)c->touched * HTTP_BLOCK_BYTES;
	pthread_mutex_unlock(&c->lock);
	return n;
}

static struct hbucket *
bucket_of(struct http_cache *c, const void *owner, uint64_t idx)
{
	uint64_t k = (uint64_t)(uintptr_t)owner * 0x9e3779b97f4a7c15ull ^
		     idx * 0xc2b2ae3d27d4eb4full;

	return &c->buckets[(k ^ (k >> 29)) % BUCKETS];
}

static struct http_cache_block *
lookup(struct http_cache *c, const void *owner, uint64_t idx)
{
	struct http_cache_block *b;

	LIST_FOREACH(b, bucket_of(c, owner, idx), hlink)
		if (b->owner == owner && b->idx == idx)
			return b;
	return NULL;
}

static void
set_state(struct http_cache_block *b, int state)
{
	__atomic_store_n(&b->state, state, __ATOMIC_RELEASE);
}

/* Keep c->idle right after any change of b's state, references, place
 * in the table or memory (lock held). */
static void
note_idle(struct http_cache *c, struct http_cache_block *b)
{
	int idle = b->state == HTTP_CACHE_READY && b->hashed && !b->refs &&
		   b->data;

	if (idle != b->idle) {
		if (idle)
			c->idle += b->len;
		else
			c->idle -= b->len;
		b->idle = idle;
	}
}

static void
unhash(struct http_cache *c, struct http_cache_block *b)
{
	if (b->in_lru) {
		TAILQ_REMOVE(&c->lru, b, lru);
		b->in_lru = 0;
	}
	if (b->hashed) {
		LIST_REMOVE(b, hlink);
		b->hashed = 0;
	}
	note_idle(c, b);
}

static void
arena_init(struct http_cache *c)
{
	size_t n = (size_t)(c->limit / HTTP_BLOCK_BYTES), i;
	size_t map = n * HTTP_BLOCK_BYTES + HUGE_PAGE;
	char *p;

	c->arena_tried = 1;
	c->free_slot = malloc(n * sizeof(*c->free_slot));
	if (!c->free_slot)
		return;
	p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(c->free_slot);
		c->free_slot = NULL;
		return;
	}
	c->arena_map = p;
	c->arena_map_bytes = map;
	/* Align to a huge page; the slack at both ends stays unused. */
	c->arena = (char *)(((uintptr_t)p + HUGE_PAGE - 1) &
			    ~(uintptr_t)(HUGE_PAGE - 1));
	c->arena_bytes = n * HTTP_BLOCK_BYTES;
	madvise(c->arena, c->arena_bytes, MADV_HUGEPAGE);
	for (i = 0; i < n; i++)
		c->free_slot[i] = (unsigned)(n - 1 - i);	/* slot 0 first */
	c->nfree = (unsigned)n;
}

static int
in_arena(const struct http_cache *c, const char *p)
{
	return c->arena && p >= c->arena && p < c->arena + c->arena_bytes;
}

static char *
data_alloc(struct http_cache *c, size_t len)
{
	if (!c->arena_tried)
		arena_init(c);
	if (len == HTTP_BLOCK_BYTES && c->nfree) {
		unsigned slot = c->free_slot[--c->nfree];

		if (slot >= c->touched)
			c->touched = slot + 1;
		return c->arena + (size_t)slot * HTTP_BLOCK_BYTES;
	}
	return malloc(len);	/* short last blocks, demand over the limit */
}

static void
block_free(struct http_cache *c, struct http_cache_block *b)
{
	if (b->data) {
		c->bytes -= b->len;
		if (in_arena(c, b->data))
			c->free_slot[c->nfree++] =
				(unsigned)((size_t)(b->data - c->arena) /
					   HTTP_BLOCK_BYTES);
		else
			free(b->data);
	}
	free(b);
}

/* Drop unused READY blocks from the LRU's tail (read to their end, far
 * read-ahead, then the least recently used) until need more bytes fit. */
static void
evict(struct http_cache *c, uint64_t need)
{
	struct http_cache_block *b = TAILQ_LAST(&c->lru, hlru), *prev;

	while (b && c->bytes + need > c->limit) {
		prev = TAILQ_PREV(b, hlru, lru);
		/* referenced: read, written to disk, or being filled */
		if (b->refs == 0) {
			unhash(c, b);
			block_free(c, b);
		}
		b = prev;
	}
}

/* Memory the process has not touched yet costs a page fault and the
 * zeroing of a huge page at first use (in this VM, as much CPU as a
 * second copy of the data); a block read to its end is not likely to be
 * read again.  So before a full block takes an arena slot never used,
 * a spent block near the LRU's tail gives up its own. */
static void
reuse_spent(struct http_cache *c)
{
	struct http_cache_block *b = TAILQ_LAST(&c->lru, hlru), *prev;
	int looked = 0;

	if (!c->arena || !c->nfree || c->free_slot[c->nfree - 1] < c->touched)
		return;		/* the next slot is a used one anyway */
	for (; b && (b->spent || b->far) && looked < 16; b = prev, looked++) {
		prev = TAILQ_PREV(b, hlru, lru);
		if (b->refs == 0 && in_arena(c, b->data)) {
			unhash(c, b);
			block_free(c, b);
			return;
		}
	}
}

struct http_cache_block *
http_cache_pin(struct http_cache *c, const void *owner, uint64_t idx)
{
	struct http_cache_block *b;

	pthread_mutex_lock(&c->lock);
	b = lookup(c, owner, idx);
	if (b) {
		b->refs++;
		note_idle(c, b);
	}
	pthread_mutex_unlock(&c->lock);
	return b;
}

/* Memory for b's bytes (lock held): room made by evicting, then taken
 * even over the limit unless fit.  0 or -1. */
static int
give_data(struct http_cache *c, struct http_cache_block *b, int fit)
{
	if (b->len == HTTP_BLOCK_BYTES)
		reuse_spent(c);
	evict(c, b->len);
	if (fit && c->bytes + b->len > c->limit)
		return -1;
	b->data = data_alloc(c, b->len);
	if (!b->data)
		return -1;
	c->bytes += b->len;
	if (c->bytes > c->peak)
		c->peak = c->bytes;
	return 0;
}

int
http_cache_add(struct http_cache *c, const void *owner, uint64_t idx,
	       size_t len, int mode, unsigned refs,
	       struct http_cache_block **out)
{
	struct http_cache_block *b = NULL;
	int rc = HTTP_CACHE_FULL;

	pthread_mutex_lock(&c->lock);
	if (lookup(c, owner, idx)) {
		rc = HTTP_CACHE_PRESENT;
		goto out;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		goto out;
	b->owner = owner;
	b->idx = idx;
	b->len = len;
	b->far = mode == HTTP_CACHE_FAR;
	if (mode == HTTP_CACHE_NOW && give_data(c, b, 0)) {
		free(b);
		b = NULL;
		goto out;
	}
	b->state = HTTP_CACHE_LOADING;
	b->refs = refs;
	LIST_INSERT_HEAD(bucket_of(c, owner, idx), b, hlink);
	b->hashed = 1;
	rc = HTTP_CACHE_ADDED;
out:
	pthread_mutex_unlock(&c->lock);
	*out = b;
	return rc;
}

int
http_cache_alloc(struct http_cache *c, struct http_cache_block *b, int fit)
{
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	if (!b->data)
		rc = give_data(c, b, fit);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int
http_cache_reserve(struct http_cache *c, struct http_cache_block **blocks,
		   unsigned n)
{
	uint64_t need = 0;
	unsigned i;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < n; i++)
		if (!blocks[i]->data)
			need += blocks[i]->len;
	if (need > c->limit / 2)
		need = c->limit / 2;
	if (need >= HTTP_BLOCK_BYTES)
		reuse_spent(c);
	evict(c, need);
	if (c->bytes + need > c->limit)
		rc = -1;
	for (i = 0; rc == 0 && i < n; i++) {
		struct http_cache_block *b = blocks[i];

		if (b->data)
			continue;
		/* past what was checked: as the bytes come */
		if (c->bytes + b->len > c->limit)
			break;
		b->data = data_alloc(c, b->len);
		if (!b->data)
			rc = -1;	/* what it took stays with its blocks */
		else
			c->bytes += b->len;
	}
	if (c->bytes > c->peak)
		c->peak = c->bytes;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* LOADING -> READY, the most recently used, or far read-ahead the first
 * to go (lock held). */
static void
ready(struct http_cache *c, struct http_cache_block *b)
{
	set_state(b, HTTP_CACHE_READY);
	if (b->hashed && !b->in_lru) {
		if (b->far)
			TAILQ_INSERT_TAIL(&c->lru, b, lru);
		else
			TAILQ_INSERT_HEAD(&c->lru, b, lru);
		b->in_lru = 1;
	}
	note_idle(c, b);
}

/* Drop a reference (lock held); a block out of the table goes with its
 * last one. */
static void
unref(struct http_cache *c, struct http_cache_block *b)
{
	if (--b->refs == 0 && !b->hashed)
		block_free(c, b);
	else
		note_idle(c, b);
}

void
http_cache_ready(struct http_cache *c, struct http_cache_block *b)
{
	pthread_mutex_lock(&c->lock);
	ready(c, b);
	pthread_cond_broadcast(&c->settled);
	pthread_mutex_unlock(&c->lock);
}

void
http_cache_settle(struct http_cache *c, struct http_cache_block **blocks,
		  unsigned n, int ok, int ahead)
{
	unsigned i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < n; i++) {
		struct http_cache_block *b = blocks[i];

		if (b->state == HTTP_CACHE_LOADING) {
			if (ok) {
				ready(c, b);
			} else {
				b->failed_ahead = ahead;
				set_state(b, HTTP_CACHE_FAILED);
				unhash(c, b);
			}
		}
		unref(c, b);
	}
	pthread_cond_broadcast(&c->settled);
	pthread_mutex_unlock(&c->lock);
}

void
http_cache_ref(struct http_cache *c, struct http_cache_block *b)
{
	pthread_mutex_lock(&c->lock);
	b->refs++;
	note_idle(c, b);
	pthread_mutex_unlock(&c->lock);
}

/* A reader took bytes up to read_end from b: the most recently used
 * block, or, read up to its end (a sequential reader is done with it),
 * the next to be evicted (lock held). */
static void
touch(struct http_cache *c, struct http_cache_block *b, uint64_t read_end)
{
	b->far = 0;		/* the reader is here */
	b->spent = read_end >= b->idx * HTTP_BLOCK_BYTES + b->len;
	if (b->in_lru) {
		TAILQ_REMOVE(&c->lru, b, lru);
		if (b->spent)
			TAILQ_INSERT_TAIL(&c->lru, b, lru);
		else
			TAILQ_INSERT_HEAD(&c->lru, b, lru);
	}
}

void
http_cache_release(struct http_cache *c, struct http_cache_block **blocks,
		   uint64_t n, uint64_t read_end)
{
	uint64_t i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < n; i++) {
		struct http_cache_block *b = blocks[i];

		if (!b)
			continue;
		if (read_end && b->state == HTTP_CACHE_READY)
			touch(c, b, read_end);
		unref(c, b);
	}
	pthread_mutex_unlock(&c->lock);
}

int
http_cache_wait(struct http_cache *c, struct http_cache_block *const *blocks,
		uint64_t n, uint64_t until_ms)
{
	uint64_t i;
	int loading = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < n && !loading; i++)
		loading = blocks[i] && blocks[i]->state == HTTP_CACHE_LOADING;
	if (loading)
		http_conf_cond_wait_until(&c->settled, &c->lock, until_ms);
	pthread_mutex_unlock(&c->lock);
	return !loading;
}

void
http_cache_drop(struct http_cache *c, const void *owner)
{
	size_t k;

	pthread_mutex_lock(&c->lock);
	for (k = 0; k < BUCKETS; k++) {
		struct http_cache_block *b, *next;

		for (b = LIST_FIRST(&c->buckets[k]); b; b = next) {
			next = LIST_NEXT(b, hlink);
			if (b->owner != owner)
				continue;
			unhash(c, b);
			if (b->refs == 0)
				block_free(c, b);
		}
	}
	pthread_mutex_unlock(&c->lock);
}
