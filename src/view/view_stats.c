/* view_stats.c - the .stats/ mirror view: per tensor a JSON object of
 * statistics over its decoded values (tensor_stats.h), computed on the first
 * read of the file, kept for the mount's life (memo.h: concurrent first
 * readers wait for one computation).  Every file has a fixed size, the
 * widest the object can be, padded with spaces, so stat and listing cost
 * nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/memo.h"
#include "model/model.h"
#include "view/tensor_stats.h"
#include "view/view.h"
#include "view/view_fetch.h"
#include "view/view_kinds.h"

struct fetch_at {
	const struct view *v;
	const struct model_tensor *mt;
	const struct memo_job *job;
};

static int
fetch(void *arg, uint64_t off, size_t len, void *dst)
{
	struct fetch_at *f = arg;

	/* between chunks: a reader who pressed Ctrl-C, and nobody else
	 * waiting for the value, ends the computation */
	if (memo_job_abandoned(f->job))
		return -EINTR;
	return view_fetch(f->v, f->mt, off, len, dst);
}

static int
compute_stats(void *arg, size_t i, struct buf *out,
	      const struct memo_job *job)
{
	const struct view *v = arg;
	struct fetch_at f = { v, &v->model->tensors[i], job };
	const struct tensor *t = f.mt->t;
	struct tensor_stats s;
	size_t len;
	char *text;
	int rc;

	rc = tensor_stats_compute(t, fetch, &f, &s, NULL, NULL);
	if (rc)
		return rc;
	text = tensor_stats_json_padded(&s, t->name, t->name_len, &len);
	if (!text)
		return -ENOMEM;
	rc = buf_add(out, text, len) ? -ENOMEM : 0;
	free(text);
	return rc;
}

static uint64_t
stats_file_size(const struct view *v, const struct model_tensor *mt)
{
	(void)v;
	return tensor_stats_json_size(mt->t->name, mt->t->name_len);
}

static int
stats_file_read(const struct view *v, const struct model_tensor *mt,
		uint64_t off, size_t len, struct view_segs *out)
{
	struct buf b = BUF_INIT;
	char *p;
	int rc;

	if (!v->memo_stats)
		return -ENOMEM;
	rc = memo_get(v->memo_stats, (size_t)(mt - v->model->tensors),
		      compute_stats, (void *)v, &b);
	if (!rc && off + len > b.len)
		rc = -EIO;	/* cannot happen: the size is fixed */
	if (!rc) {
		p = view_segs_render(out, len);
		if (p)
			memcpy(p, b.data + off, len);
		else
			rc = -ENOMEM;
	}
	buf_free(&b);
	return rc;
}

const struct view_mirror view_stats_mirror = {
	.dir = ".stats",
	.suffix = ".json",
	.size = stats_file_size,
	.read = stats_file_read,
	.direct = 1,
};
