/* test_tier.c - the shared cache (source/http/http_tier.c) in a bucket
 * (source/s3/s3_tier.c), through the fake transport: an origin and an
 * S3-compatible store, both scripted here.  Each "node" is a client of
 * its own (no disk cache) with the same shared cache: what one node
 * fetched from the origin, the next one reads from the store; damaged,
 * cut and foreign blocks are refused and fetched again; a store that is
 * down, slow or read-only costs reads nothing but the origin's time. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/error.h"
#include "fake_http.h"
#include "source/http/http_client.h"
#include "source/http/http_conf.h"
#include "source/http/http_tier.h"
#include "source/http/source_http.h"
#include "source/s3/s3.h"
#include "source/source.h"
#include "suites.h"

#define OBJ_SIZE	((3u << 20) + 4321)	/* 4 blocks, the last short */
#define NBLOCKS		4
#define STORE_MAX	64
#define OID_A	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static struct {
	pthread_mutex_t lock;
	char *data;		/* the origin's object, of version */
	unsigned version;
	int linked;		/* answers carry X-Linked-Etag: OID_A */
	unsigned origin_data;	/* ranged GETs past the open's */
	uint64_t origin_bytes;	/* ... their bytes */
	struct {
		char *key;
		char *body;
		size_t len;
	} store[STORE_MAX];
	unsigned nstore;
	unsigned gets, puts;
	int down, readonly;
	unsigned delay_ms;	/* GETs of the store */
} W = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char key_path[64];

static void
make_data(unsigned version)
{
	uint64_t i, x = 0x9e3779b97f4a7c15ull * (version + 1);

	free(W.data);
	W.data = malloc(OBJ_SIZE);
	ck_assert_ptr_nonnull(W.data);
	for (i = 0; i < OBJ_SIZE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		W.data[i] = (char)x;
	}
	W.version = version;
}

static int
store_find(const char *key)
{
	unsigned i;

	for (i = 0; i < W.nstore; i++)
		if (strcmp(W.store[i].key, key) == 0)
			return (int)i;
	return -1;
}

static void
store_set(const char *key, const char *body, size_t len)
{
	int i = store_find(key);

	if (i < 0) {
		ck_assert_uint_lt(W.nstore, STORE_MAX);
		i = (int)W.nstore++;
		W.store[i].key = strdup(key);
	} else {
		free(W.store[i].body);
	}
	W.store[i].body = malloc(len ? len : 1);
	memcpy(W.store[i].body, body, len);
	W.store[i].len = len;
}

/* Answers live until the next request of the same thread. */
static __thread char hdr[4][128];

static void
origin(struct fake_http_answer *a)
{
	uint64_t first = fake_http_start, last = first + fake_http_len - 1;

	if (last >= OBJ_SIZE)
		last = OBJ_SIZE - 1;
	snprintf(hdr[0], sizeof(hdr[0]), "Content-Range: bytes %llu-%llu/%u",
		 (unsigned long long)first, (unsigned long long)last, OBJ_SIZE);
	snprintf(hdr[1], sizeof(hdr[1]), "ETag: \"v%u\"", W.version);
	snprintf(hdr[2], sizeof(hdr[2]), "X-Linked-Etag: \"%s\"", OID_A);
	a->status = 206;
	a->headers[0] = hdr[0];
	a->headers[1] = hdr[1];
	a->headers[2] = W.linked ? hdr[2] : NULL;
	a->body = W.data + first;
	a->body_len = (size_t)(last - first + 1);
	if (fake_http_len != 65536) {	/* not the open's */
		W.origin_data++;
		W.origin_bytes += a->body_len;
	}
}

static __thread char *reply;	/* a GET's body, the thread's own copy */

static void
store(const char *url, struct fake_http_answer *a)
{
	const char *key = strstr(url, "s3.test/") + 8;
	int i, k;
	size_t n = 0;

	if (W.down) {
		a->status = 0;
		return;
	}
	if (fake_http_body) {		/* PUT */
		char *b;

		W.puts++;
		if (W.readonly) {
			a->status = 403;
			a->body = "<Error><Code>AccessDenied</Code></Error>";
			return;
		}
		for (k = 0; k < fake_http_body_n; k++)
			n += fake_http_body[k].iov_len;
		b = malloc(n);
		for (n = 0, k = 0; k < fake_http_body_n; k++) {
			memcpy(b + n, fake_http_body[k].iov_base,
			       fake_http_body[k].iov_len);
			n += fake_http_body[k].iov_len;
		}
		store_set(key, b, n);
		free(b);
		a->status = 200;
		return;
	}
	W.gets++;
	a->delay_ms = W.delay_ms;
	i = store_find(key);
	if (i < 0) {
		a->status = 404;
		a->body = "<Error><Code>NoSuchKey</Code></Error>";
		return;
	}
	free(reply);
	reply = malloc(W.store[i].len);
	memcpy(reply, W.store[i].body, W.store[i].len);
	a->status = 200;
	a->body = reply;
	a->body_len = W.store[i].len;
}

static void
respond(unsigned i, const char *url, struct fake_http_answer *a)
{
	(void)i;
	pthread_mutex_lock(&W.lock);
	if (strstr(url, "://origin.test/"))
		origin(a);
	else if (strstr(url, "://s3.test/"))
		store(url, a);
	else
		a->status = 404;
	pthread_mutex_unlock(&W.lock);
}

static void
world_setup(void)
{
	FILE *f;
	int fd;

	pthread_mutex_lock(&W.lock);
	make_data(1);
	W.linked = 0;
	W.origin_data = 0;
	W.origin_bytes = 0;
	W.gets = W.puts = 0;
	W.down = W.readonly = 0;
	W.delay_ms = 0;
	pthread_mutex_unlock(&W.lock);
	setenv("AWS_ACCESS_KEY_ID", "AKIDFLEET", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "fleet-secret", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
	unsetenv("AWS_PROFILE");
	unsetenv("STFS_SHARED_CACHE");
	unsetenv("STFS_SHARED_CACHE_KEY");
	snprintf(key_path, sizeof(key_path), "/tmp/stfs-tier-key.XXXXXX");
	fd = mkstemp(key_path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("0123456789abcdef0123456789abcdef\n", f);
	fclose(f);
}

static void
world_teardown(void)
{
	unsigned i;

	http_client_free(http_client_install(NULL));
	for (i = 0; i < W.nstore; i++) {
		free(W.store[i].key);
		free(W.store[i].body);
	}
	W.nstore = 0;
	free(W.data);
	W.data = NULL;
	free(reply);
	reply = NULL;
	unlink(key_path);
}

/* A machine of the fleet: a client of its own, the shared cache. */
static struct http_client *
node(void)
{
	struct s3_tier_options o = {
		.url = "s3://fleet/blocks/", .key_file = key_path,
		.endpoint = "http://s3.test", .region = "eu-west-3",
	};
	struct http_client *c = fake_http_install(respond);
	struct err e = { 0 };

	ck_assert_msg(s3_tier_setup(&o, &e) == 0, "%s", e.detail);
	return c;
}

/* What a read of the whole object through a node saw. */
struct seen {
	json_int_t hits, misses, rejected[3], puts_pending, failed, late;
	json_int_t passed;
	json_int_t requests;
	unsigned origin_data, store_gets;
};

static json_int_t
jint(json_t *o, const char *path)
{
	char buf[128], *save = NULL, *k;
	json_t *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && v;
	     k = strtok_r(NULL, ".", &save))
		v = json_object_get(v, k);
	ck_assert_msg(json_is_integer(v), "%s", path);
	return json_integer_value(v);
}

static void
read_all(struct http_client *c, const char *name, struct seen *out)
{
	struct source_http_opts o = { .client = c, .linked_etag = 1 };
	unsigned d0, g0;
	struct source *s;
	struct err e = { 0 };
	char url[128], *buf = malloc(OBJ_SIZE);
	json_t *j;

	pthread_mutex_lock(&W.lock);
	d0 = W.origin_data;
	g0 = W.gets;
	pthread_mutex_unlock(&W.lock);
	snprintf(url, sizeof(url), "http://origin.test/%s", name);
	ck_assert_msg(source_open_http_opts(url, &o, &s, &e) == 0, "%s",
		      e.detail);
	ck_assert_int_eq(source_pread(s, buf, OBJ_SIZE, 0), 0);
	ck_assert_msg(memcmp(buf, W.data, OBJ_SIZE) == 0, "wrong bytes");
	j = source_http_stats(s);
	ck_assert_ptr_nonnull(j);
	if (out) {
		memset(out, 0, sizeof(*out));
		out->hits = jint(j, "tiers.shared.hits");
		out->misses = jint(j, "tiers.shared.misses");
		out->rejected[0] = jint(j, "tiers.shared.rejected.corrupt");
		out->rejected[1] = jint(j, "tiers.shared.rejected.truncated");
		out->rejected[2] = jint(j, "tiers.shared.rejected.foreign");
		out->failed = jint(j, "tiers.shared.failed");
		out->late = jint(j, "tiers.shared.late");
		out->passed = jint(j, "tiers.shared.passed");
		out->requests = jint(j, "tiers.shared.requests");
	}
	json_decref(j);
	source_close(s);	/* waits for its blocks to be put */
	free(buf);
	if (out) {
		pthread_mutex_lock(&W.lock);
		out->origin_data = W.origin_data - d0;
		out->store_gets = W.gets - g0;
		pthread_mutex_unlock(&W.lock);
	}
}

static unsigned
stored(void)
{
	unsigned n;

	pthread_mutex_lock(&W.lock);
	n = W.nstore;
	pthread_mutex_unlock(&W.lock);
	return n;
}

START_TEST(second_node_reads_the_shared_cache)
{
	struct seen a, b;

	read_all(node(), "model.bin", &a);
	ck_assert_int_eq(a.hits, 0);
	ck_assert_int_ge(a.misses, 1);
	ck_assert_uint_ge(a.origin_data, 1);
	ck_assert_uint_eq(stored(), NBLOCKS);	/* put, once the source closed */
	read_all(node(), "model.bin", &b);
	ck_assert_int_eq(b.hits, NBLOCKS);
	ck_assert_uint_eq(b.origin_data, 0);	/* the open's GET alone */
	ck_assert_uint_eq(stored(), NBLOCKS);
}
END_TEST

/* The objects of the store, as a node wrote them: key and body. */
static void
object(unsigned i, char **key, char **body, size_t *len)
{
	*key = W.store[i].key;
	*body = W.store[i].body;
	*len = W.store[i].len;
}

static int
key_order(const void *a, const void *b)
{
	const char *x = ((const char *const *)a)[0];
	const char *y = ((const char *const *)b)[0];

	return strcmp(x, y);
}

START_TEST(bad_blocks_are_refused_and_fetched_again)
{
	char *keys[NBLOCKS], *body, *k;
	size_t len;
	struct seen s;
	unsigned i;

	read_all(node(), "model.bin", NULL);
	ck_assert_uint_eq(stored(), NBLOCKS);
	for (i = 0; i < NBLOCKS; i++)
		object(i, &keys[i], &body, &len);
	qsort(keys, NBLOCKS, sizeof(keys[0]), key_order);	/* by index */
	pthread_mutex_lock(&W.lock);
	/* damaged: a byte of the data flipped */
	object((unsigned)store_find(keys[0]), &k, &body, &len);
	body[len - 100] ^= 1;
	/* cut short */
	W.store[store_find(keys[1])].len -= 4096;
	/* foreign: block 3's object where block 2 should be */
	object((unsigned)store_find(keys[3]), &k, &body, &len);
	store_set(keys[2], body, len);
	pthread_mutex_unlock(&W.lock);
	read_all(node(), "model.bin", &s);
	ck_assert_int_eq(s.rejected[0], 1);
	ck_assert_int_eq(s.rejected[1], 1);
	ck_assert_int_eq(s.rejected[2], 1);
	ck_assert_int_eq(s.hits, NBLOCKS - 3);
	ck_assert_uint_eq(s.origin_data, 3);	/* one request each */
	/* put again: the next node finds every block good */
	read_all(node(), "model.bin", &s);
	ck_assert_int_eq(s.hits, NBLOCKS);
	ck_assert_uint_eq(s.origin_data, 0);
}
END_TEST

START_TEST(a_block_signed_with_another_key_is_refused)
{
	struct seen s;
	FILE *f;

	read_all(node(), "model.bin", NULL);
	f = fopen(key_path, "w");
	fputs("another fleet's key, 32 bytes...", f);
	fclose(f);
	/* another key, other names: nothing found */
	read_all(node(), "model.bin", &s);
	ck_assert_int_eq(s.hits, 0);
	ck_assert_int_ge(s.misses, 1);
}
END_TEST

START_TEST(a_new_version_shares_no_block)
{
	struct seen s;

	read_all(node(), "model.bin", NULL);
	pthread_mutex_lock(&W.lock);
	make_data(2);		/* same URL and size, ETag "v2" */
	pthread_mutex_unlock(&W.lock);
	read_all(node(), "model.bin", &s);	/* compares with version 2 */
	ck_assert_int_eq(s.hits, 0);
	ck_assert_uint_ge(s.origin_data, 1);
	ck_assert_uint_eq(stored(), 2 * NBLOCKS);
}
END_TEST

START_TEST(one_lfs_file_under_two_names_shares_blocks)
{
	struct seen s;

	pthread_mutex_lock(&W.lock);
	W.linked = 1;
	pthread_mutex_unlock(&W.lock);
	read_all(node(), "org-a/model.bin", NULL);
	read_all(node(), "org-b/model.bin", &s);
	ck_assert_int_eq(s.hits, NBLOCKS);
	ck_assert_uint_eq(s.origin_data, 0);
	ck_assert_uint_eq(stored(), NBLOCKS);
}
END_TEST

START_TEST(a_store_that_is_down_costs_one_try)
{
	struct seen s;

	pthread_mutex_lock(&W.lock);
	W.down = 1;
	pthread_mutex_unlock(&W.lock);
	read_all(node(), "model.bin", &s);
	ck_assert_int_eq(s.hits, 0);
	ck_assert_int_ge(s.failed, 1);
	ck_assert_uint_ge(s.origin_data, 1);
	ck_assert_uint_eq(stored(), 0);
	/* passed over now: a second source does not ask it */
	pthread_mutex_lock(&W.lock);
	W.down = 0;
	pthread_mutex_unlock(&W.lock);
	read_all(node(), "model.bin", &s);
	ck_assert_int_eq(s.requests, 1);	/* the new node asks again */
}
END_TEST

START_TEST(a_slow_store_does_not_hold_the_reader)
{
	struct http_client *c;
	struct seen s;
	uint64_t t0;

	read_all(node(), "model.bin", NULL);
	pthread_mutex_lock(&W.lock);
	W.delay_ms = 20000;
	pthread_mutex_unlock(&W.lock);
	c = node();
	t0 = http_conf_now_ms();
	read_all(c, "model.bin", &s);
	/* not held for the store's delay: its deadline, then the origin */
	ck_assert_uint_lt(http_conf_now_ms() - t0, 15000);
	ck_assert_int_ge(s.late, 1);
	ck_assert_int_eq(s.hits, 0);
	ck_assert_uint_ge(s.origin_data, 1);
}
END_TEST

START_TEST(a_read_only_store_still_serves)
{
	struct http_client *c;
	struct seen s;

	read_all(node(), "model.bin", NULL);
	pthread_mutex_lock(&W.lock);
	W.readonly = 1;
	make_data(2);
	pthread_mutex_unlock(&W.lock);
	c = node();
	read_all(c, "model.bin", &s);
	ck_assert_uint_ge(W.puts, 1);
	/* refused: the node puts nothing for a while */
	pthread_mutex_lock(&W.lock);
	W.puts = 0;
	make_data(3);
	pthread_mutex_unlock(&W.lock);
	read_all(c, "model.bin", &s);
	ck_assert_uint_eq(W.puts, 0);
	/* and still reads from it */
	pthread_mutex_lock(&W.lock);
	make_data(1);
	pthread_mutex_unlock(&W.lock);
	read_all(c, "model.bin", &s);
	ck_assert_int_eq(s.hits, NBLOCKS);
	ck_assert_uint_eq(s.origin_data, 0);
}
END_TEST

START_TEST(requests_are_signed_and_named)
{
	char want[160], key[128];
	struct http_client *c;
	unsigned i, found = 0;

	c = node();
	read_all(c, "model.bin", NULL);
	ck_assert_int_eq(http_tier_key(c->tier, "url http://origin.test/"
				       "model.bin etag \"v1\" 3150049", 0, key,
				       sizeof(key)), 0);
	snprintf(want, sizeof(want), "http://s3.test/fleet/blocks/%s", key);
	for (i = 0; i < fake_http_count && i < FAKE_HTTP_MAX; i++) {
		const struct fake_http_seen *s = &fake_http_seen[i];

		if (!strstr(s->url, "s3.test"))
			continue;
		ck_assert_str_eq(s->sigv4, "aws:amz:eu-west-3:s3");
		ck_assert_str_eq(s->key, "AKIDFLEET");
		ck_assert_ptr_nonnull(strstr(s->headers,
					     "x-amz-content-sha256: "));
		found += strcmp(s->url, want) == 0;
	}
	ck_assert_uint_ge(found, 1);	/* block 0: asked for, then put */
	ck_assert_ptr_nonnull(strstr(key, "/1048576.0"));
	ck_assert_ptr_eq(strstr(key, "origin"), NULL);
}
END_TEST

START_TEST(the_key_file_is_required_and_checked)
{
	struct s3_tier_options o = {
		.url = "s3://fleet/blocks", .endpoint = "http://s3.test",
	};
	struct err e = { 0 };
	FILE *f;

	fake_http_install(respond);
	ck_assert_int_eq(s3_tier_setup(&o, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "not given"));
	err_clear(&e);
	o.key_file = key_path;
	f = fopen(key_path, "w");
	fputs("short\n", f);
	fclose(f);
	ck_assert_int_eq(s3_tier_setup(&o, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "shorter than 16 bytes"));
	err_clear(&e);
	o.url = "http://not-s3/";
	f = fopen(key_path, "w");
	fputs("0123456789abcdef0123", f);
	fclose(f);
	ck_assert_int_eq(s3_tier_setup(&o, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "s3://BUCKET/PREFIX"));
	err_clear(&e);
	o.url = NULL;		/* none asked for: nothing to do */
	ck_assert_int_eq(s3_tier_setup(&o, &e), 0);
}
END_TEST

Suite *
tier_suite(void)
{
	Suite *s = suite_create("tier");
	TCase *tc = tcase_create("shared cache");

	tcase_add_checked_fixture(tc, world_setup, world_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, second_node_reads_the_shared_cache);
	tcase_add_test(tc, bad_blocks_are_refused_and_fetched_again);
	tcase_add_test(tc, a_block_signed_with_another_key_is_refused);
	tcase_add_test(tc, a_new_version_shares_no_block);
	tcase_add_test(tc, one_lfs_file_under_two_names_shares_blocks);
	tcase_add_test(tc, a_store_that_is_down_costs_one_try);
	tcase_add_test(tc, a_slow_store_does_not_hold_the_reader);
	tcase_add_test(tc, a_read_only_store_still_serves);
	tcase_add_test(tc, requests_are_signed_and_named);
	tcase_add_test(tc, the_key_file_is_required_and_checked);
	suite_add_tcase(s, tc);
	return s;
}
