/* test_shards.c - the sharded index reader (src/model/shards.c) via model_open. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/meter.h"
#include "model/catalog.h"
#include "model/model.h"
#include "model/model_order.h"
#include "model/summary.h"


/* Merged tensor by exact name, or NULL: a plain scan. */
static const struct model_tensor *
find_model_tensor(const struct model *m, const char *name, size_t len)
{
	for (size_t i = 0; i < m->ntensors; i++)
		if (m->tensors[i].t->name_len == len &&
		    memcmp(m->tensors[i].t->name, name, len) == 0)
			return &m->tensors[i];
	return NULL;
}

static char tmpdir[256];

static void
write_file(const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	fclose(f);
}

/* A shard with the given header JSON (padded to 8) and data_len bytes. */
static void
write_shard(const char *name, const char *json, size_t data_len)
{
	size_t n = strlen(json), padded = (n + 7) / 8 * 8, i;
	unsigned char *buf = calloc(1, 8 + padded + data_len);
	uint64_t len = padded;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < 8; i++)
		buf[i] = (unsigned char)(len >> (8 * i));
	memcpy(buf + 8, json, n);
	memset(buf + 8 + n, ' ', padded - n);
	for (i = 0; i < data_len; i++)
		buf[8 + padded + i] = (unsigned char)(i * 7 + name[6]);
	write_file(name, buf, 8 + padded + data_len);
	free(buf);
}

static void
write_index(const char *json)
{
	write_file("model.safetensors.index.json", json, strlen(json));
}

#define SHARD1 "model-00001-of-00002.safetensors"
#define SHARD2 "model-00002-of-00002.safetensors"

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/stfs-shards-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	write_shard(SHARD1, "{\"__metadata__\":{\"format\":\"pt\"},"
		    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		    "\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[8,11]}}",
		    11);
	write_shard(SHARD2, "{\"c\":{\"dtype\":\"F16\",\"shape\":[2,2],"
		    "\"data_offsets\":[0,8]}}", 8);
}

static void
teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char good_index[] =
	"{\"metadata\": {\"total_size\": 27, \"note\": [1, 2]},"
	" \"weight_map\": {\"a\": \"" SHARD1 "\", \"b\": \"" SHARD1 "\","
	" \"c\": \"" SHARD2 "\"}}";

static int
open_index(struct model **m, struct err *e)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/model.safetensors.index.json", tmpdir);
	memset(e, 0, sizeof(*e));
	return model_open(path, NULL, m, e);
}

START_TEST(test_good_index)
{
	struct model *m;
	struct err e;
	const struct model_tensor *mt;

	write_index(good_index);
	ck_assert_msg(open_index(&m, &e) == 0, "%s", e.detail);
	ck_assert_int_eq(m->sharded, 1);
	ck_assert_uint_eq(m->nshards, 2);
	ck_assert_uint_eq(m->ntensors, 3);
	ck_assert_str_eq(m->shards[0].name, SHARD1);
	mt = find_model_tensor(m, "c", 1);
	ck_assert_ptr_nonnull(mt);
	ck_assert_uint_eq(mt->shard, 1);
	ck_assert_uint_eq(model_tensor_nbytes(mt), 8);
	ck_assert_ptr_null(find_model_tensor(m, "d", 1));
	ck_assert_ptr_nonnull(strstr(m->metadata_json, "\"total_size\": 27"));
	model_free(m);
}
END_TEST

/* What the meter was told (meter_show). */
struct seen {
	const char *what;
	uint64_t total, done, bytes;
	int calls, phases;
};

static void
meter_show(void *arg, const struct meter *m)
{
	struct seen *s = arg;

	if (m->done == 0)
		s->phases++;
	s->what = m->what;
	s->total = m->total;
	s->done = m->done;
	s->bytes = m->bytes;
	s->calls++;
}

/* Opening a set through catalog_opts.meter counts every shard's header
 * and the bytes read for it: the front end's progress line. */
START_TEST(test_meter)
{
	struct meter mt;
	struct seen s = { 0 };
	struct catalog_opts o = { .meter = &mt };
	struct catalog *c;
	struct err e = { 0 };
	struct stat st1, st2;
	char p1[512], p2[512];
	uint64_t heads;

	write_index(good_index);
	meter_init(&mt, meter_show, &s);
	ck_assert_msg(catalog_open(tmpdir, &o, &c, &e) == 0, "%s", e.detail);
	meter_destroy(&mt);
	ck_assert_str_eq(s.what, "shards' headers read");
	ck_assert_int_eq(s.phases, 1);
	ck_assert_int_eq(s.calls, 3);	/* the phase, then one per shard */
	ck_assert_uint_eq(s.total, 2);
	ck_assert_uint_eq(s.done, 2);
	/* at least each header; a format's sniffing reads a few of its
	 * first bytes twice, nothing reads a tiny file more than twice */
	heads = c->entries[0].model->shards[0].hdr->data_start +
		c->entries[0].model->shards[1].hdr->data_start;
	snprintf(p1, sizeof(p1), "%s/" SHARD1, tmpdir);
	snprintf(p2, sizeof(p2), "%s/" SHARD2, tmpdir);
	ck_assert_int_eq(stat(p1, &st1), 0);
	ck_assert_int_eq(stat(p2, &st2), 0);
	ck_assert_uint_ge(s.bytes, heads);
	ck_assert_uint_le(s.bytes, 2 * (uint64_t)(st1.st_size + st2.st_size));
	catalog_free(c);
}
END_TEST

/* What a loader reads next: the rest of its shard in name order, then the
 * next shard, though the model's global name order would jump to the
 * other shard first ("h.11." sorts before "h.2."). */
START_TEST(test_load_order)
{
	struct model_order_range r[MODEL_ORDER_MAX_RANGES];
	const struct model_tensor *a, *b, *c;
	struct model_order *o;
	struct model *m;
	struct err e;
	size_t n;

	write_shard(SHARD1, "{\"h.10.w\":{\"dtype\":\"F32\",\"shape\":[4],"
		    "\"data_offsets\":[0,16]},\"h.2.w\":{\"dtype\":\"F32\","
		    "\"shape\":[4],\"data_offsets\":[16,32]}}", 32);
	write_shard(SHARD2, "{\"h.11.w\":{\"dtype\":\"F32\",\"shape\":[4],"
		    "\"data_offsets\":[0,16]},\"h.3.w\":{\"dtype\":\"F32\","
		    "\"shape\":[4],\"data_offsets\":[16,32]}}", 32);
	write_index("{\"weight_map\": {\"h.10.w\": \"" SHARD1 "\", \"h.11.w\": \""
		    SHARD2 "\", \"h.2.w\": \"" SHARD1 "\", \"h.3.w\": \""
		    SHARD2 "\"}}");
	ck_assert_msg(open_index(&m, &e) == 0, "%s", e.detail);
	o = model_order_new(m);
	ck_assert_ptr_nonnull(o);
	a = find_model_tensor(m, "h.10.w", 6);
	b = find_model_tensor(m, "h.2.w", 5);
	c = find_model_tensor(m, "h.11.w", 6);
	ck_assert(a && b && c);
	/* h.10.w read to its end: h.2.w of the same shard, then shard 2 */
	n = model_order_next(o, 0, model_tensor_offset(m, a) + 16, 1 << 20,
			     r, MODEL_ORDER_MAX_RANGES);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(r[0].src, m->shards[0].src);
	ck_assert_uint_eq(r[0].off, model_tensor_offset(m, b));
	ck_assert_uint_eq(r[0].len, 16);
	ck_assert_ptr_eq(r[1].src, m->shards[1].src);
	ck_assert_uint_eq(r[1].off, model_tensor_offset(m, c));
	ck_assert_uint_eq(r[1].len, 32);	/* h.11.w and h.3.w */
	/* within the budget only */
	n = model_order_next(o, 0, model_tensor_offset(m, a) + 16, 20,
			     r, MODEL_ORDER_MAX_RANGES);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(r[0].len, 16);
	ck_assert_uint_eq(r[1].len, 4);
	/* half of h.10.w read: its rest (8 bytes) counts, 12 more follow */
	n = model_order_next(o, 0, model_tensor_offset(m, a) + 8, 20,
			     r, MODEL_ORDER_MAX_RANGES);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(r[0].off, model_tensor_offset(m, b));
	ck_assert_uint_eq(r[0].len, 12);
	model_order_free(o);
	model_free(m);
}
END_TEST

START_TEST(test_dir_source)
{
	struct model *m;
	struct err e = { 0 };

	write_index(good_index);
	ck_assert_msg(model_open(tmpdir, NULL, &m, &e) == 0, "%s", e.detail);
	ck_assert_uint_eq(m->ntensors, 3);
	ck_assert_str_eq(m->arg, tmpdir);
	model_free(m);
}
END_TEST

START_TEST(test_summary_sums)
{
	struct model *m;
	struct err e;
	char *s;

	write_index(good_index);
	ck_assert_int_eq(open_index(&m, &e), 0);
	s = summary_json(m, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s, "\"parameters\":{\"F32\":2,\"F16\":4,\"U8\":3}"));
	ck_assert_ptr_nonnull(strstr(s, "\"shards\":["));
	ck_assert_ptr_nonnull(strstr(s, "\"tensors\":3"));
	free(s);
	model_free(m);
}
END_TEST

/* Each broken index: must fail, with the words given in the detail. */
static void
expect_refused(const char *index, enum err_code code, const char *w1,
	       const char *w2)
{
	struct model *m = NULL;
	struct err e;

	write_index(index);
	ck_assert_int_eq(open_index(&m, &e), -1);
	ck_assert_ptr_null(m);
	ck_assert_msg(e.code == code, "code %s, want %s (%s)",
		      err_name(e.code), err_name(code), e.detail);
	ck_assert_msg(strstr(e.detail, w1) || strstr(e.where, w1),
		      "'%s' not in '%s: %s'", w1, e.where, e.detail);
	if (w2)
		ck_assert_msg(strstr(e.detail, w2) || strstr(e.where, w2),
			      "'%s' not in '%s: %s'", w2, e.where, e.detail);
}

START_TEST(test_unlisted_tensor)
{
	expect_refused("{\"metadata\":{},\"weight_map\":{\"a\":\"" SHARD1
		       "\",\"c\":\"" SHARD2 "\"}}", ERR_INVALID_INDEX,
		       "`b`", "not in the weight_map");
}
END_TEST

START_TEST(test_absent_tensor)
{
	expect_refused("{\"metadata\":{},\"weight_map\":{\"a\":\"" SHARD1
		       "\",\"b\":\"" SHARD1 "\",\"c\":\"" SHARD2 "\",\"z\":\""
		       SHARD2 "\"}}", ERR_INVALID_INDEX, "`z`", "no such tensor");
}
END_TEST

START_TEST(test_wrong_shard)
{
	expect_refused("{\"metadata\":{},\"weight_map\":{\"a\":\"" SHARD1
		       "\",\"b\":\"" SHARD2 "\",\"c\":\"" SHARD2 "\"}}",
		       ERR_INVALID_INDEX, "`b`", SHARD1);
}
END_TEST

START_TEST(test_two_shards)
{
	write_shard(SHARD2, "{\"a\":{\"dtype\":\"F16\",\"shape\":[2,2],"
		    "\"data_offsets\":[0,8]}}", 8);
	expect_refused("{\"metadata\":{},\"weight_map\":{\"a\":\"" SHARD2
		       "\",\"b\":\"" SHARD1 "\"}}", ERR_INVALID_INDEX, "`a`",
		       "two shards");
}
END_TEST

START_TEST(test_missing_shard)
{
	expect_refused("{\"metadata\":{},\"weight_map\":{\"a\":\"" SHARD1
		       "\",\"b\":\"" SHARD1 "\",\"c\":\"model-00009.safetensors\"}}",
		       ERR_IO, "model-00009.safetensors", NULL);
}
END_TEST

START_TEST(test_bad_names)
{
	expect_refused("{\"weight_map\":{\"a\":\"../x.safetensors\"}}",
		       ERR_INVALID_INDEX, "../x.safetensors", NULL);
	expect_refused("{\"weight_map\":{\"a\":\"/etc/x.safetensors\"}}",
		       ERR_INVALID_INDEX, "absolute", NULL);
	expect_refused("{\"weight_map\":{\"a\":\"x.pt\"}}",
		       ERR_INVALID_INDEX, ".safetensors or .bin", NULL);
	expect_refused("{\"weight_map\":{\"a\":\"a\\u0000b.safetensors\"}}",
		       ERR_INVALID_INDEX, "`a`", NULL);
}
END_TEST

START_TEST(test_symlink_escape)
{
	/* A shard that is a symlink to a file elsewhere (the hub cache's
	 * snapshots/REV/x -> ../../blobs/SHA) is followed: symlinks are the
	 * user's, only the index's names are checked.  One to something that
	 * is not a regular file is refused. */
	char path[512], target[512];

	snprintf(target, sizeof(target), "%s/" SHARD2, tmpdir);
	snprintf(path, sizeof(path), "%s/sub", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/model.safetensors.index.json", tmpdir);
	write_index("{}");	/* unused; the real index lives in sub/ */
	{
		FILE *f = fopen(path, "w");
		char link[512];

		ck_assert_ptr_nonnull(f);
		fputs("{\"weight_map\":{\"c\":\"" SHARD2 "\"}}", f);
		fclose(f);
		snprintf(link, sizeof(link), "%s/sub/" SHARD2, tmpdir);
		ck_assert_int_eq(symlink(target, link), 0);
	}
	{
		struct model *m = NULL;
		struct err e = { 0 };

		ck_assert_msg(model_open(path, NULL, &m, &e) == 0, "%s: %s",
			      e.where, e.detail);
		ck_assert_ptr_nonnull(find_model_tensor(m, "c", 1));
		model_free(m);
	}
	{
		struct model *m = NULL;
		struct err e = { 0 };
		char link[512];

		snprintf(link, sizeof(link), "%s/sub/" SHARD2, tmpdir);
		ck_assert_int_eq(unlink(link), 0);
		ck_assert_int_eq(symlink("/dev/null", link), 0);
		ck_assert_int_eq(model_open(path, NULL, &m, &e), -1);
		ck_assert_int_eq(e.code, ERR_IO);
		ck_assert_ptr_nonnull(strstr(e.detail, "regular file"));
	}
}
END_TEST

START_TEST(test_bad_json)
{
	expect_refused("{\"weight_map\":{", ERR_INVALID_INDEX, "JSON", NULL);
	expect_refused("{\"metadata\":{}}", ERR_INVALID_INDEX, "weight_map",
		       NULL);
	expect_refused("{\"metadata\":3,\"weight_map\":{}}", ERR_INVALID_INDEX,
		       "metadata", NULL);
	expect_refused("{\"weight_map\":{\"a\":\"" SHARD1 "\",\"a\":\"" SHARD1
		       "\"}}", ERR_INVALID_INDEX, "JSON", NULL);
	expect_refused("{\"weight_map\":{\"a\":7}}", ERR_INVALID_INDEX, "`a`",
		       NULL);
}
END_TEST

/* The index is read by a scanner (model/weight_map.c): members it does
 * not know are skipped, escaped keys are what they decode to, metadata
 * reads as jansson renders it, a tensor name may hold NUL (as in a
 * header), a shard in many places of the map counts once. */
START_TEST(test_index_forms)
{
	struct model *m;
	struct err e;

	write_shard(SHARD1, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		    "\"data_offsets\":[0,8]},\"b\\u0000x\":{\"dtype\":\"U8\","
		    "\"shape\":[3],\"data_offsets\":[8,11]}}", 11);
	write_index("{\"x\": [1, {\"weight_map\": 3}], \"metadata\": "
		    "{\"b\": 1, \"a\": [true, null, \"\\u00e9\"]},"
		    " \"weight\\u005fmap\": {\"c\": \"" SHARD2 "\", "
		    "\"b\\u0000x\": \"" SHARD1 "\", \"a\": \"mod\\u0065l-"
		    "00001-of-00002.safetensors\"}, \"y\": null}");
	ck_assert_msg(open_index(&m, &e) == 0, "%s", e.detail);
	ck_assert_uint_eq(m->nshards, 2);
	ck_assert_str_eq(m->shards[0].name, SHARD1);
	ck_assert_str_eq(m->shards[1].name, SHARD2);
	ck_assert_uint_eq(m->ntensors, 3);
	ck_assert_ptr_nonnull(find_model_tensor(m, "b\0x", 3));
	ck_assert_str_eq(m->metadata_json, "{\n  \"b\": 1,\n  \"a\": [\n"
			 "    true,\n    null,\n    \"\u00e9\"\n  ]\n}\n");
	model_free(m);

	write_index("{\"metadata\": null, \"weight_map\": {\"a\": \"" SHARD1
		    "\", \"b\\u0000x\": \"" SHARD1 "\", \"c\": \"" SHARD2
		    "\"}}");
	ck_assert_msg(open_index(&m, &e) == 0, "%s", e.detail);
	ck_assert_str_eq(m->metadata_json, "{}\n");
	model_free(m);

	expect_refused("{\"weight_map\": {}, \"weight_map\": {}}",
		       ERR_INVALID_INDEX, "weight_map", "twice");
	expect_refused("{\"metadata\": {\"k\": 1, \"k\": 2}, \"weight_map\": "
		       "{}}", ERR_INVALID_INDEX, "metadata", "duplicate");
	expect_refused("{\"weight_map\": {\"a\": \"" SHARD1 "\"}} [",
		       ERR_INVALID_INDEX, "JSON", "line 1");
	expect_refused("{\"weight_map\": {\"a\": \"\xff\"}}",
		       ERR_INVALID_INDEX, "UTF-8", NULL);
	expect_refused("[{\"weight_map\": {}}]", ERR_INVALID_INDEX,
		       "weight_map", NULL);
	expect_refused("{\"weight_map\": {\"a\": [\"" SHARD1 "\"]}}",
		       ERR_INVALID_INDEX, "`a`", "file name");
}
END_TEST

START_TEST(test_bad_shard_header)
{
	write_shard(SHARD2, "{\"c\":{\"dtype\":\"F16\",\"shape\":[2,2],"
		    "\"data_offsets\":[0,8]}}", 7);
	expect_refused(good_index, ERR_METADATA_INCOMPLETE_BUFFER, SHARD2, NULL);
}
END_TEST

Suite *
shards_suite(void)
{
	Suite *s = suite_create("shards");
	TCase *tc = tcase_create("index");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_good_index);
	tcase_add_test(tc, test_meter);
	tcase_add_test(tc, test_dir_source);
	tcase_add_test(tc, test_load_order);
	tcase_add_test(tc, test_summary_sums);
	tcase_add_test(tc, test_unlisted_tensor);
	tcase_add_test(tc, test_absent_tensor);
	tcase_add_test(tc, test_wrong_shard);
	tcase_add_test(tc, test_two_shards);
	tcase_add_test(tc, test_missing_shard);
	tcase_add_test(tc, test_bad_names);
	tcase_add_test(tc, test_symlink_escape);
	tcase_add_test(tc, test_bad_json);
	tcase_add_test(tc, test_index_forms);
	tcase_add_test(tc, test_bad_shard_header);
	suite_add_tcase(s, tc);
	return s;
}
