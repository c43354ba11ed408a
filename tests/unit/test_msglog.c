/* test_msglog.c - the ring of a daemon's last messages (base/msglog.c):
 * one stamped line per message, newlines inside made spaces, a message
 * too long cut, the oldest whole lines dropped when the ring is full, the
 * time of the last message; and text_time_iso().  Links base only.
 */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/msglog.h"
#include "base/text.h"
#include "suites.h"

#define STAMP "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\." \
	      "[0-9]{3}[+-][0-9]{4}"

static int
matches(const char *s, const char *re)
{
	regex_t r;
	int ok;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

static char *
rendered(struct msglog *l)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(msglog_render(l, &b), 0);
	ck_assert_uint_eq(b.len, msglog_size(l, NULL));
	if (!b.data)
		return strdup("");
	return buf_steal(&b);
}

START_TEST(test_time_iso)
{
	struct timespec t = { 1700000000, 123456789 };
	char s[TEXT_TIME_ISO];

	ck_assert_uint_gt(text_time_iso(s, sizeof(s), &t), 0);
	ck_assert_msg(matches(s, "^" STAMP "$"), "%s", s);
	ck_assert_msg(strstr(s, ".123") != NULL, "%s", s);
	ck_assert_uint_eq(text_time_iso(s, 10, &t), 0);
	ck_assert_str_eq(s, "");
}
END_TEST

START_TEST(test_lines)
{
	struct msglog *l = msglog_new(0);
	struct timespec t0, t1;
	char *s;

	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(msglog_size(l, &t0), 0);
	msglog_add(l, 3, "x.safetensors: changed while mounted\n");
	msglog_add(l, 4, "two\nlines %s");
	msglog_add(NULL, 3, "nowhere");
	s = rendered(l);
	ck_assert_msg(matches(s, "^" STAMP " error: x.safetensors: changed "
			      "while mounted\n" STAMP " warning: two lines "
			      "%s\n$"), "%s", s);
	free(s);
	msglog_size(l, &t1);
	ck_assert(t1.tv_sec > t0.tv_sec ||
		  (t1.tv_sec == t0.tv_sec && t1.tv_nsec >= t0.tv_nsec));
	msglog_free(l);
	msglog_free(NULL);
}
END_TEST

START_TEST(test_long_message_cut)
{
	struct msglog *l = msglog_new(0);
	char *big = malloc(3 * MSGLOG_LINE_MAX), *s;

	memset(big, 'a', 3 * MSGLOG_LINE_MAX - 1);
	big[3 * MSGLOG_LINE_MAX - 1] = '\0';
	msglog_add(l, 6, big);
	s = rendered(l);
	ck_assert_msg(matches(s, "^" STAMP " info: a+\n$"), "%.80s", s);
	ck_assert_uint_eq(strlen(strstr(s, "info: ") + 6), MSGLOG_LINE_MAX + 1);
	free(s);
	free(big);
	msglog_free(l);
}
END_TEST

START_TEST(test_oldest_go)
{
	struct msglog *l = msglog_new(4096);
	char msg[64], *s, *p;
	int i, first = -1, last = -1, n = 0;

	for (i = 0; i < 1000; i++) {
		snprintf(msg, sizeof(msg), "message %04d", i);
		msglog_add(l, 5, msg);
	}
	s = rendered(l);
	ck_assert_uint_le(strlen(s), 4096);
	ck_assert_uint_gt(strlen(s), 4096 - 2 * 64);
	/* whole lines, in order, the newest kept */
	for (p = s; *p; p = strchr(p, '\n') + 1) {
		ck_assert_msg(matches(p, "^" STAMP " notice: message [0-9]{4}\n"),
			      "%.60s", p);
		i = atoi(strstr(p, "message ") + 8);
		if (first < 0)
			first = i;
		else
			ck_assert_int_eq(i, last + 1);
		last = i;
		n++;
	}
	ck_assert_int_eq(last, 999);
	ck_assert_int_eq(first, 1000 - n);
	free(s);
	msglog_free(l);
}
END_TEST

Suite *
msglog_suite(void)
{
	Suite *s = suite_create("msglog");
	TCase *t = tcase_create("msglog");

	tcase_add_test(t, test_time_iso);
	tcase_add_test(t, test_lines);
	tcase_add_test(t, test_long_message_cut);
	tcase_add_test(t, test_oldest_go);
	suite_add_tcase(s, t);
	return s;
}
