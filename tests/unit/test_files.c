/* test_files.c - the files of a model's folder (src/model/model_files.c):
 * which files a local folder's scan keeps and marks as model files, a
 * listing's files sorted and one per path, bytes kept or opened once on
 * demand, a source that is not the size listed refused, probed names
 * there or not as their one open says; a tree's folder, all of it; and
 * the config.json of a
 * dequantized model (src/model/quant_plain.c).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "model/model_files.h"
#include "model/quant_plain.h"
#include "source/source.h"
#include "suites.h"

static char dir[PATH_MAX];

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2], cmd[PATH_MAX * 3];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void
link_to(const char *target, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	ck_assert_int_eq(symlink(target, path), 0);
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/stfs-unit-files-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* An opener of local paths that counts its opens; names containing
 * "missing" fail. */
static int opens;

static int
open_counted(void *arg, const char *name, struct source **out, struct err *e)
{
	(void)arg;
	__atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
	if (strstr(name, "missing"))
		return err_set(e, ERR_IO, "HTTP status 404");
	return source_open_local(name, out, e);
}

static const struct source_opener opener = { open_counted, NULL, NULL, NULL,
					     NULL };

/* The index of rel in f (listed), or -1. */
static long
index_of(struct model_files *f, const char *rel)
{
	size_t n, i;

	ck_assert_int_eq(model_files_list(f, &n), 0);
	for (i = 0; i < n; i++)
		if (strcmp(model_files_rel(f, i), rel) == 0)
			return (long)i;
	return -1;
}

START_TEST(test_paths)
{
	ck_assert(model_files_path_ok("config.json"));
	ck_assert(model_files_path_ok("original/params.json"));
	ck_assert(!model_files_path_ok(""));
	ck_assert(!model_files_path_ok("/abs"));
	ck_assert(!model_files_path_ok("a//b"));
	ck_assert(!model_files_path_ok("a/"));
	ck_assert(!model_files_path_ok(".gitattributes"));
	ck_assert(!model_files_path_ok("a/../b"));
	ck_assert(!model_files_path_ok(".cache/x"));
	ck_assert(!model_files_path_ok("a/./b"));
}
END_TEST

START_TEST(test_local_scan)
{
	struct model_files *f;
	const char *want[] = {
		"a.safetensors", "config.json", "docs/deeper/x.md",
		"docs/y.txt", "linked.json", "m-00002-of-00003.gguf",
		"original/consolidated.00.pth", "pytorch_model.bin",
	};
	const int model[] = { 1, 0, 0, 0, 0, 1, 0, 0 };
	char path[PATH_MAX * 2];
	struct stat st, ws;
	size_t n, i;
	uint64_t size;

	put("a.safetensors", "x");
	put("config.json", "{\"a\": 1}");
	put("pytorch_model.bin", "yields");	/* beside a.safetensors */
	put("m-00002-of-00003.gguf", "part");
	put("original/consolidated.00.pth", "ckpt");
	put("docs/y.txt", "y");
	put("docs/deeper/x.md", "x");
	put(".gitattributes", "hidden");
	put(".cache/huggingface/x", "hidden");
	put("other/b.safetensors", "another model's folder");
	put("other/README.md", "its");
	put("far/away/c.gguf", "a model two levels down");
	put("far/notes.txt", "far holds a model folder");
	put("bins/pytorch_model.bin", "a model where nothing is strong");
	link_to("config.json", "linked.json");
	link_to(".", "docs/loop");
	link_to("nowhere", "dangling.json");
	f = model_files_new(MODEL_FILES_LOCAL, dir, &opener);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(model_files_list(f, &n), 0);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(model_files_rel(f, i), want[i]);
		ck_assert_int_eq(model_files_is_model(f, i), model[i]);
		ck_assert_int_eq(model_files_is_probed(f, i), 0);
	}
	i = (size_t)index_of(f, "linked.json");
	ck_assert_int_eq(model_files_size(f, i, &size), 0);
	ck_assert_uint_eq(size, 8);
	/* the owner, mode and times the scan saw (of the target) */
	snprintf(path, sizeof(path), "%s/config.json", dir);
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(stat(path, &ws), 0);
	model_files_unref(f);
	f = model_files_new(MODEL_FILES_LOCAL, dir, &opener);
	ck_assert_ptr_nonnull(f);
	i = (size_t)index_of(f, "linked.json");
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(model_files_attr(f, i, &st), 0);
	ck_assert_uint_eq(st.st_mode, ws.st_mode);
	ck_assert_uint_eq(st.st_uid, ws.st_uid);
	ck_assert_int_eq(st.st_mtim.tv_sec, ws.st_mtim.tv_sec);
	ck_assert_int_eq(st.st_mtim.tv_nsec, ws.st_mtim.tv_nsec);
	model_files_unref(f);
}
END_TEST

/* A tree's folder: all of it, the folders holding models too (a
 * diffusers pipeline), within the same bounds; a listed one keeps no path
 * deeper than a scan goes. */
START_TEST(test_tree)
{
	struct model_files *f;
	const char *want[] = {
		"README.md", "model_index.json", "scheduler/scheduler_config.json",
		"text_encoder/config.json",
		"text_encoder/model-00001-of-00002.safetensors",
		"text_encoder/model-00002-of-00002.safetensors",
		"text_encoder/model.safetensors.index.json",
		"tokenizer/vocab.json", "unet/config.json",
		"unet/diffusion_pytorch_model.safetensors",
		"unet/sub/deeper/w.safetensors",
	};
	char deep[MODEL_FILES_DEPTH * 2 + 16], *p = deep;
	size_t n, i;
	int k;

	put("model_index.json", "{}");
	put("README.md", "r");
	put("scheduler/scheduler_config.json", "{}");
	put("text_encoder/config.json", "{}");
	put("text_encoder/model-00001-of-00002.safetensors", "a");
	put("text_encoder/model-00002-of-00002.safetensors", "b");
	put("text_encoder/model.safetensors.index.json", "{}");
	put("tokenizer/vocab.json", "{}");
	put("unet/config.json", "{}");
	put("unet/diffusion_pytorch_model.safetensors", "u");
	put("unet/sub/deeper/w.safetensors", "w");
	put("unet/.cache/x", "hidden");
	put(".gitattributes", "hidden");
	link_to(".", "unet/loop");
	f = model_files_new(MODEL_FILES_LOCAL, dir, &opener);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(model_files_is_tree(f), 0);
	model_files_set_tree(f);
	ck_assert_int_eq(model_files_is_tree(f), 1);
	ck_assert_int_eq(model_files_list(f, &n), 0);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++)
		ck_assert_str_eq(model_files_rel(f, i), want[i]);
	model_files_unref(f);
	/* a model's folder, the same files: none of its model folders' */
	f = model_files_new(MODEL_FILES_LOCAL, dir, &opener);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(model_files_list(f, &n), 0);
	ck_assert_uint_eq(n, 4);
	model_files_unref(f);
	/* listed: a path of MODEL_FILES_DEPTH components kept, one more
	 * left out */
	f = model_files_new(MODEL_FILES_LISTED, NULL, &opener);
	ck_assert_ptr_nonnull(f);
	model_files_set_tree(f);
	for (k = 0; k < MODEL_FILES_DEPTH - 1; k++)
		p += sprintf(p, "d/");
	strcpy(p, "x");
	ck_assert_int_eq(model_files_add(f, deep, "n", NULL, 1, NULL, 0, 0),
			 0);
	strcpy(p, "d/x");
	ck_assert_int_eq(model_files_add(f, deep, "n", NULL, 1, NULL, 0, 0),
			 0);
	ck_assert_int_eq(model_files_list(f, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(strlen(model_files_rel(f, 0)),
			  2 * (MODEL_FILES_DEPTH - 1) + 1);
	model_files_unref(f);
}
END_TEST

START_TEST(test_listed)
{
	struct model_files *f = model_files_new(MODEL_FILES_LISTED, NULL,
						&opener);
	struct source *src, *again;
	const char *text;
	char path[PATH_MAX * 2];
	struct stat st;
	size_t n, len;
	uint64_t size;
	long i;

	put("tokenizer.json", "0123456789");
	put("changed.json", "abc");
	snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(model_files_add(f, "tokenizer.json", path, NULL, 10,
					 NULL, 0, 0), 0);
	ck_assert_int_eq(model_files_add(f, "config.json", NULL, NULL, 0,
					 "{\"k\": 2}", 8, 0), 0);
	/* the second of a path, and paths a folder cannot show: left out */
	ck_assert_int_eq(model_files_add(f, "config.json", NULL, NULL, 0,
					 "x", 1, 0), 0);
	ck_assert_int_eq(model_files_add(f, "../up", path, NULL, 1, NULL, 0,
					 0), 0);
	ck_assert_int_eq(model_files_add(f, ".gitattributes", path, NULL, 1,
					 NULL, 0, 0), 0);
	snprintf(path, sizeof(path), "%s/changed.json", dir);
	ck_assert_int_eq(model_files_add(f, "sub/changed.json", path, NULL,
					 99, NULL, 0, 0), 0);
	ck_assert_int_eq(model_files_list(f, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(model_files_rel(f, 0), "config.json");
	ck_assert_str_eq(model_files_rel(f, 1), "sub/changed.json");
	ck_assert_str_eq(model_files_rel(f, 2), "tokenizer.json");
	/* kept bytes: no open */
	opens = 0;
	ck_assert_int_eq(model_files_bytes(f, 0, &text, &len, &src), 0);
	ck_assert_ptr_null(src);
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(text, "{\"k\": 2}", 8);
	/* the size listed: no open; the bytes: opened once */
	ck_assert_int_eq(model_files_size(f, 2, &size), 0);
	ck_assert_uint_eq(size, 10);
	ck_assert_int_eq(opens, 0);
	ck_assert_ptr_null(model_files_opened(f, 2));
	/* a listed file's owner and mode: its source's, once opened */
	ck_assert_int_eq(model_files_attr(f, 2, &st), -1);
	ck_assert_int_eq(model_files_bytes(f, 2, &text, &len, &src), 0);
	ck_assert_ptr_nonnull(src);
	ck_assert_uint_eq(src->size, 10);
	ck_assert_int_eq(model_files_bytes(f, 2, &text, &len, &again), 0);
	ck_assert_ptr_eq(src, again);
	ck_assert_ptr_eq(model_files_opened(f, 2), src);
	ck_assert_int_eq(opens, 1);
	ck_assert_int_eq(model_files_attr(f, 2, &st), 0);
	ck_assert_uint_eq(st.st_mode, src->mode);
	/* not the size listed: it changed, refused (and tried again) */
	i = index_of(f, "sub/changed.json");
	ck_assert_int_eq(model_files_bytes(f, (size_t)i, &text, &len, &src),
			 -EIO);
	ck_assert_int_eq(model_files_bytes(f, (size_t)i, &text, &len, &src),
			 -EIO);
	ck_assert_int_eq(opens, 3);
	ck_assert_ptr_eq(model_files_ref(f), f);
	model_files_unref(f);
	model_files_unref(f);
}
END_TEST

START_TEST(test_probed)
{
	char where[PATH_MAX + 8];
	struct model_files *f;
	size_t n, i, present = 0;
	uint64_t size;
	long c;

	/* the folder's "URL" a local directory: config.json and
	 * tokenizer.json are there, the other names are not */
	put("config.json", "{}");
	put("tokenizer.json", "tok");
	snprintf(where, sizeof(where), "%s/", dir);
	f = model_files_new(MODEL_FILES_PROBED, where, &opener);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(model_files_add(f, "model.safetensors.index.json",
					 "/nonexistent/missing", NULL, 5, NULL,
					 0, 1), 0);
	ck_assert_int_eq(model_files_list(f, &n), 0);
	opens = 0;
	c = index_of(f, "config.json");
	ck_assert_int_ge(c, 0);
	ck_assert(model_files_is_probed(f, (size_t)c));
	ck_assert_int_eq(model_files_size(f, (size_t)c, &size), 0);
	ck_assert_uint_eq(size, 2);
	ck_assert_int_eq(opens, 1);
	model_files_probe_all(f);
	for (i = 0; i < n; i++) {
		int rc;

		if (!model_files_is_probed(f, i))
			continue;
		rc = model_files_size(f, i, &size);
		ck_assert(rc == 0 || rc == -ENOENT);
		present += rc == 0;
	}
	ck_assert_uint_eq(present, 2);
	/* every name tried once, the one looked up before not again */
	ck_assert_int_eq(opens, (int)n - 1);
	/* an added file is no probe: its failure is not an absence */
	c = index_of(f, "model.safetensors.index.json");
	ck_assert(!model_files_is_probed(f, (size_t)c));
	ck_assert(model_files_is_model(f, (size_t)c));
	ck_assert_int_eq(model_files_size(f, (size_t)c, &size), 0);
	ck_assert_uint_eq(size, 5);
	model_files_unref(f);
}
END_TEST

/* The config of a dequantized model: quantization_config out, the dtype
 * of its weights (torch_dtype, or dtype; BF16 when it names none, which
 * it is then given), the rest as it was, in its order. */
static void
plain(const char *in, const char *want, enum dtype want_dt)
{
	enum dtype dt;
	char *out;
	size_t len;

	ck_assert_int_eq(quant_plain_config(in, strlen(in), &out, &len, &dt),
			 0);
	ck_assert_uint_eq(len, strlen(out));
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(dt, want_dt);
	free(out);
}

START_TEST(test_plain_config)
{
	plain("{\"b\": 1, \"quantization_config\": {\"bits\": 4}, "
	      "\"torch_dtype\": \"float16\", \"a\": [1, 2]}",
	      "{\n  \"b\": 1,\n  \"torch_dtype\": \"float16\",\n  \"a\": [\n"
	      "    1,\n    2\n  ]\n}\n", DTYPE_F16);
	plain("{\"quantization_config\": {}, \"dtype\": \"float32\"}",
	      "{\n  \"dtype\": \"float32\"\n}\n", DTYPE_F32);
	plain("{\"torch_dtype\": \"bfloat16\"}",
	      "{\n  \"torch_dtype\": \"bfloat16\"\n}\n", DTYPE_BF16);
	plain("{\"model_type\": \"llama\"}",
	      "{\n  \"model_type\": \"llama\",\n  \"torch_dtype\": "
	      "\"bfloat16\"\n}\n", DTYPE_BF16);
	/* no object: as it is */
	plain("[1, 2]", "[1, 2]", DTYPE_BF16);
	plain("{\"a\": ", "{\"a\": ", DTYPE_BF16);
}
END_TEST

Suite *
files_suite(void)
{
	Suite *s = suite_create("files");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_local_scan);
	tcase_add_test(tc, test_tree);
	tcase_add_test(tc, test_listed);
	tcase_add_test(tc, test_probed);
	tcase_add_test(tc, test_plain_config);
	suite_add_tcase(s, tc);
	return s;
}
