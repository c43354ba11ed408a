/* memo.c - values computed once per index (see memo.h). */
#include "base/memo.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "base/buf.h"

enum { SLOT_EMPTY, SLOT_BUSY, SLOT_DONE };

struct slot {
	char *data;
	size_t len;
	int state;
	int waiters;			/* askers waiting for it (atomic) */
	uint64_t used;			/* bounded: when last read */
	struct memo_asker *computer;	/* who computes it, while BUSY */
};

struct memo {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a computation finished */
	size_t n;
	size_t max, held;	/* bounded: byte budget, bytes kept */
	uint64_t clock;		/* bounded: reads so far */
	struct slot *slots;	/* allocated on first use: most mounts never
				   ask, and a slot costs 32 bytes per tensor */
};

struct memo_job {
	struct slot *slot;
};

static __thread struct memo_asker *asker;

void
memo_asker_set(struct memo_asker *a)
{
	asker = a;
}

static int
gone(const struct memo_asker *a)
{
	return a && __atomic_load_n(&a->gone, __ATOMIC_ACQUIRE);
}

struct memo *
memo_new_bounded(size_t n, size_t max_bytes)
{
	struct memo *l = memo_new(n);

	if (l)
		l->max = max_bytes;
	return l;
}

/* Drop the least recently read values (not keep) until the budget
 * holds; l->mu held.  A scan: bounded tables hold few values, and one
 * is computed by reading a whole tensor. */
static void
evict(struct memo *l, const struct slot *keep)
{
	struct slot *old;
	size_t i;

	while (l->max && l->held > l->max) {
		old = NULL;
		for (i = 0; i < l->n; i++) {
			struct slot *s = &l->slots[i];

			if (s != keep && s->state == SLOT_DONE &&
			    (!old || s->used < old->used))
				old = s;
		}
		if (!old)
			return;
		l->held -= old->len;
		free(old->data);
		old->data = NULL;
		old->len = 0;
		old->state = SLOT_EMPTY;
	}
}

struct memo *
memo_new(size_t n)
{
	struct memo *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;

	if (!l)
		return NULL;
	pthread_mutex_init(&l->mu, NULL);
	/* monotonic: the askers' polls must not jump with the clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	l->n = n;
	return l;
}

void
memo_free(struct memo *l)
{
	size_t i;

	if (!l)
		return;
	if (l->slots)
		for (i = 0; i < l->n; i++)
			free(l->slots[i].data);
	free(l->slots);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* Wait (l->mu held) until the slot's computation ends, or for one poll
 * when there is an asker to look at. */
static void
wait_busy(struct memo *l, struct slot *s, const struct memo_asker *a)
{
	struct timespec ts;

	__atomic_add_fetch(&s->waiters, 1, __ATOMIC_RELEASE);
	if (!a) {
		pthread_cond_wait(&l->cv, &l->mu);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += MEMO_POLL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&l->cv, &l->mu, &ts);
	}
	__atomic_sub_fetch(&s->waiters, 1, __ATOMIC_RELEASE);
}

/* Bytes [off, off + len) of a value of size n, clamped, appended. */
static int
add_part(struct buf *out, const char *data, size_t n, size_t off,
	 size_t len)
{
	if (off >= n)
		return buf_add(out, "", 0) ? -ENOMEM : 0;
	if (len > n - off)
		len = n - off;
	return buf_add(out, data ? data + off : "", len) ? -ENOMEM : 0;
}

int
memo_get(struct memo *l, size_t i, memo_fn fn, void *arg, struct buf *out)
{
	return memo_get_part(l, i, fn, arg, 0, SIZE_MAX, out);
}

int
memo_get_part(struct memo *l, size_t i, memo_fn fn, void *arg, size_t off,
	      size_t len, struct buf *out)
{
	struct memo_asker *a = asker;
	struct buf b = BUF_INIT;
	struct memo_job job;
	struct slot *s;
	int rc;

	if (i >= l->n)
		return -EINVAL;
	pthread_mutex_lock(&l->mu);
	if (!l->slots) {
		l->slots = calloc(l->n ? l->n : 1, sizeof(*l->slots));
		if (!l->slots) {
			pthread_mutex_unlock(&l->mu);
			return -ENOMEM;
		}
	}
	s = &l->slots[i];
	for (;;) {
		if (s->state == SLOT_DONE) {
			s->used = ++l->clock;
			rc = add_part(out, s->data, s->len, off, len);
			pthread_mutex_unlock(&l->mu);
			return rc;
		}
		if (a && !a->may_wait) {
			pthread_mutex_unlock(&l->mu);
			return -EWOULDBLOCK;
		}
		if (gone(a)) {
			pthread_mutex_unlock(&l->mu);
			return -EINTR;
		}
		if (s->state == SLOT_EMPTY)
			break;
		wait_busy(l, s, a);
	}
	s->state = SLOT_BUSY;
	s->computer = a;
	pthread_mutex_unlock(&l->mu);

	job.slot = s;
	rc = fn(arg, i, &b, &job);
	if (!rc)
		rc = add_part(out, b.data, b.len, off, len);

	pthread_mutex_lock(&l->mu);
	s->computer = NULL;
	if (rc) {
		s->state = SLOT_EMPTY;
		buf_free(&b);
	} else {
		s->len = b.len;
		s->data = buf_steal(&b);
		s->state = SLOT_DONE;
		s->used = ++l->clock;
		l->held += s->len;
		evict(l, s);
	}
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	return rc;
}

int
memo_job_abandoned(const struct memo_job *job)
{
	/* computer is only written by this thread, before and after fn */
	return job && gone(job->slot->computer) &&
	       __atomic_load_n(&job->slot->waiters, __ATOMIC_ACQUIRE) == 0;
}
