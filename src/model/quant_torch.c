/* quant_torch.c - the matcher of PyTorch's quantized tensors (see
 * quant_torch.h). */
#include "model/quant_torch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/text.h"
#include "format/dtype.h"
#include "format/naming.h"
#include "format/quant/torch_affine.h"
#include "format/safetensors/jscan.h"
#include "format/table.h"
#include "model/model.h"
#include "model/quant_scan.h"

#define QUANTIZER ".__quantizer__"
/* A reason's text made here. */
#define QUANT_TORCH_MSG 200
/* Zero points checked at a time. */
#define ZP_CHUNK (1u << 20)

/* 1 when p's key is NAME.__quantizer__; *base NAME's length. */
static int
quantizer_key(const struct meta_pair *p, size_t *base)
{
	size_t n = sizeof(QUANTIZER) - 1;

	if (p->key_len <= n || memcmp(p->key + p->key_len - n, QUANTIZER, n))
		return 0;
	*base = p->key_len - n;
	return 1;
}

static int
is_torch(const struct header *h)
{
	return h->format && strcmp(h->format, NAMING_TORCH) == 0;
}

int
quant_torch_any(const struct model *m)
{
	size_t s, k, base;

	for (s = 0; s < m->nshards; s++) {
		const struct header *h = m->shards[s].hdr;

		for (k = 0; is_torch(h) && k < h->nmeta; k++)
			if (quantizer_key(&h->meta[k], &base))
				return 1;
	}
	return 0;
}

/* What a __quantizer__ says (torch_qtensor.h), read with the scanner
 * of safetensors' headers, which allocates nothing: jansson's parser,
 * short of memory, may drop a string's closing quote and read past it
 * (2.14; found by int-failalloc). */
struct desc {
	struct jscan_tok qscheme, dtype, scales, zero_points;	/* strings */
	int has_scale, has_zero_point, has_axis;
	double scale;
	int64_t zero_point;
	uint64_t axis;
};

/* 1 when string token t (unescaped) is s. */
static int
tok_is(const struct jscan_tok *t, const char *s)
{
	return t->type == JSCAN_STRING && !t->escaped &&
	       t->len == strlen(s) && memcmp(t->s, s, t->len) == 0;
}

static int
key_is(const struct jscan_tok *k, const char *s)
{
	return !k->escaped && k->len == strlen(s) &&
	       memcmp(k->s, s, k->len) == 0;
}

/* A number token that is an integer into *x: 1, else 0. */
static int
tok_int(const struct jscan_tok *t, int64_t *x)
{
	char buf[32], *end;

	if (t->type != JSCAN_NUMBER || t->len >= sizeof(buf) ||
	    memchr(t->s, '.', t->len) || memchr(t->s, 'e', t->len) ||
	    memchr(t->s, 'E', t->len))
		return 0;
	memcpy(buf, t->s, t->len);
	buf[t->len] = '\0';
	errno = 0;
	*x = strtoll(buf, &end, 10);
	return errno == 0 && *end == '\0';
}

/* A number token into *x: 1, else 0 (a number of more than 64
 * characters is no scale torch writes). */
static int
tok_double(const struct jscan_tok *t, double *x)
{
	char buf[64];

	if (t->type != JSCAN_NUMBER || t->len >= sizeof(buf))
		return 0;
	memcpy(buf, t->s, t->len);
	buf[t->len] = '\0';
	*x = strtod(buf, NULL);
	return 1;
}

/* text[0..len) read into *d: 0, or -1 when it is no JSON object. */
static int
desc_read(const char *text, size_t len, struct desc *d)
{
	struct jscan s;
	struct jscan_tok k, v;
	size_t bad_at;
	unsigned bad_len;
	int64_t x;

	memset(d, 0, sizeof(*d));
	if (text_utf8_check(text, len, &bad_at, &bad_len))
		return -1;
	jscan_init(&s, text, len, 8);
	if (jscan_next(&s, &k) != JSCAN_OBJECT)
		return -1;
	while (jscan_next(&s, &k) == JSCAN_KEY) {
		switch (jscan_next(&s, &v)) {
		case JSCAN_ERROR:
			return -1;
		case JSCAN_OBJECT:
		case JSCAN_ARRAY:
			if (jscan_skip_to(&s, 1))
				return -1;
			continue;
		default:
			break;
		}
		if (key_is(&k, "qscheme"))
			d->qscheme = v;
		else if (key_is(&k, "dtype"))
			d->dtype = v;
		else if (key_is(&k, "scales"))
			d->scales = v;
		else if (key_is(&k, "zero_points"))
			d->zero_points = v;
		else if (key_is(&k, "scale"))
			d->has_scale = tok_double(&v, &d->scale);
		else if (key_is(&k, "zero_point"))
			d->has_zero_point = tok_int(&v, &d->zero_point);
		else if (key_is(&k, "axis") && tok_int(&v, &x) && x >= 0) {
			d->has_axis = 1;
			d->axis = (uint64_t)x;
		}
	}
	if (k.type != JSCAN_OBJECT_END || jscan_next(&s, &v) != JSCAN_END)
		return -1;
	return 0;
}

/* The tensor string token t names, or QUANT_ABSENT (and f->oom when out
 * of memory). */
static size_t
named(struct quant_scan *f, const struct jscan_tok *t)
{
	size_t at, n;
	char *s;

	if (t->type != JSCAN_STRING)
		return QUANT_ABSENT;
	if (!t->escaped)
		return quant_scan_lookup(f, t->s, t->len, "");
	s = malloc(t->len ? t->len : 1);
	if (!s) {
		f->oom = 1;
		return QUANT_ABSENT;
	}
	n = jscan_unescape(t->s, t->len, s, t->len);
	at = quant_scan_lookup(f, s, n, "");
	free(s);
	return at;
}

/* NULL when every zero point of tensor zi fits p's integers, else why
 * (in msg). */
static const char *
zero_points_check(struct quant_scan *f, size_t zi,
		  const struct torch_affine *p, char *msg)
{
	uint64_t n = quant_scan_tensor(f, zi)->numel, k, at, bad;
	uint8_t *b = malloc(ZP_CHUNK);
	const char *why = NULL;
	int rc;

	if (!b) {
		f->oom = 1;
		return "out of memory";
	}
	for (k = 0; !why && k < n; k += at) {
		at = n - k < ZP_CHUNK / 8 ? n - k : ZP_CHUNK / 8;
		rc = model_tensor_read(f->m, &f->m->tensors[zi], 8 * k,
				       (size_t)(8 * at), b);
		if (rc == -ENOMEM) {
			/* not the weight's fault: decided on a later try */
			f->oom = 1;
			why = "out of memory";
		} else if (rc) {
			why = "its zero points cannot be read";
		} else if ((bad = torch_affine_bad_zero_point(p, b, at)) < at) {
			uint64_t z = 0;
			unsigned j;

			for (j = 0; j < 8; j++)
				z |= (uint64_t)b[8 * bad + j] << (8 * j);
			snprintf(msg, QUANT_TORCH_MSG, "its zero point %"
				 PRId64 " (channel %" PRIu64 ") is outside the "
				 "range of %s (Tensor.dequantize() refuses it "
				 "too)", (int64_t)z, k + bad, torch_affine_dtype_name(p->qdtype));
			why = msg;
		}
	}
	free(b);
	return why;
}

/* The per-channel scheme of tensor t from description o; NULL, or why
 * (msg may hold it). */
static const char *
per_channel(struct quant_scan *f, const struct tensor *t,
	    const struct desc *d, struct torch_affine *p, size_t *si,
	    size_t *zi, char *msg)
{
	const struct tensor *st, *zt;
	uint64_t k;

	*si = named(f, &d->scales);
	*zi = named(f, &d->zero_points);
	if (f->oom)
		return "out of memory";
	if (!d->has_axis || d->axis >= t->rank)
		return "its axis is not one of its dimensions";
	if (*si == QUANT_ABSENT || *zi == QUANT_ABSENT)
		return "its per-channel scales or zero points are missing";
	p->per_channel = 1;
	p->axis = (uint32_t)d->axis;
	p->channels = t->shape[p->axis];
	for (p->inner = 1, k = p->axis + 1; k < t->rank; k++)
		p->inner *= t->shape[k];
	st = quant_scan_tensor(f, *si);
	zt = quant_scan_tensor(f, *zi);
	p->sdtype = st->dtype;
	p->zdtype = zt->dtype;
	if (st->dtype != DTYPE_F64 && st->dtype != DTYPE_F32)
		return "its per-channel scales are not F64 (nor F32)";
	if (zt->dtype != DTYPE_I64 && zt->dtype != DTYPE_F32)
		return "its per-channel zero points are neither I64 nor F32 "
		       "(float qparams)";
	if (st->rank != 1 || zt->rank != 1 || st->numel != p->channels ||
	    zt->numel != p->channels) {
		snprintf(msg, QUANT_TORCH_MSG, "its per-channel scales and zero "
			 "points hold %" PRIu64 " and %" PRIu64 " values, not "
			 "one for each of the %" PRIu64 " along axis %u",
			 st->numel, zt->numel, p->channels, p->axis);
		return msg;
	}
	if (p->channels == 0 || p->inner == 0) {
		p->channels = p->inner = 1;	/* empty: refused as such */
		return NULL;
	}
	if (p->zdtype == DTYPE_I64 && !f->count)
		return zero_points_check(f, *zi, p, msg);
	return NULL;
}

/* Tensor qi (its description d): its scheme in *p and the label, NULL;
 * or why. */
static const char *
describe(struct quant_scan *f, size_t qi, const struct desc *d,
	 struct torch_affine *p, size_t *si, size_t *zi, const char **label,
	 char *msg)
{
	static const enum dtype ints[] = { DTYPE_I8, DTYPE_U8, DTYPE_I32 };
	const struct tensor *t = quant_scan_tensor(f, qi);
	const struct jscan_tok *qs = &d->qscheme;
	const char *dt = NULL, *why;
	size_t k;

	for (k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
		if (tok_is(&d->dtype, torch_affine_dtype_name(ints[k]))) {
			p->qdtype = ints[k];
			dt = torch_affine_dtype_name(ints[k]);
		}
	if (qs->type != JSCAN_STRING || d->dtype.type != JSCAN_STRING)
		return "its __quantizer__ has no qscheme or dtype";
	if (!dt) {
		snprintf(msg, QUANT_TORCH_MSG, "its dtype %.*s is not "
			 "torch.qint8, quint8 or qint32",
			 (int)(d->dtype.len < 40 ? d->dtype.len : 40),
			 d->dtype.s);
		return msg;
	}
	if (t->dtype != p->qdtype) {
		snprintf(msg, QUANT_TORCH_MSG, "its integers are %s, not the "
			 "%s of %s", dtype_info(t->dtype)->name,
			 dtype_info(p->qdtype)->name, dt);
		return msg;
	}
	if (t->rank > QUANT_RANK_MAX)
		return "it has more than 8 dimensions";
	if (tok_is(qs, "torch.per_tensor_affine")) {
		*label = "torch-per-tensor";
		if (!d->has_scale || !d->has_zero_point)
			return "its scale or zero point is not a number";
		p->scale = d->scale;
		p->zero_point = d->zero_point;
		if (!torch_affine_zero_point_fits(p->qdtype, p->zero_point)) {
			snprintf(msg, QUANT_TORCH_MSG, "its zero point %" PRId64
				 " is outside the range of %s "
				 "(Tensor.dequantize() refuses it too)",
				 p->zero_point, dt);
			return msg;
		}
		return NULL;
	}
	if (!tok_is(qs, "torch.per_channel_affine") &&
	    !tok_is(qs, "torch.per_channel_affine_float_qparams")) {
		snprintf(msg, QUANT_TORCH_MSG, "its qscheme %.*s is not "
			 "decoded", (int)(qs->len < 60 ? qs->len : 60), qs->s);
		return msg;
	}
	*label = "torch-per-channel";
	why = per_channel(f, t, d, p, si, zi, msg);
	if (p->zdtype == DTYPE_F32)
		*label = "torch-per-channel-float-qparams";
	return why;
}

/* The quantized tensor named name[0..len), described by text[0..tlen). */
static void
candidate(struct quant_scan *f, const char *name, size_t len,
	  const char *text, size_t tlen)
{
	size_t qi = quant_scan_lookup(f, name, len, "");
	size_t si = QUANT_ABSENT, zi = QUANT_ABSENT;
	const char *why = NULL, *label = "torch-per-tensor";
	char msg[QUANT_TORCH_MSG];
	struct quant_weight *w;
	struct torch_affine p;
	const struct tensor *t;
	struct desc d;

	if (qi == QUANT_ABSENT)
		return;		/* a value of that name, not a tensor's */
	t = quant_scan_tensor(f, qi);
	memset(&p, 0, sizeof(p));
	if (desc_read(text, tlen, &d))
		why = memmem(text, tlen, "NaN", 3) ||
		      memmem(text, tlen, "Infinity", 8) ?
		      "its scale is not a finite number" :
		      "its __quantizer__ is not a JSON object";
	else
		why = describe(f, qi, &d, &p, &si, &zi, &label, msg);
	if (f->oom)
		return;
	if (!why && !quant_scan_parts_free(f, (size_t[]){ qi, si, zi }, 3))
		why = "its tensors belong to another weight";
	if (why) {
		quant_scan_refuse(f, name, len, "a quantized tensor: %s", why);
		return;
	}
	w = quant_scan_add(f, QUANT_TORCH, label, name, len, "");
	if (!w)
		return;
	w->part[0] = qi;
	w->part[1] = si;
	w->part[2] = zi;
	w->replaces = qi;
	w->rank = t->rank;
	memcpy(w->shape, t->shape, t->rank * sizeof(*w->shape));
	w->numel = t->numel;
	w->u.ta = p;
	quant_scan_claim(f, w);
}

void
quant_torch_scan(struct quant_scan *f)
{
	const struct model *m = f->m;
	size_t s, k, base;

	for (s = 0; s < m->nshards && !f->oom; s++) {
		const struct header *h = m->shards[s].hdr;

		for (k = 0; is_torch(h) && k < h->nmeta && !f->oom; k++)
			if (quantizer_key(&h->meta[k], &base))
				candidate(f, h->meta[k].key, base,
					  h->meta[k].val, h->meta[k].val_len);
	}
}

/* Text t[0..len) as the JSON text it is in the sidecar's layout, one
 * member a line: 0; 1 when it is not an object of strings and numbers
 * (nothing written then); -1 out of memory. */
static int
members(struct buf *b, const char *t, size_t len)
{
	struct jscan s;
	struct jscan_tok k, v;
	size_t at = b->len, bad_at;
	unsigned bad_len;
	int bad = 0, n = 0;

	if (text_utf8_check(t, len, &bad_at, &bad_len))
		return 1;
	jscan_init(&s, t, len, 2);
	if (jscan_next(&s, &k) != JSCAN_OBJECT)
		return 1;
	bad |= buf_adds(b, "{");
	while (jscan_next(&s, &k) == JSCAN_KEY) {
		enum jscan_type ty = jscan_next(&s, &v);

		if (ty != JSCAN_STRING && ty != JSCAN_NUMBER)
			break;
		bad |= buf_addf(b, "%s\n    \"%.*s\": ", n++ ? "," : "",
				(int)k.len, k.s);
		bad |= ty == JSCAN_STRING ?
		       buf_addf(b, "\"%.*s\"", (int)v.len, v.s) :
		       buf_add(b, v.s, v.len);
	}
	if (k.type != JSCAN_OBJECT_END || jscan_next(&s, &v) != JSCAN_END) {
		b->len = at;	/* not JSON: said as a string */
		if (b->data)
			b->data[at] = '\0';
		return bad ? -1 : 1;
	}
	bad |= buf_adds(b, "\n  }");
	return bad ? -1 : 0;
}

int
quant_torch_sidecar(const struct model *m, const struct model_tensor *mt,
		    struct buf *b)
{
	const struct tensor *t = mt->t;
	const struct header *h = m->shards[mt->shard].hdr;
	const struct meta_pair *p;
	size_t base;
	int rc;

	if (!t->quantizer || !is_torch(h) || t->quantizer > h->nmeta)
		return 0;
	p = &h->meta[t->quantizer - 1];
	if (!quantizer_key(p, &base) || base != t->name_len ||
	    memcmp(p->key, t->name, base))
		return 0;
	if (buf_adds(b, ",\n  \"quantized\": "))
		return -1;
	rc = members(b, p->val, p->val_len);
	if (rc == 1)	/* a scale of NaN or Infinity: as the metadata has it */
		rc = buf_add_json_string(b, p->val, p->val_len);
	return rc ? -1 : 0;
}
