/* http_cache.c - the block cache: hash table, LRU list, arena. */
#include "source/http/http_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "source/http/http_conf.h"

#define BUCKETS		4096
#define HUGE_PAGE	(2u << 20)	/* transparent huge page size */

LIST_HEAD(hbucket, http_cache_block);
TAILQ_HEAD(hlru, http_cache_block);

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* a block or job settled */
	struct hbucket buckets[BUCKETS];
	struct hlru lru;		/* most recent first */
	uint64_t bytes;			/* block data allocated */
	/* Full blocks live in one arena of cache size, mapped at the first
	 * block and asked for transparent huge pages: a fresh 1 MiB malloc
	 * costs 256 page faults, a fifth of the time of a cold read. */
	char *arena;
	size_t arena_bytes;
	unsigned *free_slot;		/* stack of free arena slots */
	unsigned nfree;
	unsigned touched;		/* slots below this were used */
	int arena_tried;
} C = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.lru = TAILQ_HEAD_INITIALIZER(C.lru),
};

static void
cache_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&C.changed, &ca);
	pthread_condattr_destroy(&ca);
}

void
http_cache_lock(void)
{
	pthread_once(&C.once, cache_init);
	pthread_mutex_lock(&C.lock);
}

void
http_cache_unlock(void)
{
	pthread_mutex_unlock(&C.lock);
}

void
http_cache_broadcast(void)
{
	pthread_cond_broadcast(&C.changed);
}

int
http_cache_wait(uint64_t until_ms)
{
	struct timespec ts = {
		(time_t)(until_ms / 1000), (long)(until_ms % 1000) * 1000000
	};

	if (pthread_cond_timedwait(&C.changed, &C.lock, &ts) == ETIMEDOUT &&
	    http_conf_now_ms() >= until_ms)
		return ETIMEDOUT;
	return 0;
}

void
http_cache_cond_wait(void *cond)
{
	pthread_cond_wait(cond, &C.lock);
}

uint64_t
http_cache_bytes(void)
{
	return C.bytes;
}

uint64_t
http_cache_arena_touched(void)
{
	return (uint64_t)C.touched * HTTP_BLOCK_BYTES;
}

static struct hbucket *
bucket_of(const void *owner, uint64_t idx)
{
	uint64_t k = (uint64_t)(uintptr_t)owner * 0x9e3779b97f4a7c15ull ^
		     idx * 0xc2b2ae3d27d4eb4full;

	return &C.buckets[(k ^ (k >> 29)) % BUCKETS];
}

struct http_cache_block *
http_cache_lookup(const void *owner, uint64_t idx)
{
	struct http_cache_block *b;

	LIST_FOREACH(b, bucket_of(owner, idx), hlink)
		if (b->owner == owner && b->idx == idx)
			return b;
	return NULL;
}

static void
unhash(struct http_cache_block *b)
{
	if (b->in_lru) {
		TAILQ_REMOVE(&C.lru, b, lru);
		b->in_lru = 0;
	}
	if (b->hashed) {
		LIST_REMOVE(b, hlink);
		b->hashed = 0;
	}
}

static void
arena_init(void)
{
	size_t n = (size_t)(http_conf.cache_bytes / HTTP_BLOCK_BYTES), i;
	size_t map = n * HTTP_BLOCK_BYTES + HUGE_PAGE;
	char *p;

	C.arena_tried = 1;
	C.free_slot = malloc(n * sizeof(*C.free_slot));
	if (!C.free_slot)
		return;
	p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(C.free_slot);
		C.free_slot = NULL;
		return;
	}
	/* Align to a huge page; the slack at both ends stays unused. */
	C.arena = (char *)(((uintptr_t)p + HUGE_PAGE - 1) &
			   ~(uintptr_t)(HUGE_PAGE - 1));
	C.arena_bytes = n * HTTP_BLOCK_BYTES;
	madvise(C.arena, C.arena_bytes, MADV_HUGEPAGE);
	for (i = 0; i < n; i++)
		C.free_slot[i] = (unsigned)(n - 1 - i);	/* slot 0 first */
	C.nfree = (unsigned)n;
}

static int
in_arena(const char *p)
{
	return C.arena && p >= C.arena && p < C.arena + C.arena_bytes;
}

static char *
data_alloc(size_t len)
{
	if (!C.arena_tried)
		arena_init();
	if (len == HTTP_BLOCK_BYTES && C.nfree) {
		unsigned slot = C.free_slot[--C.nfree];

		if (slot >= C.touched)
			C.touched = slot + 1;
		return C.arena + (size_t)slot * HTTP_BLOCK_BYTES;
	}
	return malloc(len);	/* short last blocks, demand over the limit */
}

static void
block_free(struct http_cache_block *b)
{
	C.bytes -= b->len;
	if (in_arena(b->data))
		C.free_slot[C.nfree++] = (unsigned)((size_t)(b->data - C.arena) /
						    HTTP_BLOCK_BYTES);
	else
		free(b->data);
	free(b);
}

/* Drop unused READY blocks, oldest first, until need more bytes fit. */
static void
evict(uint64_t need)
{
	struct http_cache_block *b = TAILQ_LAST(&C.lru, hlru), *prev;

	while (b && C.bytes + need > http_conf.cache_bytes) {
		prev = TAILQ_PREV(b, hlru, lru);
		/* b->job: its transfer still points at it */
		if (b->refs == 0 && !b->job) {
			unhash(b);
			block_free(b);
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
reuse_spent(void)
{
	struct http_cache_block *b = TAILQ_LAST(&C.lru, hlru), *prev;
	int looked = 0;

	if (!C.arena || !C.nfree || C.free_slot[C.nfree - 1] < C.touched)
		return;		/* the next slot is a used one anyway */
	for (; b && b->spent && looked < 16; b = prev, looked++) {
		prev = TAILQ_PREV(b, hlru, lru);
		if (b->refs == 0 && !b->job && in_arena(b->data)) {
			unhash(b);
			block_free(b);
			return;
		}
	}
}

struct http_cache_block *
http_cache_new(const void *owner, uint64_t idx, size_t len, int must_fit)
{
	struct http_cache_block *b;

	if (len == HTTP_BLOCK_BYTES)
		reuse_spent();
	evict(len);
	if (must_fit && C.bytes + len > http_conf.cache_bytes)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->data = data_alloc(len);
	if (!b->data) {
		free(b);
		return NULL;
	}
	b->owner = owner;
	b->idx = idx;
	b->len = len;
	b->state = HTTP_CACHE_LOADING;
	LIST_INSERT_HEAD(bucket_of(owner, idx), b, hlink);
	b->hashed = 1;
	C.bytes += len;
	return b;
}

void
http_cache_ready(struct http_cache_block *b)
{
	b->state = HTTP_CACHE_READY;
	if (b->hashed && !b->in_lru) {
		TAILQ_INSERT_HEAD(&C.lru, b, lru);
		b->in_lru = 1;
	}
	http_cache_broadcast();
}

void
http_cache_failed(struct http_cache_block *b)
{
	b->state = HTTP_CACHE_FAILED;
	unhash(b);
	if (b->refs == 0)
		block_free(b);
}

void
http_cache_touch(struct http_cache_block *b, int spent)
{
	b->spent = spent;
	if (b->in_lru) {
		TAILQ_REMOVE(&C.lru, b, lru);
		if (spent)
			TAILQ_INSERT_TAIL(&C.lru, b, lru);
		else
			TAILQ_INSERT_HEAD(&C.lru, b, lru);
	}
}

void
http_cache_unref(struct http_cache_block *b)
{
	if (--b->refs == 0 && !b->hashed)
		block_free(b);
}

void
http_cache_drop(const void *owner)
{
	size_t k;

	for (k = 0; k < BUCKETS; k++) {
		struct http_cache_block *b, *next;

		for (b = LIST_FIRST(&C.buckets[k]); b; b = next) {
			next = LIST_NEXT(b, hlink);
			if (b->owner != owner)
				continue;
			unhash(b);
			if (b->refs == 0)
				block_free(b);
		}
	}
}
