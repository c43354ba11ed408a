/* view_npy.c - the .npy/ mirror view: an NPY header, then the tensor's
 * bytes (dtypes numpy has) or their float32 decoding (npy.h). */
#include <errno.h>
#include <string.h>

#include "base/buf.h"
#include "model/model.h"
#include "view/npy.h"
#include "view/view.h"
#include "view/view_fetch.h"
#include "view/view_kinds.h"

static uint64_t
npy_file_size(const struct view *v, const struct model_tensor *mt)
{
	(void)v;
	return npy_size(mt->t);
}

/* The header part and the data part of [off, off + len).  The data part
 * of a raw dtype is a range of the source, spliced like the tensor
 * itself; only a read that covers the header, or decoded data, is
 * rendered. */
static int
npy_file_read(const struct view *v, const struct model_tensor *mt,
	      uint64_t off, size_t len, struct view_segs *out)
{
	const struct tensor *t = mt->t;
	uint64_t hsize = npy_header_size(t), doff, so = 0, sl = 0;
	size_t hpart, dlen;
	char *p;
	int rc;

	if (!npy_readable(t))
		return -EOPNOTSUPP;	/* its sidecar's "decode" says why */
	hpart = off < hsize ? (size_t)(hsize - off) : 0;
	if (hpart > len)
		hpart = len;
	dlen = len - hpart;
	doff = off + hpart - hsize;
	if (hpart) {
		/* the whole header is rendered, its part kept */
		p = view_segs_render(out, (size_t)hsize);
		if (!p)
			return -ENOMEM;
		out->mem->len -= (size_t)hsize;
		if (npy_header(t, out->mem) != 0)
			return -ENOMEM;
		memmove(p, p + off, hpart);
		view_segs_trim(out, hpart);
	}
	if (dlen == 0)
		return 0;
	if (npy_is_raw(t->dtype) && t->strides) {
		/* a strided view: its elements gathered */
		p = view_segs_render(out, dlen);
		return p ? view_fetch(v, mt, doff, dlen, p) : -ENOMEM;
	}
	if (npy_is_raw(t->dtype)) {
		return view_segs_add_source(out,
					    v->model->shards[mt->shard].src,
					    model_tensor_offset(v->model, mt) +
					    doff, dlen);
	}
	/* [decoded data | source bytes to decode from] */
	npy_src_range(t, doff, dlen, &so, &sl);
	p = view_segs_render(out, dlen + (size_t)sl);
	if (!p)
		return -ENOMEM;
	rc = view_fetch(v, mt, so, (size_t)sl, p + dlen);
	if (rc)
		return rc;
	npy_decode(t, (const uint8_t *)p + dlen, doff, dlen, (uint8_t *)p);
	view_segs_trim(out, dlen);
	return 0;
}

const struct view_mirror view_npy_mirror = {
	.dir = ".npy",
	.suffix = ".npy",
	.size = npy_file_size,
	.read = npy_file_read,
};
