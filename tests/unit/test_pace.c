/* test_pace.c - the concurrency controller (http_pace.c) on simulated
 * links, with a made-up clock: per-connection caps, an aggregate cap, a
 * link that gets faster, idle readers, caps on connections and on
 * throughput, and the request sizes it picks. */
#include <check.h>

#include "source/http/http_pace.h"
#include "suites.h"

#define MB 1000000ull

/* A link: each connection carries at most per_conn bytes/s, all of them
 * together at most total (0: no such cap).  Run the controller for ms of
 * simulated time with a reader that always has more work than the level
 * allows (starved), or none beyond it (idle); returns the final level. */
static uint64_t received;	/* bytes all transfers received */

static unsigned
simulate(struct http_pace *p, uint64_t *now, uint64_t per_conn,
	 uint64_t total, uint64_t ms, int starved)
{
	uint64_t end = *now + ms, start = *now;

	while (*now < end) {
		unsigned limit = p->limit, i;
		uint64_t bps = per_conn * limit, wait;
		/* every connection finishes one 2 MB request per round */
		uint64_t bytes = 2 * MB, round_ms;

		if (total && bps > total)
			bps = total;
		round_ms = bytes * limit * 1000 / bps;
		if (starved)	/* one more job than connections */
			(void)http_pace_admit(p, limit, bytes, *now, &wait);
		for (i = 0; i < limit; i++) {
			received += bytes;
			http_pace_done(p, bytes, round_ms, received,
				       start + round_ms * (i + 1) / limit);
		}
		start += round_ms;
		*now = start;
	}
	return p->limit;
}

START_TEST(grows_to_per_connection_caps)
{
	struct http_pace p;
	uint64_t now = 1000;

	/* 8 MB/s per connection, 250 MB/s in all: ~32 connections */
	http_pace_init(&p, 0, 0, now);
	ck_assert_uint_eq(p.limit, PACE_START);
	simulate(&p, &now, 8 * MB, 250 * MB, 20000, 1);
	ck_assert_msg(p.limit >= 32 && p.limit <= PACE_MAX, "limit %u",
		      p.limit);
	/* with no aggregate cap it grows to the most allowed */
	http_pace_init(&p, 0, 0, now);
	simulate(&p, &now, 8 * MB, 0, 20000, 1);
	ck_assert_uint_eq(p.limit, PACE_MAX);
}
END_TEST

START_TEST(holds_at_the_aggregate_cap)
{
	struct http_pace p;
	uint64_t now = 1000;

	/* 32 MB/s per connection, 128 MB/s in all: 4 connections fill the
	 * link; the controller doubles past, sees each connection get half,
	 * goes halfway back and then halves while the link stays as full:
	 * down to what fills it */
	http_pace_init(&p, 0, 0, now);
	simulate(&p, &now, 32 * MB, 128 * MB, 5000, 1);
	ck_assert_uint_eq(p.holding, 1);
	ck_assert_uint_eq(p.descending, 0);
	ck_assert_msg(p.limit >= 4 && p.limit <= 8, "limit %u", p.limit);
	/* and stays there, whatever the probes find */
	unsigned found = p.limit;

	simulate(&p, &now, 32 * MB, 128 * MB, 30000, 1);
	ck_assert_uint_eq(p.limit, found);
	/* a link that got faster is found by the probes */
	simulate(&p, &now, 32 * MB, 1024 * MB, 60000, 1);
	ck_assert_msg(p.limit >= 24, "limit %u", p.limit);
}
END_TEST

START_TEST(idle_reader_teaches_nothing)
{
	struct http_pace p;
	uint64_t now = 1000;

	http_pace_init(&p, 0, 0, now);
	simulate(&p, &now, 8 * MB, 0, 20000, 0);
	ck_assert_uint_eq(p.limit, PACE_START);
	ck_assert_uint_eq(p.best_rate, 0);
}
END_TEST

START_TEST(connection_cap)
{
	struct http_pace p;
	uint64_t now = 1000, wait;

	http_pace_init(&p, 4, 0, now);
	ck_assert_uint_eq(p.limit, 4);
	simulate(&p, &now, 8 * MB, 0, 20000, 1);
	ck_assert_uint_eq(p.limit, 4);
	ck_assert_int_eq(http_pace_admit(&p, 3, MB, now, &wait), 1);
	ck_assert_int_eq(http_pace_admit(&p, 4, MB, now, &wait), 0);
	ck_assert_uint_eq(wait, 0);	/* until a request ends */
	http_pace_init(&p, 1000, 0, now);
	ck_assert_uint_eq(p.cap, PACE_MAX);
}
END_TEST

START_TEST(throughput_cap)
{
	struct http_pace p;
	uint64_t now = 1000, wait, admitted = 0, t;

	/* 100 MB/s: over 10 s, 4 MB requests are admitted at that rate
	 * (and the 100 ms burst) whatever the level */
	http_pace_init(&p, 0, 100 * MB, now);
	for (t = 0; t < 10000; t++) {
		while (http_pace_admit(&p, 0, 4 * MB, now + t, &wait))
			admitted += 4 * MB;
		ck_assert_uint_gt(wait, 0);
	}
	ck_assert_msg(admitted >= 990 * MB && admitted <= 1020 * MB,
		      "admitted %llu", (unsigned long long)admitted);
	/* a demand read draws from the same bucket */
	http_pace_demand(&p, 50 * MB, now + t);
	ck_assert_int_eq(http_pace_admit(&p, 0, MB, now + t, &wait), 0);
	ck_assert_uint_ge(wait, 400);
	/* near the cap the level stops growing */
	http_pace_init(&p, 0, 60 * MB, now);
	simulate(&p, &now, 8 * MB, 60 * MB, 20000, 1);
	ck_assert_msg(p.limit <= PACE_START, "limit %u", p.limit);
}
END_TEST

START_TEST(request_sizes)
{
	struct http_pace_conn c = { 0 };
	const uint64_t blk = 1 << 20;

	/* nothing measured yet */
	ck_assert_uint_eq(http_pace_part(&c, 8, 64, blk), PACE_PART_START);
	/* a CDN connection: 8 MB/s, 20 ms to the first byte: 4 MiB, or
	 * 2 MiB for each of 32 connections sharing a 64 MiB window */
	http_pace_conn_sample(&c, 2 * blk, 20, 20 + 2 * blk * 1000 / (8 * MB));
	ck_assert_uint_eq(http_pace_part(&c, 8, 64, blk), 4);
	ck_assert_uint_eq(http_pace_part(&c, 32, 64, blk), 2);
	/* S3: 90 MB/s, 30 ms: the largest parts */
	c = (struct http_pace_conn){ 0 };
	http_pace_conn_sample(&c, 16 * blk, 30, 30 + 16 * blk * 1000 /
			      (90 * MB));
	ck_assert_uint_eq(http_pace_part(&c, 4, 256, blk), PACE_PART_MAX);
	/* ... but every allowed connection gets a part of the window */
	ck_assert_uint_eq(http_pace_part(&c, 16, 64, blk), 4);
	ck_assert_uint_eq(http_pace_part(&c, 64, 8, blk), PACE_PART_MIN);
	/* a sample too quick to time changes nothing */
	http_pace_conn_sample(&c, blk, 5, 5);
	ck_assert_uint_eq(http_pace_part(&c, 4, 256, blk), PACE_PART_MAX);
}
END_TEST

Suite *
pace_suite(void)
{
	Suite *s = suite_create("pace");
	TCase *tc = tcase_create("pace");

	tcase_add_test(tc, grows_to_per_connection_caps);
	tcase_add_test(tc, holds_at_the_aggregate_cap);
	tcase_add_test(tc, idle_reader_teaches_nothing);
	tcase_add_test(tc, connection_cap);
	tcase_add_test(tc, throughput_cap);
	tcase_add_test(tc, request_sizes);
	suite_add_tcase(s, tc);
	return s;
}
