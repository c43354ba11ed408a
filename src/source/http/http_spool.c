/* http_spool.c - blocks on their way to the disk cache. */
#include "source/http/http_spool.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <unistd.h>

#include "source/http/http_cache.h"
#include "source/http/http_disk.h"
#include "source/http/http_options.h"

struct spool_item {
	STAILQ_ENTRY(spool_item) link;
	struct http_disk_object *d;
	struct http_cache_block *b;	/* referenced until written */
};

/* A writer thread, and what it is given: its spool. */
struct writer {
	struct http_spool *sp;
	pthread_t thread;
	struct http_disk_object *busy;	/* being written (spool's lock) */
};

struct http_spool {
	struct http_cache *cache;	/* where its blocks live */
	pthread_mutex_t lock;
	pthread_cond_t more;		/* an item was queued */
	pthread_cond_t less;		/* an item was written */
	STAILQ_HEAD(, spool_item) queue;
	uint64_t bytes;			/* queued or being written */
	uint64_t max;			/* ... at most (SPOOL_MAX_BYTES) */
	pid_t pid;			/* whose writer threads run (0: none) */
	struct writer writers[SPOOL_WRITERS];
	unsigned nthreads;
	int stop;			/* http_spool_free(): leave */
};

struct http_spool *
http_spool_new(struct http_cache *cache)
{
	struct http_spool *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->cache = cache;
	sp->max = http_cache_limit(cache) / 4;
	if (sp->max > SPOOL_MAX_BYTES)
		sp->max = SPOOL_MAX_BYTES;
	if (sp->max < 2 * (uint64_t)HTTP_BLOCK_BYTES)
		sp->max = 2 * (uint64_t)HTTP_BLOCK_BYTES;
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->more, NULL);
	pthread_cond_init(&sp->less, NULL);
	STAILQ_INIT(&sp->queue);
	return sp;
}

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	struct http_spool *sp = w->sp;

	pthread_mutex_lock(&sp->lock);
	for (;;) {
		struct spool_item *it = STAILQ_FIRST(&sp->queue);

		if (!it && sp->stop)
			break;
		if (!it) {
			pthread_cond_wait(&sp->more, &sp->lock);
			continue;
		}
		STAILQ_REMOVE_HEAD(&sp->queue, link);
		w->busy = it->d;
		pthread_mutex_unlock(&sp->lock);
		http_disk_put(it->d, it->b->idx, it->b->data, it->b->len);
		http_cache_release(sp->cache, &it->b, 1, 0);
		pthread_mutex_lock(&sp->lock);
		w->busy = NULL;
		sp->bytes -= HTTP_BLOCK_BYTES;
		free(it);
		pthread_cond_broadcast(&sp->less);
	}
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

/* The writers of this process, started at the first block (a fork, as a
 * daemon's, leaves the parent's behind); 0 (at least one runs), or -1. */
static int
writer_running(struct http_spool *sp)
{
	sigset_t all, old;
	unsigned i;

	if (sp->pid == getpid())
		return 0;
	/* they take no signals: those belong to the FUSE threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sp->nthreads = 0;
	for (i = 0; i < SPOOL_WRITERS; i++) {
		struct writer *w = &sp->writers[sp->nthreads];

		w->sp = sp;
		w->busy = NULL;
		if (pthread_create(&w->thread, NULL, writer_main, w) == 0)
			sp->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!sp->nthreads)
		return -1;
	sp->pid = getpid();
	return 0;
}

void
http_spool_put(struct http_spool *sp, struct http_disk_object *d,
	       struct http_cache_block *b)
{
	struct spool_item *it;

	if (!d)
		return;
	it = malloc(sizeof(*it));
	pthread_mutex_lock(&sp->lock);
	if (!it || writer_running(sp) < 0) {
		/* no memory or no thread: write it here */
		pthread_mutex_unlock(&sp->lock);
		free(it);
		http_disk_put(d, b->idx, b->data, b->len);
		return;
	}
	pthread_mutex_unlock(&sp->lock);
	http_cache_ref(sp->cache, b);
	it->d = d;
	it->b = b;
	pthread_mutex_lock(&sp->lock);
	/* counted as whole blocks: what the writers pin of the cache */
	while (sp->bytes && sp->bytes + HTTP_BLOCK_BYTES > sp->max)
		pthread_cond_wait(&sp->less, &sp->lock);
	STAILQ_INSERT_TAIL(&sp->queue, it, link);
	sp->bytes += HTTP_BLOCK_BYTES;
	pthread_cond_signal(&sp->more);
	pthread_mutex_unlock(&sp->lock);
}

static int
pending(const struct http_spool *sp, const struct http_disk_object *d)
{
	const struct spool_item *it;
	unsigned i;

	for (i = 0; i < sp->nthreads; i++)
		if (sp->writers[i].busy == d)
			return 1;
	STAILQ_FOREACH(it, &sp->queue, link)
		if (it->d == d)
			return 1;
	return 0;
}

void
http_spool_drain(struct http_spool *sp, struct http_disk_object *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&sp->lock);
	if (writer_running(sp) < 0)
		sp->nthreads = 0;	/* no writer: nothing is being written */
	while (pending(sp, d) && sp->pid == getpid())
		pthread_cond_wait(&sp->less, &sp->lock);
	pthread_mutex_unlock(&sp->lock);
}

void
http_spool_free(struct http_spool *sp)
{
	unsigned i;

	if (!sp)
		return;
	pthread_mutex_lock(&sp->lock);
	sp->stop = 1;
	pthread_cond_broadcast(&sp->more);
	pthread_mutex_unlock(&sp->lock);
	if (sp->pid == getpid())		/* else a fork's: not ours */
		for (i = 0; i < sp->nthreads; i++)	/* after the queue is
							   written */
			pthread_join(sp->writers[i].thread, NULL);
	pthread_cond_destroy(&sp->more);
	pthread_cond_destroy(&sp->less);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}
