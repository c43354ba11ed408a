/* test_s3conf.c - where s3:// sources find credentials, region and
 * endpoint (src/s3_conf.c), in the AWS CLI's order, and the HTTP URLs of
 * objects (path style at an endpoint, virtual-hosted on AWS).  Files are
 * written to a temporary HOME; the environment is reset per test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "source/s3/s3_int.h"
#include "suites.h"

static char home[64];

static const char *const VARS[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
	"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
	"AWS_ENDPOINT_URL_S3",
};

static void
put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", home, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void
setup(void)
{
	char d[128];
	size_t i;

	strcpy(home, "/tmp/stfs-s3conf-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(home));
	snprintf(d, sizeof(d), "%s/.aws", home);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	for (i = 0; i < sizeof(VARS) / sizeof(VARS[0]); i++)
		unsetenv(VARS[i]);
	setenv("HOME", home, 1);
	put(".aws/credentials",
	    "# comment\n[default]\naws_access_key_id = DEFKEY\n"
	    "aws_secret_access_key = defsecret\n\n"
	    "[dev]\naws_access_key_id=DEVKEY\naws_secret_access_key=devsecret\n"
	    "aws_session_token = devtoken\n");
	put(".aws/config",
	    "[default]\nregion = eu-north-1\n\n"
	    "[profile dev]\nregion = ap-south-1\n"
	    "endpoint_url = http://127.0.0.1:9000/\n"
	    "s3 =\n  addressing_style = path\n\n"
	    "[profile cfgonly]\naws_access_key_id = CFGKEY\n"
	    "aws_secret_access_key = cfgsecret\n");
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_default_profile)
{
	struct s3_conf c;
	struct err e = {0};

	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_str_eq(c.key, "DEFKEY");
	ck_assert_str_eq(c.secret, "defsecret");
	ck_assert_ptr_null(c.token);
	ck_assert_str_eq(c.region, "eu-north-1");
	ck_assert_ptr_null(c.endpoint);
	ck_assert_str_eq(c.sigv4, "aws:amz:eu-north-1:s3");
	s3_conf_free(&c);
}
END_TEST

START_TEST(test_named_profile)
{
	struct s3_conf c;
	struct err e = {0};

	setenv("AWS_PROFILE", "dev", 1);
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_str_eq(c.key, "DEVKEY");
	ck_assert_str_eq(c.token, "devtoken");
	ck_assert_str_eq(c.region, "ap-south-1");
	/* trailing '/' dropped; the nested s3 block is skipped */
	ck_assert_str_eq(c.endpoint, "http://127.0.0.1:9000");
	ck_assert_ptr_nonnull(strstr(c.origin, "profile dev"));
	s3_conf_free(&c);
}
END_TEST

START_TEST(test_env_wins)
{
	struct s3_conf c;
	struct err e = {0};

	setenv("AWS_PROFILE", "dev", 1);
	setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	setenv("AWS_DEFAULT_REGION", "us-west-2", 1);
	setenv("AWS_ENDPOINT_URL", "https://generic.example", 1);
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_str_eq(c.key, "ENVKEY");
	ck_assert_ptr_null(c.token);	/* the profile's token is not mixed in */
	ck_assert_str_eq(c.region, "us-west-2");
	ck_assert_str_eq(c.endpoint, "https://generic.example");
	s3_conf_free(&c);

	setenv("AWS_REGION", "ca-central-1", 1);
	setenv("AWS_ENDPOINT_URL_S3", "https://s3only.example", 1);
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_str_eq(c.region, "ca-central-1");
	ck_assert_str_eq(c.endpoint, "https://s3only.example");
	s3_conf_free(&c);
}
END_TEST

START_TEST(test_config_credentials_and_files)
{
	struct s3_conf c;
	struct err e = {0};
	char p[256];

	setenv("AWS_PROFILE", "cfgonly", 1);
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_str_eq(c.key, "CFGKEY");
	ck_assert_str_eq(c.region, "us-east-1");	/* the default */
	s3_conf_free(&c);

	/* files named by the environment instead of ~/.aws */
	put("creds2", "[dev]\naws_access_key_id = ALTKEY\n"
	    "aws_secret_access_key = altsecret\n");
	snprintf(p, sizeof(p), "%s/creds2", home);
	setenv("AWS_SHARED_CREDENTIALS_FILE", p, 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
	setenv("AWS_PROFILE", "dev", 1);
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_str_eq(c.key, "ALTKEY");
	ck_assert_str_eq(c.region, "us-east-1");
	s3_conf_free(&c);
}
END_TEST

START_TEST(test_missing_profile_and_anonymous)
{
	struct s3_conf c;
	struct err e = {0};

	setenv("AWS_PROFILE", "nosuch", 1);
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), -1);
	ck_assert_int_eq(e.code, ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(e.detail, "nosuch"));

	unsetenv("AWS_PROFILE");
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(s3_conf_load(&c, 1, &e), 0);
	ck_assert_ptr_null(c.key);
	s3_conf_free(&c);

	/* no credentials anywhere: anonymous, not an error */
	put(".aws/credentials", "");
	put(".aws/config", "");
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), 0);
	ck_assert_ptr_null(c.key);
	s3_conf_free(&c);

	setenv("AWS_ENDPOINT_URL", "minio.lan:9000", 1);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(s3_conf_load(&c, 0, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "http://"));
}
END_TEST

START_TEST(test_urls)
{
	struct s3_conf c;
	struct err e = {0};
	char *u;

	ck_assert_int_eq(s3_conf_load(&c, 1, &e), 0);
	u = s3_http_url(&c, "bkt", "a b/c+d%.safetensors");
	ck_assert_str_eq(u, "https://bkt.s3.eu-north-1.amazonaws.com/"
			 "a%20b/c%2Bd%25.safetensors");
	free(u);
	u = s3_http_url(&c, "my.dotted", "k");
	ck_assert_str_eq(u, "https://s3.eu-north-1.amazonaws.com/my.dotted/k");
	free(u);
	u = s3_http_url(&c, "bkt", NULL);
	ck_assert_str_eq(u, "https://bkt.s3.eu-north-1.amazonaws.com/");
	free(u);
	s3_conf_free(&c);

	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000", 1);
	ck_assert_int_eq(s3_conf_load(&c, 1, &e), 0);
	u = s3_http_url(&c, "bkt", "x/y.safetensors");
	ck_assert_str_eq(u, "http://127.0.0.1:9000/bkt/x/y.safetensors");
	free(u);
	s3_conf_free(&c);
}
END_TEST

START_TEST(test_model_keys)
{
	/* the names of format/naming.h (test_naming.c), but hidden ones */
	ck_assert_int_eq(s3_key_listed("a/b.safetensors"), 1);
	ck_assert_int_eq(s3_key_listed("a/pytorch_model.bin"), 1);
	ck_assert_int_eq(s3_key_listed("a/optimizer.pt"), 0);
	ck_assert_int_eq(s3_key_listed("a/.hidden.safetensors"), 0);
	ck_assert_int_eq(s3_key_listed("a/tokenizer.json"), 0);
	ck_assert_int_eq(s3_key_listed("a/config.json"), 1);
	ck_assert_int_eq(s3_key_listed("a/.config.json"), 0);
	ck_assert_int_eq(s3_key_listed("a/b.safetensors/"), 0);
}
END_TEST

Suite *
s3conf_suite(void)
{
	Suite *s = suite_create("s3conf");
	TCase *tc = tcase_create("s3conf");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_default_profile);
	tcase_add_test(tc, test_named_profile);
	tcase_add_test(tc, test_env_wins);
	tcase_add_test(tc, test_config_credentials_and_files);
	tcase_add_test(tc, test_missing_profile_and_anonymous);
	tcase_add_test(tc, test_urls);
	tcase_add_test(tc, test_model_keys);
	suite_add_tcase(s, tc);
	return s;
}
