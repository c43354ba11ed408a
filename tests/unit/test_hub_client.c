/* test_hub_client.c - the Hub client through the fake transport: the
 * token bound to the endpoint's origin, retries, status messages, files
 * opened through resolve/ (redirect to the CDN, downgrade refused, the
 * Hub's words when a file is missing) and expiries that cost nothing
 * that stays. */
#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "fake_http.h"
#include "source/http/http_client.h"
#include "source/http/http_fetch.h"
#include "source/hub/hub_int.h"
#include "source/source.h"
#include "suites.h"

#define OBJ	(200u << 10)	/* the CDN's object: 200 KiB */

static char obj[OBJ];
static int downgrade, cdn_refuses_every_other, missing;
static unsigned cdn_ok;

static void
hub_setup(int token)
{
	size_t i;

	for (i = 0; i < OBJ; i++)
		obj[i] = (char)(i * 31 + 7);
	free(hub_cfg.endpoint);
	free(hub_cfg.origin);
	free(hub_cfg.token);
	hub_cfg.endpoint = strdup("https://hub.test");
	hub_cfg.origin = strdup("https://hub.test");
	hub_cfg.token = token ? strdup("hf_secret") : NULL;
	snprintf(hub_cfg.token_from, sizeof(hub_cfg.token_from), "HF_TOKEN");
	downgrade = cdn_refuses_every_other = missing = 0;
	cdn_ok = 0;
}

static int
has(unsigned i, const char *line)
{
	return strstr(fake_http_seen[i].headers, line) != NULL;
}

/* ---- hub_request ---------------------------------------------------------- */

static void
answer_api(unsigned i, const char *url, struct fake_http_answer *a)
{
	(void)i;
	if (strstr(url, "/flaky") && fake_http_count == 1) {
		a->status = 503;
		return;
	}
	if (strstr(url, "/down")) {
		a->status = 0;
		return;
	}
	a->status = 200;
	a->headers[0] = "X-Error-Message: none";
	a->body = "{\"sha\": \"x\"}";
}

START_TEST(test_token_origin)
{
	struct hub_resp r = { 0 };

	hub_setup(1);
	fake_http_install(answer_api);
	ck_assert_int_eq(hub_request("https://hub.test/api/models/o/n", 1024,
				     &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.data, "{\"sha\": \"x\"}");
	ck_assert_str_eq(r.error_msg, "none");	/* the Hub's headers read */
	ck_assert(has(0, "Authorization: Bearer hf_secret"));
	/* another origin (scheme, host or port) never sees the token */
	ck_assert_int_eq(hub_request("https://cdn.test/x", 1024, &r), 0);
	ck_assert(!has(1, "Authorization"));
	ck_assert_int_eq(hub_request("http://hub.test/x", 1024, &r), 0);
	ck_assert(!has(2, "Authorization"));
	ck_assert_int_eq(hub_request("https://hub.test:444/x", 1024, &r), 0);
	ck_assert(!has(3, "Authorization"));
	hub_resp_free(&r);
}
END_TEST

START_TEST(test_retries_and_limits)
{
	struct hub_resp r = { 0 };

	hub_setup(0);
	fake_http_install(answer_api);
	/* a 503 is retried; the second answer counts */
	ck_assert_int_eq(hub_request("https://hub.test/flaky", 1024, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(fake_http_count, 2);
	ck_assert(!has(0, "Authorization"));
	/* no answer within the bound: -1, status 0, why says why */
	ck_assert_int_eq(hub_request("https://hub.test/down", 1024, &r), -1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.why, "refused"));
	ck_assert_uint_gt(fake_http_count, 3);	/* retried */
	/* a body over the limit is no answer */
	ck_assert_int_eq(hub_request("https://hub.test/big", 4, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "larger than 4 bytes"));
	hub_resp_free(&r);
}
END_TEST

/* ---- messages --------------------------------------------------------------- */

static const char *
message(int token, long status, const char *code)
{
	static struct err e;
	struct hub_resp r = { 0 };

	hub_setup(token);
	memset(&e, 0, sizeof(e));
	r.status = status;
	snprintf(r.error_code, sizeof(r.error_code), "%s", code);
	ck_assert_int_eq(hub_status_error(&r, "org/name", "main", NULL, &e),
			 -1);
	return e.detail;
}

START_TEST(test_status_messages)
{
	ck_assert_ptr_nonnull(strstr(message(0, 401, ""), "not found or "
				     "private"));
	ck_assert_ptr_nonnull(strstr(message(0, 403, ""), "HF_TOKEN"));
	ck_assert_ptr_nonnull(strstr(message(1, 401, ""), "refused the token "
				     "from HF_TOKEN"));
	ck_assert_ptr_nonnull(strstr(message(1, 403, ""), "access to org/name "
				     "denied"));
	ck_assert_ptr_nonnull(strstr(message(1, 403, "GatedRepo"), "gated"));
	ck_assert_ptr_nonnull(strstr(message(1, 404, "RepoNotFound"),
				     "repository org/name not found"));
	ck_assert_ptr_nonnull(strstr(message(1, 404, "RevisionNotFound"),
				     "revision `main` not found"));
	ck_assert_ptr_nonnull(strstr(message(1, 500, ""), "HTTP 500"));
	ck_assert_ptr_nonnull(strstr(message(1, 0, ""),
				     "cannot reach the Hub"));
}
END_TEST

/* ---- files through resolve/ ---------------------------------------------------- */

static char cdn_location[256];

static void
answer_files(unsigned i, const char *url, struct fake_http_answer *a)
{
	static char range[96];
	const struct fake_http_seen *s = &fake_http_seen[i % FAKE_HTTP_MAX];
	uint64_t last;

	if (strncmp(url, "https://hub.test/", 17) == 0) {
		if (missing) {
			a->status = 404;
			a->headers[0] = "X-Error-Code: EntryNotFound";
			return;
		}
		snprintf(cdn_location, sizeof(cdn_location),
			 "Location: %s://cdn.test/blob?n=%u",
			 downgrade ? "http" : "https", i);
		a->status = 302;
		a->headers[0] = cdn_location;
		a->headers[1] = "X-Linked-Size: 204800";
		return;
	}
	if (cdn_refuses_every_other && cdn_ok % 2 == 1) {
		cdn_ok++;
		a->status = 403;	/* the signed URL expired */
		return;
	}
	cdn_ok++;
	last = s->start + s->len - 1;
	if (last >= OBJ)
		last = OBJ - 1;
	snprintf(range, sizeof(range), "Content-Range: bytes %llu-%llu/%u",
		 (unsigned long long)s->start, (unsigned long long)last, OBJ);
	a->status = 206;
	a->headers[0] = range;
	a->headers[1] = "ETag: \"blob1\"";
	a->body = obj + s->start;
	a->body_len = (size_t)(last + 1 - s->start);
}

START_TEST(test_file_through_cdn)
{
	struct source *s = NULL;
	struct err e = { 0 };
	char buf[100];

	hub_setup(1);
	fake_http_install(answer_files);
	ck_assert_int_eq(hub_src_open("https://hub.test/o/n/resolve/abc/"
				      "m.safetensors", "m.safetensors", &s,
				      &e), 0);
	ck_assert_uint_eq(s->size, OBJ);
	ck_assert_str_eq(s->base, "m.safetensors");
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 1000), 0);
	ck_assert_mem_eq(buf, obj + 1000, sizeof(buf));
	/* resolve/ with the token, the CDN without */
	ck_assert_ptr_nonnull(strstr(fake_http_seen[0].url, "hub.test"));
	ck_assert(has(0, "Authorization: Bearer hf_secret"));
	ck_assert_ptr_nonnull(strstr(fake_http_seen[1].url, "cdn.test"));
	ck_assert(!has(1, "Authorization"));
	source_close(s);
}
END_TEST

START_TEST(test_downgrade_refused)
{
	struct source *s = NULL;
	struct err e = { 0 };

	hub_setup(1);
	downgrade = 1;
	fake_http_install(answer_files);
	ck_assert_int_eq(hub_src_open("https://hub.test/o/n/resolve/abc/"
				      "m.safetensors", "m.safetensors", &s,
				      &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "downgrade"));
	ck_assert_uint_eq(fake_http_count, 1);	/* the CDN never asked */
}
END_TEST

START_TEST(test_missing_file_in_hub_words)
{
	struct source *s = NULL;
	struct err e = { 0 };

	hub_setup(1);
	missing = 1;
	fake_http_install(answer_files);
	ck_assert_int_eq(hub_src_open("https://hub.test/o/n/resolve/abc/"
				      "gone.safetensors", "gone.safetensors",
				      &s, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "file `gone.safetensors` not "
				     "found"));
	ck_assert_ptr_nonnull(strstr(e.where, "resolve/abc/gone"));
}
END_TEST

static void
keep(struct http_fetch_range *g, const char *p, size_t n)
{
	memcpy((char *)g->ud + g->got, p, n);
}

/* Every other CDN request refuses an expired URL: each fetch resolves
 * again; after 300 expiries the heap holds what it held after the first
 * (one remembered URL, nothing per expiry). */
START_TEST(test_expiries_leave_nothing)
{
	static char buf[4096];
	struct http_fetch_object o;
	struct http_client *c;
	size_t before;
	unsigned k;

	hub_setup(1);
	cdn_refuses_every_other = 1;
	c = fake_http_install(answer_files);
	ck_assert_int_eq(http_fetch_init(&o, &c->conf, c->tr,
					 "https://hub.test/o/n/resolve/abc/m",
					 NULL, NULL, NULL, NULL), 0);
	o.size = OBJ;
	for (k = 0; k < 302; k++) {
		struct http_fetch_range g = {
			.kind = HTTP_STATS_REQ_DATA, .start = (k % 50) * 4096,
			.len = sizeof(buf), .data = keep, .ud = buf,
		};
		struct http_fetch_budget b = {
			.quiet_until = http_conf_now_ms() + 2000, .demand = 1,
		};

		if (k == 2)
			before = mallinfo2().uordblks;
		ck_assert_msg(http_fetch_get(&o, &g, &b) == HTTP_OK,
			      "fetch %u: %s", k, g.why);
		ck_assert_mem_eq(buf, obj + g.start, sizeof(buf));
	}
	ck_assert_uint_ge(http_stats_get(
		&o.stats.requests[HTTP_STATS_REQ_RESOLVE]), 300);
	ck_assert_uint_le(mallinfo2().uordblks, before + 4096);
	http_fetch_fini(&o);
}
END_TEST

Suite *
hub_client_suite(void)
{
	Suite *s = suite_create("hub_client");
	TCase *tc = tcase_create("hub_client");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_token_origin);
	tcase_add_test(tc, test_retries_and_limits);
	tcase_add_test(tc, test_status_messages);
	tcase_add_test(tc, test_file_through_cdn);
	tcase_add_test(tc, test_downgrade_refused);
	tcase_add_test(tc, test_missing_file_in_hub_words);
	tcase_add_test(tc, test_expiries_leave_nothing);
	suite_add_tcase(s, tc);
	return s;
}
