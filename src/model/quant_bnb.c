/* quant_bnb.c - the matchers of bitsandbytes' 4-bit weights (see
 * quant_bnb.h). */
#include "model/quant_bnb.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonmem.h"
#include "format/dtype.h"
#include "format/table.h"
#include "model/model.h"
#include "model/quant_scan.h"

/* A quant_state's JSON is a few hundred bytes; more is not one. */
#define QUANT_STATE_MAX 65536

/* The quant_state's JSON, parsed; NULL with *why, or with f->oom set
 * when out of memory (then the weight is not refused: what its state
 * says is unknown). */
static json_t *
bnb_state(struct quant_scan *f, size_t i, const char **why)
{
	unsigned long jf = jsonmem_failures();
	const struct tensor *t = quant_scan_tensor(f, i);
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
		f->oom = 1;
		return NULL;
	}
	if (model_tensor_read(f->m, &f->m->tensors[i], 0, (size_t)n, text))
		*why = "its quant_state cannot be read";
	else if (!(j = json_loadb(text, (size_t)n, 0, NULL)) ||
		 !json_is_object(j))
		*why = "its quant_state is not a JSON object";
	free(text);
	/* a parse short of memory may fail, or drop a byte (jsonmem.h) */
	if (jsonmem_failures() != jf) {
		f->oom = 1;
		json_decref(j);
		return NULL;
	}
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
bnb_check(const struct quant_scan *f, const struct quant_weight *w,
	  const char **why)
{
	const struct tensor *pk = quant_scan_tensor(f, w->part[0]);
	const struct tensor *am = quant_scan_tensor(f, w->part[1]);
	const struct tensor *qm = quant_scan_tensor(f, w->part[2]);
	uint64_t nblocks = quant_scan_ceil_div(w->numel, w->u.bnb.blocksize);
	size_t k;

	for (k = 0; k < QUANT_PARTS; k++)
		if (w->part[k] != QUANT_ABSENT &&
		    quant_scan_tensor(f, w->part[k])->strides)
			*why = "a strided view";
	if (*why)
		return -1;
	if (pk->end - pk->begin != quant_scan_ceil_div(w->numel, 2))
		*why = "its quant_state's shape does not match its packed "
		       "codes (two codes a byte)";
	else if (qm->dtype != DTYPE_F32 || qm->numel != 16)
		*why = "its quant_map is not 16 F32 values";
	else if (am->numel != nblocks ||
		 am->dtype != (w->u.bnb.nested ? DTYPE_U8 : DTYPE_F32))
		*why = "its absmax does not have one value per block";
	else if (w->u.bnb.nested &&
		 (quant_scan_tensor(f, w->part[4])->dtype != DTYPE_F32 ||
		  quant_scan_tensor(f, w->part[4])->numel !=
		  quant_scan_ceil_div(nblocks, w->u.bnb.nested_blocksize) ||
		  quant_scan_tensor(f, w->part[5])->dtype != DTYPE_F32 ||
		  quant_scan_tensor(f, w->part[5])->numel != 256))
		*why = "its nested_absmax or nested_quant_map do not fit";
	return *why ? -1 : 0;
}

static void
match_bnb(struct quant_scan *f, size_t i, size_t base, const char *type)
{
	const struct tensor *qs = quant_scan_tensor(f, i);
	const char *why = NULL, *n = qs->name;
	const char *label = strcmp(type, "nf4") == 0 ? "bnb-nf4" : "bnb-fp4";
	struct quant_weight *w;
	size_t parts[QUANT_PARTS];
	json_t *j;

	parts[0] = quant_scan_lookup(f, n, base, "");
	parts[1] = quant_scan_lookup(f, n, base, ".absmax");
	parts[2] = quant_scan_lookup(f, n, base, ".quant_map");
	parts[3] = i;
	parts[4] = quant_scan_lookup(f, n, base, ".nested_absmax");
	parts[5] = quant_scan_lookup(f, n, base, ".nested_quant_map");
	if (parts[0] == QUANT_ABSENT || parts[1] == QUANT_ABSENT ||
	    parts[2] == QUANT_ABSENT ||
	    (parts[4] == QUANT_ABSENT) != (parts[5] == QUANT_ABSENT)) {
		quant_scan_refuse(f, n, base, "absmax, quant_map or a nested "
				  "part is missing");
		return;
	}
	if (!quant_scan_parts_free(f, parts, QUANT_PARTS)) {
		quant_scan_refuse(f, n, base, "its tensors belong to another "
				  "weight");
		return;
	}
	if (f->count) {		/* its JSON is not read: a candidate */
		w = quant_scan_add(f, QUANT_BNB4, label, n, base, "");
		memcpy(w->part, parts, sizeof(parts));
		quant_scan_claim(f, w);
		return;
	}
	j = bnb_state(f, i, &why);
	if (!j) {
		if (!f->oom)
			quant_scan_refuse(f, n, base, "%s", why);
		return;
	}
	w = quant_scan_add(f, QUANT_BNB4, label, n, base, "");
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
		quant_scan_refuse(f, n, base, "%s", why);
		return;
	}
	quant_scan_claim(f, w);
}

void
quant_bnb_nf4(struct quant_scan *f, size_t i, size_t base)
{
	match_bnb(f, i, base, "nf4");
}

void
quant_bnb_fp4(struct quant_scan *f, size_t i, size_t base)
{
	match_bnb(f, i, base, "fp4");
}
