/* pickle_numpy.c - numpy scalars and arrays read from their bytes
 * (pickle_numpy.h).
 *
 * Only what numpy's own __reduce__ writes is read, and every part of it
 * is checked (the dtype's state, the shape against the bytes); anything
 * else stays the description of a call it was, so a hostile pickle gains
 * nothing by calling these names oddly.
 */
#include "format/torch/pickle_numpy.h"

#include <string.h>

#include "format/minifloat.h"
#include "format/torch/pickle_long.h"

static const struct pickle_value *
item(const struct pickle_value *seq, size_t i)
{
	return i < seq->seq.n ? seq->seq.items[i] : NULL;
}

static int
is(const struct pickle_value *v, enum pickle_kind kind)
{
	return v && v->kind == kind;
}

/* A REDUCE of the global id, with nothing set on its result but (when
 * state) BUILD's state. */
static int
is_call_of(const struct pickle_value *v, enum pickle_global id, int state)
{
	return is(v, PICKLE_CALL) && !v->newobj && !v->call.items &&
	       !v->call.kwargs && is(v->call.callee, PICKLE_GLOBAL) &&
	       v->call.callee->global.id == id &&
	       (state ? is(v->call.state, PICKLE_TUPLE) : !v->call.state);
}

/* "f8", "i4", "b1", "u2": the kinds and sizes stfs reads. */
static int
type_name(const struct pickle_value *v, struct pickle_numpy_type *t)
{
	if (!is(v, PICKLE_STR) || v->str.len != 2 || v->str.p[1] < '1' ||
	    v->str.p[1] > '8')
		return -1;
	t->kind = v->str.p[0];
	t->size = (unsigned)(v->str.p[1] - '0');
	switch (t->kind) {
	case 'b':
		return t->size == 1 ? 0 : -1;
	case 'i':
	case 'u':
		return t->size == 1 || t->size == 2 || t->size == 4 ||
		       t->size == 8 ? 0 : -1;
	case 'f':
		return t->size == 2 || t->size == 4 || t->size == 8 ? 0 : -1;
	default:
		return -1;
	}
}

/* numpy.dtype(name, align, copy) with its state (version 3 or 4, byte
 * order, no subarray, names or fields, sizes -1 as numbers have). */
static int
dtype_of(const struct pickle_value *v, struct pickle_numpy_type *t)
{
	const struct pickle_value *st, *order, *version;

	if (!is_call_of(v, PICKLE_G_NUMPY_DTYPE, 1) ||
	    v->call.args->seq.n < 1 || v->call.args->seq.n > 3 ||
	    type_name(item(v->call.args, 0), t))
		return -1;
	st = v->call.state;
	version = item(st, 0);
	order = item(st, 1);
	if ((st->seq.n != 8 && st->seq.n != 9) || !is(version, PICKLE_INT) ||
	    (version->i != 3 && version->i != 4) || !is(order, PICKLE_STR) ||
	    order->str.len != 1 || !is(item(st, 2), PICKLE_NONE) ||
	    !is(item(st, 3), PICKLE_NONE) || !is(item(st, 4), PICKLE_NONE) ||
	    !is(item(st, 5), PICKLE_INT) || item(st, 5)->i != -1 ||
	    !is(item(st, 6), PICKLE_INT) || item(st, 6)->i != -1)
		return -1;
	t->order = order->str.p[0];
	if (t->size == 1)
		return t->order == '|' || t->order == '<' || t->order == '>' ?
		       0 : -1;
	return t->order == '<' || t->order == '>' ? 0 : -1;
}

static void
decode(const struct pickle_numpy_type *t, const unsigned char *p,
       struct pickle_numpy_number *out)
{
	uint64_t u = 0;
	uint32_t u32;

	for (unsigned i = 0; i < t->size; i++)
		u |= (uint64_t)p[t->order == '>' ? t->size - 1 - i : i]
		     << (8 * i);
	out->kind = t->kind;
	out->f_bits = 0;
	switch (t->kind) {
	case 'b':
		out->u = u != 0;
		break;
	case 'u':
		out->u = u;
		break;
	case 'i':
		if (t->size < 8 && (u >> (8 * t->size - 1)) & 1)
			u |= ~(uint64_t)0 << (8 * t->size);	/* sign */
		memcpy(&out->i, &u, sizeof(out->i));
		break;
	default:
		if (t->size == 2) {
			out->f = minifloat_f16((uint16_t)u);
			out->f_bits = 16;
		} else if (t->size == 4) {
			float f;

			u32 = (uint32_t)u;
			memcpy(&f, &u32, sizeof(f));
			out->f = f;
			out->f_bits = 32;
		} else {
			memcpy(&out->f, &u, sizeof(out->f));
		}
		break;
	}
}

struct pickle_value *
pickle_numpy_scalar(struct pickle_store *s, const struct pickle_value *args,
		    int *folded, struct err *e)
{
	const struct pickle_value *data = item(args, 1);
	struct pickle_numpy_number n;
	struct pickle_numpy_type t;
	struct pickle_value *v;
	unsigned char wide[9];

	*folded = 0;
	if (args->seq.n != 2 || dtype_of(item(args, 0), &t) ||
	    !is(data, PICKLE_BYTES) || data->str.len != t.size)
		return NULL;
	*folded = 1;
	decode(&t, (const unsigned char *)data->str.p, &n);
	if (n.kind == 'u' && n.u > INT64_MAX) {
		/* a uint64 past 2^63: 9 bytes of two's complement */
		for (int i = 0; i < 8; i++)
			wide[i] = (unsigned char)(n.u >> (8 * i));
		wide[8] = 0;
		return pickle_long_value(s, wide, sizeof(wide), e);
	}
	v = pickle_store_new(s, n.kind == 'b' ? PICKLE_BOOL :
			     n.kind == 'f' ? PICKLE_FLOAT : PICKLE_INT, e);
	if (!v)
		return NULL;
	if (n.kind == 'b')
		v->b = (int)n.u;
	else if (n.kind == 'f') {
		v->f = n.f;
		v->f_bits = n.f_bits;
	} else
		v->i = n.kind == 'u' ? (int64_t)n.u : n.i;
	return v;
}

/* The shape tuple of ints >= 0 into a; 0, or -1 (also when the
 * elements would not be countable in 64 bits). */
static int
shape_of(const struct pickle_value *v, struct pickle_numpy_array *a)
{
	uint64_t n = 1;

	if (!is(v, PICKLE_TUPLE) || v->seq.n > PICKLE_NUMPY_RANK_MAX)
		return -1;
	for (size_t i = 0; i < v->seq.n; i++) {
		const struct pickle_value *d = v->seq.items[i];

		if (!is(d, PICKLE_INT) || d->i < 0)
			return -1;
		a->shape[i] = (uint64_t)d->i;
		if (a->shape[i] && n > UINT64_MAX / a->shape[i])
			return -1;
		n *= a->shape[i];
	}
	a->rank = (unsigned)v->seq.n;
	a->numel = n;
	return 0;
}

int
pickle_numpy_array(const struct pickle_value *v,
		   struct pickle_numpy_array *a)
{
	const struct pickle_value *st, *dt, *shape, *fortran, *data;
	size_t at;

	memset(a, 0, sizeof(*a));
	if (is_call_of(v, PICKLE_G_NUMPY_RECONSTRUCT, 1)) {
		/* (1, shape, dtype, fortran, data); before version 1
		 * (shape, dtype, fortran, data) */
		st = v->call.state;
		if (!is(item(v->call.args, 0), PICKLE_GLOBAL) ||
		    item(v->call.args, 0)->global.id != PICKLE_G_NUMPY_NDARRAY)
			return 0;
		at = st->seq.n == 5 && is(item(st, 0), PICKLE_INT) &&
		     item(st, 0)->i == 1 ? 1 : 0;
		if (st->seq.n != at + 4 || !is(item(st, at + 2), PICKLE_BOOL))
			return 0;
		shape = item(st, at);
		dt = item(st, at + 1);
		fortran = item(st, at + 2);
		data = item(st, at + 3);
		a->fortran = fortran->b;
	} else if (is_call_of(v, PICKLE_G_NUMPY_FROMBUFFER, 0)) {
		/* (data, dtype, shape, 'C' or 'F') */
		data = item(v->call.args, 0);
		dt = item(v->call.args, 1);
		shape = item(v->call.args, 2);
		fortran = item(v->call.args, 3);
		if (v->call.args->seq.n != 4 || !is(fortran, PICKLE_STR) ||
		    fortran->str.len != 1 || (fortran->str.p[0] != 'C' &&
					      fortran->str.p[0] != 'F'))
			return 0;
		a->fortran = fortran->str.p[0] == 'F';
	} else {
		return 0;
	}
	if (is(data, PICKLE_BYTES)) {
		a->data = (const unsigned char *)data->str.p;
		a->len = data->str.len;
	} else if (is(data, PICKLE_ELIDED) &&
		   data->elided.kind == PICKLE_BYTES) {
		a->len = (size_t)data->elided.n;	/* (data NULL) */
	} else {
		return 0;
	}
	if (dtype_of(dt, &a->type) || shape_of(shape, a) ||
	    a->numel > a->len / a->type.size ||
	    a->numel * a->type.size != a->len)
		return 0;
	return 1;
}

void
pickle_numpy_element(const struct pickle_numpy_array *a, uint64_t i,
		     struct pickle_numpy_number *out)
{
	decode(&a->type, a->data + i * a->type.size, out);
}

void
pickle_numpy_type_text(const struct pickle_numpy_type *t, char out[4])
{
	out[0] = t->size == 1 ? '|' : t->order;
	out[1] = t->kind;
	out[2] = (char)('0' + t->size);
	out[3] = '\0';
}
