/* test_memo.c - values computed once per index (src/base/memo.c): racing
 * first askers wait for one computation; a failure is not kept; the sha256
 * of a tensor (src/view/tensor_sha256.c) against a known digest. */
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
slow_fn(void *arg, size_t i, struct buf *out)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int n;

	(void)arg;
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
	tcase_add_test(tc, test_sha256);
	suite_add_tcase(s, tc);
	return s;
}
