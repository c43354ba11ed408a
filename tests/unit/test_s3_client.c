/* test_s3_client.c - the S3 client through the fake transport: signed
 * requests' headers, ListObjectsV2 pagination, S3's error codes turned
 * into one line, retries, a server that never answers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "fake_http.h"
#include "source/s3/s3_int.h"
#include "suites.h"

static struct s3_conf conf;

static void
s3_setup(int signed_, int token)
{
	memset(&conf, 0, sizeof(conf));
	conf.region = "eu-west-3";
	conf.endpoint = "https://s3.test";
	conf.sigv4 = "aws:amz:eu-west-3:s3";
	conf.origin = "AWS_ACCESS_KEY_ID";
	if (signed_) {
		conf.key = "AKIDTEST";
		conf.secret = "secret";
	}
	if (token)
		conf.token = "sessiontoken";
}

static const char PAGE1[] =
	"<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true"
	"</IsTruncated><Contents><Key>p/a.safetensors</Key><Size>10</Size>"
	"<ETag>\"e1\"</ETag></Contents><Contents><Key>p/b.json</Key>"
	"<Size>2</Size></Contents><NextContinuationToken>t/+=1"
	"</NextContinuationToken></ListBucketResult>";
static const char PAGE2[] =
	"<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>false"
	"</IsTruncated><Contents><Key>p/c d.safetensors</Key><Size>30"
	"</Size><ETag>\"e3\"</ETag></Contents></ListBucketResult>";
static const char DENIED[] =
	"<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code>"
	"<Message>Access Denied</Message></Error>";

static int flaky, down, denied, truncated_forever;

static void
answer(unsigned i, const char *url, struct fake_http_answer *a)
{
	(void)i;
	if (down) {
		a->status = 0;
		return;
	}
	if (flaky && fake_http_count == 1) {
		a->status = 500;
		return;
	}
	if (denied) {
		a->status = 403;
		a->body = DENIED;
		return;
	}
	a->status = 200;
	if (truncated_forever)
		a->body = "<ListBucketResult><IsTruncated>true</IsTruncated>"
			  "</ListBucketResult>";
	else
		a->body = strstr(url, "continuation-token=") ? PAGE2 : PAGE1;
}

static void
reset(void)
{
	flaky = down = denied = truncated_forever = 0;
	fake_http_install(answer);
}

START_TEST(test_list_pages)
{
	struct s3_listing l;
	struct err e = { 0 };

	s3_setup(1, 0);
	reset();
	ck_assert_int_eq(s3_list(&conf, "bkt", "p/", &l, &e), 0);
	ck_assert_uint_eq(l.requests, 2);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.objs[0].key, "p/a.safetensors");
	ck_assert_uint_eq(l.objs[0].size, 10);
	ck_assert_str_eq(l.objs[0].etag, "\"e1\"");
	ck_assert_ptr_null(l.objs[1].etag);
	ck_assert_str_eq(l.objs[2].key, "p/c d.safetensors");
	/* the query in SigV4's canonical order, encoded */
	ck_assert_str_eq(fake_http_seen[0].url,
			 "https://s3.test/bkt/?list-type=2&prefix=p%2F");
	ck_assert_str_eq(fake_http_seen[1].url, "https://s3.test/bkt/?"
			 "continuation-token=t%2F%2B%3D1&list-type=2&prefix=p%2F");
	ck_assert_uint_eq(fake_http_seen[0].len, 0);	/* no Range */
	s3_listing_free(&l);
}
END_TEST

START_TEST(test_signed_headers)
{
	struct s3_listing l;
	struct err e = { 0 };

	s3_setup(1, 1);
	reset();
	ck_assert_int_eq(s3_list(&conf, "bkt", "", &l, &e), 0);
	ck_assert_str_eq(fake_http_seen[0].sigv4, "aws:amz:eu-west-3:s3");
	ck_assert_str_eq(fake_http_seen[0].key, "AKIDTEST");
	ck_assert_ptr_nonnull(strstr(fake_http_seen[0].headers,
		"x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb924"));
	ck_assert_ptr_nonnull(strstr(fake_http_seen[0].headers,
		"x-amz-security-token: sessiontoken"));
	s3_listing_free(&l);
	/* anonymous: unsigned, no token */
	s3_setup(0, 1);
	reset();
	ck_assert_int_eq(s3_list(&conf, "bkt", "", &l, &e), 0);
	ck_assert_str_eq(fake_http_seen[0].sigv4, "");
	ck_assert_ptr_null(strstr(fake_http_seen[0].headers,
				  "x-amz-security-token"));
	s3_listing_free(&l);
}
END_TEST

START_TEST(test_status_handling)
{
	struct s3_listing l;
	struct err e = { 0 };

	s3_setup(1, 0);
	reset();
	flaky = 1;		/* a 500 is retried */
	ck_assert_int_eq(s3_list(&conf, "bkt", "p/", &l, &e), 0);
	ck_assert_uint_eq(fake_http_count, 3);
	s3_listing_free(&l);

	reset();
	denied = 1;		/* S3's code, the bucket, the credentials */
	ck_assert_int_eq(s3_list(&conf, "bkt", "p/", &l, &e), -1);
	ck_assert_uint_eq(fake_http_count, 1);
	ck_assert_ptr_nonnull(strstr(e.detail, "bucket bkt: AccessDenied"));
	ck_assert_ptr_nonnull(strstr(e.detail, "AWS_ACCESS_KEY_ID"));

	memset(&e, 0, sizeof(e));
	reset();
	down = 1;		/* retried within the bound, then one line */
	ck_assert_int_eq(s3_list(&conf, "bkt", "p/", &l, &e), -1);
	ck_assert_uint_gt(fake_http_count, 1);
	ck_assert_ptr_nonnull(strstr(e.detail, "cannot reach the S3 server"));
}
END_TEST

START_TEST(test_truncated_without_token)
{
	struct s3_listing l;
	struct err e = { 0 };

	s3_setup(1, 0);
	reset();
	truncated_forever = 1;
	ck_assert_int_eq(s3_list(&conf, "bkt", "", &l, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "without a continuation"));
}
END_TEST

START_TEST(test_diagnose)
{
	struct err e = { 0 };

	s3_setup(1, 0);
	reset();
	denied = 1;
	err_set(&e, ERR_IO, "cannot fetch: HTTP status 403");
	err_at(&e, "s3://bkt/k.safetensors");
	ck_assert_int_eq(s3_diagnose(&conf, "bkt", "k.safetensors",
				     "s3://bkt/k.safetensors", &e), -1);
	ck_assert_str_eq(fake_http_seen[0].url,
			 "https://s3.test/bkt/k.safetensors");
	ck_assert_uint_eq(fake_http_seen[0].start, 0);
	ck_assert_uint_eq(fake_http_seen[0].len, 1);
	ck_assert_ptr_nonnull(strstr(e.detail, "AccessDenied"));
	ck_assert_str_eq(e.where, "s3://bkt/k.safetensors");
}
END_TEST

Suite *
s3_client_suite(void)
{
	Suite *s = suite_create("s3_client");
	TCase *tc = tcase_create("s3_client");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_list_pages);
	tcase_add_test(tc, test_signed_headers);
	tcase_add_test(tc, test_status_handling);
	tcase_add_test(tc, test_truncated_without_token);
	tcase_add_test(tc, test_diagnose);
	suite_add_tcase(s, tc);
	return s;
}
