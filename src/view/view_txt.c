/* view_txt.c - the .txt/ mirror view: the tensor's values as text, only
 * the elements a read covers rendered (txt.h). */
#include <errno.h>

#include "model/model.h"
#include "view/npy.h"
#include "view/txt.h"
#include "view/view.h"
#include "view/view_fetch.h"
#include "view/view_kinds.h"

static uint64_t
txt_file_size(const struct view *v, const struct model_tensor *mt)
{
	(void)v;
	return txt_size(mt->t);
}

static int
txt_file_read(const struct view *v, const struct model_tensor *mt,
	      uint64_t off, size_t len, struct view_segs *out)
{
	uint64_t so, sl;
	char *p;
	int rc;

	if (!npy_readable(mt->t))
		return -EOPNOTSUPP;	/* its sidecar's "decode" says why */
	/* [text | source bytes to render from] */
	txt_src_range(mt->t, off, len, &so, &sl);
	p = view_segs_render(out, len + (size_t)sl);
	if (!p)
		return -ENOMEM;
	rc = view_fetch(v, mt, so, (size_t)sl, p + len);
	if (rc)
		return rc;
	txt_render(mt->t, (const uint8_t *)p + len, off, len, p);
	view_segs_trim(out, len);
	return 0;
}

const struct view_mirror view_txt_mirror = {
	.dir = ".txt",
	.suffix = ".txt",
	.size = txt_file_size,
	.read = txt_file_read,
};
