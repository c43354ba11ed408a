/* quant.c - recognising a model's quantized weights (see quant.h).
 *
 * One pass over the tensors: a name ending in a scheme's telltale suffix
 * (the table `matchers`) makes a candidate, whose siblings are looked up
 * by name in a keyed table (nametab.h: names come from files).  A tensor
 * is a part of one weight at most; the first candidate that claims it
 * keeps it.
 */
#include "model/quant.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/nametab.h"
#include "format/dtype.h"
#include "format/quant/qscalar.h"
#include "format/tensor_size.h"
#include "model/model.h"
#include "model/quant_config.h"

/* A quant_state's JSON is a few hundred bytes; more is not one. */
#define QUANT_STATE_MAX 65536

/* The FP8 block DeepSeek-V3 and its kin use when no config says. */
#define FP8_DEFAULT_BLOCK 128

struct find {
	const struct model *m;
	int probe;		/* quant_probe(): stop at the first candidate */
	int found;
	struct quant_config cfg;
	struct nametab tab;
	uint8_t *claimed;	/* per model tensor */
	struct quant *q;
	size_t cap;
	struct buf names;	/* logical names, NUL-separated */
	int oom;
};

static const char *const roles[][QUANT_PARTS] = {
	[QUANT_FP8] = { "weight", "scale" },
	[QUANT_MXFP4] = { "blocks", "scales" },
	[QUANT_GPTQ] = { "qweight", "qzeros", "scales", "g_idx" },
	[QUANT_AWQ] = { "qweight", "qzeros", "scales" },
	[QUANT_BNB4] = { "weight", "absmax", "quant_map", "quant_state",
			 "nested_absmax", "nested_quant_map" },
};

const char *
quant_role(enum quant_scheme s, unsigned k)
{
	if ((unsigned)s >= sizeof(roles) / sizeof(roles[0]) ||
	    k >= QUANT_PARTS)
		return NULL;
	return roles[s][k];
}

/* --- names ------------------------------------------------------------- */

static const struct tensor *
tensor(const struct find *f, size_t i)
{
	return f->m->tensors[i].t;
}

static int
name_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct tensor *t = ((const struct model *)ctx)->tensors[id].t;

	return t->name_len == k->len && memcmp(t->name, k->name, k->len) == 0;
}

/* The tensor named a[0..alen) + b (b NUL-terminated), or QUANT_ABSENT. */
static size_t
lookup(const struct find *f, const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b), n = alen + blen;
	struct nametab_key k;
	char stack[256], *s = n <= sizeof(stack) ? stack : malloc(n);
	long id;

	if (!s)
		return QUANT_ABSENT;
	memcpy(s, a, alen);
	memcpy(s + alen, b, blen);
	nametab_key(&k, 0, s, n);
	id = nametab_find(&f->tab, &k);
	if (s != stack)
		free(s);
	return id < 0 ? QUANT_ABSENT : (size_t)id;
}

static int
ends_with(const struct tensor *t, const char *suffix, size_t *base)
{
	size_t n = strlen(suffix);

	if (t->name_len < n || memcmp(t->name + t->name_len - n, suffix, n))
		return 0;
	*base = t->name_len - n;
	return 1;
}

/* --- candidates ---------------------------------------------------------- */

/* Note why the candidate named name[0..len) stays as stored. */
static void
refuse(struct find *f, const char *name, size_t len, const char *fmt, ...)
{
	struct quant *q = f->q;
	struct buf line = BUF_INIT;
	char why[256];
	va_list ap;

	f->found = 1;
	q->nrefused++;
	if (q->nkept >= QUANT_REFUSED_KEPT)
		return;
	if (!q->refused) {
		q->refused = calloc(QUANT_REFUSED_KEPT, sizeof(*q->refused));
		if (!q->refused) {
			f->oom = 1;
			return;
		}
	}
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (buf_add(&line, name, len) || buf_adds(&line, ": ") ||
	    buf_adds(&line, why)) {
		buf_free(&line);
		f->oom = 1;
		return;
	}
	q->refused[q->nkept].len = line.len;
	q->refused[q->nkept++].text = buf_steal(&line);
}

/* A new weight named a[0..alen) + b, parts all absent; NULL when out of
 * memory. */
static struct quant_weight *
add(struct find *f, enum quant_scheme s, const char *label, const char *a,
    size_t alen, const char *b)
{
	struct quant *q = f->q;
	struct quant_weight *w;
	size_t k;

	f->found = 1;
	if (q->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		void *p = realloc(q->w, cap * sizeof(*q->w));

		if (!p) {
			f->oom = 1;
			return NULL;
		}
		q->w = p;
		f->cap = cap;
	}
	w = &q->w[q->n];
	memset(w, 0, sizeof(*w));
	/* the name's offset for now: the arena may still move */
	w->name = (const char *)(uintptr_t)f->names.len;
	w->name_len = (uint32_t)(alen + strlen(b));
	if (buf_add(&f->names, a, alen) || buf_adds(&f->names, b) ||
	    buf_add(&f->names, "", 1)) {
		f->oom = 1;
		return NULL;
	}
	w->scheme = s;
	w->label = label;
	w->replaces = QUANT_ABSENT;
	for (k = 0; k < QUANT_PARTS; k++)
		w->part[k] = QUANT_ABSENT;
	q->n++;
	return w;
}

/* 1 when none of parts[0..n) is absent or claimed already. */
static int
parts_free(const struct find *f, const size_t *parts, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (parts[k] != QUANT_ABSENT && f->claimed[parts[k]])
			return 0;
	return 1;
}

static void
claim(struct find *f, struct quant_weight *w)
{
	size_t k;

	for (k = 0; k < QUANT_PARTS; k++)
		if (w->part[k] != QUANT_ABSENT)
			f->claimed[w->part[k]] = 1;
}

/* The logical name a[0..alen) + b is free: no stored tensor has it, or
 * only the part it replaces. */
static int
name_free(const struct find *f, const char *a, size_t alen, const char *b,
	  size_t replaces)
{
	size_t at = lookup(f, a, alen, b);

	return at == QUANT_ABSENT || at == replaces;
}

static uint64_t
ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* --- fp8: W + W_scale_inv / W_scale ------------------------------------- */

/* The scale grid of an FP8 weight [rows, cols] from the scale's shape
 * (and the config's block; *assumed notes a block no config told); 0, or
 * -1 with *why. */
static int
fp8_grid(const struct find *f, const struct tensor *wt,
	 const struct tensor *st, struct fp8_scaled *p, const char **label,
	 unsigned *assumed, const char **why)
{
	uint64_t R, C, sr, sc;
	const uint64_t *blk = f->cfg.block;

	p->cols = wt->rank ? wt->shape[wt->rank - 1] : 1;
	p->rows = p->cols ? wt->numel / p->cols : 0;
	R = p->rows;
	C = p->cols;
	if (st->numel == 1) {
		p->brow = R ? R : 1;
		p->bcol = C ? C : 1;
		*label = "fp8-tensor";
		return 0;
	}
	if (wt->rank != 2 || st->rank < 1 || st->rank > 2) {
		*why = "a scale per row or block needs a 2-D weight and scale";
		return -1;
	}
	sr = st->shape[0];
	sc = st->rank == 2 ? st->shape[1] : 1;
	*label = "fp8-block";
	if (sr == R && sc == 1) {
		p->brow = 1;
		p->bcol = C;
		*label = "fp8-channel";
	} else if (blk[0] && sr == ceil_div(R, blk[0]) &&
		   sc == ceil_div(C, blk[1])) {
		p->brow = blk[0];
		p->bcol = blk[1];
	} else if (!blk[0] && sr == ceil_div(R, FP8_DEFAULT_BLOCK) &&
		   sc == ceil_div(C, FP8_DEFAULT_BLOCK)) {
		p->brow = p->bcol = FP8_DEFAULT_BLOCK;
		*assumed = QUANT_ASSUMED_BLOCK;
	} else if (sr == R && f->cfg.group_size > 0 &&
		   sc == ceil_div(C, (uint64_t)f->cfg.group_size)) {
		p->brow = 1;
		p->bcol = (uint64_t)f->cfg.group_size;
		*label = "fp8-group";
	} else if (sr && sc && R % sr == 0 && C % sc == 0) {
		p->brow = R / sr;
		p->bcol = C / sc;
		*assumed = QUANT_ASSUMED_BLOCK;
		if (p->brow == 1)
			*label = "fp8-group";
	} else {
		*why = "its scale grid does not tile the weight";
		return -1;
	}
	return 0;
}

static void
match_fp8(struct find *f, size_t i, size_t base)
{
	const struct tensor *st = tensor(f, i), *wt;
	const char *why = NULL, *label = "fp8-block";
	struct quant_weight *w;
	struct fp8_scaled p;
	unsigned assumed = 0;
	size_t wi = lookup(f, st->name, base, "");

	if (wi == QUANT_ABSENT || !fp8_scaled_is_weight(tensor(f, wi)->dtype))
		return;		/* a scale of something else (input_scale) */
	wt = tensor(f, wi);
	memset(&p, 0, sizeof(p));
	p.wdtype = wt->dtype;
	p.sdtype = st->dtype;
	if (!qscalar_is_scale(st->dtype))
		why = "its scale is not F32, F16 or BF16";
	else if (wt->strides || st->strides)
		why = "a strided view";
	else if (lookup(f, st->name, base, "_zero_point") != QUANT_ABSENT)
		why = "FP8 with a zero point is not decoded";
	else
		fp8_grid(f, wt, st, &p, &label, &assumed, &why);
	if (!why && !parts_free(f, (size_t[]){ wi, i }, 2))
		why = "its tensors belong to another weight";
	if (why) {
		refuse(f, wt->name, wt->name_len, "%s", why);
		return;
	}
	w = add(f, QUANT_FP8, label, wt->name, wt->name_len, "");
	if (!w)
		return;
	w->part[0] = wi;
	w->part[1] = i;
	w->replaces = wi;
	w->assumed = assumed;
	w->rank = wt->rank;
	memcpy(w->shape, wt->shape, wt->rank * sizeof(*w->shape));
	w->numel = wt->numel;
	w->u.fp8 = p;
	claim(f, w);
}

/* --- mxfp4: P_blocks + P_scales ------------------------------------------ */

static void
match_mxfp4(struct find *f, size_t i, size_t base)
{
	const struct tensor *bt = tensor(f, i), *st;
	size_t si = lookup(f, bt->name, base, "_scales");
	const char *why = NULL;
	struct quant_weight *w;

	if (si == QUANT_ABSENT || bt->dtype != DTYPE_U8)
		return;
	st = tensor(f, si);
	if (bt->rank != 4 || bt->shape[3] != 16 || st->rank != 3 ||
	    st->dtype != DTYPE_U8 || memcmp(bt->shape, st->shape,
					    3 * sizeof(*bt->shape)))
		why = "blocks [E, R, G, 16] and scales [E, R, G] (U8) expected";
	else if (bt->strides || st->strides)
		why = "a strided view";
	else if (bt->shape[1] > QUANT_ROW_MAX)
		why = "its rows hold more than 16 Mi values";
	else if (!name_free(f, bt->name, base, "", QUANT_ABSENT))
		why = "a stored tensor has the logical name";
	else if (!parts_free(f, (size_t[]){ i, si }, 2))
		why = "its tensors belong to another weight";
	if (why) {
		refuse(f, bt->name, bt->name_len, "%s", why);
		return;
	}
	w = add(f, QUANT_MXFP4, "mxfp4", bt->name, base, "");
	if (!w)
		return;
	w->part[0] = i;
	w->part[1] = si;
	w->u.mx.experts = bt->shape[0];
	w->u.mx.rows = bt->shape[1];
	w->u.mx.groups = bt->shape[2];
	w->rank = 3;
	w->shape[0] = bt->shape[0];
	w->shape[1] = bt->shape[2] * 32;
	w->shape[2] = bt->shape[1];
	w->numel = bt->numel * 2;
	claim(f, w);
}

/* --- gptq and awq: M.qweight + M.qzeros + M.scales (+ M.g_idx) ---------- */

/* 0 when every g_idx entry names one of the groups, else -1 with *why
 * (read in chunks: an input of 16 Mi rows is 64 MiB of g_idx). */
static int
gidx_check(const struct find *f, size_t gi, uint64_t groups, const char **why)
{
	const struct tensor *t = tensor(f, gi);
	uint64_t n = t->end - t->begin, off, k;
	uint8_t *b = malloc(1 << 20);
	int rc = 0;

	if (!b) {
		*why = "out of memory";
		return -1;
	}
	for (off = 0; rc == 0 && off < n; off += 1 << 20) {
		size_t len = n - off < (1 << 20) ? (size_t)(n - off) : 1 << 20;

		if (model_tensor_read(f->m, &f->m->tensors[gi], off, len, b)) {
			*why = "its g_idx cannot be read";
			rc = -1;
		}
		for (k = 0; rc == 0 && k + 4 <= len; k += 4) {
			uint32_t v = (uint32_t)b[k] | (uint32_t)b[k + 1] << 8 |
				     (uint32_t)b[k + 2] << 16 |
				     (uint32_t)b[k + 3] << 24;

			if ((uint64_t)v >= groups) {	/* negatives too */
				*why = "its g_idx names a group that is not "
				       "there";
				rc = -1;
			}
		}
	}
	free(b);
	return rc;
}

static uint64_t
gptq_zcols(uint64_t out, unsigned bits)
{
	return bits == 3 ? ceil_div(out, 32) * 3 : ceil_div(out * bits, 32);
}

static uint64_t
gptq_qrows(uint64_t in, unsigned bits)
{
	return ceil_div(in * bits, 32);
}

/* GPTQ's bits, input size and groups; 0 or -1 with *why. */
static int
gptq_fit(const struct find *f, const struct tensor *qw,
	 const struct tensor *qz, const struct tensor *gi,
	 struct int_packed *p, const char **why)
{
	static const unsigned cand[] = { 2, 3, 4, 8 };
	unsigned bits = 0, n = 0, k;
	uint64_t in = 0;

	for (k = 0; k < 4; k++) {
		unsigned b = cand[k];

		if (f->cfg.bits && f->cfg.bits != b)
			continue;
		if (gptq_zcols(p->out, b) != qz->shape[1])
			continue;
		if (gi && gptq_qrows(gi->shape[0], b) != qw->shape[0])
			continue;
		if (b == 3 && (gi ? gi->shape[0] % 32 : qw->shape[0] % 3))
			continue;
		bits = b;
		n++;
	}
	if (n != 1) {
		*why = n ? "several bit widths fit: say which in config.json" :
		       "no bit width (2, 3, 4, 8) fits its shapes";
		return -1;
	}
	in = gi ? gi->shape[0] : bits == 3 ? qw->shape[0] / 3 * 32 :
	     qw->shape[0] * (32 / bits);
	p->bits = bits;
	p->in = in;
	p->zero_offset = !f->cfg.gptq_v2;
	return 0;
}

/* The group size of a weight without g_idx (or for its sidecar; *assumed
 * notes one no config told that changes values); 0 or -1 with *why. */
static int
group_fit(const struct find *f, struct int_packed *p, int have_gidx,
	  unsigned *assumed, const char **why)
{
	int64_t gs = f->cfg.group_size;

	if (gs == -1)
		gs = (int64_t)p->in;
	if (gs > 0 && ceil_div(p->in, (uint64_t)gs) == p->groups) {
		p->group_size = (uint64_t)gs;
		return 0;
	}
	if (p->groups && p->in % p->groups == 0) {
		p->group_size = p->in / p->groups;
		if (!have_gidx && p->groups > 1)
			*assumed |= QUANT_ASSUMED_GROUP;
		return 0;
	}
	if (have_gidx) {	/* the groups come from g_idx */
		p->group_size = ceil_div(p->in, p->groups);
		return 0;
	}
	*why = "its group size is unknown: say it in config.json";
	return -1;
}

static void
match_qweight(struct find *f, size_t i, size_t base)
{
	const struct tensor *qw = tensor(f, i), *qz, *sc, *gi = NULL;
	const char *why = NULL, *m = f->cfg.method;
	size_t zi = lookup(f, qw->name, base, "qzeros");
	size_t si = lookup(f, qw->name, base, "scales");
	size_t gidx = lookup(f, qw->name, base, "g_idx");
	struct quant_weight *w;
	struct int_packed p;
	unsigned assumed = 0;
	int awq;

	if (zi == QUANT_ABSENT || si == QUANT_ABSENT)
		return;
	qz = tensor(f, zi);
	sc = tensor(f, si);
	if (gidx != QUANT_ABSENT)
		gi = tensor(f, gidx);
	memset(&p, 0, sizeof(p));
	if (qw->dtype != DTYPE_I32 || qz->dtype != DTYPE_I32 ||
	    !qscalar_is_scale(sc->dtype) || qw->rank != 2 || qz->rank != 2 ||
	    sc->rank != 2 || (gi && (gi->dtype != DTYPE_I32 ||
				     gi->rank != 1))) {
		refuse(f, qw->name, qw->name_len, "qweight, qzeros (I32, 2-D), "
		       "scales (F16, BF16, F32, 2-D), g_idx (I32) expected");
		return;
	}
	p.out = sc->shape[1];
	p.groups = sc->shape[0];
	p.sdtype = sc->dtype;
	awq = strcmp(m, "awq") == 0 ||
	      (strcmp(m, "gptq") != 0 && !gi && qw->shape[1] != p.out &&
	       qw->shape[1] == ceil_div(p.out, 8));
	if (qz->shape[0] != p.groups) {
		why = "qzeros and scales have different group counts";
	} else if (qw->strides || qz->strides || sc->strides ||
		   (gi && gi->strides)) {
		why = "a strided view";
	} else if (awq) {
		p.kind = INT_PACKED_AWQ;
		p.bits = 4;
		p.in = qw->shape[0];
		if (f->cfg.awq_gemv)
			why = "AWQ's GEMV layout is not decoded";
		else if ((f->cfg.bits && f->cfg.bits != 4) || gi)
			why = "AWQ is decoded with 4 bits and no g_idx only";
		else if (qw->shape[1] != ceil_div(p.out, 8) ||
			 qz->shape[1] != ceil_div(p.out, 8))
			why = "qweight or qzeros do not fit AWQ's packing";
		else
			group_fit(f, &p, 0, &assumed, &why);
	} else {
		p.kind = INT_PACKED_GPTQ;
		/* a config that does not say means v1, as for its
		 * reference */
		assumed = f->cfg.file ? 0 : QUANT_ASSUMED_FORMAT;
		if (qw->shape[1] != p.out)
			why = "qweight's columns are not scales' columns";
		else if (!gptq_fit(f, qw, qz, gi, &p, &why))
			group_fit(f, &p, gi != NULL, &assumed, &why);
	}
	if (!why && p.in > QUANT_ROW_MAX)
		why = "its rows hold more than 16 Mi values";
	if (!why && !name_free(f, qw->name, base, "weight", QUANT_ABSENT))
		why = "a stored tensor has the logical name";
	if (!why && !parts_free(f, (size_t[]){ i, zi, si, gidx }, 4))
		why = "its tensors belong to another weight";
	if (!why && gi && !awq && !f->probe)
		gidx_check(f, gidx, p.groups, &why);
	if (why) {
		refuse(f, qw->name, qw->name_len, "%s", why);
		return;
	}
	w = add(f, awq ? QUANT_AWQ : QUANT_GPTQ, awq ? "awq" : "gptq",
		qw->name, base, "weight");
	if (!w)
		return;
	w->part[0] = i;
	w->part[1] = zi;
	w->part[2] = si;
	w->part[3] = awq ? QUANT_ABSENT : gidx;
	w->assumed = assumed;
	w->rank = 2;
	w->shape[0] = p.out;
	w->shape[1] = p.in;
	w->numel = p.out * p.in;
	w->u.ip = p;
	claim(f, w);
}

/* --- bitsandbytes: W + W.absmax + W.quant_map + W.quant_state.* --------- */

/* The quant_state's JSON, parsed; NULL with *why. */
static json_t *
bnb_state(const struct find *f, size_t i, const char **why)
{
	const struct tensor *t = tensor(f, i);
	uint64_t n = t->end - t->begin;
	json_t *j = NULL;
	char *text;

	if (t->dtype != DTYPE_U8 || t->strides || n == 0 ||
	    n > QUANT_STATE_MAX) {
		*why = "its quant_state is not a short U8 tensor";
		return NULL;
	}
	text = malloc((size_t)n);
	if (!text) {
		*why = "out of memory";
		return NULL;
	}
	if (model_tensor_read(f->m, &f->m->tensors[i], 0, (size_t)n, text))
		*why = "its quant_state cannot be read";
	else if (!(j = json_loadb(text, (size_t)n, 0, NULL)) ||
		 !json_is_object(j))
		*why = "its quant_state is not a JSON object";
	free(text);
	if (*why) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The logical shape and block sizes from the quant_state; 0 or -1. */
static int
bnb_fill(json_t *j, struct quant_weight *w, const char *type,
	 const char **why)
{
	json_t *shape = json_object_get(j, "shape"), *v;
	json_t *bs = json_object_get(j, "blocksize");
	json_t *dt = json_object_get(j, "dtype");
	size_t k;

	if (!json_is_string(json_object_get(j, "quant_type")) ||
	    strcmp(json_string_value(json_object_get(j, "quant_type")),
		   type) != 0 || !json_is_integer(bs) ||
	    json_integer_value(bs) <= 0 || !json_is_array(shape) ||
	    json_array_size(shape) > QUANT_RANK_MAX) {
		*why = "its quant_state lacks quant_type, blocksize or shape";
		return -1;
	}
	w->u.bnb.blocksize = (uint64_t)json_integer_value(bs);
	w->rank = (uint32_t)json_array_size(shape);
	w->numel = 1;
	json_array_foreach(shape, k, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*why = "its quant_state's shape is not a list of sizes";
			return -1;
		}
		w->shape[k] = (uint64_t)json_integer_value(v);
		/* the packed codes bound it (bnb_check); first, no wrap */
		if (__builtin_mul_overflow(w->numel, w->shape[k], &w->numel) ||
		    w->numel > UINT64_MAX / 8) {
			*why = "its quant_state's shape is too large";
			return -1;
		}
	}
	snprintf(w->u.bnb.dtype, sizeof(w->u.bnb.dtype), "%s",
		 json_is_string(dt) ? json_string_value(dt) : "");
	bs = json_object_get(j, "nested_blocksize");
	v = json_object_get(j, "nested_offset");
	if (w->u.bnb.nested && (!json_is_integer(bs) ||
				json_integer_value(bs) <= 0 ||
				!json_is_number(v))) {
		*why = "its quant_state lacks nested_blocksize or "
		       "nested_offset";
		return -1;
	}
	if (w->u.bnb.nested) {
		w->u.bnb.nested_blocksize = (uint64_t)json_integer_value(bs);
		w->u.bnb.offset = (float)json_number_value(v);
	}
	return 0;
}

/* The parts' dtypes and sizes against the quant_state's. */
static int
bnb_check(const struct find *f, const struct quant_weight *w,
	  const char **why)
{
	const struct tensor *pk = tensor(f, w->part[0]);
	const struct tensor *am = tensor(f, w->part[1]);
	const struct tensor *qm = tensor(f, w->part[2]);
	uint64_t nblocks = ceil_div(w->numel, w->u.bnb.blocksize);
	size_t k;

	for (k = 0; k < QUANT_PARTS; k++)
		if (w->part[k] != QUANT_ABSENT && tensor(f, w->part[k])->strides)
			*why = "a strided view";
	if (*why)
		return -1;
	if (pk->end - pk->begin != ceil_div(w->numel, 2))
		*why = "its packed codes are not half a byte per element";
	else if (qm->dtype != DTYPE_F32 || qm->numel != 16)
		*why = "its quant_map is not 16 F32 values";
	else if (am->numel != nblocks ||
		 am->dtype != (w->u.bnb.nested ? DTYPE_U8 : DTYPE_F32))
		*why = "its absmax does not have one value per block";
	else if (w->u.bnb.nested &&
		 (tensor(f, w->part[4])->dtype != DTYPE_F32 ||
		  tensor(f, w->part[4])->numel !=
		  ceil_div(nblocks, w->u.bnb.nested_blocksize) ||
		  tensor(f, w->part[5])->dtype != DTYPE_F32 ||
		  tensor(f, w->part[5])->numel != 256))
		*why = "its nested_absmax or nested_quant_map do not fit";
	return *why ? -1 : 0;
}

static void
match_bnb(struct find *f, size_t i, size_t base, const char *type)
{
	const struct tensor *qs = tensor(f, i);
	const char *why = NULL, *n = qs->name;
	struct quant_weight *w;
	size_t parts[QUANT_PARTS];
	json_t *j;

	parts[0] = lookup(f, n, base, "");
	parts[1] = lookup(f, n, base, ".absmax");
	parts[2] = lookup(f, n, base, ".quant_map");
	parts[3] = i;
	parts[4] = lookup(f, n, base, ".nested_absmax");
	parts[5] = lookup(f, n, base, ".nested_quant_map");
	if (parts[0] == QUANT_ABSENT || parts[1] == QUANT_ABSENT ||
	    parts[2] == QUANT_ABSENT ||
	    (parts[4] == QUANT_ABSENT) != (parts[5] == QUANT_ABSENT)) {
		refuse(f, n, base, "absmax, quant_map or a nested part is "
		       "missing");
		return;
	}
	if (!parts_free(f, parts, QUANT_PARTS)) {
		refuse(f, n, base, "its tensors belong to another weight");
		return;
	}
	if (f->probe) {		/* a candidate: its JSON is not read yet */
		f->found = 1;
		return;
	}
	j = bnb_state(f, i, &why);
	if (!j) {
		refuse(f, n, base, "%s", why);
		return;
	}
	w = add(f, QUANT_BNB4, strcmp(type, "nf4") == 0 ? "bnb-nf4" :
		"bnb-fp4", n, base, "");
	if (!w) {
		json_decref(j);
		return;
	}
	memcpy(w->part, parts, sizeof(parts));
	w->replaces = parts[0];
	w->u.bnb.nested = parts[4] != QUANT_ABSENT;
	if (bnb_fill(j, w, type, &why) == 0)
		bnb_check(f, w, &why);
	json_decref(j);
	if (why) {
		f->q->n--;	/* not kept: its name stays in the arena */
		refuse(f, n, base, "%s", why);
		return;
	}
	claim(f, w);
}

static void
match_nf4(struct find *f, size_t i, size_t base)
{
	match_bnb(f, i, base, "nf4");
}

static void
match_fp4(struct find *f, size_t i, size_t base)
{
	match_bnb(f, i, base, "fp4");
}

/* --- the registry -------------------------------------------------------- */

/* A telltale suffix and what it makes of the tensor that ends with it
 * (base: the name's length without the suffix). */
static const struct matcher {
	const char *suffix;
	void (*match)(struct find *f, size_t i, size_t base);
} matchers[] = {
	{ "_scale_inv", match_fp8 },
	{ "_scale", match_fp8 },
	{ "_blocks", match_mxfp4 },
	{ "qweight", match_qweight },
	{ ".quant_state.bitsandbytes__nf4", match_nf4 },
	{ ".quant_state.bitsandbytes__fp4", match_fp4 },
};

#define NMATCHERS (sizeof(matchers) / sizeof(matchers[0]))

void
quant_free(struct quant *q)
{
	size_t k;

	if (!q)
		return;
	for (k = 0; k < q->nkept; k++)
		free(q->refused[k].text);
	free(q->refused);
	free(q->by_replaced);
	free(q->w);
	free(q->priv);
	free(q);
}

size_t
quant_replacing(const struct quant *q, size_t i)
{
	size_t lo = 0, hi = q->nreplacing;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t r = q->w[q->by_replaced[mid]].replaces;

		if (r == i)
			return q->by_replaced[mid];
		if (r < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return QUANT_ABSENT;
}

static int
cmp_replaced(const void *a, const void *b, void *arg)
{
	const struct quant *q = arg;
	size_t x = q->w[*(const size_t *)a].replaces;
	size_t y = q->w[*(const size_t *)b].replaces;

	return (x > y) - (x < y);
}

/* q->by_replaced; 0 or -1 (no memory). */
static int
index_replaced(struct quant *q)
{
	size_t i;

	q->by_replaced = malloc((q->n ? q->n : 1) * sizeof(*q->by_replaced));
	if (!q->by_replaced)
		return -1;
	for (i = 0; i < q->n; i++)
		if (q->w[i].replaces != QUANT_ABSENT)
			q->by_replaced[q->nreplacing++] = i;
	qsort_r(q->by_replaced, q->nreplacing, sizeof(*q->by_replaced),
		cmp_replaced, q);
	return 0;
}

/* Candidates need a telltale suffix; most models have none, and their
 * mount pays one pass over the names. */
static int
has_candidates(const struct model *m)
{
	size_t i, k, base;

	for (i = 0; i < m->ntensors; i++)
		for (k = 0; k < NMATCHERS; k++)
			if (ends_with(m->tensors[i].t, matchers[k].suffix,
				      &base))
				return 1;
	return 0;
}

/* quant_find(), or with probe quant_probe(): *found only. */
static int
find(const struct model *m, int probe, struct quant **out, int *found,
     struct err *e)
{
	struct find f;
	size_t i, k, base;
	uint64_t data = 0;

	*out = NULL;
	*found = 0;
	if (!has_candidates(m))
		return 0;
	memset(&f, 0, sizeof(f));
	f.m = m;
	f.probe = probe;
	if (!probe)
		quant_config_read(m, &f.cfg);
	f.q = calloc(1, sizeof(*f.q));
	f.claimed = calloc(m->ntensors ? m->ntensors : 1, 1);
	if (!f.q || !f.claimed ||
	    nametab_init(&f.tab, m->ntensors, name_eq, m) < 0)
		goto oom;
	f.q->config = f.cfg.file;
	f.q->assumed_why = f.cfg.why_none;
	for (i = 0; i < m->ntensors; i++) {
		struct nametab_key key;

		nametab_key(&key, 0, m->tensors[i].t->name,
			    m->tensors[i].t->name_len);
		if (nametab_put(&f.tab, &key, (uint32_t)i) == -2)
			goto oom;
	}
	for (i = 0; i < m->ntensors && !f.oom && !(probe && f.found); i++)
		for (k = 0; k < NMATCHERS; k++)
			if (ends_with(m->tensors[i].t, matchers[k].suffix,
				      &base)) {
				matchers[k].match(&f, i, base);
				break;
			}
	/* an empty weight has no bytes to compute, one of more elements
	 * than any stored tensor may have (format/tensor_size.h: its views'
	 * sizes would not fit a file size) or past what the computed shard
	 * holds none that fits: left as stored */
	for (i = k = 0; i < f.q->n; i++) {
		const char *why = NULL;

		if (f.q->w[i].numel == 0)
			why = "an empty weight";
		else if (f.q->w[i].numel > TENSOR_SIZE_NUMEL_MAX)
			why = "more than the 2^56 values stfs serves";
		else if (4 * f.q->w[i].numel > QUANT_DATA_MAX - data)
			why = "the weights before it take all the 2^62 bytes "
			      "of float32 values stfs serves";
		if (why) {
			refuse(&f, f.names.data + (uintptr_t)f.q->w[i].name,
			       f.q->w[i].name_len, "%s", why);
			continue;
		}
		data += 4 * f.q->w[i].numel;
		f.q->w[k++] = f.q->w[i];
	}
	f.q->n = k;
	if (f.oom)
		goto oom;
	*found = f.found;
	if (probe) {
		nametab_free(&f.tab);
		free(f.claimed);
		buf_free(&f.names);
		quant_free(f.q);
		return 0;
	}
	/* the arena is final: offsets become pointers */
	f.q->priv = buf_steal(&f.names);
	for (i = 0; i < f.q->n; i++)
		f.q->w[i].name = (const char *)f.q->priv +
				 (uintptr_t)f.q->w[i].name;
	nametab_free(&f.tab);
	free(f.claimed);
	f.claimed = NULL;
	if (index_replaced(f.q))
		goto oom;
	if (f.q->n == 0 && f.q->nrefused == 0) {
		quant_free(f.q);
		return 0;
	}
	*out = f.q;
	return 0;
oom:
	nametab_free(&f.tab);
	free(f.claimed);
	buf_free(&f.names);
	quant_free(f.q);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}

int
quant_find(const struct model *m, struct quant **out, struct err *e)
{
	int found;

	return find(m, 0, out, &found, e);
}

int
quant_probe(const struct model *m)
{
	struct err e = { 0 };
	struct quant *q;
	int found;

	return find(m, 1, &q, &found, &e) == 0 && found;
}
