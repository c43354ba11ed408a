/* memo.c - values computed once per index (see memo.h). */
#include "base/memo.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/buf.h"

enum { SLOT_EMPTY, SLOT_BUSY, SLOT_DONE };

struct slot {
	char *data;
	size_t len;
	int state;
};

struct memo {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a computation finished */
	size_t n;
	struct slot *slots;	/* allocated on first use: most mounts never
				   ask, and a slot costs 24 bytes per tensor */
};

struct memo *
memo_new(size_t n)
{
	struct memo *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
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

int
memo_get(struct memo *l, size_t i, memo_fn fn, void *arg, struct buf *out)
{
	struct buf b = BUF_INIT;
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
	while (s->state == SLOT_BUSY)
		pthread_cond_wait(&l->cv, &l->mu);
	if (s->state == SLOT_DONE) {
		rc = buf_add(out, s->data, s->len) ? -ENOMEM : 0;
		pthread_mutex_unlock(&l->mu);
		return rc;
	}
	s->state = SLOT_BUSY;
	pthread_mutex_unlock(&l->mu);

	rc = fn(arg, i, &b);
	if (!rc && buf_add(out, b.data ? b.data : "", b.len))
		rc = -ENOMEM;

	pthread_mutex_lock(&l->mu);
	if (rc) {
		s->state = SLOT_EMPTY;
		buf_free(&b);
	} else {
		s->len = b.len;
		s->data = buf_steal(&b);
		s->state = SLOT_DONE;
	}
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	return rc;
}
