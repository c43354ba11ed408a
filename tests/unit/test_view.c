/* test_view.c - file name encoding (src/names.c) and the view layer
 * (src/view.c): lookups, listing, attributes, sidecars, inode stability.
 */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "model.h"
#include "names.h"
#include "view.h"

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
	ck_assert_msg(model_open(path, &model, &e) == 0, "%s: %s",
		      err_name(e.code), e.detail);
	ck_assert_uint_eq(model->ntensors, MODEL_NT);
	ck_assert_int_eq(view_build(model, NULL, &view, &e), 0);
}

static void
teardown(void)
{
	view_free(view);
	model_free(model);
	unlink(path);
	rmdir(tmpdir);
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

	/* the root files, data and sidecar per tensor, .npy/ and .txt/ */
	ck_assert_uint_eq(n, 2 + 2 * MODEL_NT + 2);
	/* plus the root and each tensor's .npy and .txt files */
	ck_assert_uint_eq(view->ninodes, 1 + n + 2 * MODEL_NT);
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
	ck_assert_uint_eq(st.st_nlink, 2 + 2);	/* .npy/ and .txt/ */
	ck_assert_int_eq(st.st_mtim.tv_sec, src.st_mtim.tv_sec);
	ck_assert_int_eq(st.st_mtim.tv_nsec, src.st_mtim.tv_nsec);
	ck_assert_uint_eq(st.st_uid, src.st_uid);
	ck_assert_int_eq(view_stat(view, view->ninodes + 1, &st), -1);
	ck_assert_int_eq(view_stat(view, 0, &st), -1);

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

	ck_assert_int_eq(model_open(path, &m2, &e), 0);
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
	ck_assert_int_eq(model_open(path, &m2, &e), 0);
	ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);
	ck_assert_uint_eq(view_nchildren(v2, VIEW_ROOT_INO), 2 + 2);
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
		ck_assert_int_eq(model_open(path, &m2, &e), 0);
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
	ck_assert_msg(model_open(idx, &m2, &e) == 0, "%s", e.detail);
	ck_assert_int_eq(view_build(m2, NULL, &v2, &e), 0);

	shards = view_lookup(v2, 1, "__shards__", 10);
	ck_assert_int_eq(view_kind(v2, shards), VIEW_DIR);
	ck_assert_uint_eq(view_lookup(v2, 1, "a", 1), 4);
	ck_assert_uint_eq(view_lookup(v2, 1, "b.json", 6), 7);
	ck_assert_uint_eq(view_nchildren(v2, 1), 3 + 4 + 2);
	ck_assert_uint_eq(view_child(v2, 1, 2), shards);
	ck_assert_uint_eq(view_nchildren(v2, shards), 2);
	view_stat(v2, 1, &st);
	ck_assert_uint_eq(st.st_nlink, 3 + 2);
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
	/* + .npy/, .txt/ and the 2 view files of each of the 2 tensors */
	ck_assert_uint_eq(v2->ninodes, 1 + 2 + 4 + 1 + 2 + 2 + 4);

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

static Suite *
view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tn = tcase_create("names");
	TCase *tv = tcase_create("view");

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
	tcase_add_test(tv, test_lookups);
	tcase_add_test(tv, test_listing);
	tcase_add_test(tv, test_attributes);
	tcase_add_test(tv, test_uid_override);
	tcase_add_test(tv, test_sidecars);
	tcase_add_test(tv, test_blobs_and_data);
	tcase_add_test(tv, test_inode_stability);
	tcase_add_test(tv, test_empty_model);
	tcase_add_test(tv, test_sharded);
	tcase_add_test(tv, test_modes);
	suite_add_tcase(s, tv);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(view_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
