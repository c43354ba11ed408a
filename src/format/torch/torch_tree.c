/* torch_tree.c - a checkpoint's value tree as a table (torch_tree.h). */
#include "format/torch/torch_tree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/nametab.h"
#include "format/dtype.h"
#include "format/torch/torch_dtype.h"
#include "format/torch/torch_fold.h"
#include "format/torch/torch_qtensor.h"
#include "format/torch/torch_value.h"

#define VISITS_MAX ((uint64_t)1 << 25)	/* values looked at, all passes */
#define META_ID 0x80000000u	/* nametab ids of metadata pairs */
#define UNWRAP_MAX 4		/* parameter and subclass layers of a tensor */

struct storage {
	char *key;
	enum dtype dtype;
	uint64_t numel;		/* elements, as the persistent id says */
	uint64_t off, len;	/* its bytes in the file */
};

/* Everything the table owns (priv), freed at once: blocks of its own
 * (metadata text) and chunks of OWN_CHUNK bytes holding its small
 * pieces (names, shapes, storage keys: a malloc each cost 300,000 of
 * them and their pointers for 100,000 tensors, issue 38). */
struct owned {
	void **p;
	size_t n, cap;
	char *chunk;		/* the current chunk */
	size_t used;		/* bytes of it handed out */
};

#define OWN_CHUNK ((size_t)64 << 10)

struct tree {
	struct torch_zip *z;
	struct err *e;
	struct owned *own;
	struct buf name;	/* the dotted name being built */
	uint64_t visits;
	struct torch_tree_budget left;	/* what may still be made */
	struct torch_value val;		/* renders values (its left: metadata) */
	unsigned in_module;	/* walking the modules of a whole module */

	struct tensor *t;
	size_t nt, capt;
	struct meta_pair *m;
	size_t nm, capm;
	struct storage *st;
	size_t nst, capst;
	struct nametab names;	/* tensor i: i; metadata j: META_ID | j */
	struct nametab keys;	/* storage key -> index into st */
};

static void
owned_free(void *priv)
{
	struct owned *o = priv;
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->n; i++)
		free(o->p[i]);
	free(o->p);
	free(o);
}

/* Keep p (freed with the table); p itself on success, NULL (p freed)
 * when out of memory. */
static void *
own(struct tree *w, void *p)
{
	struct owned *o = w->own;

	if (!p)
		return NULL;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		void **q = realloc(o->p, cap * sizeof(*q));

		if (!q) {
			free(p);
			return NULL;
		}
		o->p = q;
		o->cap = cap;
	}
	o->p[o->n++] = p;
	return p;
}

/* n bytes (aligned for a uint64_t) the table owns, or NULL. */
static void *
own_alloc(struct tree *w, size_t n)
{
	struct owned *o = w->own;
	char *p;

	n = (n + 7) & ~(size_t)7;
	if (n > OWN_CHUNK / 4)
		return own(w, malloc(n));
	if (!o->chunk || OWN_CHUNK - o->used < n) {
		p = own(w, malloc(OWN_CHUNK));
		if (!p)
			return NULL;
		o->chunk = p;
		o->used = 0;
	}
	p = o->chunk + o->used;
	o->used += n;
	return p;
}

/* A copy of the n bytes at p, NUL-terminated, the table owns; or NULL. */
static char *
own_copy(struct tree *w, const char *p, size_t n)
{
	char *q = n < SIZE_MAX ? own_alloc(w, n + 1) : NULL;

	if (q) {
		if (n)
			memcpy(q, p, n);
		q[n] = '\0';
	}
	return q;
}

static int
grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	q = realloc(*v, c * size);
	if (!q)
		return -1;
	*v = q;
	*cap = c;
	return 0;
}

static int
oom(struct tree *w)
{
	return err_set(w->e, ERR_NO_MEMORY, "out of memory");
}

static int
bad(struct tree *w, const char *what)
{
	char q[160];

	err_quote(q, sizeof(q), w->name.data ? w->name.data : "", w->name.len);
	return err_set(w->e, ERR_INVALID_PICKLE, "%s %s (stfs reads state "
		       "dicts as torch.save writes them)", q, what);
}

static int
visit(struct tree *w)
{
	if (++w->visits <= w->val.visits_max)
		return 0;
	return err_set(w->e, ERR_INVALID_PICKLE, "the pickle has more than "
		       "%" PRIu64 " values to interpret", w->val.visits_max);
}

/* --- names ---------------------------------------------------------------- */

static int
name_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct tree *w = ctx;
	const char *p;
	size_t len;

	if (id & META_ID) {
		p = w->m[id & ~META_ID].key;
		len = w->m[id & ~META_ID].key_len;
	} else {
		p = w->t[id].name;
		len = w->t[id].name_len;
	}
	return len == k->len && memcmp(p, k->name, len) == 0;
}

/* The budget's refusal: the value named last is one too many. */
static int
too_many_names(struct tree *w)
{
	return bad(w, "is one name too many: the names of the tensors and "
		   "values add up to more than the pickle's size allows (8 "
		   "times its size and 1 MiB, or an entry per 2 bytes; "
		   "shared values named again and again?)");
}

/* A copy of the current name, registered under id; refuses a name met
 * before (a repeated key, or 1 and '1'). */
static char *
take_name(struct tree *w, uint32_t id)
{
	struct nametab_key k;
	char *p;
	long had;

	if (w->name.len > UINT32_MAX) {
		bad(w, "is a name longer than 4 GiB");
		return NULL;
	}
	if (!w->left.entries || w->name.len > w->left.names) {
		too_many_names(w);
		return NULL;
	}
	w->left.entries--;
	w->left.names -= w->name.len;
	p = own_copy(w, w->name.data ? w->name.data : "", w->name.len);
	if (!p) {
		oom(w);
		return NULL;
	}
	nametab_key(&k, 0, p, w->name.len);
	if (nametab_find(&w->names, &k) >= 0) {
		bad(w, "is there twice (a repeated key, or keys 1 and '1')");
		return NULL;
	}
	/* the entry at id is filled by the caller before the next lookup */
	had = nametab_put(&w->names, &k, id);
	if (had == -2) {
		oom(w);
		return NULL;
	}
	return p;
}

/* Append ".key" (or "key" at the root) to the name; its old length in
 * *mark.  A key is its text (torch_value_key: an integer in decimal).
 * 0; 1, the name unchanged, when the key holds a tensor; -1 with *w->e. */
static int
push_key(struct tree *w, const struct pickle_value *key, size_t *mark)
{
	struct torch_value kv = w->val;
	int rc;

	*mark = w->name.len;
	if (w->name.len && buf_add(&w->name, ".", 1))
		return oom(w);
	kv.left = w->left.names;
	rc = torch_value_key(&kv, key, &w->name);
	if (rc == 0)
		return 0;
	w->name.len = *mark;
	if (rc == 1)
		return 1;
	if (rc == 2)
		return too_many_names(w);
	return -1;
}

static int
push_text(struct tree *w, const char *text, size_t *mark)
{
	*mark = w->name.len;
	if ((w->name.len && buf_add(&w->name, ".", 1)) ||
	    buf_adds(&w->name, text))
		return oom(w);
	return 0;
}

/* --- storages -------------------------------------------------------------- */

static int
key_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct tree *w = ctx;

	return strlen(w->st[id].key) == k->len &&
	       memcmp(w->st[id].key, k->name, k->len) == 0;
}

/* The storage t names, located in the archive the first time it is
 * met. */
static struct storage *
storage_of(struct tree *w, const struct torch_fold_tensor *t)
{
	struct nametab_key k;
	struct storage *s;
	enum dtype d = t->storage_dtype;
	unsigned bits;
	char path[300];
	long id;

	nametab_key(&k, 0, t->key, t->key_len);
	id = nametab_find(&w->keys, &k);
	if (id >= 0) {
		s = &w->st[id];
		if (s->dtype != d || s->numel != t->numel) {
			bad(w, "views a storage another tensor sees with another "
			    "dtype or size");
			return NULL;
		}
		return s;
	}
	if (grow((void **)&w->st, &w->capst, w->nst, sizeof(*w->st))) {
		oom(w);
		return NULL;
	}
	s = &w->st[w->nst];
	memset(s, 0, sizeof(*s));
	s->dtype = d;
	s->numel = t->numel;
	s->key = own_copy(w, t->key, t->key_len);
	if (!s->key) {
		oom(w);
		return NULL;
	}
	snprintf(path, sizeof(path), "data/%s", s->key);
	if (torch_zip_locate(w->z, path, &s->off, &s->len, w->e))
		return NULL;
	bits = dtype_info(d)->bits;
	if (s->numel > UINT64_MAX / bits || s->numel * bits / 8 != s->len) {
		bad(w, "views a storage whose entry's size is not its numel "
		    "times its element size");
		return NULL;
	}
	nametab_key(&k, 0, s->key, strlen(s->key));
	if (nametab_put(&w->keys, &k, (uint32_t)w->nst) == -2) {
		oom(w);
		return NULL;
	}
	w->nst++;
	return s;
}

/* --- tensors --------------------------------------------------------------- */

/* The storage and view of the _rebuild_tensor_v2 or _v3 call a tensor
 * comes down to (folded as the pickle was read, or its arguments read
 * now: torch_fold.h), through a parameter (_rebuild_parameter(tensor,
 * ...)) or a subclass (_rebuild_from_type_v2(_rebuild_tensor_v2, type,
 * args, state)); or, for a quantized tensor, the arguments of its
 * _rebuild_qtensor call in *q (else *q NULL). */
static int
tensor_of(struct tree *w, const struct pickle_value *v,
	  struct torch_fold_tensor *t, const struct pickle_value **q)
{
	const struct pickle_value *a, *f;
	char why[200];
	int v3;

	for (int i = 0; i < UNWRAP_MAX; i++) {
		if (torch_fold_get(v, t))
			return 0;
		a = v->call.args;
		switch (v->call.callee->global.id) {
		case PICKLE_G_REBUILD_PARAMETER:
			if (a->seq.n < 1 ||
			    !torch_value_is_tensor(a->seq.items[0]))
				return bad(w, "is a parameter without a "
					   "tensor");
			v = a->seq.items[0];
			continue;
		case PICKLE_G_REBUILD_FROM_TYPE:
			f = a->seq.n >= 3 ? a->seq.items[0] : NULL;
			if (!f || f->kind != PICKLE_GLOBAL ||
			    (f->global.id != PICKLE_G_REBUILD_TENSOR_V2 &&
			     f->global.id != PICKLE_G_REBUILD_TENSOR_V3) ||
			    a->seq.items[2]->kind != PICKLE_TUPLE)
				return bad(w, "is a tensor of a subclass that "
					   "is not rebuilt by "
					   "_rebuild_tensor_v2 or _v3");
			v3 = f->global.id == PICKLE_G_REBUILD_TENSOR_V3;
			a = a->seq.items[2];
			break;
		default:	/* _rebuild_tensor_v2, _v3, _rebuild_qtensor */
			if (torch_value_is_qtensor(v)) {
				*q = a;
				return 0;
			}
			v3 = v->call.callee->global.id ==
			     PICKLE_G_REBUILD_TENSOR_V3;
			break;
		}
		return torch_fold_read(a, v3, t, why, sizeof(why)) ?
		       bad(w, why) : 0;
	}
	return bad(w, "is a parameter of a parameter of ...");
}

/* Checks the view stays in its storage of avail elements; *contiguous
 * when its elements are the storage's run from the offset on, in C
 * order. */
static int
check_view(struct tree *w, uint64_t avail, uint64_t offset,
	   const uint64_t *size, const uint64_t *stride, uint32_t rank,
	   uint64_t *numel, uint64_t *lastp, int *contiguous)
{
	uint64_t n = 1, last = offset, want = 1;
	uint32_t i;

	*contiguous = 1;
	for (i = 0; i < rank; i++)
		if (size[i] && n > UINT64_MAX / size[i])
			return bad(w, "has more elements than 2^64");
		else
			n *= size[i];
	*numel = n;
	*lastp = offset;
	if (n == 0)
		return offset <= avail ? 0 :
		       bad(w, "starts past the end of its storage");
	for (i = rank; i-- > 0;) {
		uint64_t step = size[i] - 1;

		if (stride[i] && step > (UINT64_MAX - last) / stride[i])
			return bad(w, "reaches past 2^64 elements");
		last += step * stride[i];
		if (size[i] != 1 && stride[i] != want)
			*contiguous = 0;
		want *= size[i];
	}
	if (last >= avail)
		return bad(w, "reaches past the end of its storage");
	*lastp = last;
	return 0;
}

/* The tensor of storage and view ft. */
static int
add_view(struct tree *w, const struct torch_fold_tensor *f)
{
	uint64_t numel = 0, last = 0, *keep, bytes, avail;
	const struct torch_fold_tensor ft = *f;
	const struct storage *s;
	struct tensor *t;
	int contiguous;
	unsigned bits;

	s = storage_of(w, &ft);
	if (!s)
		return -1;
	bits = dtype_info(ft.dtype)->bits;
	avail = ft.dtype == s->dtype ? s->numel : s->len * 8 / bits;
	if (check_view(w, avail, ft.offset, ft.size, ft.stride, ft.rank,
		       &numel, &last, &contiguous))
		return -1;
	if (grow((void **)&w->t, &w->capt, w->nt, sizeof(*w->t)))
		return oom(w);
	t = &w->t[w->nt];
	memset(t, 0, sizeof(*t));
	keep = own_alloc(w, 2 * (ft.rank ? ft.rank : 1) * sizeof(*keep));
	if (!keep)
		return oom(w);
	memcpy(keep, ft.size, ft.rank * sizeof(*keep));
	memcpy(keep + ft.rank, ft.stride, ft.rank * sizeof(*keep));
	t->dtype = ft.dtype;
	t->rank = ft.rank;
	t->shape = keep;
	t->numel = numel;
	t->storage = s->key;
	t->storage_offset = ft.offset;
	t->begin = s->off + t->storage_offset * bits / 8;
	/* contiguous: its bytes; strided: the run of the storage it
	 * reaches, gathered when served (tensor_render.h) */
	t->strides = contiguous ? NULL : keep + ft.rank;
	bytes = (contiguous ? numel : last + 1 - t->storage_offset) * bits / 8;
	t->end = t->begin + bytes;	/* within the storage: checked */
	if (w->name.len == 12 && memcmp(w->name.data, "__metadata__", 12) == 0)
		return bad(w, "is a tensor named as safetensors' metadata");
	t->name = take_name(w, (uint32_t)w->nt);
	if (!t->name)
		return -1;
	t->name_len = (uint32_t)w->name.len;
	w->nt++;
	return 0;
}

/* The tensor of a call's arguments a: (storage, offset, size, stride,
 * ...). */
static int
add_args(struct tree *w, const struct pickle_value *a)
{
	struct torch_fold_tensor ft;
	char why[200];

	if (torch_fold_read(a, 0, &ft, why, sizeof(why)))
		return bad(w, why);
	return add_view(w, &ft);
}

/* --- metadata --------------------------------------------------------------- */

/* A metadata pair of the current name and text (taken). */
static int
add_meta(struct tree *w, struct buf *text)
{
	struct meta_pair *p;

	if (text->len > UINT32_MAX) {
		buf_free(text);
		return bad(w, "is a value longer than 4 GiB");
	}
	if (grow((void **)&w->m, &w->capm, w->nm, sizeof(*w->m))) {
		buf_free(text);
		return oom(w);
	}
	p = &w->m[w->nm];
	memset(p, 0, sizeof(*p));
	p->val_len = (uint32_t)text->len;
	p->val = own(w, text->len ? buf_steal(text) : strdup(""));
	buf_free(text);
	if (!p->val)
		return oom(w);
	p->key = take_name(w, META_ID | (uint32_t)w->nm);
	if (!p->key)
		return -1;
	p->key_len = (uint32_t)w->name.len;
	w->nm++;
	return 0;
}

/* A value past the budget for metadata text: named, not shown. */
static int
add_elided(struct tree *w)
{
	struct buf text = BUF_INIT;

	if (buf_adds(&text, "{\"__elided__\": \"more metadata than stfs "
		     "keeps for this checkpoint: twice its pickle's size, and "
		     "1 MiB\"}")) {
		buf_free(&text);
		return oom(w);
	}
	return add_meta(w, &text);
}

/* --- the walk ------------------------------------------------------------------ */

static int walk(struct tree *w, const struct pickle_value *v);

/* walk(v) under the name ".text" (a part of a call, or an index). */
static int
walk_under(struct tree *w, const char *text, const struct pickle_value *v)
{
	size_t mark;
	int rc;

	if (!v)
		return 0;
	if (push_text(w, text, &mark))
		return -1;
	rc = walk(w, v);
	w->name.len = mark;
	return rc;
}

/* A quantized tensor (_rebuild_qtensor's arguments a): its integers as a
 * tensor under its name, its scheme NAME.__quantizer__, a per-channel
 * scheme's scales and zero points tensors of their own
 * (torch_qtensor.h). */
static int
add_qtensor(struct tree *w, const struct pickle_value *a)
{
	struct buf text = BUF_INIT;
	struct torch_qtensor q;
	size_t mark, ti = w->nt;
	int rc;

	w->val.left = w->left.meta;
	rc = torch_qtensor_describe(a, w->name.data, w->name.len, &w->val,
				    &text, &q);
	if (rc == 0 && add_args(w, a))
		rc = -1;
	if (rc == 0 && push_text(w, "__quantizer__", &mark))
		rc = -1;
	if (rc) {
		buf_free(&text);
		return rc < 0 ? -1 : bad(w, q.why);
	}
	w->left.meta -= text.len < w->left.meta ? text.len : w->left.meta;
	rc = add_meta(w, &text);
	w->name.len = mark;
	/* the integers' tensor (add_args added it) names its scheme */
	if (rc == 0 && ti < w->nt && w->nm <= UINT32_MAX)
		w->t[ti].quantizer = (uint32_t)w->nm;
	if (rc == 0 && q.scales)
		rc = walk_under(w, "q_per_channel_scales", q.scales);
	if (rc == 0 && q.zero_points)
		rc = walk_under(w, "q_per_channel_zero_points", q.zero_points);
	return rc;
}

static int
add_tensor(struct tree *w, const struct pickle_value *v)
{
	const struct pickle_value *q = NULL;
	struct torch_fold_tensor ft;

	if (tensor_of(w, v, &ft, &q))
		return -1;
	return q ? add_qtensor(w, q) : add_view(w, &ft);
}

/* A value that holds a tensor inside, not a dict: a list or tuple by
 * index, an object described by a call by its parts, as torch_value.h
 * shows them ("__class__", "args", "kwargs", "state", "items"). */
static int
walk_parts(struct tree *w, const struct pickle_value *v)
{
	char index[24];
	int rc = 0;

	switch (v->kind) {
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		/* named by their place in the pickle's list; a run of
		 * items passed by (PICKLE_PASSED) by the place of its first,
		 * shown as {"__not_kept__": N} */
		for (size_t i = 0, at = 0; rc == 0 && i < v->seq.n; i++) {
			const struct pickle_value *x = v->seq.items[i];

			snprintf(index, sizeof(index), "%zu", at);
			at += x->kind == PICKLE_PASSED ? x->passed.n : 1;
			rc = walk_under(w, index, x);
		}
		return rc;
	case PICKLE_CALL:
		rc = walk_under(w, v->newobj ? "__class__" : "__call__",
				v->call.callee);
		if (rc == 0 && v->call.args->seq.n)
			rc = walk_under(w, "args", v->call.args);
		if (rc == 0)
			rc = walk_under(w, "kwargs", v->call.kwargs);
		if (rc == 0)
			rc = walk_under(w, "state", v->call.state);
		if (rc == 0)
			rc = walk_under(w, "items", v->call.items);
		return rc;
	case PICKLE_PERSID:
		return walk_under(w, "__persistent_id__", v->persid.pid);
	default:
		return bad(w, "holds a tensor where stfs cannot name it");
	}
}

/* --- whole modules ---------------------------------------------------------- */

/* The dicts of a module's state that state_dict() walks, in its order. */
enum { PARAMETERS, BUFFERS, MODULES, PARTS };

/* The state of an nn.Module pickled whole (torch.save(model)): the
 * __dict__ BUILD gave the object, with the _parameters and _modules dicts
 * (and _buffers: NULL when absent) that state_dict() walks, in part;
 * NULL for anything else. */
static const struct pickle_value *
module_state(const struct pickle_value *v,
	     const struct pickle_value *part[PARTS])
{
	const struct pickle_value *st = v->kind == PICKLE_CALL ?
					v->call.state : NULL, *p, *m, *b;

	if (!st || st->kind != PICKLE_DICT)
		return NULL;
	p = pickle_dict_get(st, "_parameters");
	m = pickle_dict_get(st, "_modules");
	b = pickle_dict_get(st, "_buffers");
	if (!p || p->kind != PICKLE_DICT || !m || m->kind != PICKLE_DICT ||
	    (b && b->kind != PICKLE_DICT))
		return NULL;
	part[PARAMETERS] = p;
	part[BUFFERS] = b;
	part[MODULES] = m;
	return st;
}

/* 1 when the set of names (a module's _non_persistent_buffers_set)
 * holds the string key. */
static int
in_names(const struct pickle_value *set, const struct pickle_value *key)
{
	for (size_t i = 0; set && key->kind == PICKLE_STR && i < set->seq.n;
	     i++) {
		const struct pickle_value *x = set->seq.items[i];

		if (x->kind == PICKLE_STR && x->str.len == key->str.len &&
		    memcmp(x->str.p, key->str.p, key->str.len) == 0)
			return 1;
	}
	return 0;
}

/* A whole module by the names its state_dict() gives: its parameters,
 * its persistent buffers, then each submodule's under its name; None
 * entries (a Linear without bias) have none.  The outermost module's
 * class is the metadata __class__. */
static int
walk_module(struct tree *w, const struct pickle_value *v,
	    const struct pickle_value *st,
	    const struct pickle_value *const part[PARTS])
{
	const struct pickle_value *skip, *d;
	size_t mark;
	int rc = 0;

	skip = pickle_dict_get(st, "_non_persistent_buffers_set");
	if (skip && skip->kind != PICKLE_SET)
		skip = NULL;
	/* the lookups in the state: values looked at too (a state of a
	 * million keys shared by a million modules must not cost 10^12) */
	w->visits += 3 * st->dict.n;
	if (!w->in_module && walk_under(w, "__class__", v->call.callee))
		return -1;
	w->in_module++;
	for (size_t p = 0; rc == 0 && p < PARTS; p++) {
		d = part[p];
		for (size_t i = 0; rc == 0 && d && i < d->dict.n; i++) {
			if (d->dict.values[i]->kind == PICKLE_NONE)
				continue;
			if (p == BUFFERS && skip) {
				w->visits += skip->seq.n;
				if (in_names(skip, d->dict.keys[i]))
					continue;
			}
			rc = push_key(w, d->dict.keys[i], &mark);
			if (rc)
				return rc < 0 ? -1 : bad(w, "has a tensor as "
							 "the name of a "
							 "module's entry");
			rc = walk(w, d->dict.values[i]);
			w->name.len = mark;
		}
	}
	w->in_module--;
	return rc;
}

/* Item i of dict d under its key's text; a key holding a tensor (an
 * optimizer's own state, keyed by its parameters) has its index for text
 * and is itself walked as "INDEX.__key__". */
static int
walk_item(struct tree *w, const struct pickle_value *d, size_t i)
{
	char index[24];
	size_t mark;
	int rc;

	rc = push_key(w, d->dict.keys[i], &mark);
	if (rc == 0) {
		rc = walk(w, d->dict.values[i]);
		w->name.len = mark;
		return rc;
	}
	if (rc < 0)
		return -1;
	snprintf(index, sizeof(index), "%zu", i);
	if (push_text(w, index, &mark))
		return -1;
	rc = walk(w, d->dict.values[i]);
	if (rc == 0)
		rc = walk_under(w, "__key__", d->dict.keys[i]);
	w->name.len = mark;
	return rc;
}

static int
walk(struct tree *w, const struct pickle_value *v)
{
	const struct pickle_value *st, *part[PARTS];
	struct buf text = BUF_INIT;
	size_t i;
	int rc = 0;

	if (visit(w))
		return -1;
	st = module_state(v, part);
	if (st)
		return walk_module(w, v, st, part);
	if (v->kind == PICKLE_DICT && v->dict.n) {
		for (i = 0; rc == 0 && i < v->dict.n; i++)
			rc = walk_item(w, v, i);
		return rc;
	}
	if (torch_value_is_tensor(v))
		return add_tensor(w, v);
	w->val.left = w->left.meta;
	rc = torch_value_text(&w->val, v, &text);
	if (rc == 0) {
		w->left.meta -= text.len;
		return add_meta(w, &text);
	}
	buf_free(&text);
	if (rc == 2)
		return add_elided(w);
	return rc < 0 ? -1 : walk_parts(w, v);
}

static int
cmp_range(const void *a, const void *b)
{
	const struct tensor *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	c = memcmp(x->name, y->name, n);
	return c ? c : x->name_len < y->name_len ? -1 :
	       x->name_len > y->name_len;
}

static void
tree_free(struct tree *w)
{
	buf_free(&w->name);
	free(w->t);
	free(w->m);
	free(w->st);
	if (w->names.slot)
		nametab_free(&w->names);
	if (w->keys.slot)
		nametab_free(&w->keys);
	owned_free(w->own);
}

/* The root is not a dict: what it is, in the message. */
static int
not_a_dict(struct tree *w, const struct pickle_value *root)
{
	const struct pickle_value *c = root;
	char what[200];

	while (c->kind == PICKLE_CALL)
		c = c->call.callee;
	if (c != root && c->kind == PICKLE_GLOBAL && !torch_value_is_tensor(root))
		snprintf(what, sizeof(what), "%s %.80s.%.80s",
			 root->newobj ? "an object of class" :
			 "a call of", c->global.module, c->global.name);
	else
		snprintf(what, sizeof(what), "a %s",
			 torch_value_is_tensor(root) ? "tensor" :
			 pickle_kind_name(root->kind));
	tree_free(w);
	return err_set(w->e, ERR_INVALID_PICKLE, "the pickle holds %s, not a "
		       "dict of tensors (a state dict) or a module: stfs mounts "
		       "state dicts (torch.save(model.state_dict())) and whole "
		       "modules (torch.save(model))", what);
}

struct torch_tree_budget
torch_tree_budget_for(size_t pickle_len)
{
	uint64_t n = pickle_len;
	struct torch_tree_budget b = {
		.names = 8 * n + (1u << 20),
		.meta = 2 * n + (1u << 20),
		.entries = n / 2 + 65536,
		.visits = 16 * n + (1u << 20),
	};

	if (b.visits > VISITS_MAX)
		b.visits = VISITS_MAX;
	return b;
}

int
torch_tree_table(struct pickle **pk, struct torch_zip *z, uint64_t file_size,
		 const struct torch_tree_budget *budget, struct header **out,
		 struct err *e)
{
	const struct pickle_value *part[PARTS], *root = pickle_root(*pk);
	struct tree w = { 0 };
	struct header *h;
	size_t i;

	*out = NULL;
	w.z = z;
	w.e = e;
	w.left = *budget;
	w.val.e = e;
	w.val.visits = &w.visits;
	w.val.visits_max = budget->visits;
	w.own = calloc(1, sizeof(*w.own));
	/* room for the tensors folded, each with its storage */
	if (budget->tensors && budget->tensors < budget->entries) {
		w.capt = w.capst = (size_t)budget->tensors;
		w.t = malloc(w.capt * sizeof(*w.t));
		w.st = malloc(w.capst * sizeof(*w.st));
	}
	if (!w.own || (w.capt && (!w.t || !w.st)) ||
	    nametab_init(&w.names, 64 + w.capt, name_eq, &w) ||
	    nametab_init(&w.keys, 64 + w.capst, key_eq, &w)) {
		tree_free(&w);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (root->kind != PICKLE_DICT && !module_state(root, part))
		return not_a_dict(&w, root);
	h = calloc(1, sizeof(*h));
	if (!h || walk(&w, root)) {
		free(h);
		tree_free(&w);
		return h ? -1 : err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	/* walked: its memory is the sort's */
	pickle_free(*pk);
	*pk = NULL;
	if (w.nt)
		qsort(w.t, w.nt, sizeof(*w.t), cmp_range);
	h->file_size = file_size;
	h->ntensors = w.nt;
	h->tensors = w.t;
	h->nmeta = w.nm;
	h->meta = w.m;
	h->has_metadata = w.nm > 0;
	for (i = 0; i < w.nt; i++)
		if (w.t[i].end > h->data_len)
			h->data_len = w.t[i].end;
	h->priv = w.own;
	h->free_priv = owned_free;
	w.t = NULL;
	w.m = NULL;
	w.own = NULL;
	tree_free(&w);
	*out = h;
	return 0;
}
