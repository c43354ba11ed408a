/* test_catalog.c - discovery of models in directory trees and in the
 * Hugging Face hub cache (src/model/catalog.c, src/model/hub_cache.c), and
 * flat listings placed by the same rule (src/model/catalog_listing.c).
 *
 * Every fixture is made here: tiny valid safetensors files, indexes,
 * symlinks, a hub cache with blobs/, snapshots/ and refs/main.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ftw.h>

#include "model/catalog.h"
#include "base/error.h"
#include "base/text.h"
#include "model/model.h"
#include "model/model_files.h"
#include "source/source.h"
#include "suites.h"


/* Tensor of m by exact name, or NULL: a plain scan. */
static const struct model_tensor *
find_model_tensor(const struct model *m, const char *name, size_t len)
{
	for (size_t i = 0; i < m->ntensors; i++)
		if (m->tensors[i].t->name_len == len &&
		    memcmp(m->tensors[i].t->name, name, len) == 0)
			return &m->tensors[i];
	return NULL;
}

static char tmp[256];

static void
mkdirs(const char *fmt, ...)
{
	char path[PATH_MAX], cmd[PATH_MAX + 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	ck_assert_int_eq(system(cmd), 0);
}

/* A valid file with one U8 tensor called name of n bytes. */
static void
write_st(const char *path, const char *name, unsigned n)
{
	char json[256];
	size_t len, padded, i;
	FILE *f;

	snprintf(json, sizeof(json), "{\"%s\":{\"dtype\":\"U8\",\"shape\":[%u],"
		 "\"data_offsets\":[0,%u]}}", name, n, n);
	len = strlen(json);
	padded = (len + 7) / 8 * 8;
	f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	for (i = 0; i < 8; i++)
		fputc((int)((padded >> (8 * i)) & 0xff), f);
	fputs(json, f);
	for (i = len; i < padded; i++)
		fputc(' ', f);
	for (i = 0; i < n; i++)
		fputc((int)(i * 13 + n), f);
	fclose(f);
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *
P(const char *fmt, ...)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *out = buf[k++ & 7];
	int n;
	va_list ap;

	n = snprintf(out, PATH_MAX, "%s/", tmp);
	va_start(ap, fmt);
	vsnprintf(out + n, (size_t)(PATH_MAX - n), fmt, ap);
	va_end(ap);
	return out;
}

/* A two-shard set in dir: stem.safetensors.index.json, stem-0000N-of-
 * 00002.safetensors holding tensors a and b. */
static void
write_set(const char *dir, const char *stem)
{
	char idx[2 * PATH_MAX + 64], s1[PATH_MAX], s2[PATH_MAX];
	char json[2 * PATH_MAX + 64];

	snprintf(s1, sizeof(s1), "%s-00001-of-00002.safetensors", stem);
	snprintf(s2, sizeof(s2), "%s-00002-of-00002.safetensors", stem);
	snprintf(idx, sizeof(idx), "%s/%s.safetensors.index.json", dir, stem);
	snprintf(json, sizeof(json), "{\"metadata\":{},\"weight_map\":"
		 "{\"a\":\"%s\",\"b\":\"%s\"}}", s1, s2);
	write_text(idx, json);
	snprintf(idx, sizeof(idx), "%s/%s", dir, s1);
	write_st(idx, "a", 4);
	snprintf(idx, sizeof(idx), "%s/%s", dir, s2);
	write_st(idx, "b", 6);
}

static struct catalog *
open_ok(const char *source)
{
	struct catalog *c = NULL;
	struct err e = { 0 };

	ck_assert_msg(catalog_open(source, NULL, &c, &e) == 0, "%s: %s: %s",
		      source, e.where, e.detail);
	return c;
}

/* The catalog's dirs, joined by '|'. */
static const char *
dirs(const struct catalog *c)
{
	static char buf[4096];
	size_t i, k = 0;

	buf[0] = '\0';
	for (i = 0; i < c->n; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
				      i ? "|" : "", c->entries[i].dir);
	return buf;
}

/* The files of a tree's folder (c->files), joined by '|'; "(none)". */
static const char *
tree_files(const struct catalog *c)
{
	static char buf[4096];
	size_t i, n, k = 0;

	buf[0] = '\0';
	if (!c->files)
		return "(none)";
	ck_assert_int_eq(model_files_is_tree(c->files), 1);
	ck_assert_int_eq(model_files_list(c->files, &n), 0);
	for (i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
				      i ? "|" : "",
				      model_files_rel(c->files, i));
	return buf;
}

static void
setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/stfs-catalog-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void
teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_one_file)
{
	struct catalog *c;

	write_st(P("m.safetensors"), "w", 3);
	c = open_ok(P("m.safetensors"));
	ck_assert_uint_eq(c->n, 1);
	ck_assert_str_eq(c->entries[0].dir, "");
	ck_assert_str_eq(c->entries[0].label, P("m.safetensors"));
	ck_assert_str_eq(c->label, P("m.safetensors"));
	catalog_free(c);
}
END_TEST

START_TEST(test_dir_is_the_model)
{
	struct catalog *c;

	/* one file, and a subdirectory without models: today's rule */
	mkdirs("%s/one/empty/deeper", tmp);
	write_text(P("one/empty/notes.txt"), "x");
	write_st(P("one/m.safetensors"), "w", 3);
	c = open_ok(P("one"));
	ck_assert_str_eq(dirs(c), "");
	ck_assert_str_eq(c->entries[0].model->arg, P("one"));
	ck_assert_str_eq(c->entries[0].label, P("one/m.safetensors"));
	ck_assert_str_eq(tree_files(c), "(none)");	/* the model's own */
	catalog_free(c);

	/* one index set: its shards are not models of their own */
	mkdirs("%s/set", tmp);
	write_set(P("set"), "model");
	c = open_ok(P("set"));
	ck_assert_str_eq(dirs(c), "");
	ck_assert_int_eq(c->entries[0].model->sharded, 1);
	ck_assert_uint_eq(c->entries[0].model->ntensors, 2);
	ck_assert_str_eq(c->entries[0].label,
			 P("set/model.safetensors.index.json"));
	catalog_free(c);
}
END_TEST

START_TEST(test_folder_of_models)
{
	struct catalog *c;

	mkdirs("%s/f/sub/deep", tmp);
	mkdirs("%s/f/nothing", tmp);
	mkdirs("%s/f/.git", tmp);
	write_st(P("f/lora a.safetensors"), "w", 2);
	write_st(P("f/v2.1.safetensors"), "w", 2);
	write_st(P("f/x.json.safetensors"), "w", 2);
	write_st(P("f/caf\xc3\xa9.safetensors"), "w", 2);
	write_st(P("f/.hidden.safetensors"), "w", 2);
	write_st(P("f/.git/y.safetensors"), "w", 2);
	write_text(P("f/README.md"), "hi");
	write_set(P("f"), "big");
	write_st(P("f/sub/one.safetensors"), "w", 5);
	write_st(P("f/sub/deep/two.safetensors"), "w", 5);
	write_st(P("f/sub/deep/three.safetensors"), "w", 5);
	c = open_ok(P("f"));
	ck_assert_str_eq(dirs(c), "big|caf\xc3\xa9|lora a|sub/deep/three|"
			 "sub/deep/two|sub/one|v2.1|x.json");
	ck_assert_str_eq(c->entries[0].label,
			 P("f/big.safetensors.index.json"));
	ck_assert_int_eq(c->entries[0].model->sharded, 1);
	ck_assert_str_eq(c->entries[3].label,
			 P("f/sub/deep/three.safetensors"));
	ck_assert_str_eq(c->label, P("f"));
	/* the tree's folder: all of it, the models' files too */
	ck_assert_str_eq(tree_files(c), "README.md|"
			 "big-00001-of-00002.safetensors|"
			 "big-00002-of-00002.safetensors|"
			 "big.safetensors.index.json|caf\xc3\xa9.safetensors|"
			 "lora a.safetensors|sub/deep/three.safetensors|"
			 "sub/deep/two.safetensors|sub/one.safetensors|"
			 "v2.1.safetensors|x.json.safetensors");
	catalog_free(c);
}
END_TEST

START_TEST(test_collisions)
{
	struct catalog *c;
	char out[64];

	mkdirs("%s/c/a", tmp);
	write_st(P("c/a.safetensors"), "w", 2);
	write_st(P("c/a/inner.safetensors"), "w", 2);
	/* an index set and a file with the same stem */
	write_set(P("c"), "model");
	write_st(P("c/model.safetensors"), "w", 2);
	/* names the mount must not take as they are */
	write_st(P("c/100%%.safetensors"), "w", 2);
	write_st(P("c/__summary__.json.safetensors"), "w", 2);
	write_st(P("c/.safetensors"), "w", 2);	/* hidden: left out */
	write_st(P("c/tab\there.safetensors"), "w", 2);
	c = open_ok(P("c"));
	ck_assert_str_eq(dirs(c), "%5F_summary__.json|100%25|a|a.safetensors|"
			 "model.safetensors|model.safetensors.index.json|"
			 "tab%09here");
	ck_assert_str_eq(c->entries[2].label, P("c/a/inner.safetensors"));
	ck_assert_str_eq(c->entries[3].label, P("c/a.safetensors"));
	ck_assert_str_eq(c->entries[4].label, P("c/model.safetensors"));
	catalog_free(c);

	ck_assert_int_eq(catalog_escape("", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "%");
	ck_assert_int_eq(catalog_escape(".npy", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "%2Enpy");
	ck_assert_int_eq(catalog_escape("a_b__", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "a_b__");
	ck_assert_int_eq(catalog_escape("abcdef", out, 4), -1);
}
END_TEST

/* A flat listing of a local folder, as a remote provider hands one to the
 * tree builder: relative paths, absolute ones to open; every file but
 * hidden ones (the tree builder decides which are models), and what the
 * tree builder asked to have opened ahead. */
static struct {
	char *rel[64], *url[64];
	size_t n, root_len;
	char ahead[4096];
} L;

static int
list_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	const char *base = path + f->base;

	(void)st;
	if (type != FTW_F || base[0] == '.')
		return 0;
	ck_assert_uint_lt(L.n, 64);
	L.url[L.n] = strdup(path);
	L.rel[L.n] = strdup(path + L.root_len + 1);
	L.n++;
	return 0;
}

static int
open_path(void *arg, const char *name, struct source **out, struct err *e)
{
	(void)arg;
	return source_open_local(name, out, e);
}

static int
cmp_url(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* catalog_listing's open_ahead: note the names, relative, sorted, each
 * once. */
static int
note_ahead(void *arg, const char *const *url, size_t n, struct meter *meter,
	   struct err *e)
{
	size_t i;

	(void)arg;
	(void)meter;
	(void)e;
	const char **v = calloc(n ? n : 1, sizeof(*v));

	ck_assert_ptr_nonnull(v);
	memcpy(v, url, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_url);	/* configs come after a model */
	L.ahead[0] = '\0';
	for (i = 0; i < n; i++) {
		ck_assert(i == 0 || strcmp(v[i - 1], v[i]) < 0);
		snprintf(L.ahead + strlen(L.ahead),
			 sizeof(L.ahead) - strlen(L.ahead), "%s%s", i ? "|" : "",
			 v[i] + L.root_len + 1);
	}
	free(v);
	return 0;
}

/* 1: add_listing gives the models their folders' files. */
static int with_files;

/* catalog_add_listing of dir's flat listing (list_one) into a new
 * catalog *c: files opened by their paths, the open-ahead noted in
 * L.ahead; its result.  listing_free() forgets the listing. */
static int
add_listing(const char *dir, struct catalog **c, struct err *e)
{
	static const struct source_opener op = { open_path, NULL, NULL, NULL,
						 NULL };
	struct catalog_listing cl = { 0 };

	cl.files = with_files ? &op : NULL;
	memset(&L, 0, sizeof(L));
	L.root_len = strlen(dir);
	ck_assert_int_eq(nftw(dir, list_one, 16, FTW_PHYS), 0);
	cl.n = L.n;
	cl.rel = (const char *const *)L.rel;
	cl.url = (const char *const *)L.url;
	cl.op = &op;
	cl.open_ahead = note_ahead;
	*c = catalog_new("listing");
	ck_assert_ptr_nonnull(*c);
	return catalog_add_listing(*c, &cl, NULL, e);
}

static void
listing_free(void)
{
	size_t i;

	for (i = 0; i < L.n; i++) {
		free(L.rel[i]);
		free(L.url[i]);
	}
}

/* The one naming rule: a listing of a folder (hf://, s3://) is placed as
 * the folder itself is; what the tree opens is opened ahead, and nothing
 * else (PyTorch weights beside safetensors, a Trainer's optimizer.pt, a
 * README). */
START_TEST(test_listing_same_tree)
{
	struct catalog *local, *listed;
	struct err e = { 0 };
	char want[4096];

	mkdirs("%s/c/a", tmp);
	mkdirs("%s/c/deep/only", tmp);
	mkdirs("%s/c/sets/sh", tmp);
	write_st(P("c/a.safetensors"), "w", 2);
	write_st(P("c/a/inner.safetensors"), "w", 2);
	write_set(P("c"), "model");
	write_st(P("c/model.safetensors"), "w", 2);
	write_st(P("c/100%%.safetensors"), "w", 2);
	write_st(P("c/__summary__.json.safetensors"), "w", 2);
	write_st(P("c/.hidden.safetensors"), "w", 2);
	write_st(P("c/deep/only/x.safetensors"), "w", 2);
	write_set(P("c/sets/sh"), "m");
	/* never opened: not a model of the folder */
	write_text(P("c/pytorch_model.bin"), "not opened");
	write_text(P("c/optimizer.pt"), "not opened");
	write_text(P("c/README.md"), "not opened");
	write_text(P("c/deep/only/x-00002-of-00002.gguf"), "not opened");
	local = open_ok(P("c"));
	snprintf(want, sizeof(want), "%s", dirs(local));
	catalog_free(local);

	ck_assert_msg(add_listing(P("c"), &listed, &e) == 0 &&
		      catalog_finish(listed, &e) == 0, "%s: %s", e.where,
		      e.detail);
	ck_assert_str_eq(dirs(listed), want);
	ck_assert_str_eq(want, "%5F_summary__.json|100%25|a|a.safetensors|"
			 "deep/only|model.safetensors|"
			 "model.safetensors.index.json|sets/sh");
	ck_assert_str_eq(L.ahead, "100%.safetensors|"
			 "__summary__.json.safetensors|a.safetensors|"
			 "a/inner.safetensors|"
			 "deep/only/x.safetensors|model-00001-of-00002.safetensors|"
			 "model-00002-of-00002.safetensors|model.safetensors|"
			 "model.safetensors.index.json|"
			 "sets/sh/m-00001-of-00002.safetensors|"
			 "sets/sh/m-00002-of-00002.safetensors|"
			 "sets/sh/m.safetensors.index.json");
	/* each model's label is the name it was opened by */
	ck_assert_str_eq(listed->entries[2].label, P("c/a/inner.safetensors"));
	ck_assert_str_eq(listed->entries[7].label,
			 P("c/sets/sh/m.safetensors.index.json"));
	catalog_free(listed);
	listing_free();
}
END_TEST

/* Model m's folder files, joined by '|', a model file marked '*', a file
 * whose bytes are kept '+'. */
static const char *
folder_of(const struct model *m)
{
	static char buf[4096];
	struct source *src;
	const char *text;
	size_t i, n, k = 0, len;

	buf[0] = '\0';
	if (!m->files)
		return "(none)";
	ck_assert_int_eq(model_files_list(m->files, &n), 0);
	for (i = 0; i < n; i++) {
		int kept = !model_files_is_model(m->files, i) &&
			   model_files_bytes(m->files, i, &text, &len,
					     &src) == 0 && text;

		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s%s%s",
				      i ? "|" : "",
				      model_files_rel(m->files, i),
				      model_files_is_model(m->files, i) ?
				      "*" : "", kept ? "+" : "");
	}
	return buf;
}

/* MNT/.files/: each model of a listing gets the files of its folder and
 * of the folders below that hold no model, shared by the models of the
 * folder, its configs kept from the mount; a local folder gives the
 * same files (read from the disk). */
START_TEST(test_listing_folders)
{
	static const char want_top[] = "a.safetensors*|b.safetensors*|"
				       "config.json|docs/x.md|notes.txt";
	struct catalog *local, *listed;
	struct err e = { 0 };
	size_t i;

	mkdirs("%s/z/docs", tmp);
	mkdirs("%s/z/sub", tmp);
	write_st(P("z/a.safetensors"), "w", 2);
	write_st(P("z/b.safetensors"), "w", 3);
	write_text(P("z/config.json"), "{\"k\": 1}");
	write_text(P("z/notes.txt"), "n");
	write_text(P("z/docs/x.md"), "x");
	write_text(P("z/.hidden"), "never");
	write_st(P("z/sub/c.safetensors"), "w", 2);
	write_text(P("z/sub/config.json"), "{}");
	with_files = 1;
	ck_assert_msg(add_listing(P("z"), &listed, &e) == 0 &&
		      catalog_finish(listed, &e) == 0, "%s", e.detail);
	with_files = 0;
	ck_assert_str_eq(dirs(listed), "a|b|sub");
	ck_assert_ptr_eq(listed->entries[0].model->files,
			 listed->entries[1].model->files);
	for (i = 0; i < 2; i++)
		ck_assert_str_eq(folder_of(listed->entries[i].model),
				 "a.safetensors*|b.safetensors*|config.json+|"
				 "docs/x.md|notes.txt");
	ck_assert_str_eq(folder_of(listed->entries[2].model),
			 "c.safetensors*|config.json+");
	local = open_ok(P("z"));
	ck_assert_str_eq(dirs(local), "a|b|sub");
	for (i = 0; i < 2; i++)
		ck_assert_str_eq(folder_of(local->entries[i].model), want_top);
	ck_assert_str_eq(folder_of(local->entries[2].model),
			 "c.safetensors*|config.json");
	/* the tree's folder: every listed file, as the local folder's */
	ck_assert_str_eq(tree_files(listed), "a.safetensors|b.safetensors|"
			 "config.json|docs/x.md|notes.txt|sub/c.safetensors|"
			 "sub/config.json");
	ck_assert_str_eq(tree_files(local), tree_files(listed));
	catalog_free(local);
	catalog_free(listed);
	listing_free();
	/* without an opener for later: no folder */
	ck_assert_int_eq(add_listing(P("z"), &listed, &e), 0);
	ck_assert_ptr_null(listed->entries[0].model->files);
	ck_assert_ptr_null(listed->files);
	catalog_free(listed);
	listing_free();
}
END_TEST

/* A split set's later parts are opened ahead with its first part; a part
 * whose set has no first part is not (it is never opened). */
START_TEST(test_listing_split_ahead)
{
	struct catalog *listed;
	struct err e = { 0 };

	mkdirs("%s/g", tmp);
	write_text(P("g/m-00001-of-00002.gguf"), "opened, refused");
	write_text(P("g/m-00002-of-00002.gguf"), "with its first part");
	write_text(P("g/n-00002-of-00002.gguf"), "never opened");
	ck_assert_int_eq(add_listing(P("g"), &listed, &e), -1);
	ck_assert_str_eq(e.where, P("g/m-00001-of-00002.gguf"));
	ck_assert_str_eq(L.ahead, "m-00001-of-00002.gguf|"
			 "m-00002-of-00002.gguf");
	catalog_free(listed);
	listing_free();
}
END_TEST

START_TEST(test_no_models)
{
	struct catalog *c = NULL;
	struct err e = { 0 };

	mkdirs("%s/none/sub", tmp);
	write_text(P("none/sub/config.json"), "{}");
	ck_assert_int_eq(catalog_open(P("none"), NULL, &c, &e), -1);
	ck_assert_int_eq(e.code, ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(e.detail, "no model ("));
}
END_TEST

START_TEST(test_bad_model_in_tree)
{
	struct catalog *c = NULL;
	struct err e = { 0 };

	mkdirs("%s/bad", tmp);
	write_st(P("bad/good.safetensors"), "w", 2);
	write_text(P("bad/lfs.safetensors"), "version https://git-lfs.github."
		   "com/spec/v1\noid sha256:00\nsize 10\n");
	ck_assert_int_eq(catalog_open(P("bad"), NULL, &c, &e), -1);
	ck_assert_int_eq(e.code, ERR_HEADER_TOO_LARGE);
	ck_assert_str_eq(e.where, P("bad/lfs.safetensors"));
}
END_TEST

/* The scan reads each index's weight_map to know which files are its
 * shards: escaped names and members around it are read as the model
 * reads them; an index that is not valid UTF-8 or JSON names no shards
 * there, and opening it says what is wrong. */
START_TEST(test_index_scan)
{
	struct catalog *c = NULL;
	struct err e = { 0 };

	mkdirs("%s/esc", tmp);
	write_set(P("esc"), "m");
	write_text(P("esc/m.safetensors.index.json"), "{\"x\": {\"weight_map\":"
		   " {\"a\": \"other.safetensors\"}}, \"weight_map\": {\"a\":"
		   " \"m-00001-of-0000\\u0032.safetensors\", \"b\": \"m-00002-"
		   "of-00002.safetensors\"}, \"metadata\": {\"q\": [{}]}}");
	c = open_ok(P("esc"));
	ck_assert_str_eq(dirs(c), "");
	ck_assert_uint_eq(c->entries[0].model->nshards, 2);
	catalog_free(c);

	mkdirs("%s/utf8", tmp);
	write_set(P("utf8"), "m");
	write_text(P("utf8/m.safetensors.index.json"), "{\"weight_map\": {\"a\":"
		   " \"m-00001-of-00002.safetensors\xff\"}}");
	ck_assert_int_eq(catalog_open(P("utf8"), NULL, &c, &e), -1);
	ck_assert_int_eq(e.code, ERR_INVALID_INDEX);
	ck_assert_ptr_nonnull(strstr(e.detail, "UTF-8"));
}
END_TEST

START_TEST(test_symlinks)
{
	struct catalog *c;

	/* a loop does not hang; a linked directory and file are followed */
	mkdirs("%s/elsewhere", tmp);
	mkdirs("%s/l/d", tmp);
	write_st(P("elsewhere/x.safetensors"), "w", 2);
	write_st(P("l/d/y.safetensors"), "w", 2);
	ck_assert_int_eq(symlink(P("l"), P("l/d/loop")), 0);
	ck_assert_int_eq(symlink(P("elsewhere"), P("l/ext")), 0);
	ck_assert_int_eq(symlink(P("elsewhere/x.safetensors"),
				 P("l/z.safetensors")), 0);
	ck_assert_int_eq(symlink("/nonexistent", P("l/dangling.safetensors")),
			 0);
	c = open_ok(P("l"));
	ck_assert_str_eq(dirs(c), "d|ext|z");
	ck_assert_str_eq(c->entries[2].label, P("l/z.safetensors"));
	catalog_free(c);
}
END_TEST

/* A hub cache as huggingface_hub leaves it. */
static void
blob(const char *repo, const char *sha, const char *tensor, unsigned n)
{
	mkdirs("%s/hub/%s/blobs", tmp, repo);
	write_st(P("hub/%s/blobs/%s", repo, sha), tensor, n);
}

static void
snaplink(const char *repo, const char *rev, const char *file,
	 const char *sha)
{
	char target[PATH_MAX];
	const char *p;
	int up = 2;

	for (p = file; (p = strchr(p, '/')); p++)
		up++;
	target[0] = '\0';
	while (up--)
		strcat(target, "../");
	strcat(target, "blobs/");
	strcat(target, sha);
	mkdirs("%s/hub/%s/snapshots/%s", tmp, repo, rev);
	if (strchr(file, '/')) {
		char d[PATH_MAX];

		snprintf(d, sizeof(d), "%s", file);
		*strrchr(d, '/') = '\0';
		mkdirs("%s/hub/%s/snapshots/%s/%s", tmp, repo, rev, d);
	}
	ck_assert_int_eq(symlink(target, P("hub/%s/snapshots/%s/%s", repo, rev,
					   file)), 0);
}

static void
ref(const char *repo, const char *rev)
{
	mkdirs("%s/hub/%s/refs", tmp, repo);
	write_text(P("hub/%s/refs/main", repo), rev);
}

#define R1 "1111111111111111111111111111111111111111"
#define R2 "2222222222222222222222222222222222222222"

static void
make_hub(void)
{
	char json[512];

	/* sharded */
	blob("models--org--sharded", "aa01", "a", 4);
	blob("models--org--sharded", "aa02", "b", 6);
	mkdirs("%s/hub/models--org--sharded/blobs", tmp);
	snprintf(json, sizeof(json), "{\"weight_map\":{\"a\":\"model-00001-of-"
		 "00002.safetensors\",\"b\":\"model-00002-of-00002.safetensors"
		 "\"}}");
	write_text(P("hub/models--org--sharded/blobs/ii"), json);
	snaplink("models--org--sharded", R1, "model-00001-of-00002.safetensors",
		 "aa01");
	snaplink("models--org--sharded", R1, "model-00002-of-00002.safetensors",
		 "aa02");
	snaplink("models--org--sharded", R1, "model.safetensors.index.json",
		 "ii");
	ref("models--org--sharded", R1);
	/* one file, two revisions; main is the second */
	blob("models--org--single", "bb01", "old", 3);
	blob("models--org--single", "bb02", "new", 5);
	snaplink("models--org--single", R1, "model.safetensors", "bb01");
	snaplink("models--org--single", R2, "model.safetensors", "bb02");
	ref("models--org--single", R2 "\n");
	/* a pipeline */
	blob("models--org--pipe", "u1", "u", 2);
	blob("models--org--pipe", "v1", "v", 2);
	blob("models--org--pipe", "t1", "t", 2);
	snaplink("models--org--pipe", R1, "unet/diffusion_pytorch_model."
		 "safetensors", "u1");
	snaplink("models--org--pipe", R1, "vae/diffusion_pytorch_model."
		 "safetensors", "v1");
	snaplink("models--org--pipe", R1, "text_encoder/model.safetensors",
		 "t1");
	ref("models--org--pipe", R1);
	/* no organisation */
	blob("models--gpt2", "cc01", "w", 2);
	snaplink("models--gpt2", R1, "model.safetensors", "cc01");
	ref("models--gpt2", R1);
	/* left out: neither safetensors nor PyTorch weights (.bin-only
	 * repos are models: int-torch), a dataset, .locks */
	write_text(P("hub/models--org--single/blobs/x"), "PK");
	mkdirs("%s/hub/models--org--h5only/blobs", tmp);
	write_text(P("hub/models--org--h5only/blobs/dd"), "\211HDF");
	snaplink("models--org--h5only", R1, "tf_model.h5", "dd");
	ref("models--org--h5only", R1);
	blob("datasets--org--data", "ee", "d", 2);
	snaplink("datasets--org--data", R1, "train.safetensors", "ee");
	ref("datasets--org--data", R1);
	mkdirs("%s/hub/.locks/models--org--single", tmp);
	write_text(P("hub/.locks/models--org--single/bb02.lock"), "");
	write_text(P("hub/version.txt"), "1");
}

START_TEST(test_hub_root)
{
	struct catalog *c;

	make_hub();
	c = open_ok(P("hub"));
	ck_assert_str_eq(dirs(c), "gpt2|org/pipe/text_encoder|org/pipe/unet|"
			 "org/pipe/vae|org/sharded|org/single");
	ck_assert_str_eq(c->entries[4].label, P("hub/models--org--sharded/"
			 "snapshots/" R1 "/model.safetensors.index.json"));
	ck_assert_int_eq(c->entries[4].model->sharded, 1);
	ck_assert_str_eq(c->entries[5].label, P("hub/models--org--single/"
			 "snapshots/" R2 "/model.safetensors"));
	ck_assert_ptr_nonnull(find_model_tensor(c->entries[5].model, "new", 3));
	ck_assert_str_eq(tree_files(c), "(none)");	/* no model's folder */
	catalog_free(c);

	/* above the hub: its tree one level down */
	c = open_ok(tmp);
	ck_assert_str_eq(dirs(c), "hub/gpt2|hub/org/pipe/text_encoder|"
			 "hub/org/pipe/unet|hub/org/pipe/vae|hub/org/sharded|"
			 "hub/org/single");
	catalog_free(c);
}
END_TEST

START_TEST(test_hub_repo_and_snapshot)
{
	struct catalog *c;
	struct err e = { 0 };
	char want[4096];

	make_hub();
	c = open_ok(P("hub/models--org--single"));
	ck_assert_str_eq(dirs(c), "");
	ck_assert_ptr_nonnull(find_model_tensor(c->entries[0].model, "new", 3));
	catalog_free(c);

	c = open_ok(P("hub/models--org--sharded/"));
	ck_assert_str_eq(dirs(c), "");
	ck_assert_uint_eq(c->entries[0].model->ntensors, 2);
	catalog_free(c);

	c = open_ok(P("hub/models--org--pipe"));
	ck_assert_str_eq(dirs(c), "text_encoder|unet|vae");
	snprintf(want, sizeof(want), "%s", tree_files(c));
	ck_assert_str_eq(want, "text_encoder/model.safetensors|"
			 "unet/diffusion_pytorch_model.safetensors|"
			 "vae/diffusion_pytorch_model.safetensors");
	catalog_free(c);
	c = open_ok(P("hub/models--org--pipe/snapshots/" R1));
	ck_assert_str_eq(tree_files(c), want);
	catalog_free(c);

	/* the old revision's snapshot, and a file in it */
	c = open_ok(P("hub/models--org--single/snapshots/" R1));
	ck_assert_ptr_nonnull(find_model_tensor(c->entries[0].model, "old", 3));
	catalog_free(c);
	c = open_ok(P("hub/models--org--sharded/snapshots/" R1
		      "/model.safetensors.index.json"));
	ck_assert_uint_eq(c->entries[0].model->ntensors, 2);
	catalog_free(c);

	/* no refs/main: the only snapshot; two: name one */
	ck_assert_int_eq(unlink(P("hub/models--org--sharded/refs/main")), 0);
	c = open_ok(P("hub/models--org--sharded"));
	catalog_free(c);
	ck_assert_int_eq(unlink(P("hub/models--org--single/refs/main")), 0);
	c = NULL;
	ck_assert_int_eq(catalog_open(P("hub/models--org--single"), NULL, &c,
				      &e), -1);
	ck_assert_ptr_nonnull(strstr(e.detail, "2 snapshots"));
	/* the root leaves it out */
	c = open_ok(P("hub"));
	ck_assert_str_eq(dirs(c), "gpt2|org/pipe/text_encoder|org/pipe/unet|"
			 "org/pipe/vae|org/sharded");
	catalog_free(c);
}
END_TEST

START_TEST(test_max_models)
{
	struct catalog_opts o = { .max_models = 2 };
	struct catalog *c = NULL;
	struct err e = { 0 };

	mkdirs("%s/m", tmp);
	write_st(P("m/a.safetensors"), "w", 2);
	write_st(P("m/b.safetensors"), "w", 2);
	write_st(P("m/c.safetensors"), "w", 2);
	ck_assert_int_eq(catalog_open(P("m"), &o, &c, &e), -1);
	ck_assert_int_eq(e.code, ERR_USAGE);
	o.max_models = 3;
	ck_assert_int_eq(catalog_open(P("m"), &o, &c, &e), 0);
	catalog_free(c);
}
END_TEST

Suite *
catalog_suite(void)
{
	Suite *s = suite_create("catalog");
	TCase *tc = tcase_create("discovery");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_one_file);
	tcase_add_test(tc, test_dir_is_the_model);
	tcase_add_test(tc, test_folder_of_models);
	tcase_add_test(tc, test_collisions);
	tcase_add_test(tc, test_listing_same_tree);
	tcase_add_test(tc, test_listing_split_ahead);
	tcase_add_test(tc, test_listing_folders);
	tcase_add_test(tc, test_no_models);
	tcase_add_test(tc, test_bad_model_in_tree);
	tcase_add_test(tc, test_index_scan);
	tcase_add_test(tc, test_symlinks);
	tcase_add_test(tc, test_hub_root);
	tcase_add_test(tc, test_hub_repo_and_snapshot);
	tcase_add_test(tc, test_max_models);
	suite_add_tcase(s, tc);
	return s;
}
