/* torch_tree.c - a checkpoint's value tree as a table (torch_tree.h). */
#include "format/torch/torch_tree.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/nametab.h"
#include "format/dtype.h"

#define RANK_MAX 64		/* torch allows 64 dimensions */
#define VISITS_MAX ((uint64_t)1 << 25)	/* values looked at, all passes */
#define META_ID 0x80000000u	/* nametab ids of metadata pairs */

/* Storage types (the persistent id's GLOBAL) and their dtypes. */
static const struct {
	const char *name;
	enum dtype dtype;
} storage_types[] = {
	{ "FloatStorage", DTYPE_F32 },
	{ "DoubleStorage", DTYPE_F64 },
	{ "HalfStorage", DTYPE_F16 },
	{ "BFloat16Storage", DTYPE_BF16 },
	{ "ByteStorage", DTYPE_U8 },
	{ "CharStorage", DTYPE_I8 },
	{ "ShortStorage", DTYPE_I16 },
	{ "IntStorage", DTYPE_I32 },
	{ "LongStorage", DTYPE_I64 },
	{ "BoolStorage", DTYPE_BOOL },
	{ "ComplexFloatStorage", DTYPE_C64 },
};

struct storage {
	char *key;
	enum dtype dtype;
	uint64_t numel;		/* elements, as the persistent id says */
	uint64_t off, len;	/* its bytes in the file */
};

/* Everything the table owns (priv), freed at once. */
struct owned {
	void **p;
	size_t n, cap;
};

struct tree {
	struct torch_zip *z;
	struct err *e;
	struct owned *own;
	struct buf name;	/* the dotted name being built */
	uint64_t visits;

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
	if (++w->visits <= VISITS_MAX)
		return 0;
	return err_set(w->e, ERR_INVALID_PICKLE, "the pickle has more than "
		       "%" PRIu64 " values to interpret", VISITS_MAX);
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
	p = own(w, malloc(w->name.len + 1));
	if (!p) {
		oom(w);
		return NULL;
	}
	memcpy(p, w->name.data ? w->name.data : "", w->name.len);
	p[w->name.len] = '\0';
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
 * *mark.  Keys are strings or integers. */
static int
push_key(struct tree *w, const struct pickle_value *key, size_t *mark)
{
	*mark = w->name.len;
	if (w->name.len && buf_add(&w->name, ".", 1))
		return oom(w);
	switch (key->kind) {
	case PICKLE_STR:
		if (buf_add(&w->name, key->str.p, key->str.len))
			return oom(w);
		return 0;
	case PICKLE_INT:
		if (buf_addf(&w->name, "%" PRId64, key->i))
			return oom(w);
		return 0;
	default:
		w->name.len = *mark;
		return bad(w, "has a key that is neither a string nor an "
			   "integer");
	}
}

static int
push_index(struct tree *w, size_t i, size_t *mark)
{
	*mark = w->name.len;
	if ((w->name.len && buf_add(&w->name, ".", 1)) ||
	    buf_addf(&w->name, "%zu", i))
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

static int
storage_dtype(const char *name, enum dtype *out)
{
	size_t i;

	for (i = 0; i < sizeof(storage_types) / sizeof(storage_types[0]); i++)
		if (strcmp(storage_types[i].name, name) == 0) {
			*out = storage_types[i].dtype;
			return 0;
		}
	return -1;
}

/* The storage a persistent id names: ('storage', TYPE, KEY, LOCATION,
 * NUMEL), located in the archive the first time it is met. */
static struct storage *
storage_of(struct tree *w, const struct pickle_value *pid)
{
	struct pickle_value *const *it = pid->seq.items;
	const struct pickle_value *key;
	struct nametab_key k;
	struct storage *s;
	unsigned bits;
	enum dtype d;
	char path[300];
	long id;

	if (pid->kind != PICKLE_TUPLE || pid->seq.n != 5 ||
	    it[0]->kind != PICKLE_STR || strcmp(it[0]->str.p, "storage") ||
	    it[1]->kind != PICKLE_GLOBAL ||
	    it[1]->global.id != PICKLE_G_STORAGE || it[2]->kind != PICKLE_STR ||
	    it[4]->kind != PICKLE_INT || it[4]->i < 0) {
		bad(w, "has a storage reference that is not ('storage', "
		    "type, key, location, numel)");
		return NULL;
	}
	key = it[2];
	if (key->str.len == 0 || key->str.len > 200 ||
	    memchr(key->str.p, '\0', key->str.len)) {
		bad(w, "has a storage key that is empty, too long or holds a "
		    "NUL");
		return NULL;
	}
	if (storage_dtype(it[1]->global.name, &d)) {
		char msg[200];

		snprintf(msg, sizeof(msg), "is a torch.%.60s tensor, which has "
			 "no safetensors dtype", it[1]->global.name);
		bad(w, msg);
		return NULL;
	}
	nametab_key(&k, 0, key->str.p, key->str.len);
	id = nametab_find(&w->keys, &k);
	if (id >= 0) {
		s = &w->st[id];
		if (s->dtype != d || s->numel != (uint64_t)it[4]->i) {
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
	s->numel = (uint64_t)it[4]->i;
	s->key = own(w, strndup(key->str.p, key->str.len));
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

static int
is_tensor(const struct pickle_value *v)
{
	return v->kind == PICKLE_CALL && !v->call.newobj &&
	       v->call.callee->kind == PICKLE_GLOBAL &&
	       (v->call.callee->global.id == PICKLE_G_REBUILD_TENSOR_V2 ||
		v->call.callee->global.id == PICKLE_G_REBUILD_PARAMETER);
}

/* Integers of a tuple (sizes, strides), each >= 0. */
static int
int_tuple(struct tree *w, const struct pickle_value *v, uint64_t *out,
	  uint32_t *n, const char *what)
{
	size_t i;

	if (v->kind != PICKLE_TUPLE || v->seq.n > RANK_MAX)
		return bad(w, what);
	for (i = 0; i < v->seq.n; i++) {
		if (v->seq.items[i]->kind != PICKLE_INT ||
		    v->seq.items[i]->i < 0)
			return bad(w, what);
		out[i] = (uint64_t)v->seq.items[i]->i;
	}
	*n = (uint32_t)v->seq.n;
	return 0;
}

/* Checks the view stays in its storage; *contiguous when its elements
 * are the storage's run from the offset on, in C order. */
static int
check_view(struct tree *w, const struct storage *s, uint64_t offset,
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
		return offset <= s->numel ? 0 :
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
	if (last >= s->numel)
		return bad(w, "reaches past the end of its storage");
	*lastp = last;
	return 0;
}

static int
add_tensor(struct tree *w, const struct pickle_value *v)
{
	const struct pickle_value *a;
	uint64_t size[RANK_MAX], stride[RANK_MAX], numel = 0, last = 0, *keep;
	uint64_t bytes;
	uint32_t rank, srank;
	const struct storage *s;
	struct tensor *t;
	int contiguous;
	unsigned bits;

	if (v->call.callee->global.id == PICKLE_G_REBUILD_PARAMETER) {
		a = v->call.args;
		if (a->seq.n < 1 || a->seq.items[0]->kind != PICKLE_CALL ||
		    a->seq.items[0]->call.callee->global.id !=
		    PICKLE_G_REBUILD_TENSOR_V2)
			return bad(w, "is a parameter without a tensor");
		v = a->seq.items[0];
	}
	a = v->call.args;
	if (a->seq.n < 4 || a->seq.items[0]->kind != PICKLE_PERSID ||
	    a->seq.items[1]->kind != PICKLE_INT || a->seq.items[1]->i < 0)
		return bad(w, "is a tensor call without (storage, offset, "
			   "size, stride)");
	if (int_tuple(w, a->seq.items[2], size, &rank, "has sizes that are "
		      "not a tuple of up to 64 integers >= 0") ||
	    int_tuple(w, a->seq.items[3], stride, &srank, "has strides that "
		      "are not a tuple of up to 64 integers >= 0"))
		return -1;
	if (srank != rank)
		return bad(w, "has as many strides as sizes");
	s = storage_of(w, a->seq.items[0]->persid.pid);
	if (!s || check_view(w, s, (uint64_t)a->seq.items[1]->i, size, stride,
			     rank, &numel, &last, &contiguous))
		return -1;
	if (grow((void **)&w->t, &w->capt, w->nt, sizeof(*w->t)))
		return oom(w);
	t = &w->t[w->nt];
	memset(t, 0, sizeof(*t));
	keep = own(w, malloc(2 * (rank ? rank : 1) * sizeof(*keep)));
	if (!keep)
		return oom(w);
	memcpy(keep, size, rank * sizeof(*keep));
	memcpy(keep + rank, stride, rank * sizeof(*keep));
	bits = dtype_info(s->dtype)->bits;
	t->dtype = s->dtype;
	t->rank = rank;
	t->shape = keep;
	t->numel = numel;
	t->storage = s->key;
	t->storage_offset = (uint64_t)a->seq.items[1]->i;
	t->begin = s->off + t->storage_offset * bits / 8;
	/* contiguous: its bytes; strided: the run of the storage it
	 * reaches, gathered when served (tensor_render.h) */
	t->strides = contiguous ? NULL : keep + rank;
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

/* --- values as text ---------------------------------------------------------- */

static int
add_double(struct buf *b, double f)
{
	char tmp[40];
	int prec;

	if (isnan(f))
		return buf_adds(b, "NaN");
	if (isinf(f))
		return buf_adds(b, f < 0 ? "-Infinity" : "Infinity");
	/* the shortest text that reads back as f, as Python's repr */
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*g", prec, f);
	if (!strpbrk(tmp, ".eninf"))
		strcat(tmp, ".0");
	return buf_adds(b, tmp);
}

/* v as JSON into b: 0, 1 when v holds a tensor (b is then unused), -1. */
static int
to_json(struct tree *w, const struct pickle_value *v, struct buf *b)
{
	size_t i;
	int rc = 0;

	if (visit(w))
		return -1;
	switch (v->kind) {
	case PICKLE_NONE:
		return buf_adds(b, "null") ? oom(w) : 0;
	case PICKLE_BOOL:
		return buf_adds(b, v->b ? "true" : "false") ? oom(w) : 0;
	case PICKLE_INT:
		return buf_addf(b, "%" PRId64, v->i) ? oom(w) : 0;
	case PICKLE_FLOAT:
		return add_double(b, v->f) ? oom(w) : 0;
	case PICKLE_STR:
		return buf_add_json_string(b, v->str.p, v->str.len) ?
		       oom(w) : 0;
	case PICKLE_BYTES:
		if (buf_adds(b, "\"0x"))
			return oom(w);
		for (i = 0; i < v->str.len; i++)
			if (buf_addf(b, "%02x", (unsigned char)v->str.p[i]))
				return oom(w);
		return buf_adds(b, "\"") ? oom(w) : 0;
	case PICKLE_GLOBAL:
		return buf_addf(b, "\"%s.%s\"", v->global.module,
				v->global.name) ? oom(w) : 0;
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		if (buf_adds(b, "["))
			return oom(w);
		for (i = 0; rc == 0 && i < v->seq.n; i++)
			if (i && buf_adds(b, ", "))
				rc = oom(w);
			else
				rc = to_json(w, v->seq.items[i], b);
		return rc ? rc : buf_adds(b, "]") ? oom(w) : 0;
	case PICKLE_DICT:
		if (buf_adds(b, "{"))
			return oom(w);
		for (i = 0; rc == 0 && i < v->dict.n; i++) {
			const struct pickle_value *k = v->dict.keys[i];

			if (i && buf_adds(b, ", "))
				return oom(w);
			if (k->kind == PICKLE_STR)
				rc = to_json(w, k, b);
			else if (k->kind == PICKLE_INT)
				rc = buf_addf(b, "\"%" PRId64 "\"", k->i) ?
				     oom(w) : 0;
			else
				rc = bad(w, "holds a dict with a key that is "
					 "neither a string nor an integer");
			if (rc == 0 && buf_adds(b, ": "))
				rc = oom(w);
			if (rc == 0)
				rc = to_json(w, v->dict.values[i], b);
		}
		return rc ? rc : buf_adds(b, "}") ? oom(w) : 0;
	case PICKLE_CALL:
		if (is_tensor(v))
			return 1;
		return bad(w, "holds a call that is not a tensor");
	case PICKLE_LONG:
		return bad(w, "holds an int wider than 64 bits");
	default:
		return bad(w, "holds a storage outside a tensor");
	}
}

static int
add_meta(struct tree *w, const struct pickle_value *v, struct buf *text)
{
	struct meta_pair *p;
	char *val;

	if (grow((void **)&w->m, &w->capm, w->nm, sizeof(*w->m)))
		return oom(w);
	p = &w->m[w->nm];
	memset(p, 0, sizeof(*p));
	if (v->kind == PICKLE_STR) {
		val = own(w, malloc(v->str.len + 1));
		if (val)
			memcpy(val, v->str.p, v->str.len + 1);
		p->val_len = (uint32_t)v->str.len;
		buf_free(text);
	} else {
		p->val_len = (uint32_t)text->len;
		val = own(w, buf_steal(text));
	}
	if (!val || (v->kind == PICKLE_STR && v->str.len > UINT32_MAX))
		return oom(w);
	p->val = val;
	p->key = take_name(w, META_ID | (uint32_t)w->nm);
	if (!p->key)
		return -1;
	p->key_len = (uint32_t)w->name.len;
	w->nm++;
	return 0;
}

/* --- the walk ------------------------------------------------------------------ */

static int
walk(struct tree *w, const struct pickle_value *v)
{
	struct buf text = BUF_INIT;
	size_t i, mark;
	int rc = 0;

	if (visit(w))
		return -1;
	if (v->kind == PICKLE_DICT) {
		for (i = 0; rc == 0 && i < v->dict.n; i++) {
			if (push_key(w, v->dict.keys[i], &mark))
				return -1;
			rc = walk(w, v->dict.values[i]);
			w->name.len = mark;
		}
		return rc;
	}
	if (is_tensor(v))
		return add_tensor(w, v);
	rc = to_json(w, v, &text);
	if (rc == 0)
		return add_meta(w, v, &text);
	buf_free(&text);
	if (rc < 0)
		return -1;
	/* a list or tuple holding tensors: flattened by index */
	for (i = 0, rc = 0; rc == 0 && i < v->seq.n; i++) {
		if (push_index(w, i, &mark))
			return -1;
		rc = walk(w, v->seq.items[i]);
		w->name.len = mark;
	}
	return rc;
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

int
torch_tree_table(const struct pickle_value *root, struct torch_zip *z,
		 uint64_t file_size, struct header **out, struct err *e)
{
	struct tree w = { 0 };
	struct header *h;
	size_t i;

	*out = NULL;
	w.z = z;
	w.e = e;
	w.own = calloc(1, sizeof(*w.own));
	if (!w.own || nametab_init(&w.names, 64, name_eq, &w) ||
	    nametab_init(&w.keys, 64, key_eq, &w)) {
		tree_free(&w);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (root->kind != PICKLE_DICT) {
		tree_free(&w);
		return err_set(e, ERR_INVALID_PICKLE, "the pickle holds a "
			       "%s, not a dict of tensors (a state dict): "
			       "stfs mounts state dicts", pickle_kind_name(
			       root->kind));
	}
	h = calloc(1, sizeof(*h));
	if (!h || walk(&w, root)) {
		free(h);
		tree_free(&w);
		return h ? -1 : err_set(e, ERR_NO_MEMORY, "out of memory");
	}
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
