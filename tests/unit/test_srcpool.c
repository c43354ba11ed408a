/* test_srcpool.c - the bounded descriptor pool of local sources
 * (src/source/srcpool.c): never more than its maximum open (pinned ones aside),
 * least recently used closed first, a reopen finds the same file or says
 * -ESTALE; under threads that pin, read and unpin while others force
 * closes and reopens, every descriptor handed out reads its own file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/srcpool.h"
#include "suites.h"

#define N 50

static char tmp[256];
static struct srcpool_ent *ents[N];

static void
path_of(int i, char *out, size_t cap)
{
	snprintf(out, cap, "%s/f%02d", tmp, i);
}

/* Open descriptors of this process. */
static int
count_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

static void
setup(void)
{
	char p[300];
	int i;

	snprintf(tmp, sizeof(tmp), "/tmp/stfs-srcpool-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	srcpool_set_max(8);
	for (i = 0; i < N; i++) {
		struct stat st;
		FILE *f;
		int fd;

		path_of(i, p, sizeof(p));
		f = fopen(p, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "file %02d", i);
		fclose(f);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(fstat(fd, &st), 0);
		ents[i] = srcpool_add(p, fd, &st);
		ck_assert_ptr_nonnull(ents[i]);
		ck_assert_uint_le(srcpool_open_count(), 8);
	}
}

static void
teardown(void)
{
	char cmd[300];
	int i;

	for (i = 0; i < N; i++)
		srcpool_remove(ents[i]);
	ck_assert_uint_eq(srcpool_open_count(), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static void
read_ok(int i)
{
	char buf[8], want[9];
	int fd = srcpool_get(ents[i]);

	ck_assert_int_ge(fd, 0);
	snprintf(want, sizeof(want), "file %02d", i);
	ck_assert_int_eq(pread(fd, buf, 7, 0), 7);
	ck_assert_int_eq(memcmp(buf, want, 7), 0);
	srcpool_put(ents[i]);
}

START_TEST(test_bounded)
{
	int base = count_fds(), round, i;

	/* every file, three times over, in different orders */
	for (round = 0; round < 3; round++)
		for (i = 0; i < N; i++)
			read_ok(round == 1 ? N - 1 - i : (i * 7) % N);
	ck_assert_uint_le(srcpool_open_count(), 8);
	ck_assert_int_le(count_fds(), base);
}
END_TEST

START_TEST(test_pinned_stay_open)
{
	int fds[12], i;

	/* 12 pinned at once: more than the maximum, none closed under us */
	for (i = 0; i < 12; i++)
		fds[i] = srcpool_get(ents[i]);
	for (i = 12; i < N; i++)
		read_ok(i);
	for (i = 0; i < 12; i++) {
		char buf[8];

		ck_assert_int_eq(pread(fds[i], buf, 7, 0), 7);
		ck_assert_int_eq(buf[6] - '0', i % 10);
		srcpool_put(ents[i]);
	}
	read_ok(N - 1);
	ck_assert_uint_le(srcpool_open_count(), 8);
}
END_TEST

START_TEST(test_lru)
{
	int i, fd;
	char p[300];

	/* 1..7 then 0, then 7 others: the 7 least recently used (1..7) are
	 * closed, 0 stays */
	for (i = 1; i < 8; i++)
		read_ok(i);
	read_ok(0);
	for (i = 8; i < 15; i++)
		read_ok(i);
	/* 0 is still open (used after 1..7), 1 was closed: a rewrite of
	 * both is seen only on the reopen of 1 */
	for (i = 0; i < 2; i++) {
		path_of(i, p, sizeof(p));
		fd = open(p, O_WRONLY | O_TRUNC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, "changed!!", 9), 9);
		close(fd);
	}
	fd = srcpool_get(ents[0]);
	ck_assert_int_ge(fd, 0);
	srcpool_put(ents[0]);
	ck_assert_int_eq(srcpool_get(ents[1]), -ESTALE);
	ck_assert_int_eq(srcpool_get(ents[1]), -ESTALE);	/* sticky */
	/* replaced by rename: another inode */
	path_of(2, p, sizeof(p));
	{
		char q[310];
		FILE *f;

		snprintf(q, sizeof(q), "%s.new", p);
		f = fopen(q, "w");
		ck_assert_ptr_nonnull(f);
		fputs("file 02", f);	/* same bytes, same size */
		fclose(f);
		ck_assert_int_eq(rename(q, p), 0);
	}
	ck_assert_int_eq(srcpool_get(ents[2]), -ESTALE);
	/* removed */
	path_of(3, p, sizeof(p));
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(srcpool_get(ents[3]), -ESTALE);
	/* the others still read */
	for (i = 4; i < N; i++)
		read_ok(i);
}
END_TEST

START_TEST(test_relative_path)
{
	char cwd[4096], p[300];
	struct srcpool_ent *x;
	struct stat st;
	int fd, i;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(tmp), 0);
	fd = open("f00", O_RDONLY);
	ck_assert_int_eq(fstat(fd, &st), 0);
	x = srcpool_add("f00", fd, &st);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(chdir("/"), 0);
	for (i = 1; i < N; i++)		/* push it out */
		read_ok(i);
	fd = srcpool_get(x);
	ck_assert_int_ge(fd, 0);
	srcpool_put(x);
	srcpool_remove(x);
	ck_assert_int_eq(chdir(cwd), 0);
	(void)p;
}
END_TEST

/* --- races ------------------------------------------------------------ */

#define THREADS 8
#define ROUNDS 4000

struct racer {
	unsigned seed;
	int span;		/* files 0..span-1 */
	int bad;		/* reads of the wrong bytes, or errors */
};

static void *
race(void *p)
{
	struct racer *r = p;
	char buf[8], want[9];
	int k;

	for (k = 0; k < ROUNDS; k++) {
		int i = (int)(rand_r(&r->seed) % (unsigned)r->span);
		int fd = srcpool_get(ents[i]);

		if (fd < 0) {
			r->bad++;
			continue;
		}
		snprintf(want, sizeof(want), "file %02d", i);
		if (pread(fd, buf, 7, 0) != 7 || memcmp(buf, want, 7) != 0)
			r->bad++;
		srcpool_put(ents[i]);
	}
	return NULL;
}

static void
race_over(int span)
{
	struct racer r[THREADS];
	pthread_t th[THREADS];
	int base = count_fds(), i;

	for (i = 0; i < THREADS; i++) {
		r[i].seed = (unsigned)(i * 7919 + span);
		r[i].span = span;
		r[i].bad = 0;
		ck_assert_int_eq(pthread_create(&th[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(r[i].bad, 0);
	}
	ck_assert_uint_le(srcpool_open_count(), 8);
	ck_assert_int_le(count_fds(), base);
}

START_TEST(test_race_hits)
{
	/* 6 files, 8 may be open: the lock-free path only */
	race_over(6);
}
END_TEST

START_TEST(test_race_evictions)
{
	/* 40 files through 8 slots: closes and reopens all the time, each
	 * racing the other threads' pins of the same file */
	race_over(40);
}
END_TEST

START_TEST(test_race_pinned_survive)
{
	int fds[4], i;
	char buf[8];

	for (i = 0; i < 4; i++)
		fds[i] = srcpool_get(ents[i]);
	race_over(N);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pread(fds[i], buf, 7, 0), 7);
		ck_assert_int_eq(buf[6] - '0', i);
		srcpool_put(ents[i]);
	}
}
END_TEST

Suite *
srcpool_suite(void)
{
	Suite *s = suite_create("srcpool");
	TCase *tc = tcase_create("pool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bounded);
	tcase_add_test(tc, test_pinned_stay_open);
	tcase_add_test(tc, test_lru);
	tcase_add_test(tc, test_relative_path);
	tcase_add_test(tc, test_race_hits);
	tcase_add_test(tc, test_race_evictions);
	tcase_add_test(tc, test_race_pinned_survive);
	suite_add_tcase(s, tc);
	return s;
}
