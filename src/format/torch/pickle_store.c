/* pickle_store.c - the values of a pickle and the graph check
 * (pickle_store.h).
 *
 * Values come from fixed-size chunks and are freed together, whatever
 * points where (a hostile pickle may link values into cycles that the
 * root never reaches); the arrays of tuples, lists and dicts and the
 * strings are malloc'd per value and freed with it, or when the value is
 * dropped (its node then goes to a free list).  Everything held is
 * counted in bytes.  The graph check and a drop walk with explicit stacks:
 * nothing here recurses.
 */
#include "format/torch/pickle_store.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* A value and the store's bookkeeping; a struct pickle_value * handed out
 * is the first member of one of these. */
struct node {
	struct pickle_value v;
	union {
		size_t cap;	/* items allocated (tuple, list, set, dict) */
		struct pickle_value *made;	/* a string's: pickle_store_made */
		struct node *next_free;		/* dropped: the free list */
	};
	uint64_t walk;		/* the check: values below, saturated */
	unsigned height;	/* the check: the longest path down from here */
	unsigned char state;	/* the check: 0 new, 1 open, 2 done */
	unsigned char flagged;	/* pickle_store_flag: the check says where */
	unsigned char shared;	/* pickle_store_share: never dropped */
};

/* PICKLE_EXTERN values' bytes, from chunks of EXT_CHUNK (a larger one
 * alone). */
#define EXT_CHUNK ((size_t)64 << 10)

struct pickle_store_ext {
	struct pickle_store_ext *next;
	size_t used, cap;
	uint64_t data[];
};

#define CHUNK_NODES 256

struct pickle_store_chunk {
	struct pickle_store_chunk *next;
	size_t used;
	struct node nodes[CHUNK_NODES];
};

struct pickle_store_steps {
	struct pickle_store_steps *next;
	size_t used;
	struct pickle_step steps[CHUNK_NODES];
};

static struct node *
node_of(struct pickle_value *v)
{
	return (struct node *)v;
}

int
pickle_store_charge(struct pickle_store *s, long long delta, struct err *e)
{
	if (delta < 0) {
		s->bytes -= (size_t)-delta < s->bytes ? (size_t)-delta :
			    s->bytes;
		return 0;
	}
	if ((size_t)delta > s->max_bytes - s->bytes)
		return err_set(e, ERR_INVALID_PICKLE, "its values need more "
			       "than %zu MiB of memory, the most stfs gives a "
			       "pickle of its size (a state dict as torch.save "
			       "writes it needs far less: a pickle made to "
			       "exhaust memory?)", s->max_bytes >> 20);
	s->bytes += (size_t)delta;
	return 0;
}

int
pickle_store_grow(struct pickle_store *s, void **arr, size_t *cap,
		  size_t need, size_t size, struct err *e)
{
	/* a tuple gets exactly its items; appends double */
	size_t n = *cap ? *cap : need;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			goto no_memory;
		n *= 2;
	}
	if (n > SIZE_MAX / size || n * size > LLONG_MAX)
		goto no_memory;
	if (pickle_store_charge(s, (long long)((n - *cap) * size), e))
		return -1;
	p = realloc(*arr, n * size);
	if (!p) {
		pickle_store_charge(s, -(long long)((n - *cap) * size), e);
		goto no_memory;
	}
	*arr = p;
	*cap = n;
	return 0;
no_memory:
	return err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
}

/* One more value made: 0, or -1 with *e past max_values. */
static int
count_value(struct pickle_store *s, struct err *e)
{
	if (s->values >= s->max_values)
		return err_set(e, ERR_INVALID_PICKLE, "more than %zu values "
			       "(the limit of this reader)", s->max_values);
	s->values++;
	return 0;
}

/* size bytes of the store's own (a chunk), charged: NULL with *e. */
static void *
chunk_alloc(struct pickle_store *s, size_t size, struct err *e)
{
	void *p;

	if (size > LLONG_MAX || pickle_store_charge(s, (long long)size, e))
		return NULL;
	p = malloc(size);
	if (!p) {
		pickle_store_charge(s, -(long long)size, NULL);
		err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
	}
	return p;
}

struct pickle_value *
pickle_store_new(struct pickle_store *s, enum pickle_kind kind, struct err *e)
{
	struct pickle_store_chunk *c = s->chunks;
	struct node *n;

	if (count_value(s, e))
		return NULL;
	if (s->free_nodes) {
		n = s->free_nodes;
		s->free_nodes = n->next_free;
	} else {
		if (!c || c->used == CHUNK_NODES) {
			c = chunk_alloc(s, sizeof(*c), e);
			if (!c)
				return NULL;
			c->next = s->chunks;
			c->used = 0;
			s->chunks = c;
		}
		n = &c->nodes[c->used++];
	}
	memset(n, 0, sizeof(*n));
	n->v.kind = kind;
	return &n->v;
}

/* One of the constants, made once. */
static struct pickle_value *
constant(struct pickle_store *s, struct pickle_value **slot,
	 enum pickle_kind kind, int b, struct err *e)
{
	if (!*slot) {
		*slot = pickle_store_new(s, kind, e);
		if (!*slot)
			return NULL;
		if (kind == PICKLE_BOOL)
			(*slot)->b = b;
		pickle_store_share(*slot);
	}
	return *slot;
}

struct pickle_value *
pickle_store_none(struct pickle_store *s, struct err *e)
{
	return constant(s, &s->none, PICKLE_NONE, 0, e);
}

struct pickle_value *
pickle_store_bool(struct pickle_store *s, int b, struct err *e)
{
	return b ? constant(s, &s->yes, PICKLE_BOOL, 1, e) :
		   constant(s, &s->no, PICKLE_BOOL, 0, e);
}

struct pickle_value *
pickle_store_unit(struct pickle_store *s, struct err *e)
{
	return constant(s, &s->unit, PICKLE_TUPLE, 0, e);
}

void
pickle_store_share(struct pickle_value *v)
{
	if (v)
		node_of(v)->shared = 1;
}

struct pickle_value *
pickle_store_extern(struct pickle_store *s, unsigned tag, size_t size,
		    struct err *e)
{
	struct pickle_store_ext *x = s->ext;
	size_t need = (size + sizeof(uint64_t) - 1) / sizeof(uint64_t);
	struct pickle_value *v;

	if (need > SIZE_MAX / sizeof(uint64_t) / 2) {
		err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
		return NULL;
	}
	if (!x || x->cap - x->used < need) {
		size_t cap = need * sizeof(uint64_t) > EXT_CHUNK ?
			     need : EXT_CHUNK / sizeof(uint64_t);

		x = chunk_alloc(s, sizeof(*x) + cap * sizeof(uint64_t), e);
		if (!x)
			return NULL;
		x->next = s->ext;
		x->used = 0;
		x->cap = cap;
		s->ext = x;
	}
	v = pickle_store_new(s, PICKLE_EXTERN, e);
	if (!v)
		return NULL;
	memset(x->data + x->used, 0, need * sizeof(uint64_t));
	v->ext.p = x->data + x->used;
	v->ext.tag = tag;
	x->used += need;
	return v;
}

struct pickle_value *
pickle_store_take(struct pickle_store *s, enum pickle_kind kind, char *str,
		  size_t n, struct err *e)
{
	struct pickle_value *v = pickle_store_charge(s, (long long)n + 1, e) ?
				 NULL : pickle_store_new(s, kind, e);

	if (!v) {
		free(str);
		return NULL;
	}
	v->str.p = str;
	v->str.len = n;
	return v;
}

struct pickle_value *
pickle_store_str(struct pickle_store *s, enum pickle_kind kind, const void *p,
		 size_t n, struct err *e)
{
	char *str = n < SIZE_MAX ? malloc(n + 1) : NULL;

	if (!str) {
		err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
		return NULL;
	}
	if (n)
		memcpy(str, p, n);
	str[n] = '\0';
	return pickle_store_take(s, kind, str, n, e);
}

void
pickle_store_flag(struct pickle_value *v)
{
	node_of(v)->flagged = 1;
}

struct pickle_value **
pickle_store_made(struct pickle_value *str)
{
	return &node_of(str)->made;
}

int
pickle_store_add(struct pickle_store *s, struct pickle_value *v,
		 struct pickle_value *const *items, size_t n, struct err *e)
{
	struct node *nd = node_of(v);
	size_t cap, need;

	if (v->kind != PICKLE_DICT) {
		if (n > SIZE_MAX - v->seq.n)
			return err_set(e, ERR_NO_MEMORY, "out of memory "
				       "reading a pickle");
		if (pickle_store_grow(s, (void **)&v->seq.items, &nd->cap,
				      v->seq.n + n, sizeof(*items), e) < 0)
			return -1;
		if (n)
			memcpy(v->seq.items + v->seq.n, items,
			       n * sizeof(*items));
		v->seq.n += n;
		return 0;
	}
	n /= 2;
	if (n > SIZE_MAX - v->dict.n)
		return err_set(e, ERR_NO_MEMORY, "out of memory reading a "
			       "pickle");
	need = v->dict.n + n;
	cap = nd->cap;
	if (pickle_store_grow(s, (void **)&v->dict.keys, &cap, need,
			      sizeof(*v->dict.keys), e) < 0)
		return -1;
	cap = nd->cap;
	if (pickle_store_grow(s, (void **)&v->dict.values, &cap, need,
			      sizeof(*v->dict.values), e) < 0)
		return -1;
	nd->cap = cap;
	for (size_t i = 0; i < n; i++) {
		v->dict.keys[v->dict.n] = items[2 * i];
		v->dict.values[v->dict.n++] = items[2 * i + 1];
	}
	return 0;
}

static size_t
child_count(const struct pickle_value *v)
{
	switch (v->kind) {
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		return v->seq.n;
	case PICKLE_DICT:
		return 2 * v->dict.n + 1;
	case PICKLE_CALL:
		return 5;
	case PICKLE_PERSID:
		return 1;
	default:
		return 0;
	}
}

/* Child i of v, or NULL for an absent state, items or kwargs. */
static struct pickle_value *
child(const struct pickle_value *v, size_t i)
{
	switch (v->kind) {
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		return v->seq.items[i];
	case PICKLE_DICT:
		if (i == 2 * v->dict.n)
			return v->dict.attrs;
		return i % 2 ? v->dict.values[i / 2] : v->dict.keys[i / 2];
	case PICKLE_CALL:
		return i == 0 ? v->call.callee : i == 1 ? v->call.args :
		       i == 2 ? v->call.state : i == 3 ? v->call.items :
		       v->call.kwargs;
	default:
		return v->persid.pid;
	}
}

/* The slot of child i of v (child() reads it). */
static struct pickle_value **
child_slot(struct pickle_value *v, size_t i)
{
	switch (v->kind) {
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		return &v->seq.items[i];
	case PICKLE_DICT:
		if (i == 2 * v->dict.n)
			return &v->dict.attrs;
		return i % 2 ? &v->dict.values[i / 2] : &v->dict.keys[i / 2];
	case PICKLE_CALL:
		return i == 2 ? &v->call.state : i == 3 ? &v->call.items :
		       &v->call.kwargs;
	default:
		return &v->persid.pid;
	}
}

/* What v holds of its own besides its node, and its bytes (counted). */
static void
release(struct pickle_store *s, struct pickle_value *v)
{
	size_t cap = node_of(v)->cap;

	switch (v->kind) {
	case PICKLE_LONG:
	case PICKLE_STR:
	case PICKLE_BYTES:
		pickle_store_charge(s, -(long long)(v->str.len + 1), NULL);
		free((char *)v->str.p);
		break;
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		pickle_store_charge(s, -(long long)(cap * sizeof(v)), NULL);
		free(v->seq.items);
		break;
	case PICKLE_DICT:
		pickle_store_charge(s, -(long long)(2 * cap * sizeof(v)),
				    NULL);
		free(v->dict.keys);
		free(v->dict.values);
		break;
	default:
		break;
	}
}

void
pickle_store_drop(struct pickle_store *s, struct pickle_value *v)
{
	struct pickle_value **st = NULL, *x;
	size_t sn = 0, cap = 0;

	if (!v || node_of(v)->shared || node_of(v)->flagged)
		return;
	/* an explicit stack: what only v holds may nest deep */
	for (x = v; x; x = sn ? st[--sn] : NULL) {
		struct node *n = node_of(x);
		size_t k = child_count(x);

		for (size_t i = 0; i < k; i++) {
			struct pickle_value *c = child(x, i);

			if (!c || node_of(c)->shared || node_of(c)->flagged)
				continue;
			if (sn == cap) {
				size_t nc = cap ? 2 * cap : 32;
				void *q = realloc(st, nc * sizeof(*st));

				if (!q)
					continue;	/* kept until the end */
				st = q;
				cap = nc;
			}
			st[sn++] = c;
		}
		release(s, x);
		memset(n, 0, sizeof(*n));
		n->v.kind = PICKLE_NONE;	/* nothing for free to free */
		n->next_free = s->free_nodes;
		s->free_nodes = n;
	}
	free(st);
}

/* A step of a path, counted as a value. */
static struct pickle_step *
new_step(struct pickle_store *s, struct err *e)
{
	struct pickle_store_steps *c = s->steps;

	if (count_value(s, e))
		return NULL;
	if (!c || c->used == CHUNK_NODES) {
		c = chunk_alloc(s, sizeof(*c), e);
		if (!c)
			return NULL;
		c->next = s->steps;
		c->used = 0;
		s->steps = c;
	}
	return &c->steps[c->used++];
}

/* What a finished child c adds to its parent up. */
static void
add_child(struct node *up, const struct node *c, uint64_t cap)
{
	up->walk += c->walk;	/* both <= cap: no overflow */
	if (up->walk > cap)
		up->walk = cap;
	if (up->height < c->height + 1)
		up->height = c->height + 1;
}

static int
too_deep(const struct pickle_limits *lim, struct err *e)
{
	return err_set(e, ERR_INVALID_PICKLE, "values nested deeper than %u "
		       "levels (the limit of this reader)", lim->depth);
}

/* A frame of the check's walk: a value, its next child, and the step
 * that led to it (made when a PICKLE_REF needs the path, once per
 * frame: paths share their beginnings). */
struct frame {
	struct node *n;
	size_t next;
	struct pickle_step *step;
};

/* The path to the value of frame k: its step, made with those of the
 * frames below it that have none yet (NULL: the root). */
static const struct pickle_step *
path_to(struct pickle_store *s, struct frame *st, size_t k, struct err *e)
{
	size_t i = k;

	while (i > 0 && !st[i].step)
		i--;
	while (i < k) {
		struct pickle_step *p = new_step(s, e);

		if (!p)
			return NULL;
		p->prev = st[i].step;
		p->parent = &st[i].n->v;
		p->index = st[i].next - 1;
		st[++i].step = p;
	}
	return st[k].step;
}

/* The edge from frame f's value to its child c (open: an ancestor)
 * closes a cycle: a PICKLE_REF to c in its place. */
static int
cut_cycle(struct pickle_store *s, struct frame *st, size_t sn,
	  struct node *c, uint64_t cap, struct err *e)
{
	struct frame *f = &st[sn - 1];
	struct pickle_value *ref;
	size_t k = sn;

	if (f->n->v.kind == PICKLE_CALL && f->next - 1 < 2)
		return err_set(e, ERR_INVALID_PICKLE, "a value contains "
			       "itself through the callable or the arguments "
			       "of a call (which Python's pickle never "
			       "writes)");
	while (st[--k].n != c)
		;
	ref = pickle_store_new(s, PICKLE_REF, e);
	if (!ref)
		return -1;
	ref->ref.to = &c->v;
	ref->ref.path = k ? path_to(s, st, k, e) : NULL;
	if (k && !ref->ref.path)
		return -1;
	*child_slot(&f->n->v, f->next - 1) = ref;
	node_of(ref)->state = 2;
	node_of(ref)->walk = 1;
	node_of(ref)->height = 1;
	add_child(f->n, node_of(ref), cap);
	return 0;
}

int
pickle_store_check(struct pickle_store *s, struct pickle_value *root,
		   const struct pickle_limits *lim, struct err *e)
{
	struct frame *st;
	size_t sn = 0;
	/* walks saturate one above the limit */
	uint64_t cap = lim->walk < UINT64_MAX ? lim->walk + 1 : lim->walk;
	int rc = 0;

	st = calloc((size_t)lim->depth + 1, sizeof(*st));
	if (!st)
		return err_set(e, ERR_NO_MEMORY, "out of memory reading a "
			       "pickle");
	st[sn++] = (struct frame){ node_of(root), 0, NULL };
	node_of(root)->state = 1;
	node_of(root)->walk = 1;
	node_of(root)->height = 1;
	if (node_of(root)->flagged && s->seen)
		s->seen(s->seen_ctx, root, NULL);
	while (sn) {
		struct frame *f = &st[sn - 1];
		struct node *c;

		if (f->next == child_count(&f->n->v)) {
			f->n->state = 2;
			if (--sn)
				add_child(st[sn - 1].n, f->n, cap);
			continue;
		}
		c = node_of(child(&f->n->v, f->next++));
		if (!c)
			continue;
		if (c->state == 2 && sn + c->height > lim->depth) {
			/* done, reached first on a shorter path */
			rc = too_deep(lim, e);
			break;
		}
		if (c->state == 2) {
			add_child(f->n, c, cap);
			continue;
		}
		if (c->state == 1) {
			/* the reference is a value one level down too */
			rc = sn >= lim->depth ? too_deep(lim, e) :
			     cut_cycle(s, st, sn, c, cap, e);
			if (rc)
				break;
			continue;
		}
		if (sn >= lim->depth) {
			rc = too_deep(lim, e);
			break;
		}
		c->state = 1;
		c->walk = 1;
		c->height = 1;
		st[sn++] = (struct frame){ c, 0, NULL };
		if (c->flagged && s->seen) {
			const struct pickle_step *path = path_to(s, st, sn - 1,
								 e);

			if (!path) {
				rc = -1;
				break;
			}
			s->seen(s->seen_ctx, &c->v, path);
		}
	}
	free(st);
	if (!rc && node_of(root)->walk > lim->walk)
		rc = err_set(e, ERR_INVALID_PICKLE, "shared values make more "
			     "than %llu values to walk (the limit of this "
			     "reader)", (unsigned long long)lim->walk);
	return rc;
}

void
pickle_store_free(struct pickle_store *s)
{
	struct pickle_store_chunk *c, *next;

	for (c = s->chunks; c; c = next) {
		next = c->next;
		for (size_t i = 0; i < c->used; i++) {
			struct pickle_value *v = &c->nodes[i].v;

			switch (v->kind) {
			case PICKLE_LONG:
			case PICKLE_STR:
			case PICKLE_BYTES:
				free((char *)v->str.p);
				break;
			case PICKLE_TUPLE:
			case PICKLE_LIST:
			case PICKLE_SET:
				free(v->seq.items);
				break;
			case PICKLE_DICT:
				free(v->dict.keys);
				free(v->dict.values);
				break;
			default:
				break;
			}
		}
		free(c);
	}
	s->chunks = NULL;
	while (s->ext) {
		struct pickle_store_ext *x = s->ext;

		s->ext = x->next;
		free(x);
	}
	while (s->steps) {
		struct pickle_store_steps *x = s->steps;

		s->steps = x->next;
		free(x);
	}
}
