/* inspect_png.c - stfs-inspect's pictures, without a mount: the same
 * files as the mount's .png/ (view/tensor_png.h).
 *
 *   --png NAME -o FILE [--histogram] SOURCE   tensor NAME's heatmap (or
 *       histogram) as FILE (- for stdout; an existing FILE only with
 *       --force); in a tree of models NAME is DIR/NAME as --diff names it
 *   --diff A B --png DIR    for every tensor that differs and has one
 *       shape on both sides, the heatmap of |a - b| as DIR/FILE.png, FILE
 *       the name as the mount writes it (names.h)
 *
 * Quantized weights are drawn as the values they stand for unless
 * --no-dequant, as --stats and --diff read them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "cli/inspect.h"
#include "model/catalog.h"
#include "model/model.h"
#include "view/names.h"
#include "view/tensor_png.h"

/* Write b to path (- for stdout) through a temporary file renamed into
 * place, so that a failure leaves no half picture.  0, or 2 with the
 * message printed. */
static int
write_file(const struct inspect_opts *o, const char *path,
	   const struct buf *b)
{
	struct buf tmp = BUF_INIT;
	FILE *f;
	int ok;

	if (strcmp(path, "-") == 0) {
		ok = fwrite(b->data, 1, b->len, stdout) == b->len &&
		     fflush(stdout) == 0;
		if (!ok && !o->quiet)
			perror("stfs-inspect: stdout");
		return ok ? 0 : 2;
	}
	if (buf_addf(&tmp, "%s.tmp%ld", path, (long)getpid()))
		return 2;
	f = fopen(tmp.data, "wb");
	ok = f && fwrite(b->data, 1, b->len, f) == b->len;
	if (f && fclose(f) != 0)
		ok = 0;
	if (ok && rename(tmp.data, path) != 0)
		ok = 0;
	if (!ok) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: %s: %s (is its "
				"directory there and writable?)\n", path,
				strerror(errno));
		unlink(tmp.data);
	}
	buf_free(&tmp);
	return ok ? 0 : 2;
}

/* The tensor NAME (DIR/NAME in a tree of models), else NULL. */
static const struct model_tensor *
find(const struct catalog *c, const char *name, const struct model **m)
{
	size_t k, i, n = strlen(name), dl;

	for (k = 0; k < c->n; k++) {
		const char *dir = c->entries[k].dir, *want = name;
		size_t wl = n;

		dl = strlen(dir);
		if (dl) {
			if (n <= dl || memcmp(name, dir, dl) || name[dl] != '/')
				continue;
			want += dl + 1;
			wl -= dl + 1;
		}
		*m = c->entries[k].model;
		for (i = 0; i < (*m)->ntensors; i++) {
			const struct tensor *t = (*m)->tensors[i].t;

			if (t->name_len == wl && !memcmp(t->name, want, wl))
				return &(*m)->tensors[i];
		}
	}
	return NULL;
}

static const char *
why(int rc)
{
	return rc == -EOPNOTSUPP ? "its values are not decoded (a "
		"quantization stfs does not read)" :
	       rc == -ENOMEM ? "out of memory" :
	       "cannot read it (was the source changed?)";
}

int
inspect_png(const struct inspect_opts *o)
{
	const struct model_tensor *mt;
	const struct model *m;
	struct tensor_png_opts po = { 0 };
	struct model_tensor_at at;
	struct buf b = BUF_INIT;
	struct catalog *c;
	struct stat st;
	int rc;

	if (o->nsources != 1 || !o->output) {
		fputs("stfs-inspect: --png NAME takes one SOURCE and -o FILE "
		      "(try --help)\n", stderr);
		return 2;
	}
	/* before SOURCE is opened (it may be remote and large), as --merge */
	if (!o->force && strcmp(o->output, "-") != 0 &&
	    lstat(o->output, &st) == 0) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: %s: UsageError: exists; "
				"--force replaces it, or name another FILE\n",
				o->output);
		return 2;
	}
	rc = inspect_catalog(o, o->sources[0], 1, &c);
	if (rc)
		return rc;
	mt = find(c, o->png, &m);
	if (!mt) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: %s: no tensor named "
				"\"%s\" (stfs-inspect --tensors lists them)\n",
				o->sources[0], o->png);
		catalog_free(c);
		return 2;
	}
	at.m = m;
	at.mt = mt;
	rc = o->histogram ?
	     tensor_png_hist(mt->t, &po, model_tensor_read_file, &at, &b) :
	     tensor_png_heat(mt->t, &po, model_tensor_read_file, &at, &b);
	if (rc) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: %s: tensor %s: %s\n",
				m->shards[mt->shard].src->name, o->png,
				why(rc));
		rc = 2;
	} else {
		rc = write_file(o, o->output, &b);
	}
	buf_free(&b);
	catalog_free(c);
	return rc;
}

int
inspect_png_diff(const struct inspect_opts *o, const struct model *ma,
		 const struct model_tensor *a, const struct model *mb,
		 const struct model_tensor *b, const char *name, size_t len)
{
	struct model_tensor_at xa = { ma, a }, xb = { mb, b };
	struct tensor_png_opts po = { 0 };
	char enc[NAMES_MAX + 1];
	struct buf out = BUF_INIT, path = BUF_INIT;
	int rc;

	if (mkdir(o->png, 0777) != 0 && errno != EEXIST) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: --png %s: %s\n", o->png,
				strerror(errno));
		return 2;
	}
	rc = tensor_png_diff(a->t, model_tensor_read_file, &xa, b->t,
			     model_tensor_read_file, &xb, &po, &out);
	if (rc == -EOPNOTSUPP || rc == -EINVAL) {
		buf_free(&out);
		return 0;	/* values not decoded, or not one shape */
	}
	if (rc) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: tensor %.*s: %s\n",
				(int)len, name, why(rc));
		buf_free(&out);
		return 2;
	}
	names_encode(name, len, enc);
	if (buf_addf(&path, "%s/%s.png", o->png, enc))
		rc = 2;
	else
		rc = write_file(o, path.data, &out);
	buf_free(&out);
	buf_free(&path);
	return rc;
}
