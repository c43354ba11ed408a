/* view_html.c - the hidden .html/ directory (struct view_hidden,
 * view_kinds.h): the model as a page (html_page.h).
 *
 *   .html/index.html     the page: the model's table as data and the
 *                        script that shows it as a tree; its pictures
 *                        are ../.png/'s files
 *   .html/s/INDEX.js     "stfs_stats(INDEX, {...});": tensor INDEX's
 *                        .stats/ object, which the page loads as a script
 *                        when the tensor's row comes into view (a script
 *                        loads from file:// where fetch() may not)
 *
 * s/ lists nothing (its files are found by name only), so cp -r of
 * .html/ copies the page, not a computation over every tensor.  The page
 * is built from the table alone on its first use (a stat, a read) and
 * kept: no weight is read for it.  A view without .png/ has no .html/.
 *
 * Inodes: ino_html is .html/, + 1 index.html, + 2 s/, + 3 + i tensor i's
 * statistics script.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/dtype.h"
#include "model/model.h"
#include "view/html_page.h"
#include "view/view.h"
#include "view/view_kinds.h"
#include "view/view_png.h"

#define HTML_DIR ".html"
#define INDEX_NAME "index.html"
#define STATS_DIR "s"

struct view_html {
	pthread_mutex_t lock;	/* taken to build the page, once */
	int built;		/* atomic: page is final */
	struct buf page;	/* the page, once built */
};

enum { AT_DIR, AT_INDEX, AT_STATS_DIR, AT_FIRST_STATS };

static int
html_build(struct view *v, struct err *e)
{
	struct view_html *h;

	if (!v->png || v->ninodes + AT_FIRST_STATS + v->model->ntensors >=
	    UINT32_MAX - 2)
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	pthread_mutex_init(&h->lock, NULL);
	v->html = h;
	v->ino_html = v->ninodes + 1;
	v->ninodes = v->ino_html + AT_FIRST_STATS - 1 +
		     (uint64_t)v->model->ntensors;
	return 0;
}

static void
html_free(struct view *v)
{
	if (!v->html)
		return;
	buf_free(&v->html->page);
	pthread_mutex_destroy(&v->html->lock);
	free(v->html);
	v->html = NULL;
}

static uint64_t
html_root(const struct view *v)
{
	return v->html ? v->ino_html : 0;
}

static int
html_owns(const struct view *v, uint64_t ino)
{
	return v->html && ino >= v->ino_html &&
	       ino < v->ino_html + AT_FIRST_STATS + v->model->ntensors;
}

static enum view_kind
html_kind(const struct view *v, uint64_t ino)
{
	uint64_t k = ino - v->ino_html;

	return k == AT_DIR || k == AT_STATS_DIR ? VIEW_DIR : VIEW_HIDDEN_FILE;
}

/* --- the page ---------------------------------------------------------- */

static int
make_page(const struct view *v, struct buf *b)
{
	const struct model *m = v->model;
	struct buf heat = BUF_INIT, hist = BUF_INIT;
	struct html_page_tensor t;
	size_t i;
	int rc;

	rc = html_page_begin(b, m->arg ? m->arg : "", m->arg ?
			     strlen(m->arg) : 0);
	for (i = 0; i < m->ntensors && !rc; i++) {
		const struct tensor *x = m->tensors[i].t;

		heat.len = hist.len = 0;
		memset(&t, 0, sizeof(t));
		if (view_png_paths(v, i, &heat, &hist, &t.w, &t.h, &t.drawn)) {
			rc = -1;
			break;
		}
		t.name = x->name;
		t.name_len = x->name_len;
		t.dtype = dtype_info(x->dtype)->name;
		t.shape = x->shape;
		t.rank = x->rank;
		t.nbytes = model_tensor_nbytes(&m->tensors[i]);
		t.numel = x->numel;
		t.heat = heat.data;
		t.heat_len = heat.len;
		t.hist = hist.data;
		t.hist_len = hist.len;
		rc = html_page_tensor(b, &t, i == 0);
	}
	buf_free(&heat);
	buf_free(&hist);
	return rc || html_page_end(b) ? -1 : 0;
}

/* The page, built once; NULL when out of memory (nothing kept: the next
 * call tries again). */
static const struct buf *
page(const struct view *v)
{
	struct view_html *h = v->html;

	if (!__atomic_load_n(&h->built, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&h->lock);
		if (!h->built) {
			if (make_page(v, &h->page))
				buf_free(&h->page);
			else
				__atomic_store_n(&h->built, 1,
						 __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&h->lock);
	}
	return __atomic_load_n(&h->built, __ATOMIC_ACQUIRE) ? &h->page : NULL;
}

/* --- names ------------------------------------------------------------- */

static uint64_t
html_lookup(const struct view *v, uint64_t parent, const char *name,
	    size_t len)
{
	uint64_t k = parent - v->ino_html, i = 0;
	size_t j;

	if (k == AT_DIR) {
		if (len == strlen(INDEX_NAME) && !memcmp(name, INDEX_NAME, len))
			return v->ino_html + AT_INDEX;
		if (len == strlen(STATS_DIR) && !memcmp(name, STATS_DIR, len))
			return v->ino_html + AT_STATS_DIR;
		return 0;
	}
	if (k != AT_STATS_DIR || len < 4 || len > 23 ||
	    memcmp(name + len - 3, ".js", 3) || (name[0] == '0' && len > 4))
		return 0;
	for (j = 0; j + 3 < len; j++) {
		if (name[j] < '0' || name[j] > '9')
			return 0;
		i = i * 10 + (uint64_t)(name[j] - '0');
	}
	return i < v->model->ntensors ? v->ino_html + AT_FIRST_STATS + i : 0;
}

static uint64_t
html_nchildren(const struct view *v, uint64_t dir)
{
	return dir == v->ino_html ? 2 : 0;	/* s/ lists nothing */
}

static uint64_t
html_child(const struct view *v, uint64_t dir, uint64_t k)
{
	if (dir != v->ino_html || k >= 2)
		return 0;
	return v->ino_html + (k ? AT_STATS_DIR : AT_INDEX);
}

static size_t
html_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	uint64_t k = ino - v->ino_html;
	const char *s = k == AT_DIR ? HTML_DIR : k == AT_INDEX ? INDEX_NAME :
			k == AT_STATS_DIR ? STATS_DIR : NULL;

	if (s) {
		memcpy(out, s, strlen(s) + 1);
		return strlen(s);
	}
	return (size_t)snprintf(out, VIEW_NAME_MAX + 1, "%llu.js",
				(unsigned long long)(k - AT_FIRST_STATS));
}

static uint64_t
html_subdirs(const struct view *v, uint64_t ino)
{
	return ino == v->ino_html ? 1 : 0;
}

/* --- statistics scripts ------------------------------------------------ */

/* "stfs_stats(" INDEX "," */
static size_t
stats_head(uint64_t i, char out[48])
{
	return (size_t)snprintf(out, 48, "%s%llu,", HTML_PAGE_STATS_HEAD,
				(unsigned long long)i);
}

/* 0 when .dequant/, which the tensor may stand for, cannot be built now
 * (out of memory) */
static uint64_t
stats_size(const struct view *v, uint64_t i)
{
	const struct view *mv;
	const struct model_tensor *mt = view_dequant_mirror(v, i, &mv);
	char head[48];

	if (!mt)
		return 0;
	return stats_head(i, head) + view_stats_mirror.size(mv, mt) +
	       strlen(HTML_PAGE_STATS_TAIL);
}

/* stat(): a file's size, which may need the page built or .dequant/;
 * 0, or -ENOMEM (never a size of 0 for a file that is not empty). */
static int
html_prepare(const struct view *v, uint64_t ino, uint64_t *size)
{
	uint64_t k = ino - v->ino_html;
	const struct buf *p;

	*size = 0;
	if (k == AT_INDEX) {
		if (!(p = page(v)))
			return -ENOMEM;
		*size = p->len;
	} else if (k >= AT_FIRST_STATS) {
		*size = stats_size(v, k - AT_FIRST_STATS);
		if (!*size)
			return -ENOMEM;
	}
	return 0;
}

static uint64_t
html_size(const struct view *v, uint64_t ino)
{
	uint64_t size;

	return html_prepare(v, ino, &size) ? 0 : size;
}

/* Tensor i's script: head, the .stats/ file, tail. */
static int
stats_read(const struct view *v, uint64_t i, uint64_t off, size_t size,
	   struct view_segs *out)
{
	const struct view *mv;
	const struct model_tensor *mt = view_dequant_mirror(v, i, &mv);
	struct view_segs js = VIEW_SEGS_INIT;
	struct buf all = BUF_INIT;
	char head[48];
	size_t hl = stats_head(i, head);
	uint64_t jlen;
	int rc;

	if (!mt)
		return -ENOMEM;		/* .dequant/ not built */
	jlen = view_stats_mirror.size(mv, mt);
	rc = view_stats_mirror.read(mv, mt, 0, (size_t)jlen, &js);
	if (!rc && (!js.mem || js.mem->len < jlen))
		rc = -EIO;
	if (!rc && (buf_add(&all, head, hl) ||
		    buf_add(&all, js.mem->data + js.mem->len - jlen,
			    (size_t)jlen) ||
		    buf_adds(&all, HTML_PAGE_STATS_TAIL)))
		rc = -ENOMEM;
	if (!rc)
		rc = view_segs_add_copy(out, all.data, all.len, off, size);
	view_segs_free(&js);
	buf_free(&all);
	return rc;
}

static int
html_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	  struct view_segs *out)
{
	uint64_t k = ino - v->ino_html;
	const struct buf *p;

	if (k == AT_DIR || k == AT_STATS_DIR)
		return -EISDIR;
	if (k >= AT_FIRST_STATS)
		return stats_read(v, k - AT_FIRST_STATS, off, size, out);
	p = page(v);
	if (!p)
		return -ENOMEM;
	return view_segs_add_copy(out, p->data, p->len, off, size);
}

static int
html_is_volatile(const struct view *v, uint64_t ino)
{
	/* a statistics script computes over its tensor: as .stats/ */
	if (!ino || ino - v->ino_html < AT_FIRST_STATS)
		return 0;
	return view_stfs_dir.is_volatile(v, 0);
}

const struct view_hidden view_html_dir = {
	.dir = HTML_DIR,
	.build = html_build,
	.free = html_free,
	.root = html_root,
	.owns = html_owns,
	.kind = html_kind,
	.lookup = html_lookup,
	.nchildren = html_nchildren,
	.child = html_child,
	.name = html_name,
	.size = html_size,
	.read = html_read,
	.subdirs = html_subdirs,
	.prepare = html_prepare,
	.is_volatile = html_is_volatile,
};
