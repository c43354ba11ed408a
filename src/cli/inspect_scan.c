/* inspect_scan.c - stfs-inspect --scan FILE...: what loading each file in
 * Python would import and call beyond torch.load(weights_only=True), for
 * a CI step (as picklescan or modelscan): exit 0 when no file has any, 1
 * when one has (listed), 2 when a file could not be read or scanned to
 * its end and none has any.
 *
 * A FILE is a local file, a directory (every model, checkpoint and
 * pickle below it, by name: format/naming.h, *.pkl, *.pickle) or a URL
 * of one file (http(s)://, s3://).  Pickles are read by
 * format/torch/torch_scan.h, which runs nothing; safetensors and GGUF
 * files hold no code by construction, and say so.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/text.h"
#include "cli/inspect.h"
#include "format/gguf/gguf.h"
#include "format/naming.h"
#include "format/safetensors/header.h"
#include "format/torch/torch_scan.h"
#include "model/provider.h"
#include "model/summary.h"

#define DEPTH_MAX 32		/* directories below a FILE */

struct scan_run {
	const struct inspect_opts *o;
	json_t *files;		/* --json: an object per file */
	uint64_t unsafe;	/* uses found, all files */
	int errors;		/* files not read or not scanned whole */
};

/* Names a directory's files are scanned by: models, checkpoints, their
 * indexes left out (JSON), and pickles by their usual suffixes. */
static int
scanned_name(const char *name)
{
	struct naming nm;
	enum naming_role r = naming_of(name, &nm);

	return (r != NAMING_NONE && r != NAMING_INDEX) ||
	       text_ends_with(name, ".pkl") ||
	       text_ends_with(name, ".pickle");
}

/* 1 when the name says a pickle: a PyTorch checkpoint's or a *.pkl. */
static int
pickle_name(const char *name)
{
	struct naming nm;

	return (naming_of(name, &nm) != NAMING_NONE && nm.reader &&
		strcmp(nm.reader, NAMING_TORCH) == 0) ||
	       text_ends_with(name, ".pkl") || text_ends_with(name, ".pickle");
}

static void
say_error(struct scan_run *s, const char *path, struct err *e,
	  json_t *obj)
{
	s->errors++;
	err_at(e, path);
	if (!s->o->quiet && !s->o->json)
		err_print("stfs-inspect", e);
	if (obj)
		json_object_set_new(obj, "error", json_sprintf("%s: %s",
				    err_name(e->code), e->detail));
}

/* The text lines of one file's scan. */
static void
print_scan(const char *path, const struct torch_scan *t)
{
	fprintf(stdout, "%s: ", path);
	if (t->total)
		printf("unsafe: %s whose loading imports and calls %llu "
		       "thing%s torch.load(weights_only=True) refuses (a "
		       "plain torch.load makes them):\n", t->what,
		       (unsigned long long)t->total, t->total == 1 ? "" : "s");
	else if (t->broke.code != ERR_OK)
		printf("not scanned whole: %s (nothing unsafe before it "
		       "broke off)\n", t->what);
	else if (t->nparts)
		printf("clean: %s; every import and call of its pickle%s is "
		       "one torch.load(weights_only=True) allows\n", t->what,
		       t->nparts > 1 ? "s" : "");
	else
		printf("clean: %s: nothing torch.load unpickles\n", t->what);
	for (size_t i = 0; i < t->nparts; i++)
		for (size_t k = 0; k < t->part[i].n; k++) {
			fputs("  ", stdout);
			summary_print_unsafe_use(stdout, &t->part[i].use[k],
						 t->part[i].name);
		}
}

static json_t *
scan_json(const struct torch_scan *t)
{
	json_t *list = json_array(), *o;

	for (size_t i = 0; i < t->nparts; i++)
		for (size_t k = 0; k < t->part[i].n; k++) {
			json_t *u = summary_unsafe_use_json(&t->part[i].use[k]);

			if (u)
				json_object_set_new(u, "pickle", json_string(
					t->part[i].name));
			json_array_append_new(list, u);
		}
	o = json_pack("{s:s, s:I, s:o}", "what", t->what, "count",
		      (json_int_t)t->total, "list", list);
	return o;
}

/* A file that holds no code by construction: safetensors, GGUF. */
static const char *
no_code(const unsigned char *head, size_t n, uint64_t size)
{
	if (gguf_claims(head, n, size))
		return "a GGUF file: typed metadata and tensor bytes, no code, "
		       "by construction";
	if (header_claims(head, n, size))
		return "a safetensors file: a JSON header and tensor bytes, no "
		       "code, by construction";
	return NULL;
}

static void
scan_file(struct scan_run *s, const char *path)
{
	const struct provider *pv = provider_for(path);
	json_t *obj = s->o->json ? json_pack("{s:s}", "path", path) : NULL;
	unsigned char head[32];
	struct torch_scan t;
	struct source *src = NULL;
	struct err e = { 0 };
	struct reader r;
	const char *none;
	size_t n;

	if (!pv->open_file) {
		err_set(&e, ERR_USAGE, "--scan reads files: give a file, a "
			"directory or the URL of one file");
		goto fail;
	}
	if (pv->open_file(path, &src, &e))
		goto fail;
	r = source_reader(src);
	n = r.size < sizeof(head) ? (size_t)r.size : sizeof(head);
	if (n && reader_pread(&r, head, n, 0)) {
		err_set(&e, ERR_IO, "reading its first bytes failed");
		goto fail;
	}
	none = no_code(head, n, r.size);
	if (none) {
		if (obj)
			json_object_set_new(obj, "unsafe", json_pack(
				"{s:s, s:i, s:[]}", "what", none, "count", 0,
				"list"));
		else if (!s->o->quiet)
			printf("%s: clean: %s\n", path, none);
		goto done;
	}
	if (torch_scan(&r, !pickle_name(path), &t, &e))
		goto fail;
	s->unsafe += t.total;
	if (obj)
		json_object_set_new(obj, "unsafe", scan_json(&t));
	else if (!s->o->quiet)
		print_scan(path, &t);
	if (t.broke.code != ERR_OK)
		say_error(s, path, &t.broke, obj);
	torch_scan_free(&t);
	goto done;
fail:
	say_error(s, path, &e, obj);
done:
	if (src)
		source_close(src);
	if (obj)
		json_array_append_new(s->files, obj);
}

static void scan_path(struct scan_run *s, const char *path, int depth);

/* Every scanned name below dir, in name order. */
static void
scan_dir(struct scan_run *s, const char *dir, int depth)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	struct err e = { 0 };

	if (n < 0) {
		err_set(&e, ERR_IO, "cannot list the directory: %s",
			strerror(errno));
		say_error(s, dir, &e, NULL);
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *p;

		if (name[0] != '.' &&
		    asprintf(&p, "%s/%s", dir, name) >= 0) {
			struct stat st;

			/* directories by lstat (no loops), files by stat
			 * (the hub cache's snapshots are links to blobs) */
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				scan_path(s, p, depth + 1);
			else if (scanned_name(name) && stat(p, &st) == 0 &&
				 S_ISREG(st.st_mode))
				scan_file(s, p);
			free(p);
		}
		free(ents[i]);
	}
	free(ents);
}

static void
scan_path(struct scan_run *s, const char *path, int depth)
{
	struct stat st;

	if (provider_for(path)->scheme || stat(path, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		scan_file(s, path);
		return;
	}
	if (depth < DEPTH_MAX)
		scan_dir(s, path, depth);
}

int
inspect_scan(const struct inspect_opts *o)
{
	struct scan_run s = { o, NULL, 0, 0 };

	if (o->json)
		s.files = json_array();
	for (int i = 0; i < o->nsources; i++)
		scan_path(&s, o->sources[i], 0);
	if (o->json && !o->quiet) {
		json_t *root = json_pack("{s:o, s:I, s:i}", "files", s.files,
					 "unsafe", (json_int_t)s.unsafe,
					 "errors", s.errors);
		char *text = json_dumps(root, JSON_PRESERVE_ORDER |
					JSON_INDENT(2));

		if (text)
			puts(text);
		free(text);
		json_decref(root);
	} else {
		json_decref(s.files);
	}
	return s.unsafe ? 1 : s.errors ? 2 : 0;
}
