/* test_view.c - file name encoding (src/view/names.c) and the view layer
 * (src/view/view*.c): lookups, listing, attributes, sidecars, inode stability.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/msglog.h"
#include "model/model.h"
#include "model/model_files.h"
#include "view/names.h"
#include "source/source.h"
#include "view/view.h"
#include "suites.h"

/* --- names ------------------------------------------------------------- */

static void
expect_enc(const char *name, size_t len, const char *want)
{
	char out[NAMES_MAX + 1];
	size_t n = names_encode(name, len, out);

	ck_assert_uint_eq(n, strlen(out));
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(names_is_identity(name, len),
			 n == len && memcmp(out, name, len) == 0);
}

#define ENC(lit, want) expect_enc(lit, sizeof(lit) - 1, want)

START_TEST(test_rule1_escapes)
{
	ENC("model.layers.0.weight", "model.layers.0.weight");
	ENC("a/b", "a%2Fb");
	ENC("100%", "100%25");
	ENC("nul\0byte", "nul%00byte");
	ENC("tab\there\n", "tab%09here%0A");
	ENC("\x1f\x7f", "%1F%7F");
	ENC(" sp ace ", " sp ace ");
	ENC("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
	ENC("a\\b:c*d?\"e\"", "a\\b:c*d?\"e\"");
}
END_TEST

START_TEST(test_rule2_leading_dot)
{
	ENC(".hidden", "%2Ehidden");
	ENC(".", "%2E");
	ENC("..", "%2E.");
	ENC("a.", "a.");
	ENC("...", "%2E..");
}
END_TEST

START_TEST(test_rule3_json_suffix)
{
	ENC("x.json", "x%2Ejson");
	ENC(".json", "%2Ejson");
	ENC("a.json.json", "a.json%2Ejson");
	ENC("a.JSON", "a.JSON");
	ENC("ajson", "ajson");
	ENC("a.jsonx", "a.jsonx");
}
END_TEST

START_TEST(test_rule4_reserved)
{
	ENC("__summary__", "%5F_summary__");
	ENC("__metadata__", "%5F_metadata__");
	ENC("__", "%5F_");
	ENC("___", "%5F__");
	ENC("_", "_");
	ENC("__x", "__x");
	ENC("x__", "x__");
	ENC("_x_", "_x_");
	ENC("__a/b__", "%5F_a%2Fb__");
}
END_TEST

START_TEST(test_rule5_empty)
{
	ENC("", "%");
}
END_TEST

static void
hashed_name(const char *name, size_t len, size_t keep, char *want)
{
	uint64_t h = names_fnv1a(name, len);

	sprintf(want + keep, "%%~%016llx", (unsigned long long)h);
}

START_TEST(test_rule6_long)
{
	char name[1000], out[NAMES_MAX + 1], want[NAMES_MAX + 1];
	size_t n, i;

	/* 250 bytes fit, 251 do not. */
	memset(name, 'a', 251);
	name[250] = '\0';
	expect_enc(name, 250, name);
	name[250] = 'a';
	n = names_encode(name, 251, out);
	ck_assert_uint_eq(n, 200 + 2 + 16);
	memset(want, 'a', 200);
	hashed_name(name, 251, 200, want);
	ck_assert_str_eq(out, want);
	/* Known FNV-1a value, so that the README can document it. */
	ck_assert_str_eq(out + 202, "032fd0337586c62a");
	ck_assert_uint_eq(names_fnv1a("a", 1), 0xaf63dc4c8601ec8cULL);

	/* Escapes are never split: 66 "%2F" = 198 bytes are kept. */
	memset(name, '/', 100);
	n = names_encode(name, 100, out);
	for (i = 0; i < 66; i++)
		memcpy(want + 3 * i, "%2F", 3);
	hashed_name(name, 100, 198, want);
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(n, 198 + 18);

	/* Nor are UTF-8 sequences: 66 euro signs = 198 bytes. */
	for (i = 0; i < 100; i++)
		memcpy(name + 3 * i, "\xe2\x82\xac", 3);
	names_encode(name, 300, out);
	memcpy(want, name, 198);
	hashed_name(name, 300, 198, want);
	ck_assert_str_eq(out, want);

	/* 199 plain bytes then a 4-byte sequence: the cut is at 199. */
	memset(name, 'b', 199);
	for (i = 0; i < 20; i++)
		memcpy(name + 199 + 4 * i, "\xf0\x9f\x98\x80", 4);
	names_encode(name, 279, out);
	memcpy(want, name, 199);
	hashed_name(name, 279, 199, want);
	ck_assert_str_eq(out, want);

	/* Reserved and long: rule 4 applies before the cut. */
	memset(name, '_', 300);
	names_encode(name, 300, out);
	ck_assert(strncmp(out, "%5F___", 6) == 0);
	ck_assert_uint_eq(strlen(out), 200 + 18);

	/* A hashed name is not decodable, and never ends in .json. */
	ck_assert_int_eq(names_decode(out, strlen(out), name, &n), -1);
}
END_TEST

static void
round_trip(const char *name, size_t len)
{
	char enc[NAMES_MAX + 1], dec[NAMES_MAX + 1];
	size_t n, m;

	n = names_encode(name, len, enc);
	ck_assert(n >= 1 && n <= NAMES_MAX);
	ck_assert(memchr(enc, '/', n) == NULL);
	ck_assert(enc[0] != '.');
	ck_assert(!(n >= 5 && memcmp(enc + n - 5, ".json", 5) == 0));
	ck_assert(!(n >= 4 && enc[0] == '_' && enc[1] == '_' &&
		    enc[n - 1] == '_' && enc[n - 2] == '_'));
	if (strstr(enc, "%~")) {
		ck_assert_int_eq(names_decode(enc, n, dec, &m), -1);
		return;
	}
	ck_assert_int_eq(names_decode(enc, n, dec, &m), 0);
	ck_assert_uint_eq(m, len);
	ck_assert(memcmp(dec, name, len) == 0);
}

START_TEST(test_round_trips)
{
	static const char alphabet[] = "a_._/%\x00\x01\x1f\x7f json~\xc3\xa9";
	static const char *const fixed[] = {
		"", ".", "..", "x.json", "__summary__", "__", "%", "%%", "%~",
		"a/b/c", ".json", "_", "__a__.json",
	};
	char name[80];
	unsigned seed = 12345;
	size_t i, k, len;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		round_trip(fixed[i], strlen(fixed[i]));
	round_trip("\0", 1);
	for (i = 0; i < 20000; i++) {
		len = rand_r(&seed) % 72;
		for (k = 0; k < len; k++)
			name[k] = alphabet[rand_r(&seed) %
					   (sizeof(alphabet) - 1)];
		round_trip(name, len);
	}
}
END_TEST

START_TEST(test_decode_refuses)
{
	static const char *const bad[] = {
		"", "%2", "%zz", "%2e", "%41", "a/b", ".x", "x.json",
		"__x__", "%5f_x__", "%~0123456789abcdef", "%%",
	};
	char out[64];
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(names_decode(bad[i], strlen(bad[i]), out, &n)
			      == -1, "decoded %s", bad[i]);
	ck_assert_int_eq(names_decode("%", 1, out, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(names_decode("%5F_x__", 7, out, &n), 0);
	ck_assert(n == 5 && memcmp(out, "__x__", 5) == 0);
}
END_TEST

/* --- view -------------------------------------------------------------- */

static char tmpdir[256];
static char path[512];

/* A safetensors file from header JSON (padded to 8) and data bytes
 * 0, 1, 2, ... */
static void
write_model(const char *file, const char *json, size_t data_len)
{
	size_t n = strlen(json), padded = (n + 7) / 8 * 8, i;
	uint64_t hl = padded;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, file);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < 8; i++)
		fputc((int)(hl >> (8 * i)) & 0xff, f);
	fwrite(json, 1, n, f);
	for (i = n; i < padded; i++)
		fputc(' ', f);
	for (i = 0; i < data_len; i++)
		fputc((int)(i & 0xff), f);
	ck_assert_int_eq(fclose(f), 0);
}

#define LONG_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define LONG_300 LONG_A LONG_A LONG_A LONG_A LONG_A LONG_A

/* Tensors chosen to hit every naming rule; data_offsets are packed in
 * the order the writer would use. */
static const char model_json[] =
	"{\"__metadata__\":{\"format\":\"pt\",\"who\":\"me\"},"
	"\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
	"\"__summary__\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[24,25]},"
	"\"x.json\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[25,29]},"
	"\"\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[29,37]},"
	"\"/\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[37,37]},"
	"\"..\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[37,39]},"
	"\"nul\\u0000byte\":{\"dtype\":\"I8\",\"shape\":[1,1],\"data_offsets\":[39,40]},"
	"\"" LONG_300 "\":{\"dtype\":\"F8_E4M3\",\"shape\":[3],\"data_offsets\":[40,43]}"
	"}";
#define MODEL_DATA 43
#define MODEL_NT 8

static struct model *model;
static struct view *view;

static void
setup(void)
{
	struct err e = { 0 };

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/stfs-view-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	write_model("m.safetensors", model_json, MODEL_DATA);
	ck_assert_int_eq(chmod(path, 0644), 0);	/* whatever the umask */
	ck_assert_msg(model_open(path, NULL, &model, &e) == 0, "%s: %s",
		      err_name(e.code), e.detail);
	ck_assert_uint_eq(model->ntensors, MODEL_NT);
	ck_assert_int_eq(view_build(model, NULL, &view, &e), 0);
}

static void
teardown(void)
{
	DIR *d;
	struct dirent *de;

	view_free(view);
	model_free(model);
	/* every file a test wrote (sharded sets write more than path) */
	if ((d = opendir(tmpdir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	ck_assert_int_eq(rmdir(tmpdir), 0);
}

static uint64_t
look(const char *name)
{
	return view_lookup(view, VIEW_ROOT_INO, name, strlen(name));
}

/* The data inode of the tensor called name[0..len). */
static uint64_t
ino_of(const char *name, size_t len)
{
	char enc[NAMES_MAX + 1];
	size_t n = names_encode(name, len, enc);

	return view_lookup(view, VIEW_ROOT_INO, enc, n);
}

START_TEST(test_lookups)
{
	uint64_t a = look("a");

	ck_assert_uint_ne(a, 0);
	ck_assert_int_eq(view_kind(view, a), VIEW_TENSOR);
	ck_assert_int_eq(view_kind(view, look("a.json")), VIEW_SIDECAR);
	ck_assert_ptr_eq(view_tensor(view, look("a.json")),
			 view_tensor(view, a));

	/* The root files are stfs's; the tensor "__summary__" moves. */
	ck_assert_int_eq(view_kind(view, look("__summary__.json")), VIEW_BLOB);
	ck_assert_int_eq(view_kind(view, look("__metadata__.json")), VIEW_BLOB);
	ck_assert_int_eq(view_kind(view, look("%5F_summary__")), VIEW_TENSOR);
	ck_assert_int_eq(view_kind(view, look("%5F_summary__.json")),
			 VIEW_SIDECAR);
	ck_assert_uint_eq(look("__summary__"), 0);

	/* "x.json" is a tensor, not the sidecar of a tensor "x". */
	ck_assert_uint_eq(look("x.json"), 0);
	ck_assert_uint_eq(look("x"), 0);
	ck_assert_int_eq(view_kind(view, look("x%2Ejson")), VIEW_TENSOR);
	ck_assert_int_eq(view_kind(view, look("x%2Ejson.json")), VIEW_SIDECAR);

	ck_assert_int_eq(view_kind(view, look("%")), VIEW_TENSOR);
	ck_assert_int_eq(view_kind(view, look("%.json")), VIEW_SIDECAR);
	ck_assert_uint_eq(view_tensor(view, look("%"))->t->name_len, 0);
	ck_assert_int_eq(view_kind(view, look("%2F")), VIEW_TENSOR);
	ck_assert_int_eq(view_kind(view, look("%2E.")), VIEW_TENSOR);
	ck_assert_int_eq(view_kind(view, look("nul%00byte")), VIEW_TENSOR);
	ck_assert_uint_ne(ino_of(LONG_300, 300), 0);
	ck_assert_uint_eq(look(LONG_300), 0);

	/* Names that must not resolve. */
	ck_assert_uint_eq(look(""), 0);
	ck_assert_uint_eq(look("."), 0);
	ck_assert_uint_eq(look(".."), 0);
	ck_assert_uint_eq(look("/"), 0);
	ck_assert_uint_eq(look(".json"), 0);
	ck_assert_uint_eq(look("b"), 0);
	ck_assert_uint_eq(look("A"), 0);
	ck_assert_uint_eq(view_lookup(view, a, "a", 1), 0);
	ck_assert_uint_eq(view_lookup(view, 999999, "a", 1), 0);
}
END_TEST

START_TEST(test_listing)
{
	char name[VIEW_NAME_MAX + 1];
	uint64_t k, ino, n = view_nchildren(view, VIEW_ROOT_INO);
	size_t len;

	/* the root files, data and sidecar per tensor; .npy/ and .txt/
	 * are hidden */
	ck_assert_uint_eq(n, 2 + 2 * MODEL_NT);
	/* plus the root, .npy/, .txt/, .stats/, each tensor's .npy,
	 * .txt and .stats file; then .safetensors/ and its range, and
	 * .stfs/, its stats.json and its log, .png/ and two pictures per
	 * tensor (the flat layout: one directory), last .html/,
	 * index.html, s/ and a script per tensor */
	ck_assert_uint_eq(view->ino_safetensors - 1,
			  1 + n + 3 + 3 * MODEL_NT);
	ck_assert_uint_ge(view->ino_stfs, view->ino_safetensors + 3);
	ck_assert_uint_eq(view->ino_png, view->ino_stfs + 3);
	ck_assert_uint_eq(view->ino_html, view->ino_png + 2 * MODEL_NT + 1);
	/* then .files/ and its range, last */
	ck_assert_uint_eq(view->ino_files, view->ino_html + 2 + MODEL_NT + 1);
	ck_assert_uint_gt(view->ninodes, view->ino_files);
	for (k = 0; k < n; k++) {
		ino = view_child(view, VIEW_ROOT_INO, k);
		ck_assert_uint_ne(ino, 0);
		len = view_name(view, ino, name);
		ck_assert_uint_eq(len, strlen(name));
		ck_assert(len >= 1 && len <= VIEW_NAME_MAX);
		ck_assert(strchr(name, '/') == NULL);
		/* Every listed name resolves back to its inode. */
		ck_assert_uint_eq(look(name), ino);
	}
	ck_assert_uint_eq(view_child(view, VIEW_ROOT_INO, n), 0);
	ck_assert_uint_eq(view_nchildren(view, look("a")), 0);
	/* Order: root files first, then data and sidecar per tensor. */
	view_name(view, view_child(view, VIEW_ROOT_INO, 0), name);
	ck_assert_str_eq(name, "__metadata__.json");
	view_name(view, view_child(view, VIEW_ROOT_INO, 1), name);
	ck_assert_str_eq(name, "__summary__.json");
	view_name(view, view_child(view, VIEW_ROOT_INO, 2), name);
	ck_assert_str_eq(name, "a");
	view_name(view, view_child(view, VIEW_ROOT_INO, 3), name);
	ck_assert_str_eq(name, "a.json");
}
END_TEST

START_TEST(test_attributes)
{
	struct stat st, src;
	uint64_t ino, total = 0, k, n = view_nchildren(view, VIEW_ROOT_INO);

	ck_assert_int_eq(stat(path, &src), 0);
	ck_assert_int_eq(view_stat(view, VIEW_ROOT_INO, &st), 0);
	ck_assert_uint_eq(st.st_ino, 1);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0555);
	ck_assert_uint_eq(st.st_nlink, 2);	/* .npy/, .txt/ hidden */
	ck_assert_int_eq(st.st_mtim.tv_sec, src.st_mtim.tv_sec);
	ck_assert_int_eq(st.st_mtim.tv_nsec, src.st_mtim.tv_nsec);
	ck_assert_uint_eq(st.st_uid, src.st_uid);
	ck_assert_int_eq(view_stat(view, view->ninodes + 1, &st), -ENOENT);
	ck_assert_int_eq(view_stat(view, 0, &st), -ENOENT);

	for (k = 0; k < n; k++) {
		ino = view_child(view, VIEW_ROOT_INO, k);
		ck_assert_int_eq(view_stat(view, ino, &st), 0);
		ck_assert_uint_eq(st.st_ino, ino);
		if (view_kind(view, ino) == VIEW_DIR)
			continue;	/* .npy/ and .txt/ */
		ck_assert_uint_eq(st.st_mode, S_IFREG | 0444);
		ck_assert_uint_eq(st.st_nlink, 1);
		ck_assert_uint_eq((uint64_t)st.st_size, view_size(view, ino));
		ck_assert_uint_eq((uint64_t)st.st_blocks,
				  ((uint64_t)st.st_size + 511) / 512);
		ck_assert_int_eq(st.st_mtim.tv_sec, src.st_mtim.tv_sec);
		ck_assert_int_eq(st.st_ctim.tv_sec, src.st_ctim.tv_sec);
		ck_assert_uint_eq(st.st_gid, src.st_gid);
		total += (uint64_t)st.st_size;
	}
	ck_assert_uint_eq(view->total_bytes, total);

	ck_assert_uint_eq(view_size(view, look("a")), 24);
	ck_assert_uint_eq(view_size(view, look("%")), 8);
	ck_assert_uint_eq(view_size(view, look("%2F")), 0);
	ck_assert_uint_eq(view_size(view, look("__metadata__.json")),
			  strlen(model->metadata_json));
}
END_TEST

/* The total statfs shows stops at UINT64_MAX: eight tensors of 2^62
 * bytes each (the most format/tensor_size.h lets a tensor have, about;
 * written over the table after opening, as a remote server may claim
 * such sizes) summed to 2^65, which wrapped. */
START_TEST(test_total_saturates)
{
	struct header *h = model->shards[0].hdr;
	struct view *v = NULL;
	struct err e = { 0 };
	size_t i;

	for (i = 0; i < h->ntensors; i++) {
		h->tensors[i].begin = (uint64_t)i << 62;
		h->tensors[i].end = h->tensors[i].begin + (1ull << 62);
	}
	ck_assert_int_eq(view_build(model, NULL, &v, &e), 0);
	ck_assert_uint_eq(v->total_bytes, UINT64_MAX);
	view_free(v);
}
END_TEST

START_TEST(test_uid_override)
{
	struct view_opts o = { .set_uid = 1, .set_gid = 1, .uid = 4242,
			       .gid = 4343 };
	struct view *v2;
	struct err e = { 0 };
	struct stat st;

	ck_assert_int_eq(view_build(model, &o, &v2, &e), 0);
	view_stat(v2, VIEW_ROOT_INO, &st);
	ck_assert_uint_eq(st.st_uid, 4242);
	ck_assert_uint_eq(st.st_gid, 4343);
	view_stat(v2, look("a"), &st);
	ck_assert_uint_eq(st.st_uid, 4242);
	ck_assert_uint_eq(st.st_gid, 4343);
	view_free(v2);
}
END_TEST

static json_t *
sidecar_of(uint64_t data_ino)
{
	uint64_t ino = data_ino + 1;
	struct buf b = BUF_INIT;
	json_error_t je;
	json_t *j;

	ck_assert_int_eq(view_kind(view, ino), VIEW_SIDECAR);
	ck_assert_int_eq(view_render_sidecar(view, ino, &b), 0);
	ck_assert_uint_eq(b.len, view_size(view, ino));
	ck_assert(b.len > 2 && b.data[b.len - 1] == '\n');
	ck_assert(strncmp(b.data, "{\n  \"name\": ", 12) == 0);
	j = json_loadb(b.data, b.len, JSON_ALLOW_NUL, &je);
	ck_assert_msg(j != NULL, "%s: %s", je.text, b.data);
	buf_free(&b);
	return j;
}

static void
check_u64_array(json_t *a, const uint64_t *want, size_t n)
{
	size_t i;

	ck_assert(json_is_array(a));
	ck_assert_uint_eq(json_array_size(a), n);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(json_integer_value(json_array_get(a, i)),
				 (json_int_t)want[i]);
}

START_TEST(test_sidecars)
{
	uint64_t data_start = model->shards[0].hdr->data_start;
	uint64_t shape_a[] = { 2, 3 }, offs_a[] = { 0, 24 };
	uint64_t offs_x[] = { 25, 29 }, none[1] = { 0 };
	json_t *j, *nm;
	size_t i;

	ck_assert_uint_eq(data_start % 8, 0);

	j = sidecar_of(look("a"));
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "a");
	ck_assert_str_eq(json_string_value(json_object_get(j, "dtype")), "F32");
	check_u64_array(json_object_get(j, "shape"), shape_a, 2);
	check_u64_array(json_object_get(j, "data_offsets"), offs_a, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "nbytes")), 24);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "numel")), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")),
			 (json_int_t)data_start);
	ck_assert_str_eq(json_string_value(json_object_get(j, "numpy")), "<f4");
	ck_assert_ptr_null(json_object_get(j, "decode"));
	ck_assert_str_eq(json_string_value(json_object_get(j, "source")),
			 "m.safetensors");
	ck_assert_uint_eq(json_object_size(j), 9);
	json_decref(j);

	/* BF16: numpy has no such dtype, so null plus a decode note. */
	j = sidecar_of(look("x%2Ejson"));
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")),
			 "x.json");
	ck_assert_str_eq(json_string_value(json_object_get(j, "dtype")),
			 "BF16");
	check_u64_array(json_object_get(j, "data_offsets"), offs_x, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")),
			 (json_int_t)(data_start + 25));
	ck_assert(json_is_null(json_object_get(j, "numpy")));
	ck_assert(json_is_string(json_object_get(j, "decode")));
	ck_assert_uint_eq(json_object_size(j), 10);
	json_decref(j);

	/* Rank 0: shape [], one element. */
	j = sidecar_of(look("%"));
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "");
	check_u64_array(json_object_get(j, "shape"), none, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "numel")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "numpy")), "<i8");
	json_decref(j);

	/* Zero elements. */
	j = sidecar_of(look("%2F"));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "numel")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "nbytes")), 0);
	json_decref(j);

	/* The exact name, NUL included. */
	j = sidecar_of(look("nul%00byte"));
	nm = json_object_get(j, "name");
	ck_assert_uint_eq(json_string_length(nm), 8);
	ck_assert(memcmp(json_string_value(nm), "nul\0byte", 8) == 0);
	json_decref(j);

	/* The full long name, whatever the file name. */
	j = sidecar_of(ino_of(LONG_300, 300));
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")),
			 LONG_300);
	ck_assert(json_is_null(json_object_get(j, "numpy")));
	json_decref(j);

	/* Every sidecar parses and names its tensor. */
	for (i = 0; i < model->ntensors; i++) {
		const struct tensor *t = model->tensors[i].t;

		j = sidecar_of(ino_of(t->name, t->name_len));
		nm = json_object_get(j, "name");
		ck_assert_uint_eq(json_string_length(nm), t->name_len);
		ck_assert(memcmp(json_string_value(nm), t->name,
				 t->name_len) == 0);
		json_decref(j);
	}
}
END_TEST

START_TEST(test_blobs_and_data)
{
	struct source *src;
	uint64_t off, len;
	const char *p;
	json_t *j;
	size_t n;

	p = view_blob(view, look("__metadata__.json"), &n);
	ck_assert_str_eq(p, model->metadata_json);
	j = json_loadb(p, n, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "who")), "me");
	json_decref(j);

	p = view_blob(view, look("__summary__.json"), &n);
	ck_assert_uint_eq(n, strlen(p));
	ck_assert(p[n - 1] == '\n');
	j = json_loadb(p, n, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "tensors")),
			 MODEL_NT);
	json_decref(j);
	ck_assert_ptr_null(view_blob(view, look("a"), &n));

	ck_assert_int_eq(view_data(view, look("%2E."), &src, &off, &len), 0);
	ck_assert_uint_eq(off, model->shards[0].hdr->data_start + 37);
	ck_assert_uint_eq(len, 2);
	{
		/* local: a descriptor from the pool (source_fd_get) */
		int fd = source_fd_get(src);

		ck_assert_int_ge(fd, 0);
		source_fd_put(src, fd);
	}
	ck_assert_int_eq(view_data(view, look("a.json"), &src, &off, &len), -1);
	ck_assert_int_eq(view_data(view, VIEW_ROOT_INO, &src, &off, &len), -1);
}
END_TEST

/* Same model, new view (and new process state): same inode numbers. */
START_TEST(test_inode_stability)
{
	struct model *m2;
	struct view *v2;
	struct err e = { 0 };
	char name[VIEW_NAME_MAX + 1];
	uint64_t k, ino;

	ck_assert_int_eq(model_open(path, NULL, &m2, &e), 0);
	ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);
	ck_assert_uint_eq(v2->ninodes, view->ninodes);
	for (k = 0; k < view_nchildren(view, VIEW_ROOT_INO); k++) {
		ino = view_child(view, VIEW_ROOT_INO, k);
		view_name(view, ino, name);
		ck_assert_uint_eq(view_lookup(v2, VIEW_ROOT_INO, name,
					      strlen(name)), ino);
	}
	ck_assert_uint_eq(look("__metadata__.json"), 2);
	ck_assert_uint_eq(look("__summary__.json"), 3);
	ck_assert_uint_eq(look("a"), 4);
	ck_assert_uint_eq(look("a.json"), 5);
	view_free(v2);
	model_free(m2);
}
END_TEST

START_TEST(test_empty_model)
{
	struct model *m2;
	struct view *v2;
	struct err e = { 0 };
	char p2[sizeof(path)];

	snprintf(p2, sizeof(p2), "%s", path);
	write_model("empty.safetensors", "{}", 0);
	ck_assert_int_eq(model_open(path, NULL, &m2, &e), 0);
	ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);
	ck_assert_uint_eq(view_nchildren(v2, VIEW_ROOT_INO), 2);
	ck_assert_uint_eq(view_lookup(v2, 1, "a", 1), 0);
	ck_assert_uint_eq(view_lookup(v2, 1, "__summary__.json", 16), 3);
	view_free(v2);
	model_free(m2);
	unlink(path);
	snprintf(path, sizeof(path), "%s", p2);
}
END_TEST

/* Files never grant more than the source does (allow_other would
 * otherwise publish a 0600 model). */
START_TEST(test_modes)
{
	static const mode_t modes[][3] = {	/* source, file, directory */
		{ 0644, 0444, 0555 }, { 0640, 0440, 0550 },
		{ 0600, 0400, 0500 }, { 0604, 0404, 0505 }, { 0755, 0444, 0555 },
	};
	struct model *m2;
	struct view *v2;
	struct err e = { 0 };
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ck_assert_int_eq(chmod(path, modes[i][0]), 0);
		ck_assert_int_eq(model_open(path, NULL, &m2, &e), 0);
		ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);
		view_stat(v2, VIEW_ROOT_INO, &st);
		ck_assert_uint_eq(st.st_mode, S_IFDIR | modes[i][2]);
		view_stat(v2, view_lookup(v2, 1, "a", 1), &st);
		ck_assert_uint_eq(st.st_mode, S_IFREG | modes[i][1]);
		view_stat(v2, view_lookup(v2, 1, "a.json", 6), &st);
		ck_assert_uint_eq(st.st_mode, S_IFREG | modes[i][1]);
		view_stat(v2, view_lookup(v2, 1, "__summary__.json", 16), &st);
		ck_assert_uint_eq(st.st_mode, S_IFREG | modes[i][1]);
		view_free(v2);
		model_free(m2);
	}
	chmod(path, 0644);
}
END_TEST

/* A shard whose __metadata__ has a key with a NUL byte (JSON allows it):
 * its __shards__ file says so; the mount does not fail.  (The shard
 * files were once cut out of the summary's text, which jansson cannot
 * read back with such a key, and the mount failed "out of memory".) */
START_TEST(test_sharded_nul_key)
{
	static const char index_json[] =
		"{\"weight_map\":{\"a\":\"n-1.safetensors\","
		"\"b\":\"n-2.safetensors\"}}";
	char idx[600];
	struct model *m2;
	struct view *v2;
	struct err e = { 0 };
	uint64_t ino;
	const char *p;
	size_t n;
	FILE *f;

	write_model("n-1.safetensors", "{\"__metadata__\":{\"k\\u0000y\":\"v\"},"
		    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		    "\"data_offsets\":[0,8]}}", 8);
	write_model("n-2.safetensors", "{\"b\":{\"dtype\":\"U8\",\"shape\":[12],"
		    "\"data_offsets\":[0,12]}}", 12);
	snprintf(idx, sizeof(idx), "%s/n.safetensors.index.json", tmpdir);
	f = fopen(idx, "w");
	ck_assert_ptr_nonnull(f);
	fputs(index_json, f);
	fclose(f);
	ck_assert_msg(model_open(idx, NULL, &m2, &e) == 0, "%s", e.detail);
	ck_assert_msg(view_build(m2, NULL, &v2, &e) == 0, "%s", e.detail);
	ino = view_lookup(v2, view_lookup(v2, 1, "__shards__", 10),
			  "n-1.safetensors.json", 20);
	p = view_blob(v2, ino, &n);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(view_size(v2, ino), n);
	ck_assert_ptr_nonnull(memmem(p, n, "\"k\\u0000y\": \"v\"", 15));
	ck_assert_int_eq(p[n - 1], '\n');
	view_free(v2);
	model_free(m2);
}
END_TEST

/* A sharded set: __shards__/ holds one JSON per shard; tensor inodes are
 * numbered as in a single file. */
START_TEST(test_sharded)
{
	static const char index_json[] =
		"{\"metadata\":{\"total_size\":20},\"weight_map\":{"
		"\"a\":\"s-1.safetensors\",\"b\":\"s-2.safetensors\"}}";
	char name[VIEW_NAME_MAX + 1], p2[sizeof(path)], idx[600];
	uint64_t k, ino, shards;
	struct model *m2;
	struct view *v2;
	struct err e = { 0 };
	struct stat st;
	const char *p;
	json_t *j;
	size_t n;
	FILE *f;

	snprintf(p2, sizeof(p2), "%s", path);
	write_model("s-1.safetensors", "{\"__metadata__\":{\"k\":\"v\"},"
		    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		    "\"data_offsets\":[0,8]}}", 8);
	write_model("s-2.safetensors", "{\"b\":{\"dtype\":\"U8\",\"shape\":[12],"
		    "\"data_offsets\":[0,12]}}", 12);
	snprintf(idx, sizeof(idx), "%s/model.safetensors.index.json", tmpdir);
	f = fopen(idx, "w");
	ck_assert_ptr_nonnull(f);
	fputs(index_json, f);
	fclose(f);
	ck_assert_msg(model_open(idx, NULL, &m2, &e) == 0, "%s", e.detail);
	ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);

	shards = view_lookup(v2, 1, "__shards__", 10);
	ck_assert_int_eq(view_kind(v2, shards), VIEW_DIR);
	ck_assert_uint_eq(view_lookup(v2, 1, "a", 1), 4);
	ck_assert_uint_eq(view_lookup(v2, 1, "b.json", 6), 7);
	ck_assert_uint_eq(view_nchildren(v2, 1), 3 + 4);
	ck_assert_uint_eq(view_child(v2, 1, 2), shards);
	ck_assert_uint_eq(view_nchildren(v2, shards), 2);
	view_stat(v2, 1, &st);
	ck_assert_uint_eq(st.st_nlink, 3);
	view_stat(v2, shards, &st);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0555);
	ck_assert_uint_eq(st.st_nlink, 2);
	ck_assert_uint_eq(view_name(v2, shards, name), 10);
	ck_assert_str_eq(name, "__shards__");
	for (k = 0; k < view_nchildren(v2, 1); k++) {
		ino = view_child(v2, 1, k);
		view_name(v2, ino, name);
		ck_assert_uint_eq(view_lookup(v2, 1, name, strlen(name)), ino);
	}
	/* + .npy/, .txt/, .stats/, the 3 view files of each of the 2
	 * tensors */
	ck_assert_uint_eq(v2->ino_safetensors - 1, 1 + 2 + 4 + 1 + 2 + 3 + 6);

	ino = view_lookup(v2, shards, "s-1.safetensors.json", 20);
	ck_assert_int_eq(view_kind(v2, ino), VIEW_BLOB);
	ck_assert_uint_eq(view_child(v2, shards, 0), ino);
	ck_assert_uint_eq(view_lookup(v2, shards, "a", 1), 0);
	ck_assert_uint_eq(view_lookup(v2, 1, "s-1.safetensors.json", 20), 0);
	p = view_blob(v2, ino, &n);
	ck_assert_uint_eq(n, view_size(v2, ino));
	ck_assert(p[n - 1] == '\n');
	j = json_loadb(p, n, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")),
			 "s-1.safetensors");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "tensors")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(
		json_object_get(j, "metadata"), "k")), "v");
	json_decref(j);
	view_name(v2, view_child(v2, shards, 1), name);
	ck_assert_str_eq(name, "s-2.safetensors.json");

	view_free(v2);
	model_free(m2);
	unlink(idx);
	unlink(path);
	snprintf(path, sizeof(path), "%s/s-1.safetensors", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s", p2);
}
END_TEST

/* Hidden views: not listed, found by path; visible: listed last; off:
 * absent, and the tensor inodes stay where they are. */
START_TEST(test_views_option)
{
	struct view_opts o = { 0 };
	char name[VIEW_NAME_MAX + 1];
	struct view *vis, *off;
	struct err e = { 0 };
	uint64_t npy, txt, k, n;
	struct stat st;

	npy = look(".npy");
	txt = look(".txt");
	ck_assert_int_eq(view_kind(view, npy), VIEW_DIR);
	ck_assert_int_eq(view_kind(view, txt), VIEW_DIR);
	n = view_nchildren(view, VIEW_ROOT_INO);
	for (k = 0; k < n; k++) {
		view_name(view, view_child(view, VIEW_ROOT_INO, k), name);
		ck_assert(name[0] != '.');
	}
	/* the hidden directories list their files as usual */
	ck_assert_uint_eq(view_nchildren(view, npy), MODEL_NT);
	ck_assert_int_eq(view_kind(view, view_lookup(view, npy, "a.npy", 5)),
			 VIEW_MIRROR);
	ck_assert_uint_eq(view_lookup(view, npy, "a.txt", 5), 0);
	ck_assert_int_eq(view_kind(view, view_lookup(view, txt, "a.txt", 5)),
			 VIEW_MIRROR);
	ck_assert_uint_eq(view_name(view, view_lookup(view, txt, "a.txt", 5),
				    name), 5);

	o.views = VIEW_VIEWS_VISIBLE;
	ck_assert_int_eq(view_build(model, &o, &vis, &e), 0);
	ck_assert_uint_eq(view_nchildren(vis, VIEW_ROOT_INO), n + 8);
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n), name);
	ck_assert_str_eq(name, ".npy");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 1), name);
	ck_assert_str_eq(name, ".txt");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 2), name);
	ck_assert_str_eq(name, ".stats");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 3), name);
	ck_assert_str_eq(name, ".safetensors");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 4), name);
	ck_assert_str_eq(name, ".stfs");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 5), name);
	ck_assert_str_eq(name, ".png");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 6), name);
	ck_assert_str_eq(name, ".html");
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n + 7), name);
	ck_assert_str_eq(name, ".files");
	ck_assert_uint_eq(view_lookup(vis, 1, ".npy", 4), npy);
	view_stat(vis, VIEW_ROOT_INO, &st);
	ck_assert_uint_eq(st.st_nlink, 2 + 8);	/* + .stfs/, .png/, .html/,
						   .files/ */
	ck_assert_uint_eq(vis->ninodes, view->ninodes);

	o.views = VIEW_VIEWS_OFF;
	ck_assert_int_eq(view_build(model, &o, &off, &e), 0);
	ck_assert_uint_eq(view_nchildren(off, VIEW_ROOT_INO), n);
	ck_assert_uint_eq(view_lookup(off, 1, ".npy", 4), 0);
	ck_assert_uint_eq(view_lookup(off, 1, ".txt", 4), 0);
	ck_assert_uint_eq(view_lookup(off, 1, ".safetensors", 12), 0);
	ck_assert_uint_eq(view_lookup(off, 1, "a", 1), look("a"));
	ck_assert_uint_eq(off->ninodes, 1 + n);
	ck_assert_int_eq(view_kind(off, off->ninodes + 1), VIEW_NONE);
	view_free(vis);
	view_free(off);
}
END_TEST

/* .stfs/: stats.json with each source's last error, and the log the
 * front end keeps (only then), rendered on every read, timed by its last
 * message; the inode numbers the same with a log and without. */
START_TEST(test_stfs_dir)
{
	struct view_opts o = { 0 };
	struct msglog *l = msglog_new(0);
	struct view *lv;
	struct view_segs s = VIEW_SEGS_INIT;
	struct stat st0, st1;
	struct err e = { 0 };
	uint64_t dir = look(".stfs"), stats, log;
	char name[VIEW_NAME_MAX + 1];
	json_t *j;

	/* without a log: stats.json only */
	ck_assert_uint_eq(view_nchildren(view, dir), 1);
	ck_assert_uint_eq(view_lookup(view, dir, "log", 3), 0);
	stats = view_lookup(view, dir, "stats.json", 10);
	ck_assert_int_eq(view_volatile(view, stats), 1);
	ck_assert_int_eq(view_volatile(view, 0), 0);	/* local: no direct_io */
	ck_assert_int_eq(view_read(view, stats, 0, 1 << 16, &s), 0);
	j = json_loadb(s.len ? view_seg_mem(&s, &s.seg[0]) : "", s.len, 0,
		       NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert(json_is_null(json_object_get(json_array_get(
		json_object_get(j, "sources"), 0), "last_error")));
	json_decref(j);
	/* a change: its why and time */
	source_mark_stale(model->shards[0].src, "size 10 -> 4 bytes");
	ck_assert_int_eq(view_read(view, stats, 0, 1 << 16, &s), 0);
	j = json_loadb(view_seg_mem(&s, &s.seg[0]), s.len, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_array_get(json_object_get(j, "sources"), 0),
		"last_error"), "message")), "changed while mounted (size 10 -> "
		"4 bytes): every further read of it fails with EIO");
	json_decref(j);

	/* with a log */
	ck_assert_ptr_nonnull(l);
	o.log = l;
	ck_assert_int_eq(view_build(model, &o, &lv, &e), 0);
	ck_assert_uint_eq(lv->ninodes, view->ninodes);
	ck_assert_uint_eq(view_nchildren(lv, dir), 2);
	view_name(lv, view_child(lv, dir, 1), name);
	ck_assert_str_eq(name, "log");
	log = view_lookup(lv, dir, "log", 3);
	ck_assert_uint_eq(log, view_child(lv, dir, 1));
	ck_assert_int_eq(view_kind(lv, log), VIEW_HIDDEN_FILE);
	ck_assert_int_eq(view_volatile(lv, log), 1);
	ck_assert_int_eq(view_volatile(lv, 0), 0);
	ck_assert_int_eq(view_stat(lv, log, &st0), 0);
	ck_assert_int_eq(st0.st_size, 0);
	msglog_add(l, 3, "m.safetensors: something went wrong");
	ck_assert_int_eq(view_stat(lv, log, &st1), 0);
	ck_assert_int_eq(st1.st_size, (off_t)msglog_size(l, NULL));
	ck_assert(st1.st_mtim.tv_sec != st0.st_mtim.tv_sec ||
		  st1.st_mtim.tv_nsec != st0.st_mtim.tv_nsec);
	ck_assert_int_eq(view_read(lv, log, 0, 1 << 16, &s), 0);
	ck_assert_uint_eq(s.len, (size_t)st1.st_size);
	ck_assert(strstr(view_seg_mem(&s, &s.seg[0]),
			 " error: m.safetensors: something went wrong\n"));
	ck_assert_int_eq(view_read(lv, log, 5, 1 << 16, &s), 0);
	ck_assert_uint_eq(s.len, (size_t)st1.st_size - 5);
	view_segs_free(&s);
	view_free(lv);
	msglog_free(l);
}
END_TEST

/* A tree of models has a .stfs/ with the log at its root too (each
 * model's directory has its own .stfs/): hidden, listed with
 * views=visible, absent with views=off or without a log. */
START_TEST(test_multi_log)
{
	struct view_model vm[] = {
		{ "a", "/src/a.safetensors", model },
		{ "b/c", "/src/b/c.safetensors", model },
	};
	struct view_opts o = { 0 };
	struct msglog *l = msglog_new(0);
	struct view_segs s = VIEW_SEGS_INIT;
	struct view *v, *vis, *off, *none;
	struct err e = { 0 };
	char name[VIEW_NAME_MAX + 1];
	uint64_t dir, log, n;
	struct stat st;

	o.log = l;
	ck_assert_int_eq(view_build_multi(vm, 2, NULL, &o, &v, &e), 0);
	n = view_nchildren(v, VIEW_ROOT_INO);
	dir = view_lookup(v, VIEW_ROOT_INO, ".stfs", 5);
	ck_assert_int_eq(view_kind(v, dir), VIEW_DIR);
	ck_assert_uint_eq(view_nchildren(v, dir), 1);
	log = view_lookup(v, dir, "log", 3);
	ck_assert_uint_eq(view_child(v, dir, 0), log);
	ck_assert_int_eq(view_kind(v, log), VIEW_HIDDEN_FILE);
	ck_assert_int_eq(view_volatile(v, log), 1);
	ck_assert_int_eq(view_volatile(v, 0), 0);
	view_name(v, log, name);
	ck_assert_str_eq(name, "log");
	msglog_add(l, 4, "b/c.safetensors: a warning");
	ck_assert_int_eq(view_stat(v, log, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)msglog_size(l, NULL));
	ck_assert_int_eq(view_read(v, log, 0, 1 << 16, &s), 0);
	ck_assert_uint_eq(s.len, (size_t)st.st_size);
	ck_assert(strstr(view_seg_mem(&s, &s.seg[0]),
			 " warning: b/c.safetensors: a warning\n"));
	/* a model's own .stfs/ has it too */
	ck_assert_uint_ne(view_lookup(v, view_lookup(v, view_lookup(v,
		VIEW_ROOT_INO, "a", 1), ".stfs", 5), "log", 3), 0);
	o.views = VIEW_VIEWS_VISIBLE;
	ck_assert_int_eq(view_build_multi(vm, 2, NULL, &o, &vis, &e), 0);
	ck_assert_uint_eq(view_nchildren(vis, VIEW_ROOT_INO), n + 1);
	view_name(vis, view_child(vis, VIEW_ROOT_INO, n), name);
	ck_assert_str_eq(name, ".stfs");
	view_stat(vis, VIEW_ROOT_INO, &st);
	ck_assert_uint_eq(st.st_nlink, 2 + 2 + 1);	/* a, b, .stfs */
	o.views = VIEW_VIEWS_OFF;
	ck_assert_int_eq(view_build_multi(vm, 2, NULL, &o, &off, &e), 0);
	ck_assert_uint_eq(view_lookup(off, VIEW_ROOT_INO, ".stfs", 5), 0);
	o.views = VIEW_VIEWS_HIDDEN;
	o.log = NULL;
	ck_assert_int_eq(view_build_multi(vm, 2, NULL, &o, &none, &e), 0);
	ck_assert_uint_eq(view_lookup(none, VIEW_ROOT_INO, ".stfs", 5), 0);
	view_segs_free(&s);
	view_free(v);
	view_free(vis);
	view_free(off);
	view_free(none);
	msglog_free(l);
}
END_TEST

/* The bytes a list of segments stands for (source ranges read). */
static char *
seg_bytes(const struct view_segs *s)
{
	char *out = malloc(s->len + 1);
	size_t i, at = 0;

	ck_assert_ptr_nonnull(out);
	for (i = 0; i < s->n; i++) {
		const struct view_seg *g = &s->seg[i];

		if (g->kind == VIEW_SEG_MEM)
			memcpy(out + at, view_seg_mem(s, g), g->len);
		else
			ck_assert_int_eq(source_pread(g->src, out + at,
						      g->len, g->off), 0);
		at += g->len;
	}
	ck_assert_uint_eq(at, s->len);
	return out;
}

/* A slice of a file rendered whole: what of the range is there. */
START_TEST(test_segs_add_copy)
{
	static const char data[] = "0123456789";
	struct view_segs s = VIEW_SEGS_INIT;
	char *b;

	ck_assert_int_eq(view_segs_add_copy(&s, data, 10, 3, 4), 0);
	ck_assert_int_eq(view_segs_add_copy(&s, data, 10, 8, 100), 0);
	ck_assert_int_eq(view_segs_add_copy(&s, data, 10, 10, 5), 0);
	ck_assert_int_eq(view_segs_add_copy(&s, data, 10, 1ull << 40, 5), 0);
	ck_assert_int_eq(view_segs_add_copy(&s, data, 10, 0, 0), 0);
	ck_assert_int_eq(view_segs_add_copy(&s, data, 0, 0, 5), 0);
	ck_assert_uint_eq(s.len, 6);
	b = seg_bytes(&s);
	ck_assert(memcmp(b, "345689", 6) == 0);
	free(b);
	view_segs_free(&s);
}
END_TEST

/* Every window of every file reads, through its segments, the same
 * bytes as a whole read; the shapes are the ones adapter relies on. */
START_TEST(test_read_segments)
{
	struct view_segs s = VIEW_SEGS_INIT;
	uint64_t npy = look(".npy"), ino, sz, off, k, n;
	char name[VIEW_NAME_MAX + 1], *whole, *part;
	struct buf b = BUF_INIT;
	size_t len;

	/* a tensor: one source range, capped at its end */
	ino = look("a");
	ck_assert_int_eq(view_read(view, ino, 4, 100, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_int_eq(s.seg[0].kind, VIEW_SEG_SOURCE);
	ck_assert_uint_eq(s.seg[0].off, model->shards[0].hdr->data_start + 4);
	ck_assert_uint_eq(s.len, 20);
	ck_assert_int_eq(view_read(view, ino, 24, 100, &s), 0);
	ck_assert_uint_eq(s.len, 0);
	ck_assert_uint_eq(s.n, 0);
	/* an F32 .npy: rendered header, then a source range */
	ino = view_lookup(view, npy, "a.npy", 5);
	ck_assert_int_eq(view_read(view, ino, 0, 1 << 20, &s), 0);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_int_eq(s.seg[0].kind, VIEW_SEG_MEM);
	ck_assert_uint_eq(s.seg[0].len, 128);
	ck_assert_int_eq(s.seg[1].kind, VIEW_SEG_SOURCE);
	ck_assert_uint_eq(s.seg[1].len, 24);
	/* errors */
	ck_assert_int_eq(view_read(view, VIEW_ROOT_INO, 0, 10, &s), -EISDIR);
	ck_assert_int_eq(view_read(view, view->ninodes + 1, 0, 10, &s),
			 -ENOENT);

	/* every file of the root, .npy/ and .txt/: all windows */
	for (k = 0; k < 3; k++) {
		uint64_t dir = k == 0 ? VIEW_ROOT_INO : k == 1 ? npy :
			       look(".txt"), j;

		for (j = 0; j < view_nchildren(view, dir); j++) {
			ino = view_child(view, dir, j);
			sz = view_size(view, ino);
			view_name(view, ino, name);
			ck_assert_int_eq(view_read(view, ino, 0, sz + 5, &s), 0);
			ck_assert_uint_eq(s.len, sz);
			whole = seg_bytes(&s);
			if (view_kind(view, ino) == VIEW_SIDECAR) {
				b.len = 0;
				view_render_sidecar(view, ino, &b);
				ck_assert(memcmp(whole, b.data, sz) == 0);
			}
			for (off = 0; off <= sz; off += 1 + sz / 7) {
				for (n = 1; n <= sz - off + 2;
				     n += 1 + (sz - off) / 5) {
					len = (size_t)n;
					ck_assert_int_eq(view_read(view, ino,
							off, len, &s), 0);
					ck_assert_uint_eq(s.len, off + len > sz ?
							  sz - off : len);
					part = seg_bytes(&s);
					ck_assert_msg(memcmp(part, whole + off,
							     s.len) == 0,
						      "%s [%llu, +%zu)", name,
						      (unsigned long long)off,
						      len);
					free(part);
				}
			}
			free(whole);
		}
	}
	buf_free(&b);
	view_segs_free(&s);
}
END_TEST

/* .files/: a model without a folder has its own file; a sharded set
 * given its folder has its shards (their sources, whole), its index and
 * the folder's other files, not another model's file. */
static int
open_path(void *arg, const char *name, struct source **out, struct err *e)
{
	(void)arg;
	return source_open_local(name, out, e);
}

START_TEST(test_files_dir)
{
	static const struct source_opener op = { open_path, NULL, NULL, NULL,
						 NULL };
	static const char index_json[] =
		"{\"weight_map\":{\"a\":\"s-1.safetensors\","
		"\"b\":\"s-2.safetensors\"}}";
	const char *want[] = { "config.json", "model.safetensors.index.json",
			       "s-1.safetensors", "s-2.safetensors" };
	struct view_segs s = VIEW_SEGS_INIT;
	char name[VIEW_NAME_MAX + 1], p2[sizeof(path)], idx[600];
	uint64_t fd, ino, k;
	struct model *m2;
	struct view *v2;
	struct err e = { 0 };
	struct stat st;
	FILE *f;

	/* no folder: the model's own file, its bytes its source's */
	fd = look(".files");
	ck_assert_int_eq(view_kind(view, fd), VIEW_DIR);
	ck_assert_uint_eq(view_nchildren(view, fd), 1);
	ino = view_child(view, fd, 0);
	view_name(view, ino, name);
	ck_assert_str_eq(name, "m.safetensors");
	ck_assert_uint_eq(view_lookup(view, fd, "m.safetensors", 13), ino);
	ck_assert_int_eq(view_stat(view, ino, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, model->shards[0].src->size);
	ck_assert_int_eq(view_read(view, ino, 3, 100, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_int_eq(s.seg[0].kind, VIEW_SEG_SOURCE);
	ck_assert_ptr_eq(s.seg[0].src, model->shards[0].src);
	ck_assert_uint_eq(s.seg[0].off, 3);
	ck_assert_uint_eq(s.len, 100);
	ck_assert_int_eq(view_read(view, ino, st.st_size - 2, 100, &s), 0);
	ck_assert_uint_eq(s.len, 2);

	/* a sharded set beside m.safetensors (another model) */
	snprintf(p2, sizeof(p2), "%s", path);
	write_model("s-1.safetensors", "{\"a\":{\"dtype\":\"F32\","
		    "\"shape\":[2],\"data_offsets\":[0,8]}}", 8);
	write_model("s-2.safetensors", "{\"b\":{\"dtype\":\"U8\","
		    "\"shape\":[12],\"data_offsets\":[0,12]}}", 12);
	snprintf(idx, sizeof(idx), "%s/model.safetensors.index.json", tmpdir);
	f = fopen(idx, "w");
	ck_assert_ptr_nonnull(f);
	fputs(index_json, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/config.json", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"k\": 1}", f);
	fclose(f);
	ck_assert_msg(model_open(idx, NULL, &m2, &e) == 0, "%s", e.detail);
	m2->files = model_files_new(MODEL_FILES_LOCAL, tmpdir, &op);
	ck_assert_ptr_nonnull(m2->files);
	ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);
	fd = view_lookup(v2, 1, ".files", 6);
	ck_assert_uint_eq(view_nchildren(v2, fd), 4);
	for (k = 0; k < 4; k++) {
		ino = view_lookup(v2, fd, want[k], strlen(want[k]));
		ck_assert_msg(ino != 0, "%s", want[k]);
		ck_assert_int_eq(view_kind(v2, ino), VIEW_HIDDEN_FILE);
	}
	ck_assert_uint_eq(view_lookup(v2, fd, "m.safetensors", 13), 0);
	/* a shard: its source, whole */
	ino = view_lookup(v2, fd, "s-2.safetensors", 15);
	ck_assert_int_eq(view_read(v2, ino, 0, 1 << 20, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_ptr_eq(s.seg[0].src, m2->shards[1].src);
	ck_assert_uint_eq(s.len, m2->shards[1].src->size);
	/* a file of the folder: opened on its first read */
	ino = view_lookup(v2, fd, "config.json", 11);
	ck_assert_uint_eq(view_size(v2, ino), 8);
	ck_assert_int_eq(view_read(v2, ino, 1, 1 << 20, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_int_eq(s.seg[0].kind, VIEW_SEG_SOURCE);
	ck_assert_uint_eq(s.seg[0].off, 1);
	ck_assert_uint_eq(s.len, 7);
	ck_assert_int_eq(view_read(v2, fd, 0, 1, &s), -EISDIR);

	view_segs_free(&s);
	view_free(v2);
	model_free(m2);
	snprintf(path, sizeof(path), "%s", p2);
}
END_TEST

/* --- a tree of models (view_build_multi) ----------------------------- */

static uint64_t
mlook(const struct view *v, uint64_t dir, const char *name)
{
	return view_lookup(v, dir, name, strlen(name));
}

static json_t *
json_of(const struct view *v, uint64_t ino)
{
	struct view_segs s = VIEW_SEGS_INIT;
	json_t *j;

	ck_assert_int_eq(view_read(v, ino, 0, 1 << 20, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.len, view_size(v, ino));
	j = json_loadb(view_seg_mem(&s, &s.seg[0]), s.len, 0, NULL);
	ck_assert_ptr_nonnull(j);
	view_segs_free(&s);
	return j;
}

/* One model at "" is exactly view_build(); its summary's source is the
 * label (the catalog's absolute path of its file), as in a tree. */
START_TEST(test_multi_single)
{
	struct view_model vm = { "", "/abs/m.safetensors", model };
	struct view *v;
	struct err e = { 0 };
	json_t *j;
	uint64_t k;

	ck_assert_int_eq(view_build_multi(&vm, 1, NULL, NULL, &v, &e), 0);
	ck_assert_ptr_null(v->multi);
	ck_assert_uint_eq(v->ninodes, view->ninodes);
	for (k = 0; k < view_nchildren(view, 1); k++)
		ck_assert_uint_eq(view_child(v, 1, k), view_child(view, 1, k));
	j = json_of(v, mlook(v, 1, "__summary__.json"));
	ck_assert_str_eq(json_string_value(json_object_get(j, "source")),
			 "/abs/m.safetensors");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "tensors")),
			 MODEL_NT);
	json_decref(j);
	view_free(v);
}
END_TEST

START_TEST(test_multi_tree)
{
	struct view_model vm[] = {
		{ "y", "/src/y.safetensors", model },
		{ "x/m2", "/src/x/m2.safetensors", model },
		{ "x/m1", "/src/x/m1.safetensors", model },
		{ "x/deep/er/m3", "/src/x/deep/er/m3.safetensors", model },
	};
	struct view_opts o = { 0 };
	struct view_segs s1 = VIEW_SEGS_INIT, s2 = VIEW_SEGS_INIT;
	char name[VIEW_NAME_MAX + 1];
	struct buf b = BUF_INIT;
	uint64_t x, m1, a, a1, y, deep, k, n;
	struct view *v;
	struct err e = { 0 };
	struct stat st;
	json_t *j, *l;
	size_t i;

	o.views = VIEW_VIEWS_HIDDEN;
	ck_assert_msg(view_build_multi(vm, 4, NULL, &o, &v, &e) == 0, "%s",
		      e.detail);
	/* root: __summary__.json, then x and y by name */
	ck_assert_uint_eq(view_nchildren(v, 1), 3);
	view_name(v, view_child(v, 1, 0), name);
	ck_assert_str_eq(name, "__summary__.json");
	view_name(v, view_child(v, 1, 1), name);
	ck_assert_str_eq(name, "x");
	view_name(v, view_child(v, 1, 2), name);
	ck_assert_str_eq(name, "y");
	ck_assert_uint_eq(view_child(v, 1, 3), 0);
	view_stat(v, 1, &st);
	ck_assert_uint_eq(st.st_nlink, 2 + 2);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0555);

	x = mlook(v, 1, "x");
	ck_assert_int_eq(view_kind(v, x), VIEW_DIR);
	ck_assert_uint_eq(view_nchildren(v, x), 3);	/* deep, m1, m2 */
	view_name(v, view_child(v, x, 0), name);
	ck_assert_str_eq(name, "deep");
	view_stat(v, x, &st);
	ck_assert_uint_eq(st.st_nlink, 2 + 3);
	deep = mlook(v, mlook(v, mlook(v, x, "deep"), "er"), "m3");
	ck_assert_int_eq(view_kind(v, deep), VIEW_DIR);
	m1 = mlook(v, x, "m1");
	y = mlook(v, 1, "y");
	ck_assert_int_eq(view_kind(v, m1), VIEW_DIR);
	ck_assert_uint_eq(view_name(v, m1, name), 2);
	ck_assert_str_eq(name, "m1");
	ck_assert_uint_eq(mlook(v, x, "m3"), 0);
	ck_assert_uint_eq(mlook(v, 1, "m1"), 0);
	ck_assert_uint_eq(mlook(v, 1, "x/m1"), 0);

	/* each model directory is the model's own view */
	ck_assert_uint_eq(view_nchildren(v, m1), view_nchildren(view, 1));
	for (k = 0; k < view_nchildren(view, 1); k++) {
		uint64_t c = view_child(v, m1, k);

		view_name(v, c, name);
		ck_assert_uint_eq(mlook(v, m1, name), c);
		if (strcmp(name, "__summary__.json") != 0)	/* relabelled */
			ck_assert_uint_eq(view_size(v, c), view_size(view,
					  view_child(view, 1, k)));
		view_stat(v, c, &st);
		ck_assert_uint_eq(st.st_ino, c);
	}
	a = mlook(v, m1, "a");
	a1 = mlook(v, y, "a");
	ck_assert_int_eq(view_kind(v, a), VIEW_TENSOR);
	ck_assert_uint_ne(a, a1);
	ck_assert_ptr_eq(view_tensor(v, a), view_tensor(view, look("a")));
	ck_assert_int_eq(view_read(v, a, 0, 100, &s1), 0);
	ck_assert_int_eq(view_read(view, look("a"), 0, 100, &s2), 0);
	ck_assert_uint_eq(s1.len, 24);
	ck_assert(s1.n == 1 && s1.seg[0].src == s2.seg[0].src &&
		  s1.seg[0].off == s2.seg[0].off);
	/* hidden views per model, reachable by path */
	n = mlook(v, m1, ".npy");
	ck_assert_int_eq(view_kind(v, n), VIEW_DIR);
	ck_assert_int_eq(view_kind(v, mlook(v, n, "a.npy")), VIEW_MIRROR);
	ck_assert_int_eq(view_read(v, mlook(v, n, "a.npy"), 0, 1000, &s1), 0);
	ck_assert_uint_eq(s1.len, 128 + 24);
	ck_assert_int_eq(view_xattr_get(v, a, "user.safetensors.nbytes", &b),
			 0);
	ck_assert(b.len == 2 && memcmp(b.data, "24", 2) == 0);
	buf_free(&b);
	view_segs_free(&s1);
	view_segs_free(&s2);

	/* every model's summary names its label */
	j = json_of(v, mlook(v, deep, "__summary__.json"));
	ck_assert_str_eq(json_string_value(json_object_get(j, "source")),
			 "/src/x/deep/er/m3.safetensors");
	json_decref(j);
	/* the root summary lists them in path order */
	j = json_of(v, mlook(v, 1, "__summary__.json"));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "models")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "tensors")),
			 4 * MODEL_NT);
	l = json_object_get(j, "model_list");
	ck_assert_uint_eq(json_array_size(l), 4);
	ck_assert_str_eq(json_string_value(json_object_get(
		json_array_get(l, 0), "path")), "x/deep/er/m3");
	ck_assert_str_eq(json_string_value(json_object_get(
		json_array_get(l, 3), "source")), "/src/y.safetensors");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		json_array_get(l, 1), "parameters"), "F32")), 6);
	json_decref(j);

	/* every listed entry of every directory resolves back */
	for (i = 0; i < 2; i++) {
		uint64_t dir = i ? x : 1;

		for (k = 0; k < view_nchildren(v, dir); k++) {
			uint64_t c = view_child(v, dir, k);

			view_name(v, c, name);
			ck_assert_uint_eq(mlook(v, dir, name), c);
		}
	}
	ck_assert_int_eq(view_kind(v, 5ull << 32 | 1), VIEW_NONE);
	ck_assert_int_eq(view_kind(v, 999), VIEW_NONE);
	ck_assert_int_eq(view_stat(v, 999, &st), -ENOENT);
	view_free(v);
}
END_TEST

static void
refuse(const struct view_model *vm, size_t n, const char *want)
{
	struct view *v = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(view_build_multi(vm, n, NULL, NULL, &v, &e), -1);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(e.code, ERR_USAGE);
	ck_assert_msg(strstr(e.detail, want) != NULL, "%s", e.detail);
}

/* A tree's folder: the root's .files/, every file of it (the models'
 * too, in their folders), hidden like the other views, none with
 * views=off; the models' own .files/ as before. */
START_TEST(test_multi_folder)
{
	struct view_model vm[] = {
		{ "unet", "/src/unet/d.safetensors", model },
		{ "vae", "/src/vae/d.safetensors", model },
	};
	struct source_opener op = { open_path, NULL, NULL, NULL,
				    NULL };
	struct model_files *f = model_files_new(MODEL_FILES_LISTED, NULL, &op);
	struct view_segs s = VIEW_SEGS_INIT;
	struct view_opts o = { 0 };
	char name[VIEW_NAME_MAX + 1];
	struct view *v, *vis, *off;
	struct err e = { 0 };
	uint64_t fd, unet, ino, n;
	struct stat st;

	ck_assert_ptr_nonnull(f);
	model_files_set_tree(f);
	ck_assert_int_eq(model_files_add(f, "model_index.json", NULL, NULL, 0,
					 "{\"a\": 1}", 8, 0), 0);
	ck_assert_int_eq(model_files_add(f, "unet/d.safetensors", NULL, NULL,
					 0, "weights", 7, 1), 0);
	ck_assert_int_eq(model_files_add(f, "unet/config.json", NULL, NULL, 0,
					 "{}", 2, 0), 0);
	ck_assert_int_eq(model_files_add(f, "scheduler/s.json", NULL, NULL, 0,
					 "{\"s\": 0}", 8, 0), 0);
	o.views = VIEW_VIEWS_HIDDEN;
	ck_assert_int_eq(view_build_multi(vm, 2, f, &o, &v, &e), 0);
	n = view_nchildren(v, VIEW_ROOT_INO);
	fd = view_lookup(v, VIEW_ROOT_INO, ".files", 6);
	ck_assert_int_eq(view_kind(v, fd), VIEW_DIR);
	view_name(v, fd, name);
	ck_assert_str_eq(name, ".files");
	ck_assert_int_eq(view_stat(v, fd, &st), 0);
	ck_assert_uint_eq(st.st_ino, fd);
	ck_assert_uint_eq(st.st_nlink, 2 + 2);	/* scheduler, unet */
	ck_assert_uint_eq(view_nchildren(v, fd), 3);
	view_name(v, view_child(v, fd, 0), name);
	ck_assert_str_eq(name, "model_index.json");
	unet = view_lookup(v, fd, "unet", 4);
	ck_assert_int_eq(view_kind(v, unet), VIEW_DIR);
	ck_assert_uint_eq(view_nchildren(v, unet), 2);
	ino = view_lookup(v, unet, "d.safetensors", 13);
	ck_assert_int_eq(view_kind(v, ino), VIEW_HIDDEN_FILE);
	ck_assert_int_eq(view_stat(v, ino, &st), 0);
	ck_assert_int_eq(st.st_size, 7);
	ck_assert_int_eq(view_read(v, ino, 2, 100, &s), 0);
	ck_assert_uint_eq(s.len, 5);
	ck_assert_mem_eq(view_seg_mem(&s, &s.seg[0]), "ights", 5);
	ck_assert_int_eq(view_read(v, unet, 0, 1, &s), -EISDIR);
	ck_assert_uint_eq(view_lookup(v, unet, "nothing", 7), 0);
	/* every other inode of the tree as it was */
	ck_assert_int_eq(view_kind(v, view_lookup(v, VIEW_ROOT_INO, "unet",
						  4)), VIEW_DIR);
	ck_assert_uint_eq(view_lookup(v, view_lookup(v, VIEW_ROOT_INO,
						     "unet", 4), ".files", 6) ==
			  0, 0);
	o.views = VIEW_VIEWS_VISIBLE;
	ck_assert_int_eq(view_build_multi(vm, 2, f, &o, &vis, &e), 0);
	ck_assert_uint_eq(view_nchildren(vis, VIEW_ROOT_INO), n + 1);
	ck_assert_uint_eq(view_child(vis, VIEW_ROOT_INO, n),
			  view_lookup(vis, VIEW_ROOT_INO, ".files", 6));
	view_stat(vis, VIEW_ROOT_INO, &st);
	ck_assert_uint_eq(st.st_nlink, 2 + 2 + 1);	/* unet, vae, .files */
	o.views = VIEW_VIEWS_OFF;
	ck_assert_int_eq(view_build_multi(vm, 2, f, &o, &off, &e), 0);
	ck_assert_uint_eq(view_lookup(off, VIEW_ROOT_INO, ".files", 6), 0);
	view_segs_free(&s);
	view_free(v);
	view_free(vis);
	view_free(off);
	model_files_unref(f);
}
END_TEST

START_TEST(test_multi_refuses)
{
	struct view_model same[] = { { "a/b", "L1", model },
				     { "a/b", "L2", model } };
	struct view_model nest[] = { { "a", "L1", model },
				     { "a/b", "L2", model } };
	struct view_model root[] = { { "", "L1", model },
				     { "b", "L2", model } };
	struct view_model dots[] = { { "a/../b", "L1", model },
				     { "c", "L2", model } };
	struct view_model empty[] = { { "a//b", "L1", model },
				      { "c", "L2", model } };
	struct view_model summ[] = { { "__summary__.json", "L1", model },
				     { "c", "L2", model } };

	refuse(same, 2, "two things at the path a/b");
	refuse(nest, 2, "inside the directory of model L1");
	refuse(root, 2, "the root holds other models");
	refuse(dots, 2, "not a directory inside the mount");
	refuse(empty, 2, "not a directory inside the mount");
	refuse(summ, 2, "__summary__.json");
	refuse(NULL, 0, "no model");
}
END_TEST

/* 10,000 models of a few tensors: lookups by shift and index. */
START_TEST(test_multi_many)
{
	enum { N = 10000 };
	struct view_model *vm = calloc(N, sizeof(*vm));
	char (*dirs)[32] = calloc(N, sizeof(*dirs));
	struct view *v;
	struct err e = { 0 };
	uint64_t d, m, a;
	size_t i;

	ck_assert(vm && dirs);
	for (i = 0; i < N; i++) {
		snprintf(dirs[i], sizeof(dirs[i]), "g%02zu/m%zu", i % 50, i);
		vm[i].dir = dirs[i];
		vm[i].label = dirs[i];
		vm[i].model = model;
	}
	ck_assert_int_eq(view_build_multi(vm, N, NULL, NULL, &v, &e), 0);
	ck_assert_uint_eq(view_nchildren(v, 1), 1 + 50);
	d = mlook(v, 1, "g07");
	ck_assert_uint_eq(view_nchildren(v, d), N / 50);
	m = mlook(v, d, "m9957");
	ck_assert_int_eq(view_kind(v, m), VIEW_DIR);
	a = mlook(v, m, "a");
	ck_assert_int_eq(view_kind(v, a), VIEW_TENSOR);
	ck_assert_uint_eq(view_size(v, a), 24);
	ck_assert_uint_eq(mlook(v, d, "m9958"), 0);
	view_free(v);
	free(vm);
	free(dirs);
}
END_TEST

Suite *
view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tn = tcase_create("names");
	TCase *tv = tcase_create("view");

	tcase_add_test(tn, test_segs_add_copy);
	tcase_add_test(tn, test_rule1_escapes);
	tcase_add_test(tn, test_rule2_leading_dot);
	tcase_add_test(tn, test_rule3_json_suffix);
	tcase_add_test(tn, test_rule4_reserved);
	tcase_add_test(tn, test_rule5_empty);
	tcase_add_test(tn, test_rule6_long);
	tcase_add_test(tn, test_round_trips);
	tcase_add_test(tn, test_decode_refuses);
	suite_add_tcase(s, tn);

	tcase_add_checked_fixture(tv, setup, teardown);
	/* Check's 4 s are a bound on a hang, not a figure: 10,000 models
	 * under ASan on a loaded machine took longer */
	tcase_set_timeout(tv, 60);
	tcase_add_test(tv, test_lookups);
	tcase_add_test(tv, test_listing);
	tcase_add_test(tv, test_attributes);
	tcase_add_test(tv, test_uid_override);
	tcase_add_test(tv, test_total_saturates);
	tcase_add_test(tv, test_sidecars);
	tcase_add_test(tv, test_blobs_and_data);
	tcase_add_test(tv, test_inode_stability);
	tcase_add_test(tv, test_empty_model);
	tcase_add_test(tv, test_sharded);
	tcase_add_test(tv, test_sharded_nul_key);
	tcase_add_test(tv, test_modes);
	tcase_add_test(tv, test_views_option);
	tcase_add_test(tv, test_stfs_dir);
	tcase_add_test(tv, test_multi_log);
	tcase_add_test(tv, test_read_segments);
	tcase_add_test(tv, test_files_dir);
	tcase_add_test(tv, test_multi_single);
	tcase_add_test(tv, test_multi_tree);
	tcase_add_test(tv, test_multi_folder);
	tcase_add_test(tv, test_multi_refuses);
	tcase_add_test(tv, test_multi_many);
	suite_add_tcase(s, tv);
	return s;
}
