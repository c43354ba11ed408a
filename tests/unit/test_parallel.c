/* test_parallel.c - src/base/parallel.c: every job runs exactly once,
 * whatever the number of threads asked (none, fewer or more than the
 * jobs), and the jobs of a batch really run at the
 * same time (what the opening of remote shards counts on).  Links base
 * only.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parallel.h"
#include "suites.h"

struct counts {
	int *ran;
	int at_once;		/* jobs running now (atomic) */
	int most;		/* the most seen at once (atomic max) */
	int wait_for;		/* hold each job until this many run */
};

static void
count_job(void *arg, size_t i)
{
	struct counts *c = arg;

	__atomic_add_fetch(&c->ran[i], 1, __ATOMIC_RELAXED);
}

static void
run_counted(size_t n, unsigned threads)
{
	struct counts c = { .ran = calloc(n ? n : 1, sizeof(int)) };
	size_t i;

	ck_assert_ptr_nonnull(c.ran);
	parallel_run(n, threads, count_job, &c);
	for (i = 0; i < n; i++)
		ck_assert_msg(c.ran[i] == 1, "n %zu threads %u: job %zu ran "
			      "%d times", n, threads, i, c.ran[i]);
	free(c.ran);
}

START_TEST(test_each_once)
{
	static const unsigned threads[] = { 0, 1, 2, 7, 64 };
	static const size_t ns[] = { 0, 1, 3, 100 };
	size_t a, b;

	for (a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (b = 0; b < sizeof(threads) / sizeof(threads[0]); b++)
			run_counted(ns[a], threads[b]);
}
END_TEST

/* Each job waits (a bounded while: a batch that runs its jobs one by one
 * fails instead of hanging) until every job of the batch has started. */
static void
meet_job(void *arg, size_t i)
{
	struct counts *c = arg;
	struct timespec nap = { 0, 1000000 };
	int now = __atomic_add_fetch(&c->at_once, 1, __ATOMIC_SEQ_CST), k;
	int most = __atomic_load_n(&c->most, __ATOMIC_SEQ_CST);

	c->ran[i] = 1;
	while (now > most && !__atomic_compare_exchange_n(&c->most, &most, now,
			0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	for (k = 0; k < 20000 &&
	     __atomic_load_n(&c->most, __ATOMIC_SEQ_CST) < c->wait_for; k++)
		nanosleep(&nap, NULL);
	__atomic_sub_fetch(&c->at_once, 1, __ATOMIC_SEQ_CST);
}

START_TEST(test_at_once)
{
	struct counts c = { .ran = calloc(16, sizeof(int)), .wait_for = 16 };

	ck_assert_ptr_nonnull(c.ran);
	parallel_run(16, 16, meet_job, &c);
	ck_assert_int_eq(c.most, 16);
	free(c.ran);
}
END_TEST

START_TEST(test_cpus)
{
	ck_assert_uint_ge(parallel_cpus(), 1);
}
END_TEST

Suite *
parallel_suite(void)
{
	Suite *s = suite_create("parallel");
	TCase *t = tcase_create("parallel");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_each_once);
	tcase_add_test(t, test_at_once);
	tcase_add_test(t, test_cpus);
	suite_add_tcase(s, t);
	return s;
}
