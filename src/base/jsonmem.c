/* jsonmem.c - see jsonmem.h. */
#include "base/jsonmem.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>

/* Blocks malloc'd beforehand that stand in for an allocation jansson
 * does not get: its lexer, given NULL while a string's buffer grows,
 * loses the closing quote and then reads and writes past the buffer
 * (2.14), and json_dumps() leaves a key out.  Handed one of these, the
 * parse or the dump goes on whole; the failure is counted all the same
 * and the caller drops what it got.  They are real malloc() blocks, so
 * whoever frees them (json_decref, or free() of a json_dumps() text) may;
 * the pool is filled again once allocations succeed.  Two of each power
 * of two from 32 bytes to 64 KiB (jansson's buffers double): 256 KiB. */
#define POOL_MIN_SHIFT 5
#define POOL_SIZES 12
#define POOL_EACH 2
#define POOL_SLOTS (POOL_SIZES * POOL_EACH)

static __thread unsigned long failures;
static void *(*under)(size_t) = malloc;
static void *pool[POOL_SLOTS];	/* slot k: 1 << (POOL_MIN_SHIFT + k / 2) */
static int pool_missing;	/* slots to fill (atomic) */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

void
jsonmem_set_malloc(void *(*f)(size_t))
{
	under = f ? f : malloc;
}

static size_t
slot_size(int k)
{
	return (size_t)1 << (POOL_MIN_SHIFT + k / POOL_EACH);
}

/* The empty slots filled, as far as memory allows. */
static void
pool_fill(void)
{
	int k, missing = 0;

	pthread_mutex_lock(&pool_lock);
	for (k = 0; k < POOL_SLOTS; k++) {
		if (!pool[k])
			pool[k] = under(slot_size(k));
		missing += !pool[k];
	}
	__atomic_store_n(&pool_missing, missing, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pool_lock);
}

/* The smallest pooled block of n bytes or more, or NULL. */
static void *
pool_take(size_t n)
{
	void *p = NULL;
	int k;

	pthread_mutex_lock(&pool_lock);
	for (k = 0; k < POOL_SLOTS && !p; k++)
		if (pool[k] && slot_size(k) >= n) {
			p = pool[k];
			pool[k] = NULL;
			__atomic_add_fetch(&pool_missing, 1, __ATOMIC_ACQ_REL);
		}
	pthread_mutex_unlock(&pool_lock);
	return p;
}

static void *
counted_malloc(size_t n)
{
	void *p = under(n);

	if (!p) {
		failures++;
		return pool_take(n);
	}
	if (__atomic_load_n(&pool_missing, __ATOMIC_ACQUIRE))
		pool_fill();
	return p;
}

void
jsonmem_watch(void)
{
	pool_fill();
	json_set_alloc_funcs(counted_malloc, free);
}

unsigned long
jsonmem_failures(void)
{
	return failures;
}
