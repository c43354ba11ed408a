/* torch_fold.c - a tensor's call as its storage and view (torch_fold.h).
 */
#include "format/torch/torch_fold.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "format/torch/pickle_store.h"
#include "format/torch/torch_dtype.h"

#define FOLD_TAG 0x74656e73u	/* "tens": a PICKLE_EXTERN of this module */

/* What a folded call keeps, in its PICKLE_EXTERN's bytes: this, then
 * size[rank], stride[rank], then the key. */
struct packed {
	uint64_t numel, offset;
	uint32_t rank, key_len;
	uint8_t storage_dtype, dtype;
	uint64_t dims[];
};

static int
why_of(char *why, size_t cap, const char *what)
{
	snprintf(why, cap, "%s", what);
	return -1;
}

/* An int of a tensor's geometry (an offset, a size, a stride), >= 0:
 * these need 64 bits, no more. */
static int
geometry_int(const struct pickle_value *v, uint64_t *out, const char *what,
	     char *why, size_t cap)
{
	if (v->kind == PICKLE_INT && v->i >= 0) {
		*out = (uint64_t)v->i;
		return 0;
	}
	snprintf(why, cap, "has %s %s", what,
		 v->kind == PICKLE_LONG ? "wider than 64 bits" :
		 v->kind == PICKLE_INT ? "below 0" : "that is not an integer");
	return -1;
}

/* Integers of a tuple (sizes, strides), each >= 0. */
static int
int_tuple(const struct pickle_value *v, uint64_t *out, uint32_t *n,
	  const char *what, char *why, size_t cap)
{
	char msg[80];
	size_t i;

	if (v->kind != PICKLE_TUPLE || v->seq.n > TORCH_FOLD_RANK_MAX) {
		snprintf(why, cap, "has %ss that are not a tuple of up to 64 "
			 "integers", what);
		return -1;
	}
	snprintf(msg, sizeof(msg), "a %s", what);
	for (i = 0; i < v->seq.n; i++)
		if (geometry_int(v->seq.items[i], &out[i], msg, why, cap))
			return -1;
	*n = (uint32_t)v->seq.n;
	return 0;
}

/* The storage a persistent id names: ('storage', TYPE, KEY, LOCATION,
 * NUMEL). */
static int
storage(const struct pickle_value *pid, struct torch_fold_tensor *t,
	char *why, size_t cap)
{
	struct pickle_value *const *it = pid->seq.items;
	const struct pickle_value *key;

	if (pid->kind != PICKLE_TUPLE || pid->seq.n != 5 ||
	    it[0]->kind != PICKLE_STR || strcmp(it[0]->str.p, "storage") ||
	    it[1]->kind != PICKLE_GLOBAL ||
	    it[1]->global.id != PICKLE_G_STORAGE ||
	    it[2]->kind != PICKLE_STR || it[4]->kind != PICKLE_INT ||
	    it[4]->i < 0)
		return why_of(why, cap, "has a storage reference that is not "
			      "('storage', type, key, location, numel)");
	key = it[2];
	if (key->str.len == 0 || key->str.len > 200 ||
	    memchr(key->str.p, '\0', key->str.len))
		return why_of(why, cap, "has a storage key that is empty, too "
			      "long or holds a NUL");
	if (torch_dtype_of_storage(it[1]->global.name, &t->storage_dtype)) {
		snprintf(why, cap, "is a torch.%.60s tensor, which has no "
			 "safetensors dtype", it[1]->global.name);
		return -1;
	}
	t->key = key->str.p;
	t->key_len = key->str.len;
	t->numel = (uint64_t)it[4]->i;
	return 0;
}

/* The dtype of a _rebuild_tensor_v3 call: its 7th argument, torch.NAME. */
static int
v3_dtype(const struct pickle_value *a, enum dtype *out, char *why,
	 size_t cap)
{
	const struct pickle_value *g = a->seq.n >= 7 ? a->seq.items[6] : NULL;

	if (!g || g->kind != PICKLE_GLOBAL || strcmp(g->global.module, "torch"))
		return why_of(why, cap, "is a _rebuild_tensor_v3 tensor without "
			      "its dtype");
	if (torch_dtype_of_name(g->global.name, out) == 0)
		return 0;
	snprintf(why, cap, "is a torch.%.60s tensor, which has no safetensors "
		 "dtype", g->global.name);
	return -1;
}

int
torch_fold_read(const struct pickle_value *a, int v3,
		struct torch_fold_tensor *t, char *why, size_t cap)
{
	uint32_t srank;

	if (a->kind != PICKLE_TUPLE || a->seq.n < 4 ||
	    a->seq.items[0]->kind != PICKLE_PERSID)
		return why_of(why, cap, "is a tensor call without (storage, "
			      "offset, size, stride)");
	if (geometry_int(a->seq.items[1], &t->offset, "a storage offset", why,
			 cap) ||
	    int_tuple(a->seq.items[2], t->size, &t->rank, "size", why, cap) ||
	    int_tuple(a->seq.items[3], t->stride, &srank, "stride", why, cap))
		return -1;
	if (srank != t->rank)
		return why_of(why, cap, "has a different number of strides and "
			      "sizes");
	if (storage(a->seq.items[0]->persid.pid, t, why, cap))
		return -1;
	/* _v2: the storage's type is the tensor's; _v3: the dtype is an
	 * argument, the storage's bytes (an UntypedStorage) hold the
	 * elements */
	t->dtype = t->storage_dtype;
	return v3 ? v3_dtype(a, &t->dtype, why, cap) : 0;
}

/* The arguments after (storage, offset, size, stride) are torch.save's:
 * requires_grad, no backward hooks, and _v2's metadata None. */
static int
plain_rest(const struct pickle_value *a, int v3)
{
	const struct pickle_value *hooks;

	if (a->seq.n != 6 + (size_t)v3 && (v3 || a->seq.n != 7 ||
					   a->seq.items[6]->kind != PICKLE_NONE))
		return 0;
	hooks = a->seq.items[5];
	return a->seq.items[4]->kind == PICKLE_BOOL &&
	       hooks->kind == PICKLE_DICT && hooks->dict.n == 0 &&
	       !hooks->dict.attrs;
}

int
torch_fold_call(void *ctx, struct pickle_store *s,
		const struct pickle_value *callee,
		const struct pickle_value *args, struct pickle_value **made,
		struct err *e)
{
	struct torch_fold_tensor t;
	struct pickle_value *v;
	struct packed *p;
	char why[8];
	int v3;

	if (callee->global.id != PICKLE_G_REBUILD_TENSOR_V2 &&
	    callee->global.id != PICKLE_G_REBUILD_TENSOR_V3)
		return 0;
	v3 = callee->global.id == PICKLE_G_REBUILD_TENSOR_V3;
	if (torch_fold_read(args, v3, &t, why, sizeof(why)) ||
	    !plain_rest(args, v3))
		return 0;	/* the table says what is wrong, or shows it */
	v = pickle_store_extern(s, FOLD_TAG, sizeof(*p) + 2 * t.rank *
				sizeof(uint64_t) + t.key_len, e);
	if (!v)
		return -1;
	p = (struct packed *)v->ext.p;
	p->numel = t.numel;
	p->offset = t.offset;
	p->rank = t.rank;
	p->key_len = (uint32_t)t.key_len;
	p->storage_dtype = (uint8_t)t.storage_dtype;
	p->dtype = (uint8_t)t.dtype;
	memcpy(p->dims, t.size, t.rank * sizeof(uint64_t));
	memcpy(p->dims + t.rank, t.stride, t.rank * sizeof(uint64_t));
	memcpy(p->dims + 2 * t.rank, t.key, t.key_len);
	*made = v;
	if (ctx)
		++*(size_t *)ctx;
	return 1;
}

int
torch_fold_get(const struct pickle_value *v, struct torch_fold_tensor *t)
{
	const struct packed *p;

	if (v->kind != PICKLE_EXTERN || v->ext.tag != FOLD_TAG)
		return 0;
	p = v->ext.p;
	t->numel = p->numel;
	t->offset = p->offset;
	t->rank = p->rank;
	t->key_len = p->key_len;
	t->storage_dtype = (enum dtype)p->storage_dtype;
	t->dtype = (enum dtype)p->dtype;
	memcpy(t->size, p->dims, t->rank * sizeof(uint64_t));
	memcpy(t->stride, p->dims + t->rank, t->rank * sizeof(uint64_t));
	t->key = (const char *)(p->dims + 2 * t->rank);
	return 1;
}
