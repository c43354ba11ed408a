/* tensor_render.c - tensors served as a rendering of their stored bytes
 * (see tensor_render.h). */
#include "model/tensor_render.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/dequant.h"
#include "format/table.h"
#include "format/tensor_size.h"

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
	if (t->strides) {
		out->kind = TENSOR_RENDER_GATHER;
		out->nbytes = tensor_size_bytes(t);
		return 0;
	}
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

/* A strided view's elements [e, e + n) in C order: where the first lies
 * (relative to the view's first stored element) and its multi-index. */
static uint64_t
gather_seek(const struct tensor *t, uint64_t e, uint64_t *idx)
{
	uint64_t pos = 0;
	uint32_t k;

	for (k = t->rank; k-- > 0;) {
		idx[k] = e % t->shape[k];
		e /= t->shape[k];
		pos += idx[k] * t->strides[k];
	}
	return pos;
}

/* The next element in C order: its stored position. */
static uint64_t
gather_next(const struct tensor *t, uint64_t *idx, uint64_t pos)
{
	uint32_t k = t->rank;

	while (k-- > 0) {
		pos += t->strides[k];
		if (++idx[k] < t->shape[k])
			return pos;
		pos -= idx[k] * t->strides[k];
		idx[k] = 0;
	}
	return pos;
}

/* Stored windows a gather may read for one output window before it
 * reads element runs instead: a transpose of up to 256 MiB is read in
 * 1 MiB pieces, each piece once per output window. */
#define GATHER_PASSES_MAX 256

/* Elements [e, e + n) gathered into dst: the stored run they span read
 * a window at a time (each window once, the outputs it holds copied),
 * or, when that run is more than GATHER_PASSES_MAX windows, each run of
 * consecutive stored elements read on its own. */
static int
gather_elements(const struct tensor *t, uint64_t e, size_t n, uint8_t *dst,
		uint8_t *win, tensor_render_read_fn read, void *arg)
{
	unsigned es = dtype_info(t->dtype)->bits / 8;
	uint64_t idx[64], idx0[64], pos, first, lo, hi, w0, w1;
	uint64_t wel = TENSOR_RENDER_WINDOW / es;
	size_t i, run;
	int rc;

	first = pos = gather_seek(t, e, idx);
	memcpy(idx0, idx, sizeof(idx[0]) * t->rank);
	lo = hi = pos;
	for (i = 1; i < n; i++) {
		pos = gather_next(t, idx, pos);
		lo = pos < lo ? pos : lo;
		hi = pos > hi ? pos : hi;
	}
	if ((hi - lo) / wel < GATHER_PASSES_MAX) {
		for (w0 = lo; w0 <= hi; w0 = w1) {
			w1 = hi + 1 - w0 < wel ? hi + 1 : w0 + wel;
			rc = read(arg, w0 * es, (size_t)((w1 - w0) * es), win);
			if (rc)
				return rc;
			memcpy(idx, idx0, sizeof(idx[0]) * t->rank);
			for (i = 0, pos = first; i < n; i++) {
				if (pos >= w0 && pos < w1)
					memcpy(dst + i * es, win + (pos - w0) *
					       es, es);
				pos = gather_next(t, idx, pos);
			}
		}
		return 0;
	}
	memcpy(idx, idx0, sizeof(idx[0]) * t->rank);
	for (i = 0, pos = first; i < n; i += run) {
		uint64_t start = pos;

		/* consecutive output elements stored back to back */
		for (run = 1, pos = gather_next(t, idx, pos);
		     i + run < n && pos == start + run &&
		     run * es < TENSOR_RENDER_WINDOW; run++)
			pos = gather_next(t, idx, pos);
		rc = read(arg, start * es, run * es, dst + i * es);
		if (rc)
			return rc;
	}
	return 0;
}

/* Bytes [off, off + len) of a strided view gathered in C order, in
 * windows of at most TENSOR_RENDER_WINDOW output bytes. */
static int
render_gather(const struct tensor *t, uint64_t off, size_t len,
	      uint8_t *dst, tensor_render_read_fn read, void *arg)
{
	unsigned es = dtype_info(t->dtype)->bits / 8;
	size_t step = TENSOR_RENDER_WINDOW / es;
	uint8_t *win = malloc(TENSOR_RENDER_WINDOW), *out = malloc(step * es);
	int rc = 0;

	if (!win || !out || t->rank > 64) {
		free(win);
		free(out);
		return t->rank > 64 ? -EINVAL : -ENOMEM;
	}
	while (rc == 0 && len) {
		uint64_t e = off / es, skip = off % es;
		size_t n = (size_t)((skip + len + es - 1) / es), k;

		if (n > step)
			n = step;
		rc = gather_elements(t, e, n, out, win, read, arg);
		k = n * es - (size_t)skip;
		if (k > len)
			k = len;
		if (rc == 0)
			memcpy(dst, out + skip, k);
		dst += k;
		off += k;
		len -= k;
	}
	free(win);
	free(out);
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
	case TENSOR_RENDER_GATHER:
		return render_gather(t, off, len, dst, read, arg);
	case TENSOR_RENDER_NONE:
		break;
	}
	return -EINVAL;
}
