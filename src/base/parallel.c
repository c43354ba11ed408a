/* parallel.c - a pool of threads for one batch of jobs (parallel.h). */
#include "base/parallel.h"

#include <pthread.h>
#include <unistd.h>

#define PARALLEL_MAX	256	/* threads of one batch, at most */

struct batch {
	size_t n;
	size_t next;		/* the next job to hand out (atomic) */
	void (*job)(void *arg, size_t i);
	void *arg;
};

static void *
worker(void *p)
{
	struct batch *b = p;
	size_t i;

	while ((i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < b->n)
		b->job(b->arg, i);
	return NULL;
}

void
parallel_run(size_t n, unsigned threads, void (*job)(void *arg, size_t i),
	     void *arg)
{
	struct batch b = { .n = n, .job = job, .arg = arg };
	pthread_t th[PARALLEL_MAX];
	size_t want = threads > n ? n : threads, k = 0, i;

	if (want > PARALLEL_MAX)
		want = PARALLEL_MAX;
	/* the caller is one of them */
	while (k + 1 < want && pthread_create(&th[k], NULL, worker, &b) == 0)
		k++;
	worker(&b);
	for (i = 0; i < k; i++)
		pthread_join(th[i], NULL);
}

unsigned
parallel_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (unsigned)n;
}
