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

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;		/* an item was queued */
	pthread_cond_t less;		/* an item was written */
	STAILQ_HEAD(, spool_item) queue;
	uint64_t bytes;			/* queued or being written */
	struct http_disk_object *busy[SPOOL_WRITERS];	/* being written */
	pid_t pid;			/* whose writer threads run (0: none) */
	pthread_t thread[SPOOL_WRITERS];
	unsigned nthreads;
	int stop;			/* http_spool_shutdown(): leave */
} S = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.less = PTHREAD_COND_INITIALIZER,
	.queue = STAILQ_HEAD_INITIALIZER(S.queue),
};

static void *
writer_main(void *arg)
{
	struct http_disk_object **busy = arg;

	pthread_mutex_lock(&S.lock);
	for (;;) {
		struct spool_item *it = STAILQ_FIRST(&S.queue);

		if (!it && S.stop)
			break;
		if (!it) {
			pthread_cond_wait(&S.more, &S.lock);
			continue;
		}
		STAILQ_REMOVE_HEAD(&S.queue, link);
		*busy = it->d;
		pthread_mutex_unlock(&S.lock);
		http_disk_put(it->d, it->b->idx, it->b->data, it->b->len);
		http_cache_lock();
		http_cache_unref(it->b);
		http_cache_unlock();
		pthread_mutex_lock(&S.lock);
		*busy = NULL;
		S.bytes -= HTTP_BLOCK_BYTES;
		free(it);
		pthread_cond_broadcast(&S.less);
	}
	pthread_mutex_unlock(&S.lock);
	return NULL;
}

/* The writers of this process, started at the first block (a fork, as a
 * daemon's, leaves the parent's behind); 0 (at least one runs), or -1. */
static int
writer_running(void)
{
	sigset_t all, old;
	unsigned i;

	if (S.pid == getpid())
		return 0;
	/* they take no signals: those belong to the FUSE threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	S.nthreads = 0;
	for (i = 0; i < SPOOL_WRITERS; i++) {
		S.busy[i] = NULL;
		if (pthread_create(&S.thread[S.nthreads], NULL, writer_main,
				   &S.busy[S.nthreads]) == 0)
			S.nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!S.nthreads)
		return -1;
	S.pid = getpid();
	return 0;
}

void
http_spool_put(struct http_disk_object *d, struct http_cache_block *b)
{
	struct spool_item *it;

	if (!d)
		return;
	it = malloc(sizeof(*it));
	pthread_mutex_lock(&S.lock);
	if (!it || writer_running() < 0) {
		/* no memory or no thread: write it here */
		pthread_mutex_unlock(&S.lock);
		free(it);
		http_disk_put(d, b->idx, b->data, b->len);
		return;
	}
	pthread_mutex_unlock(&S.lock);
	http_cache_lock();
	b->refs++;
	http_cache_unlock();
	it->d = d;
	it->b = b;
	pthread_mutex_lock(&S.lock);
	/* counted as whole blocks: what the writers pin of the cache */
	while (S.bytes && S.bytes + HTTP_BLOCK_BYTES > SPOOL_MAX_BYTES)
		pthread_cond_wait(&S.less, &S.lock);
	STAILQ_INSERT_TAIL(&S.queue, it, link);
	S.bytes += HTTP_BLOCK_BYTES;
	pthread_cond_signal(&S.more);
	pthread_mutex_unlock(&S.lock);
}

static int
pending(const struct http_disk_object *d)
{
	const struct spool_item *it;
	unsigned i;

	for (i = 0; i < S.nthreads; i++)
		if (S.busy[i] == d)
			return 1;
	STAILQ_FOREACH(it, &S.queue, link)
		if (it->d == d)
			return 1;
	return 0;
}

void
http_spool_drain(struct http_disk_object *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&S.lock);
	if (writer_running() < 0)
		S.nthreads = 0;	/* no writer: nothing is being written */
	while (pending(d) && S.pid == getpid())
		pthread_cond_wait(&S.less, &S.lock);
	pthread_mutex_unlock(&S.lock);
}

void
http_spool_shutdown(void)
{
	unsigned i;

	pthread_mutex_lock(&S.lock);
	if (S.pid != getpid()) {
		pthread_mutex_unlock(&S.lock);
		return;		/* no writer of ours */
	}
	S.stop = 1;
	pthread_cond_broadcast(&S.more);
	pthread_mutex_unlock(&S.lock);
	for (i = 0; i < S.nthreads; i++)	/* after the queue is written */
		pthread_join(S.thread[i], NULL);
	pthread_mutex_lock(&S.lock);
	S.pid = 0;
	S.stop = 0;
	pthread_mutex_unlock(&S.lock);
}
