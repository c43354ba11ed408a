/* gather_cache.c - tiles of gathered strided views (gather_cache.h). */
#include "model/gather_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/table.h"

/* A tile found within the last RECENT events of the cache (finds and
 * claims) is in use: it is not replaced. */
#define RECENT (2 * GATHER_CACHE_N)

struct tile {
	const void *owner;
	const struct tensor *t;	/* NULL: a free slot */
	uint64_t index;		/* its first byte: index * GATHER_CACHE_TILE */
	size_t len;
	size_t served;		/* bytes copied out (a byte read twice counts
				   twice) */
	unsigned refs;		/* readers copying from it, or waiting */
	int pending;		/* being gathered by one reader */
	uint64_t used;		/* the cache's clock when last found */
	uint8_t *data;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;	/* a pending tile is ready (or failed) */
	uint64_t clock;
	struct tile tiles[GATHER_CACHE_N];
} C = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, { { 0 } } };

/* With the lock held: slot x empty again. */
static void
tile_clear(struct tile *x)
{
	free(x->data);
	*x = (struct tile){ 0 };
}

/* With the lock held: the tile of (t, index), pinned (ready, or pending:
 * the caller waits), or NULL. */
static struct tile *
find(const struct tensor *t, uint64_t index)
{
	for (size_t i = 0; i < GATHER_CACHE_N; i++) {
		struct tile *x = &C.tiles[i];

		if (x->t == t && x->index == index) {
			x->refs++;
			x->used = ++C.clock;
			return x;
		}
	}
	return NULL;
}

/* With the lock held: an empty slot, or else the least recently used
 * tile no reader holds and none found lately, claimed for (owner, t,
 * index), pending and pinned; NULL when there is none. */
static struct tile *
claim(const void *owner, const struct tensor *t, uint64_t index)
{
	struct tile *lru = NULL;

	for (size_t i = 0; i < GATHER_CACHE_N; i++) {
		struct tile *y = &C.tiles[i];

		if (!y->t) {
			lru = y;
			break;
		}
		if (y->refs == 0 && y->used + RECENT <= C.clock &&
		    (!lru || y->used < lru->used))
			lru = y;
	}
	if (!lru)
		return NULL;
	tile_clear(lru);
	*lru = (struct tile){ .owner = owner, .t = t, .index = index,
			      .refs = 1, .pending = 1, .used = ++C.clock };
	return lru;
}

/* Gather tile index of t (size bytes), GATHER_CACHE_TILE bytes of its
 * file or the rest of them, into a new buffer. */
static int
gather(const struct tensor *t, uint64_t size, uint64_t index,
       tensor_render_read_fn read, void *arg, uint8_t **out, size_t *len)
{
	uint64_t off = index * GATHER_CACHE_TILE;
	size_t n = size - off < GATHER_CACHE_TILE ? (size_t)(size - off) :
		   GATHER_CACHE_TILE;
	uint8_t *b = malloc(n ? n : 1);
	int rc;

	if (!b)
		return -ENOMEM;
	rc = tensor_render_read(t, off, n, b, read, arg);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	*len = n;
	return 0;
}

/* The tile of (t, index), ready and pinned: found, waited for while
 * another reader gathers it, or gathered here; NULL with *rc when its
 * gather failed, or with *rc 0 when there is no slot to gather it in
 * (the caller gathers its window alone). */
static struct tile *
get(const void *owner, const struct tensor *t, uint64_t size,
    uint64_t index, tensor_render_read_fn read, void *arg, int *rc)
{
	struct tile *x;
	uint8_t *data = NULL;
	size_t len = 0;

	pthread_mutex_lock(&C.lock);
	for (;;) {
		x = find(t, index);
		if (!x)
			break;
		while (x->pending)
			pthread_cond_wait(&C.done, &C.lock);
		if (x->t == t && x->index == index && x->data) {
			pthread_mutex_unlock(&C.lock);
			return x;
		}
		x->refs--;	/* its gather failed: try again */
	}
	x = claim(owner, t, index);
	pthread_mutex_unlock(&C.lock);
	if (!x)
		return NULL;
	*rc = gather(t, size, index, read, arg, &data, &len);
	pthread_mutex_lock(&C.lock);
	x->pending = 0;
	if (*rc == 0) {
		x->data = data;
		x->len = len;
	} else {
		x->t = NULL;	/* free again; waiters see it failed */
		x->refs--;
		x = NULL;
	}
	pthread_cond_broadcast(&C.done);
	pthread_mutex_unlock(&C.lock);
	return x;
}

int
gather_cache_read(const void *owner, const struct tensor *t, uint64_t size,
		  uint64_t off, size_t len, void *dst,
		  tensor_render_read_fn read, void *arg)
{
	uint8_t *out = dst;
	int rc = 0;

	while (rc == 0 && len) {
		uint64_t index = off / GATHER_CACHE_TILE;
		size_t at = (size_t)(off % GATHER_CACHE_TILE), n;
		struct tile *x;

		n = GATHER_CACHE_TILE - at < len ? GATHER_CACHE_TILE - at : len;
		x = get(owner, t, size, index, read, arg, &rc);
		if (rc)
			break;
		if (!x) {
			/* no slot to gather a tile in: this window alone */
			rc = tensor_render_read(t, off, n, out, read, arg);
		} else {
			if (n > x->len - at)
				n = x->len - at;
			memcpy(out, x->data + at, n);
			pthread_mutex_lock(&C.lock);
			x->served += n;
			if (--x->refs == 0 && x->served >= x->len)
				tile_clear(x);	/* read through */
			pthread_mutex_unlock(&C.lock);
		}
		out += n;
		off += n;
		len -= n;
	}
	return rc;
}

void
gather_cache_drop(const void *owner)
{
	pthread_mutex_lock(&C.lock);
	for (size_t i = 0; i < GATHER_CACHE_N; i++)
		if (C.tiles[i].t && C.tiles[i].owner == owner &&
		    !C.tiles[i].refs)
			tile_clear(&C.tiles[i]);
	pthread_mutex_unlock(&C.lock);
}
