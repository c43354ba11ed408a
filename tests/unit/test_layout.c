/* test_layout.c - flat and tree layouts (src/view/layout.c): directories from
 * dotted names, per-component encoding, the leaf-and-prefix rule, and
 * that every path maps back to its tensor name.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/safetensors/header.h"
#include "view/layout.h"
#include "model/model.h"
#include "view/names.h"
#include "suites.h"

/* A model with only what the layout reads: the tensor names. */
struct fake {
	struct model m;
	struct model_tensor *mt;
	struct tensor *t;
};

static void
fake_init(struct fake *f, const char *const *names, const size_t *lens,
	  size_t n)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->mt = calloc(n ? n : 1, sizeof(*f->mt));
	f->t = calloc(n ? n : 1, sizeof(*f->t));
	ck_assert(f->mt && f->t);
	for (i = 0; i < n; i++) {
		f->t[i].name = names[i];
		f->t[i].name_len = (uint32_t)(lens ? lens[i] : strlen(names[i]));
		f->mt[i].t = &f->t[i];
	}
	f->m.ntensors = n;
	f->m.tensors = f->mt;
}

static void
fake_free(struct fake *f)
{
	free(f->mt);
	free(f->t);
}

#define PATH_CAP (1 << 18)	/* 65536 nested "%" directories fit */
#define DEPTH_MAX 70000

/* The path of tensor i: its directories from the root, then its file. */
static void
path_of(const struct layout *l, size_t i, char *out, size_t cap)
{
	static const char *parts[DEPTH_MAX];
	static uint32_t lens[DEPTH_MAX];
	uint32_t d;
	size_t np = 0, o = 0;

	parts[np] = l->leaves[i].name;
	lens[np++] = l->leaves[i].name_len;
	for (d = l->leaves[i].dir; d != LAYOUT_ROOT; d = l->dirs[d].parent) {
		ck_assert(np < DEPTH_MAX);
		parts[np] = l->dirs[d].name;
		lens[np++] = l->dirs[d].name_len;
	}
	while (np--) {
		ck_assert(o + lens[np] + 2 < cap);
		memcpy(out + o, parts[np], lens[np]);
		o += lens[np];
		out[o++] = np ? '/' : '\0';
	}
}

/* Walk path (components split at '/') with layout_find from the root. */
static enum layout_hit
walk(const struct layout *l, const char *path, uint32_t *idx)
{
	uint32_t dir = LAYOUT_ROOT, x = 0;
	const char *s = path, *slash;
	enum layout_hit h;

	for (;;) {
		slash = strchr(s, '/');
		h = layout_find(l, dir, s, slash ? (size_t)(slash - s) :
				strlen(s), &x);
		if (!slash || h != LAYOUT_DIR)
			break;
		dir = x;
		s = slash + 1;
	}
	if (slash)
		return LAYOUT_NONE;
	*idx = x;
	return h;
}

/* The documented reverse mapping: drop a last "/__tensor__", '/' -> '.',
 * decode each component.  -1 for hashed components. */
static int
reverse(const char *path, char *out, size_t *outlen)
{
	static char buf[PATH_CAP];
	char *s = buf, *slash;
	size_t o = 0, n, len = strlen(path);
	const char *self = "/" LAYOUT_SELF;

	memcpy(buf, path, len + 1);
	if (len > strlen(self) && strcmp(buf + len - strlen(self), self) == 0)
		buf[len - strlen(self)] = '\0';
	for (;;) {
		slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		if (names_decode(s, strlen(s), out + o, &n) != 0)
			return -1;
		o += n;
		if (!slash)
			break;
		out[o++] = '.';
		s = slash + 1;
	}
	*outlen = o;
	return 0;
}

static struct layout *
build(struct fake *f, int tree)
{
	struct layout *l = NULL;
	struct err e = { 0 };

	ck_assert_msg(layout_build(&f->m, tree, &l, &e) == 0, "%s: %s",
		      err_name(e.code), e.detail);
	return l;
}

/* Every tensor: its path resolves to it, reverses to its name, and it
 * is listed exactly once; every directory is listed by its parent. */
static void
check_consistent(const struct layout *l, const struct fake *f)
{
	char *path = malloc(PATH_CAP), *back = malloc(PATH_CAP);
	size_t i, d, k, n;
	uint32_t idx;
	char *seen = calloc(f->m.ntensors + 1, 1);

	ck_assert(seen && path && back);
	for (i = 0; i < f->m.ntensors; i++) {
		path_of(l, i, path, PATH_CAP);
		ck_assert_msg(walk(l, path, &idx) == LAYOUT_TENSOR &&
			      idx == i, "%s does not resolve", path);
		if (reverse(path, back, &n) == 0)
			ck_assert_msg(n == f->t[i].name_len &&
				      memcmp(back, f->t[i].name, n) == 0,
				      "%s reverses to %.*s", path, (int)n,
				      back);
		/* never a file name with a '.' in the tree layout */
		if (l->tree)
			ck_assert(memchr(l->leaves[i].name, '.',
					 l->leaves[i].name_len) == NULL);
	}
	for (d = 0; d < l->ndirs; d++) {
		const struct layout_dir *dd = &l->dirs[d];

		for (k = 0; k < dd->nfile; k++) {
			uint32_t t = layout_file(l, (uint32_t)d, k);

			ck_assert_uint_eq(l->leaves[t].dir, d);
			ck_assert(!seen[t]);
			seen[t] = 1;
		}
		for (k = 0; k < dd->nsub; k++)
			ck_assert_uint_eq(l->dirs[l->subs[dd->sub + k]].parent,
					  d);
		if (d) {
			ck_assert_int_eq(layout_find(l, dd->parent, dd->name,
						     dd->name_len, &idx),
					 LAYOUT_DIR);
			ck_assert_uint_eq(idx, d);
		}
	}
	for (i = 0; i < f->m.ntensors; i++)
		ck_assert(seen[i]);
	free(seen);
	free(path);
	free(back);
}

static void
expect_path(const struct layout *l, size_t i, const char *want)
{
	static char path[PATH_CAP];

	path_of(l, i, path, sizeof(path));
	ck_assert_str_eq(path, want);
}

START_TEST(test_flat)
{
	static const char *const names[] = {
		"model.layers.0.weight", "a/b", ".x", "x.json", "",
		"__summary__",
	};
	struct fake f;
	struct layout *l;
	uint32_t idx;

	fake_init(&f, names, NULL, 6);
	l = build(&f, 0);
	ck_assert_uint_eq(l->ndirs, 1);
	ck_assert_ptr_null(l->files);
	ck_assert_uint_eq(l->dirs[0].nfile, 6);
	expect_path(l, 0, "model.layers.0.weight");
	expect_path(l, 1, "a%2Fb");
	expect_path(l, 2, "%2Ex");
	expect_path(l, 3, "x%2Ejson");
	expect_path(l, 4, "%");
	expect_path(l, 5, "%5F_summary__");
	ck_assert_int_eq(layout_find(l, 0, "a%2Fb", 5, &idx), LAYOUT_TENSOR);
	ck_assert_uint_eq(idx, 1);
	ck_assert_int_eq(layout_find(l, 0, "a/b", 3, &idx), LAYOUT_NONE);
	ck_assert_int_eq(layout_find(l, 0, "", 0, &idx), LAYOUT_NONE);
	ck_assert_int_eq(layout_find(l, 1, "%", 1, &idx), LAYOUT_NONE);
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);
}
END_TEST

START_TEST(test_tree)
{
	static const char *const names[] = {
		"model.layers.0.mlp.down_proj.weight",
		"model.layers.0.mlp.down_proj.bias",
		"model.layers.1.mlp.up.weight",
		"model.embed_tokens.weight",
		"lm_head.weight",
		"step",
		"a/b.c%d",
		"__tensor__",
		"x.__init__",
	};
	struct fake f;
	struct layout *l;
	uint32_t idx, model;

	fake_init(&f, names, NULL, 9);
	l = build(&f, 1);
	expect_path(l, 0, "model/layers/0/mlp/down_proj/weight");
	expect_path(l, 1, "model/layers/0/mlp/down_proj/bias");
	expect_path(l, 2, "model/layers/1/mlp/up/weight");
	expect_path(l, 3, "model/embed_tokens/weight");
	expect_path(l, 4, "lm_head/weight");
	expect_path(l, 5, "step");
	expect_path(l, 6, "a%2Fb/c%25d");
	expect_path(l, 7, "%5F_tensor__");
	expect_path(l, 8, "x/%5F_init__");
	/* model layers 0 mlp down_proj 1 mlp up embed_tokens lm_head a x */
	ck_assert_uint_eq(l->ndirs, 1 + 12);
	/* root: model, lm_head, a%2Fb, x; files: step, %5F_tensor__ */
	ck_assert_uint_eq(l->dirs[0].nsub, 4);
	ck_assert_uint_eq(l->dirs[0].nfile, 2);
	ck_assert_int_eq(layout_find(l, 0, "model", 5, &model), LAYOUT_DIR);
	ck_assert_str_eq(l->dirs[l->subs[l->dirs[0].sub]].name, "model."
			 "layers.0.mlp.down_proj.weight");	/* points in */
	ck_assert_uint_eq(l->dirs[model].nsub, 2);	/* layers, embed */
	ck_assert_int_eq(layout_find(l, 0, "step", 4, &idx), LAYOUT_TENSOR);
	ck_assert_uint_eq(idx, 5);
	ck_assert_int_eq(layout_find(l, 0, "model.layers", 12, &idx),
			 LAYOUT_NONE);
	/* listing order: subdirectories as they appear, files in order */
	ck_assert_uint_eq(layout_file(l, 0, 0), 5);
	ck_assert_uint_eq(layout_file(l, 0, 1), 7);
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);
}
END_TEST

/* a.b next to a.b.c: the directory keeps the name, a.b is a/b/__tensor__,
 * whichever comes first. */
START_TEST(test_leaf_and_prefix)
{
	static const char *const n1[] = { "a.b", "a.b.c", "a", "a.b.c.d" };
	static const char *const n2[] = { "a.b.c.d", "a", "a.b.c", "a.b" };
	struct fake f;
	struct layout *l;
	uint32_t idx;

	fake_init(&f, n1, NULL, 4);
	l = build(&f, 1);
	expect_path(l, 0, "a/b/__tensor__");
	expect_path(l, 1, "a/b/c/__tensor__");
	expect_path(l, 2, "a/__tensor__");
	expect_path(l, 3, "a/b/c/d");
	ck_assert_int_eq(walk(l, "a/b", &idx), LAYOUT_DIR);
	ck_assert_int_eq(walk(l, "a/b/__tensor__", &idx), LAYOUT_TENSOR);
	ck_assert_uint_eq(idx, 0);
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);

	fake_init(&f, n2, NULL, 4);
	l = build(&f, 1);
	expect_path(l, 0, "a/b/c/d");
	expect_path(l, 1, "a/__tensor__");
	expect_path(l, 2, "a/b/c/__tensor__");
	expect_path(l, 3, "a/b/__tensor__");
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);
}
END_TEST

/* Empty components are "%", in directories too. */
START_TEST(test_empty_components)
{
	static const char *const names[] = {
		"", ".", ".x", "a..b", "x.", "..", "y",
	};
	struct fake f;
	struct layout *l;

	fake_init(&f, names, NULL, 7);
	l = build(&f, 1);
	expect_path(l, 0, "%/__tensor__");	/* "%" is also a directory */
	expect_path(l, 1, "%/%/__tensor__");	/* "." and ".." */
	expect_path(l, 2, "%/x");
	expect_path(l, 3, "a/%/b");
	expect_path(l, 4, "x/%");
	expect_path(l, 5, "%/%/%");
	expect_path(l, 6, "y");
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);
}
END_TEST

/* Names with NUL, control bytes and long components; a 64 KiB name of
 * dots nests 65536 directories. */
START_TEST(test_odd_names)
{
	static char longc[600], dots[65536];
	const char *names[5];
	size_t lens[5];
	struct fake f;
	struct layout *l;
	static char path[PATH_CAP];

	memset(longc, 'L', sizeof(longc));
	longc[300] = '.';			/* two components: 300 + 299 */
	memset(dots, '.', sizeof(dots));
	names[0] = "nul\0in.side";
	lens[0] = 11;
	names[1] = longc;
	lens[1] = sizeof(longc);
	names[2] = dots;
	lens[2] = sizeof(dots);
	names[3] = "tab\t.new\nline";
	lens[3] = 13;
	names[4] = "p%.q";
	lens[4] = 4;
	fake_init(&f, names, lens, 5);
	l = build(&f, 1);
	expect_path(l, 0, "nul%00in/side");
	expect_path(l, 3, "tab%09/new%0Aline");
	expect_path(l, 4, "p%25/q");
	path_of(l, 1, path, sizeof(path));
	ck_assert(strstr(path, "%~") != NULL);	/* hashed components */
	ck_assert_uint_eq(l->ndirs, 1 + 1 + 65536 + 2 + 1);
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);
}
END_TEST

/* Random names over a small alphabet that makes many prefixes, empty
 * components and escapes. */
START_TEST(test_random_names)
{
	enum { N = 3000 };
	static const char alpha[] = "ab._%/";
	static char buf[N][12];
	const char *names[N];
	size_t lens[N], n = 0, i, j;
	uint32_t r = 7;
	struct fake f;
	struct layout *l;

	while (n < N) {
		size_t len;

		r = r * 1103515245u + 12345u;
		len = (r >> 16) % 10;
		for (j = 0; j < len; j++) {
			r = r * 1103515245u + 12345u;
			buf[n][j] = alpha[(r >> 16) % 6];
		}
		for (i = 0; i < n; i++)
			if (lens[i] == len && memcmp(buf[i], buf[n], len) == 0)
				break;
		if (i < n)
			continue;	/* names are unique */
		names[n] = buf[n];
		lens[n++] = len;
	}
	fake_init(&f, names, lens, N);
	l = build(&f, 1);
	check_consistent(l, &f);
	layout_free(l);
	l = build(&f, 0);
	check_consistent(l, &f);
	layout_free(l);
	fake_free(&f);
}
END_TEST

/* Rule 6 can make two names meet: refused, naming both. */
START_TEST(test_collision)
{
	static char a[400], b[400];
	const char *names[2] = { a, b };
	size_t lens[2] = { sizeof(a), sizeof(b) };
	struct layout *l = NULL;
	struct err e = { 0 };
	struct fake f;

	/* Same hashed component, different tails: no collision */
	memset(a, 'x', sizeof(a));
	memset(b, 'x', sizeof(b));
	a[350] = '.';
	b[350] = '.';
	b[399] = 'y';
	fake_init(&f, names, lens, 2);
	ck_assert_int_eq(layout_build(&f.m, 1, &l, &e), 0);
	ck_assert_uint_eq(l->ndirs, 2);
	layout_free(l);
	fake_free(&f);
	/* identical names: the same path */
	b[399] = 'x';
	fake_init(&f, names, lens, 2);
	ck_assert_int_eq(layout_build(&f.m, 1, &l, &e), -1);
	ck_assert_int_eq(e.code, ERR_USAGE);
	ck_assert(strstr(e.detail, "same path") != NULL);
	fake_free(&f);
}
END_TEST

Suite *
layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_flat);
	tcase_add_test(tc, test_tree);
	tcase_add_test(tc, test_leaf_and_prefix);
	tcase_add_test(tc, test_empty_components);
	tcase_add_test(tc, test_odd_names);
	tcase_add_test(tc, test_random_names);
	tcase_add_test(tc, test_collision);
	suite_add_tcase(s, tc);
	return s;
}
