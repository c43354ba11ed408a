/* test_memo.c - values computed once per index (src/base/memo.c): racing
 * first askers wait for one computation; a failure is not kept; an asker
 * that may not wait is told so, one that is gone stops waiting, and a
 * computation nobody wants is abandoned; the sha256 of a tensor
 * (src/view/tensor_sha256.c) against a known digest. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/memo.h"
#include "source/source.h"
#include "view/tensor_sha256.h"
#include "suites.h"

static int calls;
static pthread_mutex_t calls_mu = PTHREAD_MUTEX_INITIALIZER;
static int fail_first;

static int
slow_fn(void *arg, size_t i, struct buf *out, const struct memo_job *job)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int n;

	(void)arg;
	(void)job;
	pthread_mutex_lock(&calls_mu);
	n = ++calls;
	pthread_mutex_unlock(&calls_mu);
	/* long enough that the other threads arrive while this one runs */
	nanosleep(&ts, NULL);
	if (fail_first && n == 1)
		return -EIO;
	return buf_addf(out, "value %zu", i) ? -ENOMEM : 0;
}

struct asker {
	struct memo *l;
	char got[64];
	int rc;
};

static void *
ask(void *p)
{
	struct asker *a = p;
	struct buf b = BUF_INIT;

	a->rc = memo_get(a->l, 3, slow_fn, NULL, &b);
	if (!a->rc)
		snprintf(a->got, sizeof(a->got), "%.*s", (int)b.len, b.data);
	buf_free(&b);
	return NULL;
}

START_TEST(test_once_under_race)
{
	struct memo *l = memo_new(5);
	struct asker a[8];
	pthread_t th[8];
	int k;

	ck_assert_ptr_nonnull(l);
	calls = 0;
	fail_first = 0;
	for (k = 0; k < 8; k++) {
		memset(&a[k], 0, sizeof(a[k]));
		a[k].l = l;
		ck_assert_int_eq(pthread_create(&th[k], NULL, ask, &a[k]), 0);
	}
	for (k = 0; k < 8; k++)
		pthread_join(th[k], NULL);
	ck_assert_int_eq(calls, 1);
	for (k = 0; k < 8; k++) {
		ck_assert_int_eq(a[k].rc, 0);
		ck_assert_str_eq(a[k].got, "value 3");
	}
	/* later askers get the kept value without a call */
	ask(&a[0]);
	ck_assert_int_eq(calls, 1);
	memo_free(l);
}
END_TEST

START_TEST(test_failure_not_kept)
{
	struct memo *l = memo_new(5);
	struct asker a;

	calls = 0;
	fail_first = 1;
	memset(&a, 0, sizeof(a));
	a.l = l;
	ask(&a);
	ck_assert_int_eq(a.rc, -EIO);
	ask(&a);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_str_eq(a.got, "value 3");
	ck_assert_int_eq(calls, 2);
	ck_assert_int_eq(memo_get(l, 5, slow_fn, NULL, &(struct buf)BUF_INIT),
			 -EINVAL);
	memo_free(l);
	memo_free(NULL);
}
END_TEST

/* --- askers ------------------------------------------------------------ */

/* Runs until abandoned or released; says it started. */
static int started, release;
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;

static int
flag(int *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static int
gated_fn(void *arg, size_t i, struct buf *out, const struct memo_job *job)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	(void)arg;
	pthread_mutex_lock(&gate_mu);
	calls++;
	pthread_mutex_unlock(&gate_mu);
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	while (!flag(&release)) {
		if (memo_job_abandoned(job))
			return -EINTR;
		nanosleep(&ts, NULL);
	}
	return buf_addf(out, "gated %zu", i) ? -ENOMEM : 0;
}

struct gated {
	struct memo *l;
	struct memo_asker *who;		/* NULL: no asker */
	int rc, done;
};

static void *
ask_gated(void *p)
{
	struct gated *g = p;
	struct buf b = BUF_INIT;

	memo_asker_set(g->who);
	g->rc = memo_get(g->l, 1, gated_fn, NULL, &b);
	memo_asker_set(NULL);
	buf_free(&b);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
wait_flag(int *f)
{
	struct timespec ts = { 0, 1000 * 1000 };
	int i;

	for (i = 0; i < 10000 && !flag(f); i++)	/* at most ~10 s */
		nanosleep(&ts, NULL);
	ck_assert(flag(f));
}

START_TEST(test_asker_may_not_wait)
{
	struct memo *l = memo_new(2);
	struct memo_asker fuse_thread = { 0, 0 }, worker = { 1, 0 };
	struct gated g = { l, &worker, 1, 0 };
	struct buf b = BUF_INIT;
	pthread_t th;

	calls = 0;
	started = release = 0;
	/* nothing computed: a request thread is told to hand it on */
	memo_asker_set(&fuse_thread);
	ck_assert_int_eq(memo_get(l, 1, gated_fn, NULL, &b), -EWOULDBLOCK);
	ck_assert_int_eq(calls, 0);
	/* being computed: the same */
	ck_assert_int_eq(pthread_create(&th, NULL, ask_gated, &g), 0);
	wait_flag(&started);
	ck_assert_int_eq(memo_get(l, 1, gated_fn, NULL, &b), -EWOULDBLOCK);
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ck_assert_int_eq(g.rc, 0);
	/* computed: answered at once */
	ck_assert_int_eq(memo_get(l, 1, gated_fn, NULL, &b), 0);
	ck_assert_int_eq((int)b.len, 7);
	ck_assert(memcmp(b.data, "gated 1", 7) == 0);
	ck_assert_int_eq(calls, 1);
	memo_asker_set(NULL);
	buf_free(&b);
	memo_free(l);
}
END_TEST

START_TEST(test_gone_waiter_leaves)
{
	struct memo *l = memo_new(2);
	struct memo_asker first = { 1, 0 }, second = { 1, 0 };
	struct gated a = { l, &first, 1, 0 }, w = { l, &second, 1, 0 };
	pthread_t ta, tw;

	calls = 0;
	started = release = 0;
	ck_assert_int_eq(pthread_create(&ta, NULL, ask_gated, &a), 0);
	wait_flag(&started);
	ck_assert_int_eq(pthread_create(&tw, NULL, ask_gated, &w), 0);
	/* the waiter's reader gives up: it returns while the computation
	 * still runs (release is not set) */
	__atomic_store_n(&second.gone, 1, __ATOMIC_RELEASE);
	pthread_join(tw, NULL);
	ck_assert_int_eq(w.rc, -EINTR);
	ck_assert(!flag(&a.done));
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(calls, 1);
	memo_free(l);
}
END_TEST

START_TEST(test_abandoned_when_nobody_wants)
{
	struct memo *l = memo_new(2);
	struct memo_asker first = { 1, 0 };
	struct gated a = { l, &first, 1, 0 }, w = { l, NULL, 1, 0 };
	pthread_t ta, tw;

	calls = 0;
	started = release = 0;
	ck_assert_int_eq(pthread_create(&ta, NULL, ask_gated, &a), 0);
	wait_flag(&started);
	/* a waiter without an asker never gives up, so the computation
	 * goes on for it after its own asker is gone... */
	ck_assert_int_eq(pthread_create(&tw, NULL, ask_gated, &w), 0);
	__atomic_store_n(&first.gone, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tw, NULL);
	ck_assert_int_eq(w.rc, 0);
	/* ...or it was abandoned before the waiter came, and the waiter
	 * computed it again: either way the value is there */
	ck_assert(a.rc == 0 || (a.rc == -EINTR && calls == 2));

	/* alone and gone: abandoned, not kept */
	memo_free(l);
	l = memo_new(2);
	calls = 0;
	started = release = 0;
	first.gone = 0;
	a = (struct gated){ l, &first, 1, 0 };	/* a variable: a compound
						   literal's scope ends with
						   the call (ASan) */
	ck_assert_int_eq(pthread_create(&ta, NULL, ask_gated, &a), 0);
	wait_flag(&started);
	__atomic_store_n(&first.gone, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	ck_assert_int_eq(calls, 1);
	started = 0;
	w.l = l;
	ck_assert_int_eq(pthread_create(&tw, NULL, ask_gated, &w), 0);
	wait_flag(&started);	/* computed again: nothing was kept */
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	pthread_join(tw, NULL);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_int_eq(calls, 2);
	memo_free(l);
}
END_TEST

START_TEST(test_sha256)
{
	char path[] = "/tmp/stfs-test-sha256-XXXXXX", hex[TENSOR_SHA256_HEX_LEN + 1];
	int fd = mkstemp(path);
	struct err e = { 0 };
	struct source *src;

	ck_assert_int_ge(fd, 0);
	/* "xxabcyy": bytes 2..5 are "abc", whose SHA-256 is FIPS 180-2's
	 * first example */
	ck_assert_int_eq(write(fd, "xxabcyy", 7), 7);
	close(fd);
	ck_assert_int_eq(source_open_local(path, &src, &e), 0);
	ck_assert_int_eq(tensor_sha256(src, 2, 3, hex), 0);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223"
			      "b00361a396177a9cb410ff61f20015ad");
	ck_assert_int_eq(tensor_sha256(src, 7, 0, hex), 0);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb924"
			      "27ae41e4649b934ca495991b7852b855");
	ck_assert_int_lt(tensor_sha256(src, 5, 10, hex), 0);	/* past the end */
	source_close(src);
	unlink(path);
}
END_TEST

Suite *
memo_suite(void)
{
	Suite *s = suite_create("memo");
	TCase *tc = tcase_create("memo");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_once_under_race);
	tcase_add_test(tc, test_failure_not_kept);
	tcase_add_test(tc, test_asker_may_not_wait);
	tcase_add_test(tc, test_gone_waiter_leaves);
	tcase_add_test(tc, test_abandoned_when_nobody_wants);
	tcase_add_test(tc, test_sha256);
	suite_add_tcase(s, tc);
	return s;
}
