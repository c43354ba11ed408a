/* quant_torch.c - the matcher of PyTorch's quantized tensors (see
 * quant_torch.h). */
#include "model/quant_torch.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonmem.h"
#include "format/dtype.h"
#include "format/naming.h"
#include "format/quant/torch_affine.h"
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

/* The tensor a string member of o names, or QUANT_ABSENT. */
static size_t
named(const struct quant_scan *f, json_t *o, const char *member)
{
	json_t *s = json_object_get(o, member);

	if (!json_is_string(s))
		return QUANT_ABSENT;
	return quant_scan_lookup(f, json_string_value(s), json_string_length(s),
				 "");
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

	if (!b) {
		f->oom = 1;
		return "out of memory";
	}
	for (k = 0; !why && k < n; k += at) {
		at = n - k < ZP_CHUNK / 8 ? n - k : ZP_CHUNK / 8;
		if (model_tensor_read(f->m, &f->m->tensors[zi], 8 * k,
				      (size_t)(8 * at), b)) {
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
per_channel(struct quant_scan *f, const struct tensor *t, json_t *o,
	    struct torch_affine *p, size_t *si, size_t *zi, char *msg)
{
	json_t *ax = json_object_get(o, "axis");
	const struct tensor *st, *zt;
	uint64_t k;

	*si = named(f, o, "scales");
	*zi = named(f, o, "zero_points");
	if (!json_is_integer(ax) || json_integer_value(ax) < 0 ||
	    json_integer_value(ax) >= (json_int_t)t->rank)
		return "its axis is not one of its dimensions";
	if (*si == QUANT_ABSENT || *zi == QUANT_ABSENT)
		return "its per-channel scales or zero points are missing";
	p->per_channel = 1;
	p->axis = (uint32_t)json_integer_value(ax);
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

/* Tensor qi (its description o): its scheme in *p and the label, NULL;
 * or why. */
static const char *
describe(struct quant_scan *f, size_t qi, json_t *o, struct torch_affine *p,
	 size_t *si, size_t *zi, const char **label, char *msg)
{
	const struct tensor *t = quant_scan_tensor(f, qi);
	const char *qs = json_string_value(json_object_get(o, "qscheme"));
	const char *dt = json_string_value(json_object_get(o, "dtype"));
	static const enum dtype ints[] = { DTYPE_I8, DTYPE_U8, DTYPE_I32 };
	json_t *sc, *zp;
	int known = 0;
	size_t k;

	for (k = 0; dt && k < sizeof(ints) / sizeof(ints[0]); k++)
		if (strcmp(dt, torch_affine_dtype_name(ints[k])) == 0) {
			p->qdtype = ints[k];
			known = 1;
		}
	if (!qs || !dt)
		return "its __quantizer__ has no qscheme or dtype";
	if (!known) {
		snprintf(msg, QUANT_TORCH_MSG, "its dtype %.40s is not "
			 "torch.qint8, quint8 or qint32", dt);
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
	if (strcmp(qs, "torch.per_tensor_affine") == 0) {
		sc = json_object_get(o, "scale");
		zp = json_object_get(o, "zero_point");
		*label = "torch-per-tensor";
		if (!json_is_number(sc) || !json_is_integer(zp))
			return "its scale or zero point is not a number";
		p->scale = json_number_value(sc);
		p->zero_point = json_integer_value(zp);
		if (!torch_affine_zero_point_fits(p->qdtype, p->zero_point)) {
			snprintf(msg, QUANT_TORCH_MSG, "its zero point %" PRId64
				 " is outside the range of %s "
				 "(Tensor.dequantize() refuses it too)",
				 p->zero_point, dt);
			return msg;
		}
		return NULL;
	}
	if (strcmp(qs, "torch.per_channel_affine") &&
	    strcmp(qs, "torch.per_channel_affine_float_qparams")) {
		snprintf(msg, QUANT_TORCH_MSG, "its qscheme %.60s is not "
			 "decoded", qs);
		return msg;
	}
	*label = "torch-per-channel";
	qs = per_channel(f, t, o, p, si, zi, msg);
	if (p->zdtype == DTYPE_F32)
		*label = "torch-per-channel-float-qparams";
	return qs;
}

/* The quantized tensor named name[0..len), described by text[0..tlen). */
static void
candidate(struct quant_scan *f, const char *name, size_t len,
	  const char *text, size_t tlen)
{
	unsigned long jf = jsonmem_failures();
	size_t qi = quant_scan_lookup(f, name, len, "");
	size_t si = QUANT_ABSENT, zi = QUANT_ABSENT;
	const char *why = NULL, *label = "torch-per-tensor";
	char msg[QUANT_TORCH_MSG];
	struct quant_weight *w;
	struct torch_affine p;
	const struct tensor *t;
	json_t *o;

	if (qi == QUANT_ABSENT)
		return;		/* a value of that name, not a tensor's */
	t = quant_scan_tensor(f, qi);
	memset(&p, 0, sizeof(p));
	o = json_loadb(text, tlen, 0, NULL);
	/* a parse short of memory may fail, or drop a byte (jsonmem.h) */
	if (jsonmem_failures() != jf) {
		json_decref(o);
		f->oom = 1;
		return;
	}
	if (!json_is_object(o))
		why = memmem(text, tlen, "NaN", 3) ||
		      memmem(text, tlen, "Infinity", 8) ?
		      "its scale is not a finite number" :
		      "its __quantizer__ is not a JSON object";
	else
		why = describe(f, qi, o, &p, &si, &zi, &label, msg);
	json_decref(o);
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
