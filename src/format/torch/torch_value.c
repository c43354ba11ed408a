/* torch_value.c - a checkpoint's values: tensors, or data as JSON
 * (torch_value.h).
 *
 * One walk renders a value and finds whether it holds a tensor: text is
 * appended while it stays under the limit; past it, nothing more is
 * written, and the walk only looks on for a tensor.  Every append knows
 * its length before it is made (a string's escapes are counted first), so
 * a buffer never holds more than the limit.  The pickle's graph has no
 * cycle and a bounded depth (pickle.h): recursion is safe.
 */
#include "format/torch/torch_value.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/minifloat.h"
#include "format/torch/pickle_long.h"
#include "format/torch/pickle_numpy.h"
#include "format/torch/pickle_seq.h"
#include "format/torch/torch_fold.h"

struct render {
	struct torch_value *j;
	struct buf *b;
	uint64_t limit;		/* b->len may not pass it */
	int over;		/* it would have: only looking for tensors */
	int tensor;		/* a tensor was found: done */
};

static int emit(struct render *r, const struct pickle_value *v);

int
torch_value_is_tensor(const struct pickle_value *v)
{
	struct torch_fold_tensor t;

	if (torch_fold_get(v, &t))
		return 1;
	if (v->kind != PICKLE_CALL || v->newobj ||
	    v->call.callee->kind != PICKLE_GLOBAL)
		return 0;
	switch (v->call.callee->global.id) {
	case PICKLE_G_REBUILD_TENSOR_V2:
	case PICKLE_G_REBUILD_TENSOR_V3:
	case PICKLE_G_REBUILD_PARAMETER:
	case PICKLE_G_REBUILD_FROM_TYPE:
		return 1;
	default:
		return torch_value_is_qtensor(v);
	}
}

int
torch_value_is_qtensor(const struct pickle_value *v)
{
	return v->kind == PICKLE_CALL && !v->newobj &&
	       v->call.callee->kind == PICKLE_GLOBAL &&
	       strcmp(v->call.callee->global.module, "torch._utils") == 0 &&
	       strcmp(v->call.callee->global.name, "_rebuild_qtensor") == 0;
}

static int
visit(struct render *r)
{
	if (++*r->j->visits <= r->j->visits_max)
		return 0;
	return err_set(r->j->e, ERR_INVALID_PICKLE, "the pickle has more "
		       "than %" PRIu64 " values to interpret",
		       r->j->visits_max);
}

/* Room for n more bytes: 1, or 0 when they would pass the limit (from
 * then on nothing is written). */
static int
room(struct render *r, uint64_t n)
{
	if (!r->over && n <= r->limit && r->b->len <= r->limit - n)
		return 1;
	r->over = 1;
	return 0;
}

static int
put(struct render *r, const char *p, size_t n)
{
	if (!room(r, n))
		return 0;
	if (buf_add(r->b, p, n))
		return err_set(r->j->e, ERR_NO_MEMORY, "out of memory");
	return 0;
}

static int
puts_(struct render *r, const char *s)
{
	return put(r, s, strlen(s));
}

/* The length of s[0..n) as a JSON string literal (buf_add_json_string). */
static uint64_t
json_len(const char *s, size_t n)
{
	uint64_t len = 2;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		len += c == '"' || c == '\\' || c == '\n' || c == '\r' ||
		       c == '\t' ? 2 : c < 0x20 || c == 0x7f ? 6 : 1;
	}
	return len;
}

static int
put_json_string(struct render *r, const char *s, size_t n)
{
	if (r->over || !room(r, json_len(s, n)))
		return 0;
	if (buf_add_json_string(r->b, s, n))
		return err_set(r->j->e, ERR_NO_MEMORY, "out of memory");
	return 0;
}

/* 1 when the text t reads back as f, a float of bits bits (0: a double;
 * 32 and 16: numpy's float32 and float16, read as numpy reads text or as
 * a double narrowed). */
static int
reads_back(const char *t, double f, unsigned bits)
{
	double d = strtod(t, NULL);

	if (bits == 32)
		return strtof(t, NULL) == (float)f && (float)d == (float)f;
	if (bits == 16)
		return minifloat_f16(minifloat_f16_nearest(d)) == f;
	return d == f;
}

/* The shortest text that reads back as f, as Python's repr writes it (and
 * numpy's for its narrower floats): its shortest digits, in positional
 * notation padded with zeros (10.0, 0.0001, 1000000000000000.0,
 * numpy's float32 100000000000000.0), or in scientific (1e+16, 1e-05).
 * Positional is Python's choice when the digits' decimal exponent is from
 * -4 to 15, numpy's when 1e-4 <= |f| < 1e16 or f is 0. */
static void
double_text(char *out, size_t cap, double f, unsigned bits)
{
	char sci[40], digits[24];
	int prec, exp, positional;
	size_t nd = 0, at = 0;
	const char *p;

	if (isnan(f)) {
		snprintf(out, cap, "NaN");
		return;
	}
	if (isinf(f)) {
		snprintf(out, cap, "%s", f < 0 ? "-Infinity" : "Infinity");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec - 1, f);
		if (reads_back(sci, f, bits))
			break;
	}
	snprintf(sci, sizeof(sci), "%.*e", prec - 1, f);
	p = strchr(sci, 'e');
	exp = p ? atoi(p + 1) : 0;
	positional = bits ? f == 0 || (fabsl(f) >= 1e-4L && fabsl(f) < 1e16L) :
		     exp >= -4 && exp < 16;
	if (!positional || !p || cap < 32) {
		snprintf(out, cap, "%s", sci);
		return;
	}
	for (const char *q = sci; q < p; q++)
		if (*q >= '0' && *q <= '9' && nd < sizeof(digits))
			digits[nd++] = *q;
	if (signbit(f))
		out[at++] = '-';
	if (exp < 0) {
		out[at++] = '0';
		out[at++] = '.';
		for (int z = -1; z > exp; z--)
			out[at++] = '0';
		for (size_t i = 0; i < nd; i++)
			out[at++] = digits[i];
	} else {
		for (int i = 0; i <= exp; i++)
			out[at++] = (size_t)i < nd ? digits[i] : '0';
		out[at++] = '.';
		if ((size_t)exp + 1 >= nd)
			out[at++] = '0';
		for (size_t i = (size_t)exp + 1; i < nd; i++)
			out[at++] = digits[i];
	}
	out[at] = '\0';
}

/* Bytes as "0x" and two hex digits each, quoted or not. */
static int
put_hex(struct render *r, const struct pickle_value *v, int quoted)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)v->str.p;
	char *out;

	if (!room(r, 2 * (uint64_t)v->str.len + 4))
		return 0;
	if (buf_reserve(r->b, 2 * v->str.len + 4))
		return err_set(r->j->e, ERR_NO_MEMORY, "out of memory");
	out = r->b->data + r->b->len;
	if (quoted)
		*out++ = '"';
	*out++ = '0';
	*out++ = 'x';
	for (size_t i = 0; i < v->str.len; i++) {
		*out++ = digits[p[i] >> 4];
		*out++ = digits[p[i] & 15];
	}
	if (quoted)
		*out++ = '"';
	*out = '\0';
	r->b->len = (size_t)(out - r->b->data);
	return 0;
}

/* A wide int: its digits, or its hex (quoted when JSON is wanted). */
static int
put_long(struct render *r, const struct pickle_value *v, int json)
{
	struct buf t = BUF_INIT;
	int rc, dec;

	/* 2.41 digits a byte in decimal, 2 in hex */
	if (!room(r, 3 * (uint64_t)v->str.len + 8))
		return 0;
	dec = pickle_long_text(v, &t);
	if (dec < 0)
		rc = err_set(r->j->e, ERR_NO_MEMORY, "out of memory");
	else if (json && !dec)
		rc = put_json_string(r, t.data, t.len);
	else
		rc = put(r, t.data, t.len);
	buf_free(&t);
	return rc;
}

/* A value too long to show, by its length: {"__bytes__": N}. */
static int
put_sized(struct render *r, const char *fmt, uint64_t n)
{
	char tmp[64];

	snprintf(tmp, sizeof(tmp), fmt, n);
	return puts_(r, tmp);
}

/* What put_sized() writes for bytes and for a str. */
#define BYTES_SIZED "{\"__bytes__\": %" PRIu64 "}"
#define STR_SIZED "{\"__str__\": %" PRIu64 "}"

static int
put_bytes(struct render *r, const struct pickle_value *v, int quoted)
{
	if (v->str.len <= TORCH_VALUE_BYTES_SHOWN)
		return put_hex(r, v, quoted);
	return put_sized(r, BYTES_SIZED, v->str.len);
}

/* 1 when str s is shown, 0 when it is named by its length. */
static int
str_shown(const struct pickle_value *s)
{
	return s->str.len <= TORCH_VALUE_STR_SHOWN;
}

/* A str too long to show (kept, from protocol 0's text): its code
 * points, as Python's len() counts them. */
static int
put_str_sized(struct render *r, const struct pickle_value *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->str.len; i++)
		n += ((unsigned char)s->str.p[i] & 0xc0) != 0x80;
	return put_sized(r, STR_SIZED, n);
}

/* A value the pickle reader passed by: its kind and length. */
static int
put_elided(struct render *r, const struct pickle_value *v)
{
	switch (v->elided.kind) {
	case PICKLE_STR:
		return put_sized(r, STR_SIZED, v->elided.n);
	case PICKLE_LONG:
		return put_sized(r, "{\"__int__\": {\"bit_length\": %" PRIu64
				 "}}", v->elided.n);
	default:
		return put_sized(r, BYTES_SIZED, v->elided.n);
	}
}

static int
put_global(struct render *r, const struct pickle_value *g, int json)
{
	struct buf t = BUF_INIT;
	int rc;

	if (buf_addf(&t, "%s.%s", g->global.module, g->global.name))
		rc = err_set(r->j->e, ERR_NO_MEMORY, "out of memory");
	else
		rc = json ? put_json_string(r, t.data, t.len) :
		     put(r, t.data, t.len);
	buf_free(&t);
	return rc;
}

static int
emit_items(struct render *r, struct pickle_value *const *items, size_t n)
{
	int rc = puts_(r, "[");

	for (size_t i = 0; rc == 0 && !r->tensor && i < n; i++) {
		if (i)
			rc = puts_(r, ", ");
		if (rc == 0)
			rc = emit(r, items[i]);
	}
	return rc ? rc : puts_(r, "]");
}

/* A key's text (unquoted) into r's buffer. */
static int
key_text(struct render *r, const struct pickle_value *k)
{
	char tmp[40];

	if (visit(r))
		return -1;
	switch (k->kind) {
	case PICKLE_STR:
		if (!str_shown(k))
			return put_str_sized(r, k);
		return put(r, k->str.p, k->str.len);
	case PICKLE_LONG:
		return put_long(r, k, 0);
	case PICKLE_BOOL:
		return puts_(r, k->b ? "true" : "false");
	case PICKLE_NONE:
		return puts_(r, "null");
	case PICKLE_INT:
		snprintf(tmp, sizeof(tmp), "%" PRId64, k->i);
		return puts_(r, tmp);
	case PICKLE_FLOAT:
		double_text(tmp, sizeof(tmp), k->f, k->f_bits);
		return puts_(r, tmp);
	default:
		return emit(r, k);
	}
}

/* A key as a JSON object's key: its text, quoted. */
static int
emit_key(struct render *r, const struct pickle_value *k)
{
	struct buf t = BUF_INIT;
	struct render kr = { r->j, &t, r->limit, 0, 0 };
	int rc;

	if (k->kind == PICKLE_STR && str_shown(k))
		return put_json_string(r, k->str.p, k->str.len);
	if (r->over)
		kr.over = 1;
	else
		kr.limit = r->limit - r->b->len;
	rc = key_text(&kr, k);
	if (rc == 0 && kr.tensor)
		r->tensor = 1;
	else if (rc == 0 && kr.over)
		r->over = 1;
	else if (rc == 0)
		rc = put_json_string(r, t.data, t.len);
	buf_free(&t);
	return rc;
}

static int
emit_dict(struct render *r, const struct pickle_value *v)
{
	int rc = puts_(r, "{");

	for (size_t i = 0; rc == 0 && !r->tensor && i < v->dict.n; i++) {
		if (i)
			rc = puts_(r, ", ");
		if (rc == 0)
			rc = emit_key(r, v->dict.keys[i]);
		if (rc == 0)
			rc = puts_(r, ": ");
		if (rc == 0)
			rc = emit(r, v->dict.values[i]);
	}
	return rc ? rc : puts_(r, "}");
}

static int
put_number(struct render *r, const struct pickle_numpy_number *n)
{
	char tmp[40];

	switch (n->kind) {
	case 'b':
		return puts_(r, n->u ? "true" : "false");
	case 'u':
		snprintf(tmp, sizeof(tmp), "%" PRIu64, n->u);
		break;
	case 'i':
		snprintf(tmp, sizeof(tmp), "%" PRId64, n->i);
		break;
	default:
		double_text(tmp, sizeof(tmp), n->f, n->f_bits);
		break;
	}
	return puts_(r, tmp);
}

/* An array too large to show: its dtype and shape. */
static int
put_array_name(struct render *r, const struct pickle_numpy_array *a)
{
	char tmp[48];
	int rc;

	pickle_numpy_type_text(&a->type, tmp);
	rc = puts_(r, "{\"__ndarray__\": {\"dtype\": \"");
	if (rc == 0)
		rc = puts_(r, tmp);
	if (rc == 0)
		rc = puts_(r, "\", \"shape\": [");
	for (unsigned d = 0; rc == 0 && d < a->rank; d++) {
		snprintf(tmp, sizeof(tmp), "%s%" PRIu64, d ? ", " : "",
			 a->shape[d]);
		rc = puts_(r, tmp);
	}
	return rc ? rc : puts_(r, "]}}");
}

static int
put_repeated(struct render *r, const char *s, unsigned n)
{
	int rc = 0;

	while (rc == 0 && n--)
		rc = puts_(r, s);
	return rc;
}

/* A numpy array as nested lists, as ndarray.tolist() makes them (its
 * elements in C order, whatever the order of its bytes), or by its dtype
 * and shape past TORCH_VALUE_BYTES_SHOWN bytes or as many lists. The
 * odometer idx runs over the dimensions before the first of size 0
 * (each place there an empty list) or all of them (each an element). */
static int
emit_array(struct render *r, const struct pickle_numpy_array *a)
{
	uint64_t idx[PICKLE_NUMPY_RANK_MAX] = { 0 };
	uint64_t step[PICKLE_NUMPY_RANK_MAX], places = 1, at;
	unsigned outer = 0;
	struct pickle_numpy_number n;
	int rc;

	while (outer < a->rank && a->shape[outer])
		outer++;
	for (unsigned d = 0; d < outer; d++)
		places = a->shape[d] > TORCH_VALUE_BYTES_SHOWN / places ?
			 TORCH_VALUE_BYTES_SHOWN + 1 : places * a->shape[d];
	if (!a->data || a->len > TORCH_VALUE_BYTES_SHOWN ||
	    places > TORCH_VALUE_BYTES_SHOWN)
		return put_array_name(r, a);
	/* each dimension's step between elements in the bytes: in C order
	 * the last dimension's is 1, in Fortran order the first's (used
	 * only when there are elements: no product passes their count) */
	for (unsigned i = 0; i < a->rank; i++) {
		unsigned d = a->fortran ? i : a->rank - 1 - i;
		unsigned prev = a->fortran ? d - 1 : d + 1;

		step[d] = i ? step[prev] * a->shape[prev] : 1;
	}
	rc = put_repeated(r, "[", outer);
	while (rc == 0 && !r->over) {
		unsigned d = outer, closed = 0;

		if (outer < a->rank) {
			rc = puts_(r, "[]");
		} else {
			at = 0;
			for (unsigned k = 0; k < a->rank; k++)
				at += idx[k] * step[k];
			pickle_numpy_element(a, at, &n);
			rc = put_number(r, &n);
		}
		while (d > 0 && ++idx[d - 1] == a->shape[d - 1]) {
			idx[--d] = 0;
			closed++;
		}
		if (rc == 0)
			rc = put_repeated(r, "]", closed);
		if (rc || d == 0)
			break;
		rc = puts_(r, ", ");
		if (rc == 0)
			rc = put_repeated(r, "[", closed);
	}
	return rc;
}

/* The text of a path's steps up to step p, dotted as the flattened names
 * of torch_tree.h and the parts of the descriptions above name them. */
static int
path_text(struct render *r, const struct pickle_step *p)
{
	const struct pickle_value *v;
	char tmp[40];
	int rc = 0;

	if (!p)
		return 0;
	if (p->prev)
		rc = path_text(r, p->prev);
	if (rc == 0 && p->prev)
		rc = puts_(r, ".");
	if (rc)
		return rc;
	v = p->parent;
	switch (v->kind) {
	case PICKLE_DICT:
		if (p->index % 2)
			return key_text(r, v->dict.keys[p->index / 2]);
		if (p->index == 2 * v->dict.n)
			return puts_(r, "__state__");
		snprintf(tmp, sizeof(tmp), "__keys__.%zu", p->index / 2);
		return puts_(r, tmp);
	case PICKLE_CALL: {
		static const char *const parts[] = {
			"__call__", "args", "state", "items", "kwargs",
		};

		if (p->index == 0 && v->newobj)
			return puts_(r, "__class__");
		return puts_(r, parts[p->index]);
	}
	case PICKLE_PERSID:
		return puts_(r, "__persistent_id__");
	default:
		snprintf(tmp, sizeof(tmp), "%" PRIu64,
			 pickle_seq_index(v, p->index));
		return puts_(r, tmp);
	}
}

/* A value that contains itself, where it does: {"__ref__": "a.b.0"},
 * the path from the root to the value it is ("" for the root). */
static int
emit_ref(struct render *r, const struct pickle_value *v)
{
	struct buf t = BUF_INIT;
	struct render pr = { r->j, &t, r->limit, r->over, 0 };
	int rc;

	if (!r->over)
		pr.limit = r->limit - r->b->len;
	rc = path_text(&pr, v->ref.path);
	if (rc == 0 && pr.over)
		r->over = 1;
	if (rc == 0 && !r->over)
		rc = puts_(r, "{\"__ref__\": ");
	if (rc == 0)
		rc = put_json_string(r, t.data ? t.data : "", t.len);
	if (rc == 0)
		rc = puts_(r, "}");
	buf_free(&t);
	return rc;
}

/* What a call not folded into a value would make: named, not made. */
static int
emit_call(struct render *r, const struct pickle_value *v)
{
	const struct pickle_value *c = v->call.callee;
	int rc;

	rc = puts_(r, v->newobj ? "{\"__class__\": " : "{\"__call__\": ");
	if (rc == 0)
		rc = c->kind == PICKLE_GLOBAL ? put_global(r, c, 1) : emit(r, c);
	if (rc == 0 && v->call.args->seq.n) {
		rc = puts_(r, ", \"args\": ");
		if (rc == 0)
			rc = emit(r, v->call.args);
	}
	if (rc == 0 && v->call.kwargs) {
		rc = puts_(r, ", \"kwargs\": ");
		if (rc == 0)
			rc = emit(r, v->call.kwargs);
	}
	if (rc == 0 && v->call.state) {
		rc = puts_(r, ", \"state\": ");
		if (rc == 0)
			rc = emit(r, v->call.state);
	}
	if (rc == 0 && v->call.items) {
		rc = puts_(r, ", \"items\": ");
		if (rc == 0)
			rc = emit(r, v->call.items);
	}
	return rc ? rc : puts_(r, "}");
}

/* v as a numpy array (*done 1) when it is one stfs reads.  (Apart, so
 * that the array's 600 bytes are not on the stack at every level of
 * emit's recursion.) */
static int __attribute__((noinline))
emit_numpy(struct render *r, const struct pickle_value *v, int *done)
{
	struct pickle_numpy_array a;

	*done = pickle_numpy_array(v, &a);
	return *done ? emit_array(r, &a) : 0;
}

static int
emit(struct render *r, const struct pickle_value *v)
{
	char tmp[40];
	int rc, done;

	if (visit(r))
		return -1;
	if (r->tensor)
		return 0;
	switch (v->kind) {
	case PICKLE_NONE:
		return puts_(r, "null");
	case PICKLE_BOOL:
		return puts_(r, v->b ? "true" : "false");
	case PICKLE_INT:
		snprintf(tmp, sizeof(tmp), "%" PRId64, v->i);
		return puts_(r, tmp);
	case PICKLE_LONG:
		return put_long(r, v, 1);
	case PICKLE_FLOAT:
		double_text(tmp, sizeof(tmp), v->f, v->f_bits);
		return puts_(r, tmp);
	case PICKLE_STR:
		if (!str_shown(v))
			return put_str_sized(r, v);
		return put_json_string(r, v->str.p, v->str.len);
	case PICKLE_BYTES:
		return put_bytes(r, v, 1);
	case PICKLE_ELIDED:
		return put_elided(r, v);
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		return emit_items(r, v->seq.items, v->seq.n);
	case PICKLE_DICT:
		return emit_dict(r, v);
	case PICKLE_GLOBAL:
		return put_global(r, v, 1);
	case PICKLE_CALL:
		if (torch_value_is_tensor(v)) {
			r->tensor = 1;
			return 0;
		}
		rc = emit_numpy(r, v, &done);
		return done ? rc : emit_call(r, v);
	case PICKLE_PERSID:
		if (puts_(r, "{\"__persistent_id__\": ") || emit(r, v->persid.pid))
			return -1;
		return puts_(r, "}");
	case PICKLE_REF:
		return emit_ref(r, v);
	case PICKLE_EXTERN:	/* a tensor (torch_fold.h) */
		r->tensor = 1;
		return 0;
	case PICKLE_PASSED:
		return put_sized(r, "{\"__not_kept__\": %" PRIu64 "}",
				 v->passed.n);
	}
	return 0;
}

static int
result(const struct render *r, int rc)
{
	return rc < 0 ? -1 : r->tensor ? 1 : r->over ? 2 : 0;
}

int
torch_value_json(struct torch_value *j, const struct pickle_value *v,
		 struct buf *b)
{
	struct render r = { j, b, j->left, 0, 0 };

	return result(&r, emit(&r, v));
}

int
torch_value_text(struct torch_value *j, const struct pickle_value *v,
		 struct buf *b)
{
	struct render r = { j, b, j->left, 0, 0 };

	switch (v->kind) {
	case PICKLE_STR:
		if (!str_shown(v))
			return result(&r, emit(&r, v));
		return result(&r, visit(&r) ? -1 : put(&r, v->str.p,
						       v->str.len));
	case PICKLE_GLOBAL:
		return result(&r, visit(&r) ? -1 : put_global(&r, v, 0));
	case PICKLE_BYTES:
		return result(&r, visit(&r) ? -1 : put_bytes(&r, v, 0));
	case PICKLE_LONG:
		return result(&r, visit(&r) ? -1 : put_long(&r, v, 0));
	default:
		return result(&r, emit(&r, v));
	}
}

int
torch_value_path(struct torch_value *j, const struct pickle_step *path,
		 struct buf *b)
{
	struct render r = { j, b, j->left, 0, 0 };

	return result(&r, path_text(&r, path));
}

int
torch_value_key(struct torch_value *j, const struct pickle_value *k,
		struct buf *b)
{
	struct render r = { j, b, j->left, 0, 0 };

	return result(&r, key_text(&r, k));
}
