/* view_repack.c - a virtual safetensors file as segments (view_repack.h). */
#include "view/view_repack.h"

#include <errno.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "model/repack.h"
#include "model/tensor_render.h"
#include "view/view.h"
#include "view/view_fetch.h"

int
view_repack_read(const struct view *v, struct repack *t, size_t id,
		 int strip, uint64_t off, size_t size, struct view_segs *out)
{
	const struct model *m = repack_model(t);	/* not v's: bf16/ */
	struct err e = { 0 };
	struct repack_file *f;
	struct repack_seg segs[16];
	uint64_t done = 0, len;
	int rc = 0;

	if (repack_size(t, id, strip, &len, &e))
		return e.code == ERR_NO_MEMORY ? -ENOMEM : -ENOENT;
	if (off >= len || size == 0)
		return 0;
	if (size > len - off)
		size = (size_t)(len - off);
	if (repack_file_get(t, id, strip, &f, &e))
		return e.code == ERR_NO_MEMORY ? -ENOMEM : -EIO;
	while (rc == 0 && done < size) {
		uint64_t covered;
		size_t k, i;

		k = repack_file_map(f, off + done, size - done, segs, 16,
				    &covered);
		if (k == 0)
			break;
		for (i = 0; rc == 0 && i < k; i++) {
			char *dst;

			if (segs[i].render) {
				/* a tensor served as a rendering of its
				 * bytes: rendered for this window only */
				struct view_fetch_at fa = { v, segs[i].render,
							    m };

				dst = view_segs_render(out,
						       (size_t)segs[i].len);
				rc = dst ? tensor_render_read(
						segs[i].render->t, segs[i].off,
						(size_t)segs[i].len, dst,
						view_fetch_stored_at, &fa) :
				     -ENOMEM;
				continue;
			}
			if (!segs[i].mem) {
				rc = view_segs_add_source(out,
					m->shards[segs[i].shard].src,
					segs[i].off, (size_t)segs[i].len);
				continue;
			}
			/* The header lives in the repack cache, which may drop
			 * it once put: the reply gets a copy. */
			dst = view_segs_render(out, (size_t)segs[i].len);
			if (!dst)
				rc = -ENOMEM;
			else
				memcpy(dst, segs[i].mem, (size_t)segs[i].len);
		}
		done += covered;
	}
	repack_file_put(t, f);
	return rc;
}
