/* test_s3_prefix.c - an s3:// prefix as the model layer sees it
 * (src/source/s3/s3.c, s3_prefix_list): its objects, each by its key below
 * the prefix and the s3:// URL it is opened by, with its size and ETag,
 * through the fake transport. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "fake_http.h"
#include "source/s3/s3.h"
#include "suites.h"

static const char LISTING[] =
	"<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>false"
	"</IsTruncated>"
	"<Contents><Key>p/a.safetensors</Key><Size>10</Size>"
	"<ETag>\"e1\"</ETag></Contents>"
	"<Contents><Key>p/readme.txt</Key><Size>2</Size></Contents>"
	"<Contents><Key>p/.hidden.safetensors</Key><Size>2</Size></Contents>"
	"<Contents><Key>p/optimizer.pt</Key><Size>2</Size></Contents>"
	"<Contents><Key>p/pytorch_model.bin</Key><Size>9</Size>"
	"<ETag>\"e5\"</ETag></Contents>"
	"<Contents><Key>p/sub/c d+1.safetensors</Key><Size>30</Size>"
	"<ETag>\"e3\"</ETag></Contents>"
	"<Contents><Key>p/sub/m.safetensors.index.json</Key><Size>3</Size>"
	"<ETag>\"e4\"</ETag></Contents>"
	"<Contents><Key>p/sub/t-00002-of-00002.gguf</Key><Size>3</Size>"
	"<ETag>\"e6\"</ETag></Contents>"
	"</ListBucketResult>";
static const char NONE[] =
	"<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>false"
	"</IsTruncated><Contents><Key>p/readme.txt</Key><Size>2</Size>"
	"</Contents></ListBucketResult>";

static int empty;

static void
answer(unsigned i, const char *url, struct fake_http_answer *a)
{
	(void)i;
	(void)url;
	a->status = 200;
	a->body = empty ? NONE : LISTING;
}

static void
setup(void)
{
	setenv("AWS_ENDPOINT_URL", "https://s3.test", 1);
	setenv("AWS_REGION", "eu-west-3", 1);
	setenv("STFS_S3_ANONYMOUS", "1", 1);
	setenv("HOME", "/nonexistent", 1);
	empty = 0;
	fake_http_install(answer);
}

START_TEST(test_prefix_listed)
{
	struct s3_prefix l;
	struct err e = { 0 };

	ck_assert_msg(s3_prefix_list("s3://bkt/p/", &l, &e) == 0, "%s: %s",
		      e.where, e.detail);
	/* every object but '.' names, with its size and ETag; the model
	 * layer picks the models (and MNT/.files/ shows the rest) */
	ck_assert_uint_eq(l.n, 7);
	ck_assert_str_eq(l.rel[0], "a.safetensors");
	ck_assert_str_eq(l.url[0], "s3://bkt/p/a.safetensors");
	ck_assert_uint_eq(l.size[0], 10);
	ck_assert_str_eq(l.etag[0], "\"e1\"");
	ck_assert_str_eq(l.rel[1], "readme.txt");
	ck_assert_uint_eq(l.size[1], 2);
	ck_assert_ptr_null(l.etag[1]);
	ck_assert_str_eq(l.rel[2], "optimizer.pt");
	ck_assert_str_eq(l.rel[3], "pytorch_model.bin");
	ck_assert_str_eq(l.rel[4], "sub/c d+1.safetensors");
	ck_assert_str_eq(l.url[4], "s3://bkt/p/sub/c%20d%2B1.safetensors");
	ck_assert_uint_eq(l.size[4], 30);
	ck_assert_str_eq(l.rel[5], "sub/m.safetensors.index.json");
	ck_assert_str_eq(l.rel[6], "sub/t-00002-of-00002.gguf");
	ck_assert_uint_eq(fake_http_count, 1);
	ck_assert_ptr_nonnull(strstr(fake_http_seen[0].url, "list-type=2"));
	s3_prefix_free(&l);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(test_prefix_forms)
{
	struct s3_prefix l;
	struct err e = { 0 };

	/* a key that is neither a model nor a .json is a prefix */
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p", &l, &e), 0);
	ck_assert_uint_eq(l.n, 7);
	s3_prefix_free(&l);
	/* one object, of every format: nothing listed */
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/a.safetensors", &l, &e),
			 1);
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/m.index.json", &l, &e),
			 1);
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/m.gguf", &l, &e), 1);
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/m-00002-of-00003.gguf",
					&l, &e), 1);
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/pytorch_model.bin", &l,
					&e), 1);
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/optimizer.pt", &l, &e),
			 1);
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/rng_state.pth", &l, &e),
			 1);
	ck_assert_uint_eq(fake_http_count, 1);
	ck_assert_int_eq(e.code, ERR_OK);
}
END_TEST

START_TEST(test_prefix_without_models)
{
	struct s3_prefix l;
	struct err e = { 0 };

	empty = 1;
	ck_assert_int_eq(s3_prefix_list("s3://bkt/p/", &l, &e), -1);
	ck_assert_int_eq(e.code, ERR_USAGE);
	ck_assert_str_eq(e.where, "s3://bkt/p/");
	ck_assert_ptr_nonnull(strstr(e.detail, "no model object ("));
	ck_assert_ptr_nonnull(strstr(e.detail, "1 keys listed"));
	ck_assert_int_eq(s3_prefix_list("s3:///x", &l, &e), -1);
}
END_TEST

Suite *
s3_prefix_suite(void)
{
	Suite *s = suite_create("s3_prefix");
	TCase *tc = tcase_create("list");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_prefix_listed);
	tcase_add_test(tc, test_prefix_forms);
	tcase_add_test(tc, test_prefix_without_models);
	suite_add_tcase(s, tc);
	return s;
}
