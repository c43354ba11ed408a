/* view_png.c - the hidden .png/ directory (struct view_hidden,
 * view_kinds.h): two pictures per tensor, in the tensor directories'
 * shape (layout.h):
 *
 *   .png/NAME.png        its heatmap (heatmap.h, tensor_png.h)
 *   .png/NAME.hist.png   the histogram of its values
 *
 * NAME is the tensor's file name, except that a name ending in ".hist"
 * has that '.' written %2E (a.hist's heatmap is a%2Ehist.png), so that no
 * heatmap is named like another tensor's histogram; a name that would
 * pass 255 bytes with its suffix keeps its first 200 bytes (a whole %XX
 * escape and UTF-8 character) and "%~" and the 16 hex digits of the
 * FNV-1a hash of the file name (names.h rule 6), found by a scan of its
 * directory.  A tensor that a quantized weight's logical tensor replaces
 * has the logical tensor's pictures (view_dequant_mirror()), as .npy/.
 *
 * Sizes follow from the name, dtype and shape (png_file.h), so ls -l and
 * stat read no weights.  A picture is drawn on its first read, through the
 * memo (base/memo.h: concurrent readers wait for one drawing; a FUSE
 * request thread never waits, the offload pool does) in a table bounded
 * to opts.png_cache_mb: the least recently read pictures are dropped and
 * drawn again when read again.
 *
 * Inodes, a range after the view's others: ino_png is .png/, ino_png + d
 * layout directory d >= 1, then ino_png + ndirs + 2i tensor i's heatmap
 * and + 1 its histogram.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/memo.h"
#include "format/dtype.h"
#include "model/model.h"
#include "view/layout.h"
#include "view/names.h"
#include "view/tensor_png.h"
#include "view/view.h"
#include "view/view_fetch.h"
#include "view/view_kinds.h"
#include "view/view_png.h"

#define PNG_DIR ".png"
#define HEAT_SUFFIX ".png"
#define HIST_SUFFIX ".hist.png"
#define HIST_TAIL ".hist"
#define HIST_TAIL_ESC "%2Ehist"
#define NAME_MAX_LEN 255
#define HASH_KEEP 200

struct view_png {
	struct memo *pictures;	/* 2i heatmap, 2i + 1 histogram */
	uint64_t ndirs;
};

static uint64_t
files_at(const struct view *v)
{
	return v->ino_png + v->png->ndirs;
}

static int
png_build(struct view *v, struct err *e)
{
	struct view_png *p;
	size_t mb = v->opts.png_cache_mb ? v->opts.png_cache_mb :
		    VIEW_PNG_CACHE_MB;

	/* a model view's inodes stay within 32 bits (view_multi.c) */
	if (v->ninodes + v->layout->ndirs + 2 * (uint64_t)v->model->ntensors
	    >= UINT32_MAX - 2)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	p->ndirs = v->layout->ndirs;
	p->pictures = memo_new_bounded(2 * v->model->ntensors,
				       mb << 20);
	if (!p->pictures) {
		free(p);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	v->png = p;
	v->ino_png = v->ninodes + 1;
	v->ninodes = files_at(v) - 1 + 2 * (uint64_t)v->model->ntensors;
	return 0;
}

static void
png_free(struct view *v)
{
	if (!v->png)
		return;
	memo_free(v->png->pictures);
	free(v->png);
	v->png = NULL;
}

static uint64_t
png_root(const struct view *v)
{
	return v->png ? v->ino_png : 0;
}

static int
png_owns(const struct view *v, uint64_t ino)
{
	return v->png && ino >= v->ino_png && ino <= v->ino_png +
	       v->png->ndirs - 1 + 2 * (uint64_t)v->model->ntensors;
}

static enum view_kind
png_kind(const struct view *v, uint64_t ino)
{
	return ino < files_at(v) ? VIEW_DIR : VIEW_HIDDEN_FILE;
}

/* --- names ------------------------------------------------------------- */

/* The file name of a leaf's heatmap (hist 0) or histogram (1) in out;
 * its length. */
static size_t
file_name(const char *leaf, size_t len, int hist, char out[NAME_MAX_LEN + 1])
{
	const char *suffix = hist ? HIST_SUFFIX : HEAT_SUFFIX;
	size_t slen = strlen(suffix), tl = strlen(HIST_TAIL), n, keep;
	int esc = len >= tl && memcmp(leaf + len - tl, HIST_TAIL, tl) == 0;

	n = len + (esc ? 2 : 0);
	if (n + slen <= NAME_MAX_LEN) {
		memcpy(out, leaf, len - (esc ? tl : 0));
		if (esc)
			memcpy(out + len - tl, HIST_TAIL_ESC,
			       strlen(HIST_TAIL_ESC));
	} else {
		/* a prefix that splits neither %XX nor a character */
		keep = HASH_KEEP;
		while (keep > 0 && ((unsigned char)leaf[keep] & 0xc0) == 0x80)
			keep--;
		if (keep >= 1 && leaf[keep - 1] == '%')
			keep--;
		else if (keep >= 2 && leaf[keep - 2] == '%')
			keep -= 2;
		memcpy(out, leaf, keep);
		n = keep + (size_t)snprintf(out + keep, 19, "%%~%016llx",
			(unsigned long long)names_fnv1a(leaf, len));
	}
	memcpy(out + n, suffix, slen + 1);
	return n + slen;
}

static size_t
tensor_file_name(const struct view *v, uint32_t i, int hist,
		 char out[NAME_MAX_LEN + 1])
{
	const struct layout_leaf *lf = &v->layout->leaves[i];

	return file_name(lf->name, lf->name_len, hist, out);
}

static int
ends(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Tensor i's file k in directory d is name[0..len) when its name is. */
static uint64_t
if_named(const struct view *v, uint32_t i, int hist, const char *name,
	 size_t len)
{
	char fn[NAME_MAX_LEN + 1];

	if (tensor_file_name(v, i, hist, fn) != len || memcmp(fn, name, len))
		return 0;
	return files_at(v) + 2 * (uint64_t)i + (unsigned)hist;
}

static uint64_t
png_lookup(const struct view *v, uint64_t parent, const char *name,
	   size_t len)
{
	uint32_t d = (uint32_t)(parent - v->ino_png), idx, k, nf;
	const struct layout *l = v->layout;
	char leaf[NAME_MAX_LEN + 1];
	size_t xl, el = strlen(HIST_TAIL_ESC);
	uint64_t ino;
	int hist;

	if (parent >= files_at(v))
		return 0;
	if (ends(name, len, HIST_SUFFIX))
		hist = 1;
	else if (ends(name, len, HEAT_SUFFIX))
		hist = 0;
	else
		return layout_find(l, d, name, len, &idx) == LAYOUT_DIR ?
		       v->ino_png + idx : 0;
	xl = len - strlen(hist ? HIST_SUFFIX : HEAT_SUFFIX);
	if (layout_find(l, d, name, xl, &idx) == LAYOUT_TENSOR &&
	    (ino = if_named(v, idx, hist, name, len)))
		return ino;
	if (xl > el && ends(name, xl, HIST_TAIL_ESC) && xl <= NAME_MAX_LEN) {
		memcpy(leaf, name, xl - el);
		memcpy(leaf + xl - el, HIST_TAIL, strlen(HIST_TAIL));
		if (layout_find(l, d, leaf, xl - el + strlen(HIST_TAIL),
				&idx) == LAYOUT_TENSOR &&
		    (ino = if_named(v, idx, hist, name, len)))
			return ino;
	}
	if (memmem(name, len, "%~", 2)) {	/* a hashed name: a scan */
		nf = l->dirs[d].nfile;
		for (k = 0; k < nf; k++)
			if ((ino = if_named(v, layout_file(l, d, k), hist,
					    name, len)))
				return ino;
	}
	return 0;
}

static uint64_t
png_nchildren(const struct view *v, uint64_t dir)
{
	const struct layout_dir *d;

	if (dir >= files_at(v))
		return 0;
	d = &v->layout->dirs[dir - v->ino_png];
	return d->nsub + 2 * (uint64_t)d->nfile;
}

static uint64_t
png_child(const struct view *v, uint64_t dir, uint64_t k)
{
	const struct layout *l = v->layout;
	const struct layout_dir *d;
	uint32_t di = (uint32_t)(dir - v->ino_png);

	if (k >= png_nchildren(v, dir))
		return 0;
	d = &l->dirs[di];
	if (k < d->nsub)
		return v->ino_png + l->subs[d->sub + k];
	k -= d->nsub;
	return files_at(v) + 2 * (uint64_t)layout_file(l, di, k / 2) + k % 2;
}

static size_t
png_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const struct layout_dir *d;
	uint64_t f;

	if (ino == v->ino_png) {
		memcpy(out, PNG_DIR, sizeof(PNG_DIR));
		return strlen(PNG_DIR);
	}
	if (ino < files_at(v)) {
		d = &v->layout->dirs[ino - v->ino_png];
		memcpy(out, d->name, d->name_len);
		out[d->name_len] = '\0';
		return d->name_len;
	}
	f = ino - files_at(v);
	return tensor_file_name(v, (uint32_t)(f / 2), (int)(f % 2), out);
}

static uint64_t
png_subdirs(const struct view *v, uint64_t ino)
{
	return ino < files_at(v) ? v->layout->dirs[ino - v->ino_png].nsub : 0;
}

/* --- content ----------------------------------------------------------- */

/* The tensor whose pictures file f (heatmap 2i, histogram 2i + 1) is,
 * the view that reads it and the note the pictures carry. */
static const struct model_tensor *
picture_of(const struct view *v, uint64_t f, const struct view **mv,
	   struct tensor_png_opts *o)
{
	const struct model_tensor *mt = view_dequant_mirror(v, f / 2, mv);

	memset(o, 0, sizeof(*o));
	o->px = v->opts.png_px;
	if (*mv != v)
		o->note = "the values of its quantized weight (.dequant/)";
	return mt;
}

/* A file's size: 0, or -ENOMEM when it cannot be known now (its texts,
 * or the .dequant/ its tensor may stand for, need memory): never a size
 * of 0 for a picture, which the kernel would keep. */
static int
png_prepare(const struct view *v, uint64_t ino, uint64_t *size)
{
	const struct model_tensor *mt;
	const struct view *mv;
	struct tensor_png_opts o;
	uint64_t f;

	*size = 0;
	if (ino < files_at(v))
		return 0;
	f = ino - files_at(v);
	mt = picture_of(v, f, &mv, &o);
	if (!mt)
		return -ENOMEM;
	*size = f % 2 ? tensor_png_hist_size(mt->t) :
		tensor_png_heat_size(mt->t, &o);
	return *size ? 0 : -ENOMEM;
}

static uint64_t
png_size(const struct view *v, uint64_t ino)
{
	uint64_t size;

	return png_prepare(v, ino, &size) ? 0 : size;
}

struct draw_at {
	const struct view *v;
	const struct model_tensor *mt;
	const struct memo_job *job;
};

static int
draw_fetch(void *arg, uint64_t off, size_t len, void *dst)
{
	struct draw_at *f = arg;

	/* between chunks: nobody waits for the picture any more */
	if (memo_job_abandoned(f->job))
		return -EINTR;
	return view_fetch(f->v, f->mt, off, len, dst);
}

static int
draw(void *arg, size_t f, struct buf *out, const struct memo_job *job)
{
	const struct view *v = arg;
	struct tensor_png_opts o;
	struct draw_at at;

	at.mt = picture_of(v, f, &at.v, &o);
	if (!at.mt)
		return -ENOMEM;
	at.job = job;
	return f % 2 ? tensor_png_hist(at.mt->t, &o, draw_fetch, &at, out) :
	       tensor_png_heat(at.mt->t, &o, draw_fetch, &at, out);
}

static int
png_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	 struct view_segs *out)
{
	struct buf b = BUF_INIT;
	uint64_t len, f;
	char *p;
	int rc;

	if (ino < files_at(v))
		return -EISDIR;
	rc = png_prepare(v, ino, &len);
	if (rc)
		return rc;
	if (off >= len || !size)
		return 0;
	if (size > len - off)
		size = (size_t)(len - off);
	f = ino - files_at(v);
	rc = memo_get_part(v->png->pictures, (size_t)f, draw, (void *)v,
			   (size_t)off, size, &b);
	if (!rc && b.len != size)
		rc = -EIO;	/* never: the size is fixed */
	if (!rc) {
		p = view_segs_render(out, size);
		if (p)
			memcpy(p, b.data, size);
		else
			rc = -ENOMEM;
	}
	buf_free(&b);
	return rc;
}

static int
png_is_volatile(const struct view *v, uint64_t ino)
{
	/* direct_io where opens reach stfs anyway (a remote model), as the
	 * .stats/ files: a first read draws from the whole tensor, and only
	 * the reader's own requests say when it leaves */
	if (!ino || ino < files_at(v))
		return 0;
	return view_stfs_dir.is_volatile(v, 0);
}

static void
png_for_source(const struct view *v, const struct source *src,
	       void (*fn)(uint64_t ino, void *arg), void *arg)
{
	size_t i;

	for (i = 0; i < v->model->ntensors; i++)
		if (v->model->shards[v->model->tensors[i].shard].src == src) {
			fn(files_at(v) + 2 * (uint64_t)i, arg);
			fn(files_at(v) + 2 * (uint64_t)i + 1, arg);
		}
}

/* Directory d's path from the root, each component and a '/'. */
static int
dir_path(const struct layout *l, uint32_t d, struct buf *out)
{
	const struct layout_dir *ld = &l->dirs[d];

	if (d == LAYOUT_ROOT)
		return 0;
	if (dir_path(l, ld->parent, out))
		return -1;
	return buf_add(out, ld->name, ld->name_len) || buf_adds(out, "/");
}

int
view_png_paths(const struct view *v, size_t i, struct buf *heat,
	       struct buf *hist, unsigned *w, unsigned *h, int *drawn)
{
	const struct layout *l = v->layout;
	const struct model_tensor *mt;
	const struct view *mv;
	struct tensor_png_opts o;
	char fn[NAME_MAX_LEN + 1];
	size_t n;

	if (!v->png)
		return -1;
	mt = picture_of(v, 2 * (uint64_t)i, &mv, &o);
	if (!mt)
		return -1;	/* .dequant/ not built: out of memory */
	tensor_png_heat_dims(mt->t, &o, w, h);
	*drawn = tensor_png_readable(mt->t);
	if (dir_path(l, l->leaves[i].dir, heat) ||
	    dir_path(l, l->leaves[i].dir, hist))
		return -1;
	n = tensor_file_name(v, (uint32_t)i, 0, fn);
	if (buf_add(heat, fn, n))
		return -1;
	n = tensor_file_name(v, (uint32_t)i, 1, fn);
	return buf_add(hist, fn, n) ? -1 : 0;
}

const struct view_hidden view_png_dir = {
	.dir = PNG_DIR,
	.build = png_build,
	.free = png_free,
	.root = png_root,
	.owns = png_owns,
	.kind = png_kind,
	.lookup = png_lookup,
	.nchildren = png_nchildren,
	.child = png_child,
	.name = png_name,
	.size = png_size,
	.read = png_read,
	.subdirs = png_subdirs,
	.prepare = png_prepare,
	.is_volatile = png_is_volatile,
	.for_source = png_for_source,
};
