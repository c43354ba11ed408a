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

/* The dimension a gather reads along: the one whose stride is least
 * (a transpose's first), so that its lines are runs of the storage;
 * dimensions of size 1 or stride 0 (an expand) last, and the last
 * dimension when there is no other. */
static uint32_t
line_dim(const struct tensor *t)
{
	uint32_t k, d = t->rank - 1;

	for (k = 0; k < t->rank; k++)
		if (t->shape[k] > 1 && t->strides[k] &&
		    (t->shape[d] <= 1 || !t->strides[d] ||
		     t->strides[k] < t->strides[d]))
			d = k;
	return d;
}

/* Stored elements cnt of a line, from pos on at stride step, into out
 * (out_step elements apart): the span read a window at a time when the
 * stride is small, else element by element. */
static int
read_line(uint64_t pos, uint64_t step, uint64_t cnt, unsigned es, uint8_t *out,
	  uint64_t out_step, uint8_t *win, tensor_render_read_fn read,
	  void *arg)
{
	uint64_t wel = TENSOR_RENDER_WINDOW / es, per, i, k;
	int rc;

	if (!step || step > wel) {
		/* an expand repeats one element; a huge stride: each */
		for (i = 0; i < cnt; i++) {
			if (i == 0 || step) {
				rc = read(arg, (pos + i * step) * es, es, win);
				if (rc)
					return rc;
			}
			memcpy(out + i * out_step * es, win, es);
		}
		return 0;
	}
	per = (wel - 1) / step + 1;	/* elements per window */
	for (i = 0; i < cnt; i += per) {
		uint64_t m = cnt - i < per ? cnt - i : per;

		rc = read(arg, (pos + i * step) * es,
			  (size_t)(((m - 1) * step + 1) * es), win);
		if (rc)
			return rc;
		if (step == 1 && out_step == 1) {
			memcpy(out + i * es, win, (size_t)(m * es));
			continue;
		}
		for (k = 0; k < m; k++)
			memcpy(out + (i + k) * out_step * es,
			       win + k * step * es, es);
	}
	return 0;
}

/* Lines of one run of s (the dimensions after d) staged before they are
 * written out: a line's elements go inner elements apart in the output,
 * so writing each line alone touches a cache line per element (a
 * transpose of 4096 x 4096 float32: 16 Mi of them); staged, a block of
 * lines is written row by row, ng elements back to back.  Staged lines
 * of contiguous elements are read together, one read for the stored span
 * of several, when the gaps between them are small, in bytes (a read
 * costs microseconds, more in a busy VM, copying GATHER_GAP bytes of page
 * cache about as much) and next to the lines (no more than 4 times their
 * length: what the span reads is at most 5 times what is used). */
#define GATHER_STAGE (256u << 10)
#define GATHER_LINES 1024
#define GATHER_GAP (32u << 10)

struct lines {
	uint8_t *stage;		/* GATHER_STAGE bytes: line g at g * cnt */
	uint8_t *win;		/* TENSOR_RENDER_WINDOW bytes */
	uint64_t pos[GATHER_LINES];	/* stored element of each line's
					   first */
	uint64_t step;		/* stored elements between a line's */
	uint64_t out;		/* output element of line 0's first */
	uint64_t inner;		/* output elements between a line's */
	uint64_t cnt;		/* elements per line */
	uint64_t ng;		/* lines staged */
	unsigned es;
};

/* Read the staged lines into the stage: spans of several lines at once
 * where their gaps are small, else each line on its own. */
static int
lines_read(struct lines *l, tensor_render_read_fn read, void *arg)
{
	uint64_t es = l->es, len = l->cnt * es, wel = TENSOR_RENDER_WINDOW / es;
	uint64_t g, k, end;
	int rc;

	for (g = 0; g < l->ng; g = k) {
		/* lines g..k-1 in one span of at most a window */
		end = l->pos[g] + l->cnt;
		for (k = g + 1; l->step == 1 && k < l->ng &&
		     l->pos[k] >= end && (l->pos[k] - end) * es <= GATHER_GAP &&
		     l->pos[k] - end <= 4 * l->cnt &&
		     l->pos[k] + l->cnt - l->pos[g] <= wel; k++)
			end = l->pos[k] + l->cnt;
		if (k == g + 1) {
			rc = read_line(l->pos[g], l->step, l->cnt, l->es,
				       l->stage + g * len, 1, l->win, read,
				       arg);
			if (rc)
				return rc;
			continue;
		}
		rc = read(arg, l->pos[g] * es, (size_t)((end - l->pos[g]) * es),
			  l->win);
		if (rc)
			return rc;
		for (uint64_t j = g; j < k; j++)
			memcpy(l->stage + j * len, l->win + (l->pos[j] -
			       l->pos[g]) * es, (size_t)len);
	}
	return 0;
}

/* Output row o gets element i of staged lines g0..g1-1 (lines of cnt
 * elements of es bytes), at o[g]. */
static void
copy_column(uint8_t *o, const uint8_t *stage, unsigned es, uint64_t cnt,
	    uint64_t i, uint64_t g0, uint64_t g1)
{
	uint64_t g;

	/* memcpy of a constant size: one load and store each, at any
	 * alignment (a window's dst need not be aligned to es) */
	switch (es) {
	case 4:
		for (g = g0; g < g1; g++)
			memcpy(o + g * 4, stage + (g * cnt + i) * 4, 4);
		break;
	case 2:
		for (g = g0; g < g1; g++)
			memcpy(o + g * 2, stage + (g * cnt + i) * 2, 2);
		break;
	case 1:
		for (g = g0; g < g1; g++)
			o[g] = stage[g * cnt + i];
		break;
	default:
		for (g = g0; g < g1; g++)
			memcpy(o + g * es, stage + (g * cnt + i) * es, es);
		break;
	}
}

/* Read the staged lines and write them out (to dst, whose element 0 is
 * output element e) row by row; the stage is empty after. */
static int
lines_flush(struct lines *l, uint8_t *dst, uint64_t e,
	    tensor_render_read_fn read, void *arg)
{
	uint64_t i, i0, g0, ng = l->ng, cnt = l->cnt;
	int rc = lines_read(l, read, arg);

	l->ng = 0;
	if (rc)
		return rc;
	/* in blocks of 16 x 16 elements: a block's rows of the stage and
	 * of the output stay in the first-level cache while it is copied */
	for (i0 = 0; i0 < cnt; i0 += 16)
		for (g0 = 0; g0 < ng; g0 += 16) {
			uint64_t i1 = i0 + 16 < cnt ? i0 + 16 : cnt;
			uint64_t g1 = g0 + 16 < ng ? g0 + 16 : ng;

			for (i = i0; i < i1; i++) {
				uint8_t *o = dst + (l->out + i * l->inner - e) *
					     l->es;

				copy_column(o, l->stage, l->es, cnt, i, g0, g1);
			}
		}
	return 0;
}

/* A strided view's elements [e, e + n) gathered in C order into dst.
 * With d the dimension of the least stride, every element is (p, i, s):
 * p the index of the dimensions before d, i along d, s of those after
 * it.  For one (p, s) the window's elements form a run of i, stored at
 * one stride apart: one line, read at once (a transpose of 4096 x 4096
 * float32 gives 4096 lines a window, each its rows' run of a stored row,
 * where reading the window's stored span read it all), staged with the
 * lines of the next s and written out together (struct lines). */
static int
gather_elements(const struct tensor *t, uint64_t e, size_t n, uint8_t *dst,
		uint8_t *win, uint8_t *stage, tensor_render_read_fn read,
		void *arg)
{
	unsigned es = dtype_info(t->dtype)->bits / 8;
	uint32_t d = line_dim(t), k;
	uint64_t inner = 1, sd = t->shape[d], per_p, p, p0, p1;
	uint64_t sidx[64], sbase, pbase, lo, hi, s, ns, j, base, i0, i1, q;
	struct lines *l = malloc(sizeof(*l));
	int rc = 0;

	if (!l)
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	l->stage = stage;
	l->win = win;
	l->es = es;
	l->step = t->strides[d];

	for (k = d + 1; k < t->rank; k++)
		inner *= t->shape[k];
	l->inner = inner;
	per_p = sd * inner;
	p0 = e / per_p;
	p1 = (e + n - 1) / per_p;
	for (p = p0; p <= p1; p++) {
		/* the stored offset of p's indices */
		pbase = 0;
		q = p;
		for (k = d; k-- > 0;) {
			pbase += q % t->shape[k] * t->strides[k];
			q /= t->shape[k];
		}
		lo = e > p * per_p ? e : p * per_p;
		hi = e + n < (p + 1) * per_p ? e + n : (p + 1) * per_p;
		/* only the s that have elements in [lo, hi): all of them
		 * when it spans a row of i, else from lo's on (wrapping to
		 * the next i): at most n, however large inner is (a view
		 * [2, N] with strides [1, 2] has N of them) */
		ns = hi - lo < inner ? hi - lo : inner;
		s = hi - lo < inner ? (lo - p * per_p) % inner : 0;
		sbase = 0;
		for (k = t->rank, q = s; k-- > d + 1;) {
			sidx[k] = q % t->shape[k];
			q /= t->shape[k];
			sbase += sidx[k] * t->strides[k];
		}
		for (j = 0; j < ns; j++, s = s + 1 < inner ? s + 1 : 0) {
			base = p * per_p + s;
			i0 = lo <= base ? 0 : (lo - base + inner - 1) / inner;
			i1 = hi <= base ? 0 : (hi - base + inner - 1) / inner;
			if (i1 > sd)
				i1 = sd;
			/* a line that does not follow the staged ones */
			if (l->ng && (i1 - i0 != l->cnt ||
				      base + i0 * inner != l->out + l->ng ||
				      l->ng == GATHER_LINES ||
				      (l->ng + 1) * l->cnt * es > GATHER_STAGE))
				rc = lines_flush(l, dst, e, read, arg);
			if (rc == 0 && i0 < i1 && inner > 1 &&
			    (i1 - i0) * es <= GATHER_STAGE) {
				if (!l->ng) {
					l->out = base + i0 * inner;
					l->cnt = i1 - i0;
				}
				l->pos[l->ng++] = pbase + sbase + i0 *
						  t->strides[d];
			} else if (rc == 0 && i0 < i1) {
				rc = read_line(pbase + sbase + i0 *
					       t->strides[d], t->strides[d],
					       i1 - i0, es, dst + (base + i0 *
					       inner - e) * es, inner, win,
					       read, arg);
			}
			if (rc)
				goto out;
			/* the next s: an odometer over the dimensions after
			 * d */
			for (k = t->rank; k-- > d + 1;) {
				sbase += t->strides[k];
				if (++sidx[k] < t->shape[k])
					break;
				sbase -= sidx[k] * t->strides[k];
				sidx[k] = 0;
			}
		}
		if (l->ng && (rc = lines_flush(l, dst, e, read, arg)))
			goto out;
	}
out:
	free(l);
	return rc;
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
	uint8_t *stage = malloc(GATHER_STAGE);
	int rc = 0;

	if (!win || !out || !stage || t->rank > 64) {
		free(win);
		free(out);
		free(stage);
		return t->rank > 64 ? -EINVAL : -ENOMEM;
	}
	if (off % es == 0 && len % es == 0) {
		/* whole elements: gathered at once, a line per run of the
		 * storage however large the window */
		rc = gather_elements(t, off / es, len / es, dst, win, stage,
				     read, arg);
		len = 0;
	}
	while (rc == 0 && len) {
		uint64_t e = off / es, skip = off % es;
		size_t n = (size_t)((skip + len + es - 1) / es), k;

		if (n > step)
			n = step;
		rc = gather_elements(t, e, n, out, win, stage, read, arg);
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
	free(stage);
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
