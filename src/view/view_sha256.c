/* view_sha256.c - the sha256 xattr's value, kept per tensor (view_sha256.h). */
#include "view/view_sha256.h"

#include <errno.h>

#include "base/buf.h"
#include "base/memo.h"
#include "model/model.h"
#include "source/source.h"
#include "view/tensor_sha256.h"
#include "view/view.h"
#include "view/view_fetch.h"

struct fetch_job {
	struct view_fetch_at fa;
	const struct memo_job *job;
};

static int
fetch(void *arg, uint64_t off, size_t len, void *dst)
{
	struct fetch_job *f = arg;

	/* between chunks: a reader who pressed Ctrl-C, and nobody else
	 * waiting for the value, ends the computation */
	if (memo_job_abandoned(f->job))
		return -EINTR;
	return view_fetch_at(&f->fa, off, len, dst);
}

static int
compute_sha256(void *arg, size_t i, struct buf *out,
	       const struct memo_job *job)
{
	const struct view *v = arg;
	const struct model_tensor *mt = &v->model->tensors[i];
	struct source *src = v->model->shards[mt->shard].src;
	char hex[TENSOR_SHA256_HEX_LEN + 1];
	struct fetch_job f = { { v, mt, NULL }, job };
	int rc;

	/* the tensor file's bytes: gathered for a strided view */
	rc = tensor_sha256_read(fetch, &f, model_tensor_nbytes(mt), hex);
	/* a change that raced with the reads shows now */
	if (!rc && source_verify(src) != 0)
		rc = -EIO;
	if (rc)
		return rc;
	return buf_add(out, hex, TENSOR_SHA256_HEX_LEN) ? -ENOMEM : 0;
}

int
view_sha256(const struct view *v, const struct model_tensor *mt,
	    struct buf *out)
{
	if (!v->memo_sha256)
		return -ENOMEM;
	return memo_get(v->memo_sha256, (size_t)(mt - v->model->tensors),
			compute_sha256, (void *)v, out);
}
