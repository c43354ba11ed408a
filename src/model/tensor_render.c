/* tensor_render.c - tensors served as a rendering of their stored bytes
 * (see tensor_render.h). */
#include "model/tensor_render.h"

#include <errno.h>
#include <stdlib.h>

#include "base/error.h"
#include "format/dequant.h"
#include "format/table.h"

/* 1 when safetensors has dtype d. */
static int
safetensors_has(enum dtype d)
{
	return (unsigned)d < DTYPE_SAFETENSORS_COUNT;
}

int
tensor_render_of(const struct tensor *t, struct tensor_render *out,
		 struct err *e)
{
	uint64_t stored = t->end - t->begin, blk;

	out->kind = TENSOR_RENDER_NONE;
	out->dtype = t->dtype;
	out->nbytes = stored;
	if (safetensors_has(t->dtype))
		return 0;
	if (!dequant_has(t->dtype))
		return err_set(e, ERR_USAGE, "tensor `%s`: stfs does not "
			       "decode %s, and safetensors has no such dtype",
			       t->name, dtype_info(t->dtype)->name);
	blk = dequant_block(t->dtype);
	if (t->numel % blk || stored / dequant_block_bytes(t->dtype) !=
	    t->numel / blk || stored % dequant_block_bytes(t->dtype))
		return err_set(e, ERR_USAGE, "tensor `%s`: %llu bytes are not "
			       "the %llu blocks of %llu elements", t->name,
			       (unsigned long long)stored,
			       (unsigned long long)(t->numel / blk),
			       (unsigned long long)t->numel);
	out->kind = TENSOR_RENDER_DEQUANT;
	out->dtype = DTYPE_F32;
	out->nbytes = t->numel * 4;
	return 0;
}

/* Windows of the float32 output whose blocks take at most about
 * TENSOR_RENDER_WINDOW stored bytes. */
static int
render_dequant(const struct tensor *t, uint64_t off, size_t len,
	       uint8_t *dst, tensor_render_read_fn read, void *arg)
{
	enum dtype d = t->dtype;
	uint64_t bb = dequant_block_bytes(d), bout = 4 * dequant_block(d);
	uint64_t step = (TENSOR_RENDER_WINDOW / bb) * bout;
	uint8_t *src;
	int rc = 0;

	if (step > len)
		step = len;
	/* a window of step bytes touches at most step / bout + 2 blocks */
	src = malloc((size_t)((step / bout + 2) * bb));
	if (!src)
		return -ENOMEM;
	while (rc == 0 && len) {
		size_t n = len < step ? len : (size_t)step;
		uint64_t so, sl;

		dequant_src_range(d, off, n, &so, &sl);
		rc = read(arg, so, (size_t)sl, src);
		if (rc)
			break;
		dequant_window(d, src, off, n, dst);
		dst += n;
		off += n;
		len -= n;
	}
	free(src);
	return rc;
}

int
tensor_render_read(const struct tensor *t, uint64_t off, size_t len,
		   void *dst, tensor_render_read_fn read, void *arg)
{
	struct tensor_render r;
	struct err e = { 0 };

	if (tensor_render_of(t, &r, &e))
		return -EINVAL;
	if (off >= r.nbytes || len == 0)
		return 0;
	if (len > r.nbytes - off)
		len = (size_t)(r.nbytes - off);
	switch (r.kind) {
	case TENSOR_RENDER_DEQUANT:
		return render_dequant(t, off, len, dst, read, arg);
	case TENSOR_RENDER_NONE:
		break;
	}
	return -EINVAL;
}
