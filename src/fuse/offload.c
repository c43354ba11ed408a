/* offload.c - a small pool of threads for requests that may wait long
 * (see offload.h). */
#include "fuse/offload.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/memo.h"

struct job {
	struct offload *o;
	fuse_req_t req;
	offload_fn fn;
	struct memo_asker asker;
	int state;		/* JOB_*, under o->mu */
	struct job *prev, *next;
	struct offload_call *call;	/* in the same allocation */
};

/* A job is submitted, then queued, then run; it is claimed by the
 * thread that runs it just before it replies, unless an interrupt
 * answered it first. */
enum { JOB_SUBMITTING, JOB_QUEUED, JOB_RUNNING, JOB_CLAIMED, JOB_ANSWERED };

struct offload {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a job was queued, or stop */
	struct job *head, *tail;
	int stop;
	unsigned n;
	struct job **running;	/* per thread, what it runs now */
	pthread_t *threads;
};

struct worker {
	struct offload *o;
	unsigned i;
};

static void
unqueue(struct offload *o, struct job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		o->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		o->tail = j->prev;
	j->prev = j->next = NULL;
}

/* libfuse calls this with the request's lock held, from the thread that
 * read the INTERRUPT; or at once from fuse_req_interrupt_func() when the
 * request was interrupted before, and then the request must not be
 * answered here (its lock is released after this returns).  The asker
 * is marked gone, so a computation nobody waits for any more stops; the
 * reader is answered EINTR now, not when its worker's read returns. */
static void
on_interrupt(fuse_req_t req, void *data)
{
	struct job *j = data;
	struct offload *o = j->o;
	int state;

	__atomic_store_n(&j->asker.gone, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&o->mu);
	state = j->state;
	if (state == JOB_QUEUED)
		unqueue(o, j);
	if (state == JOB_RUNNING)
		j->state = JOB_ANSWERED;
	pthread_mutex_unlock(&o->mu);
	/* j belongs to its worker again once RUNNING became ANSWERED */
	if (state == JOB_QUEUED || state == JOB_RUNNING)
		fuse_reply_err(req, EINTR);
	if (state == JOB_QUEUED)
		free(j);
}

int
offload_claim(fuse_req_t req, const struct offload_call *c)
{
	struct job *j = c->job;
	int answered;

	if (!j->o)
		return 1;
	pthread_mutex_lock(&j->o->mu);
	answered = j->state == JOB_ANSWERED;
	j->state = JOB_CLAIMED;
	pthread_mutex_unlock(&j->o->mu);
	if (answered)
		return 0;
	/* waits for a callback running now; none comes after */
	fuse_req_interrupt_func(req, NULL, NULL);
	return 1;
}

static void *
worker_main(void *p)
{
	struct worker *w = p;
	struct offload *o = w->o;
	struct job *j;

	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->head && !o->stop)
			pthread_cond_wait(&o->cv, &o->mu);
		if (o->stop)
			break;
		j = o->head;
		unqueue(o, j);
		j->state = JOB_RUNNING;
		o->running[w->i] = j;
		pthread_mutex_unlock(&o->mu);

		memo_asker_set(&j->asker);
		j->fn(j->req, j->call);
		memo_asker_set(NULL);

		pthread_mutex_lock(&o->mu);
		o->running[w->i] = NULL;
		pthread_mutex_unlock(&o->mu);
		free(j);
		pthread_mutex_lock(&o->mu);
	}
	pthread_mutex_unlock(&o->mu);
	free(w);
	return NULL;
}

struct offload *
offload_start(unsigned n)
{
	struct offload *o = calloc(1, sizeof(*o));
	unsigned i;

	if (!o)
		return NULL;
	o->running = calloc(n, sizeof(*o->running));
	o->threads = calloc(n, sizeof(*o->threads));
	if (!o->running || !o->threads) {
		free(o->running);
		free(o->threads);
		free(o);
		return NULL;
	}
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	for (i = 0; i < n; i++) {
		struct worker *w = malloc(sizeof(*w));

		if (!w)
			break;
		w->o = o;
		w->i = i;
		if (pthread_create(&o->threads[i], NULL, worker_main, w) != 0) {
			free(w);
			break;
		}
	}
	o->n = i;
	if (!o->n) {
		offload_stop(o);
		return NULL;
	}
	return o;
}

void
offload_stop(struct offload *o)
{
	struct job *queued, *j;
	unsigned i;

	if (!o)
		return;
	pthread_mutex_lock(&o->mu);
	o->stop = 1;
	queued = o->head;
	for (j = queued; j; j = j->next)
		j->state = JOB_CLAIMED;
	o->head = o->tail = NULL;
	for (i = 0; i < o->n; i++)
		if (o->running[i])
			__atomic_store_n(&o->running[i]->asker.gone, 1,
					 __ATOMIC_RELEASE);
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	while ((j = queued)) {
		queued = j->next;
		fuse_req_interrupt_func(j->req, NULL, NULL);
		fuse_reply_err(j->req, EIO);
		free(j);
	}
	for (i = 0; i < o->n; i++)
		pthread_join(o->threads[i], NULL);
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	free(o->running);
	free(o->threads);
	free(o);
}

void
offload_submit(struct offload *o, fuse_req_t req, offload_fn fn,
	       fuse_ino_t ino, off_t off, size_t size, const char *name)
{
	size_t n = name ? strlen(name) + 1 : 1;
	struct job *j = calloc(1, sizeof(*j) + sizeof(*j->call) + n);
	int gone;

	if (!j) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	j->o = o;
	j->req = req;
	j->fn = fn;
	j->call = (struct offload_call *)(j + 1);
	j->call->job = j;
	j->call->ino = ino;
	j->call->off = off;
	j->call->size = size;
	if (name)
		memcpy(j->call->name, name, n);
	j->asker.may_wait = 1;
	if (!o) {
		/* no pool: answer it here */
		memo_asker_set(&j->asker);
		fn(req, j->call);
		memo_asker_set(NULL);
		free(j);
		return;
	}
	/* calls on_interrupt at once when req is already interrupted */
	fuse_req_interrupt_func(req, on_interrupt, j);
	pthread_mutex_lock(&o->mu);
	gone = __atomic_load_n(&j->asker.gone, __ATOMIC_ACQUIRE) || o->stop;
	j->state = gone ? JOB_CLAIMED : JOB_QUEUED;
	if (!gone) {
		j->prev = o->tail;
		if (o->tail)
			o->tail->next = j;
		else
			o->head = j;
		o->tail = j;
		pthread_cond_signal(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	if (gone) {
		fuse_req_interrupt_func(req, NULL, NULL);
		fuse_reply_err(req, EINTR);
		free(j);
	}
}
