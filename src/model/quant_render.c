/* quant_render.c - tiles of logical tensors from their parts (see
 * quant_render.h). */
#include "model/quant_render.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/dtype.h"
#include "format/quant/bnb4.h"
#include "format/quant/fp8_scaled.h"
#include "format/quant/int_packed.h"
#include "format/quant/mxfp4_hf.h"
#include "format/quant/nvfp4_st.h"
#include "format/quant/torch_affine.h"
#include "model/model.h"
#include "model/quant.h"

/* --- tiles ------------------------------------------------------------- */

void
quant_render_tiling(const struct quant_weight *w, struct quant_tiling *g)
{
	uint64_t align = 1, outer = 1, tile = QUANT_RENDER_TILE;

	switch (w->scheme) {
	case QUANT_FP8:
		g->unit = 1;
		g->per_outer = w->numel;
		break;
	case QUANT_MXFP4:
		g->unit = w->u.mx.rows;
		g->per_outer = w->u.mx.groups * MXFP4_HF_BLOCK;
		outer = w->u.mx.experts;
		align = MXFP4_HF_BLOCK;
		tile = QUANT_RENDER_TILE_T;
		break;
	case QUANT_GPTQ:
	case QUANT_AWQ:
	case QUANT_CT_INT:
		g->unit = w->u.ip.in;
		g->per_outer = w->u.ip.out;
		align = INT_PACKED_ALIGN;
		tile = QUANT_RENDER_TILE_T;
		break;
	case QUANT_TORCH:
		g->unit = 1;
		g->per_outer = w->numel;
		break;
	case QUANT_BNB4:
	case QUANT_NVFP4:
		g->unit = 1;
		g->per_outer = w->numel;
		align = 2;	/* whole bytes of codes */
		break;
	}
	if (g->unit == 0)
		g->unit = 1;
	g->k = tile / g->unit / align * align;
	if (g->k < align)
		g->k = align;
	g->tiles_per_outer = (g->per_outer + g->k - 1) / g->k;
	g->ntiles = g->tiles_per_outer * outer;
}

/* Units [*u0, *u1) of outer block *o that tile t holds. */
static void
tile_units(const struct quant_tiling *g, uint64_t t, uint64_t *o,
	   uint64_t *u0, uint64_t *u1)
{
	*o = t / g->tiles_per_outer;
	*u0 = t % g->tiles_per_outer * g->k;
	*u1 = *u0 + g->k < g->per_outer ? *u0 + g->k : g->per_outer;
}

void
quant_render_range(const struct quant_tiling *g, uint64_t t, uint64_t *e0,
		   uint64_t *e1)
{
	uint64_t o, u0, u1, base;

	tile_units(g, t, &o, &u0, &u1);
	base = o * g->per_outer * g->unit;
	*e0 = base + u0 * g->unit;
	*e1 = base + u1 * g->unit;
}

uint64_t
quant_render_tile_of(const struct quant_tiling *g, uint64_t e)
{
	uint64_t per = g->per_outer * g->unit;

	return e / per * g->tiles_per_outer + e % per / g->unit / g->k;
}

/* --- reading parts ------------------------------------------------------ */

struct parts {
	const struct model *m;
	const struct quant_weight *w;
};

/* Bytes [off, off + len) of part k. */
static int
part_read(const struct parts *p, unsigned k, uint64_t off, size_t len,
	  void *dst)
{
	return model_tensor_read(p->m, &p->m->tensors[p->w->part[k]], off, len,
				 dst);
}

/* count rows of len bytes, row r at off + r * stride of part k, into dst
 * back to back: one read when they touch, the span that holds them when
 * its gaps cost less than one read per row (a read costs microseconds,
 * copying a page-cached byte a fraction of a nanosecond), else a read per
 * row. */
static int
part_rows(const struct parts *p, unsigned k, uint64_t off, uint64_t stride,
	  size_t len, uint64_t count, uint8_t *dst)
{
	uint64_t r, n, per;
	uint8_t *span;
	int rc = 0;

	if (count == 0 || len == 0)
		return 0;
	if (stride == len || count == 1)
		return part_read(p, k, off, (size_t)(len * count), dst);
	if (stride - len > QUANT_RENDER_GAP || stride > QUANT_RENDER_SPAN) {
		for (r = 0; rc == 0 && r < count; r++)
			rc = part_read(p, k, off + r * stride, len,
				       dst + r * len);
		return rc;
	}
	per = QUANT_RENDER_SPAN / stride;
	span = malloc((size_t)(per * stride));
	if (!span)
		return -ENOMEM;
	for (r = 0; rc == 0 && r < count; r += n) {
		uint64_t i;

		n = count - r < per ? count - r : per;
		rc = part_read(p, k, off + r * stride,
			       (size_t)((n - 1) * stride + len), span);
		for (i = 0; rc == 0 && i < n; i++)
			memcpy(dst + (r + i) * len, span + i * stride, len);
	}
	free(span);
	return rc;
}

/* n float32 values read from a little-endian file, in host order. */
static void
host_floats(float *a, uint64_t n)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	uint64_t i;
	uint32_t b;

	for (i = 0; i < n; i++) {
		memcpy(&b, &a[i], 4);
		b = __builtin_bswap32(b);
		memcpy(&a[i], &b, 4);
	}
#else
	(void)a;
	(void)n;
#endif
}

static unsigned
elem_size(const struct parts *p, unsigned k)
{
	return dtype_info(p->m->tensors[p->w->part[k]].t->dtype)->bits / 8;
}

/* --- one tile per scheme -------------------------------------------------- */

static int
fp8_tile(const struct parts *p, uint64_t e0, uint64_t e1, float *out)
{
	const struct fp8_scaled *f = &p->w->u.fp8;
	uint64_t gcols = fp8_scaled_grid_cols(f);
	uint64_t g0 = fp8_scaled_grid_row(f, e0 / f->cols);
	uint64_t g1 = fp8_scaled_grid_row(f, (e1 - 1) / f->cols) + 1;
	unsigned sz = elem_size(p, 1);
	uint8_t *w = malloc((size_t)(e1 - e0));
	uint8_t *s = malloc((size_t)((g1 - g0) * gcols * sz + 1));
	int rc = -ENOMEM;

	if (w && s) {
		rc = part_read(p, 0, e0, (size_t)(e1 - e0), w);
		if (!rc)
			rc = part_read(p, 1, g0 * gcols * sz,
				       (size_t)((g1 - g0) * gcols * sz), s);
		if (!rc)
			fp8_scaled_range(f, w, s, e0, e1, out);
	}
	free(w);
	free(s);
	return rc;
}

static int
mxfp4_tile(const struct parts *p, uint64_t e, uint64_t c0, uint64_t c1,
	   float *out)
{
	uint64_t R = p->w->u.mx.rows, G = p->w->u.mx.groups;
	uint64_t b0 = c0 / MXFP4_HF_BLOCK, nb = (c1 - c0) / MXFP4_HF_BLOCK;
	uint64_t first = e * R * G + b0;
	uint8_t *blk = malloc((size_t)(R * nb * MXFP4_HF_BLOCK_BYTES + 1));
	uint8_t *sc = malloc((size_t)(R * nb + 1));
	float *pow2 = malloc((size_t)(R + 1) * sizeof(*pow2));
	int rc = -ENOMEM;

	if (blk && sc && pow2) {
		rc = part_rows(p, 0, first * MXFP4_HF_BLOCK_BYTES,
			       G * MXFP4_HF_BLOCK_BYTES,
			       (size_t)(nb * MXFP4_HF_BLOCK_BYTES), R, blk);
		if (!rc)
			rc = part_rows(p, 1, first, G, (size_t)nb, R, sc);
		if (!rc)
			mxfp4_hf_rows(blk, sc, R, c0, c1, pow2, out);
	}
	free(blk);
	free(sc);
	free(pow2);
	return rc;
}

/* The rows [o0, o1) of an integer weight from its parts read so far
 * (rc: 0, or the first failure; qz NULL when symmetric), its g_idx read
 * here when it has one; frees qw, qz and sc.  0 or -errno. */
static int
int_rows(const struct parts *p, int rc, uint8_t *qw, uint8_t *qz,
	 uint8_t *sc, uint64_t o0, uint64_t o1, float *out)
{
	const struct int_packed *ip = &p->w->u.ip;
	uint8_t *gi = NULL;

	if (!rc && p->w->part[3] != QUANT_ABSENT) {
		gi = malloc((size_t)(ip->in * 4 + 1));
		rc = gi ? part_read(p, 3, 0, (size_t)(ip->in * 4), gi) :
		     -ENOMEM;
	}
	if (!rc) {
		rc = int_packed_rows(ip, qw, qz, sc, gi, o0, o1, out);
		rc = rc == -2 ? -ENOMEM : rc ? -EINVAL : 0;
	}
	free(qw);
	free(qz);
	free(sc);
	free(gi);
	return rc;
}

/* GPTQ's and AWQ's rows [o0, o1): a band of every part's rows. */
static int
int_tile(const struct parts *p, uint64_t o0, uint64_t o1, float *out)
{
	const struct int_packed *ip = &p->w->u.ip;
	uint64_t qrows, qcols, zcols, qfirst, qn, zfirst, zn;
	unsigned sz = elem_size(p, 2);
	uint8_t *qw, *qz, *sc;
	int rc;

	int_packed_shapes(ip, &qrows, &qcols, &zcols);
	int_packed_band_words(ip, o0, o1, &qfirst, &qn, &zfirst, &zn);
	qw = malloc((size_t)(qrows * qn * 4 + 1));
	qz = malloc((size_t)(ip->groups * zn * 4 + 1));
	sc = malloc((size_t)(ip->groups * (o1 - o0) * sz + 1));
	rc = qw && qz && sc ? 0 : -ENOMEM;
	if (!rc)
		rc = part_rows(p, 0, qfirst * 4, qcols * 4, (size_t)(qn * 4),
			       qrows, qw);
	if (!rc)
		rc = part_rows(p, 1, zfirst * 4, zcols * 4, (size_t)(zn * 4),
			       ip->groups, qz);
	if (!rc)
		rc = part_rows(p, 2, o0 * sz, ip->out * sz,
			       (size_t)((o1 - o0) * sz), ip->groups, sc);
	return int_rows(p, rc, qw, qz, sc, o0, o1, out);
}

/* compressed-tensors' rows [o0, o1): each part's rows are contiguous. */
static int
ct_tile(const struct parts *p, uint64_t o0, uint64_t o1, float *out)
{
	const struct int_packed *ip = &p->w->u.ip;
	uint64_t qfirst, qn, zfirst, zn;
	unsigned sz = elem_size(p, 2);
	uint8_t *qw, *qz = NULL, *sc;
	int rc;

	int_packed_band_words(ip, o0, o1, &qfirst, &qn, &zfirst, &zn);
	qw = malloc((size_t)(qn * 4 + 1));
	sc = malloc((size_t)(ip->groups * (o1 - o0) * sz + 1));
	if (!ip->symmetric)
		qz = malloc((size_t)(ip->groups * zn * 4 + 1));
	rc = qw && sc && (ip->symmetric || qz) ? 0 : -ENOMEM;
	if (!rc)
		rc = part_read(p, 0, qfirst * 4, (size_t)(qn * 4), qw);
	if (!rc && qz)
		rc = part_read(p, 1, zfirst * ip->groups * 4,
			       (size_t)(zn * ip->groups * 4), qz);
	if (!rc)
		rc = part_read(p, 2, o0 * ip->groups * sz,
			       (size_t)((o1 - o0) * ip->groups * sz), sc);
	return int_rows(p, rc, qw, qz, sc, o0, o1, out);
}

/* absmax of blocks [b0, b1), dequantized when nested. */
static int
bnb_absmax(const struct parts *p, uint64_t b0, uint64_t b1, float *out)
{
	const struct quant_weight *w = p->w;
	uint64_t nbs = w->u.bnb.nested_blocksize, n0, n1;
	float code[256], *nab;
	uint8_t *q;
	int rc;

	if (!w->u.bnb.nested) {
		rc = part_read(p, 1, b0 * 4, (size_t)((b1 - b0) * 4), out);
		host_floats(out, b1 - b0);
		return rc;
	}
	n0 = b0 / nbs;
	n1 = (b1 - 1) / nbs + 1;
	q = malloc((size_t)(b1 - b0));
	nab = malloc((size_t)(n1 - n0) * sizeof(*nab));
	rc = q && nab ? 0 : -ENOMEM;
	if (!rc)
		rc = part_read(p, 1, b0, (size_t)(b1 - b0), q);
	if (!rc)
		rc = part_read(p, 4, n0 * 4, (size_t)((n1 - n0) * 4), nab);
	if (!rc)
		rc = part_read(p, 5, 0, sizeof(code), code);
	if (!rc) {
		host_floats(nab, n1 - n0);
		host_floats(code, 256);
	}
	if (!rc)
		bnb4_absmax(code, q, nab, nbs, w->u.bnb.offset, b0, b1, out);
	free(q);
	free(nab);
	return rc;
}

static int
bnb_tile(const struct parts *p, uint64_t e0, uint64_t e1, float *out)
{
	uint64_t bs = p->w->u.bnb.blocksize, b0 = e0 / bs, b1 = (e1 - 1) / bs + 1;
	uint8_t *pk = malloc((size_t)((e1 - e0 + 1) / 2));
	float *am = malloc((size_t)(b1 - b0) * sizeof(*am)), code[16];
	int rc = pk && am ? 0 : -ENOMEM;

	if (!rc)
		rc = part_read(p, 0, e0 / 2, (size_t)((e1 - e0 + 1) / 2), pk);
	if (!rc)
		rc = bnb_absmax(p, b0, b1, am);
	if (!rc)
		rc = part_read(p, 2, 0, sizeof(code), code);
	if (!rc) {
		host_floats(code, 16);
		bnb4_run(code, pk, am, bs, e0, e1, out);
	}
	free(pk);
	free(am);
	return rc;
}

static int
nvfp4_tile(const struct parts *p, uint64_t e0, uint64_t e1, float *out)
{
	const struct nvfp4_st *nv = &p->w->u.nv;
	uint64_t scols = nvfp4_st_scale_cols(nv), r0 = e0 / nv->cols;
	uint64_t nrows = (e1 - 1) / nv->cols + 1 - r0;
	uint8_t *pk = malloc((size_t)((e1 - e0) / 2 + 1));
	uint8_t *sc = malloc((size_t)(nrows * scols + 1));
	float global;
	int rc = pk && sc ? 0 : -ENOMEM;

	if (!rc)
		rc = part_read(p, 0, e0 / 2, (size_t)((e1 - e0) / 2), pk);
	if (!rc)
		rc = part_read(p, 1, r0 * scols, (size_t)(nrows * scols), sc);
	if (!rc)
		rc = part_read(p, 2, 0, sizeof(global), &global);
	if (!rc) {
		host_floats(&global, 1);
		nvfp4_st_range(nv, pk, sc, global, e0, e1, out);
	}
	free(pk);
	free(sc);
	return rc;
}

/* n entries from entry c0 of part k (c of them), past the last going on
 * from entry 0: a PyTorch per-channel scheme's scales or zero points. */
static int
part_wrapped(const struct parts *p, unsigned k, uint64_t c0, uint64_t n,
	     uint64_t c, uint8_t *dst)
{
	unsigned sz = elem_size(p, k);
	uint64_t first = c - c0 < n ? c - c0 : n;
	int rc;

	rc = part_read(p, k, c0 * sz, (size_t)(first * sz), dst);
	if (!rc && first < n)
		rc = part_read(p, k, 0, (size_t)((n - first) * sz),
			       dst + first * sz);
	return rc;
}

static int
torch_tile(const struct parts *p, uint64_t e0, uint64_t e1, float *out)
{
	const struct torch_affine *ta = &p->w->u.ta;
	unsigned qs = elem_size(p, 0);
	uint8_t *q = malloc((size_t)((e1 - e0) * qs));
	uint8_t *s = NULL, *z = NULL;
	uint64_t c0 = 0, n = 0;
	int rc = q ? 0 : -ENOMEM;

	if (!rc && ta->per_channel) {
		torch_affine_channels(ta, e0, e1, &c0, &n);
		s = malloc((size_t)(n * elem_size(p, 1)));
		z = malloc((size_t)(n * elem_size(p, 2)));
		rc = s && z ? 0 : -ENOMEM;
		if (!rc)
			rc = part_wrapped(p, 1, c0, n, ta->channels, s);
		if (!rc)
			rc = part_wrapped(p, 2, c0, n, ta->channels, z);
	}
	if (!rc)
		rc = part_read(p, 0, e0 * qs, (size_t)((e1 - e0) * qs), q);
	if (!rc)
		torch_affine_range(ta, q, s, z, e0, e1, out);
	free(q);
	free(s);
	free(z);
	return rc;
}

int
quant_render_tile(const struct model *m, const struct quant_weight *w,
		  const struct quant_tiling *g, uint64_t t, float *out)
{
	struct parts p = { m, w };
	uint64_t o, u0, u1;

	tile_units(g, t, &o, &u0, &u1);
	if (u1 <= u0)
		return 0;
	switch (w->scheme) {
	case QUANT_FP8:
		return fp8_tile(&p, u0, u1, out);
	case QUANT_MXFP4:
		return mxfp4_tile(&p, o, u0, u1, out);
	case QUANT_GPTQ:
	case QUANT_AWQ:
		return int_tile(&p, u0, u1, out);
	case QUANT_CT_INT:
		return ct_tile(&p, u0, u1, out);
	case QUANT_BNB4:
		return bnb_tile(&p, u0, u1, out);
	case QUANT_NVFP4:
		return nvfp4_tile(&p, u0, u1, out);
	case QUANT_TORCH:
		return torch_tile(&p, u0, u1, out);
	}
	return -EINVAL;
}
