/* pickle_call.c - the calls that are values, and the descriptions of the
 * others (pickle_call.h).
 *
 * A call is folded only with the arguments the pure function takes in a
 * pickle Python writes; with others it is described like any call, so a
 * hostile pickle gains nothing by calling a known name oddly.  A folded
 * value may be one of the arguments itself (torch.Size(t) is t): values
 * are shared, never copied.
 */
#include "format/torch/pickle_call.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "format/torch/pickle_numpy.h"

#define DEVICE_TYPE_MAX 32

static struct pickle_value *
arg(const struct pickle_value *args, size_t i)
{
	return i < args->seq.n ? args->seq.items[i] : NULL;
}

static int
is_seq(const struct pickle_value *v)
{
	return v && (v->kind == PICKLE_TUPLE || v->kind == PICKLE_LIST ||
		     v->kind == PICKLE_SET);
}

/* 1 when v is a str, kept or not (PICKLE_ELIDED). */
static int
is_str(const struct pickle_value *v)
{
	return v->kind == PICKLE_STR || (v->kind == PICKLE_ELIDED &&
					 v->elided.kind == PICKLE_STR);
}

static struct pickle_value *
not_latin1(const char *at, struct err *e)
{
	err_set(e, ERR_INVALID_PICKLE, "%s: _codecs.encode of a string that "
		"is not latin-1 in UTF-8", at);
	return NULL;
}

/* _codecs.encode(s, 'latin1') of a str too long to keep: bytes as many
 * as its code points, not kept either. */
static struct pickle_value *
latin1_elided(struct pickle_store *s, const struct pickle_value *str,
	      const char *at, struct err *e)
{
	struct pickle_value *v;

	if (!str->elided.latin1)
		return not_latin1(at, e);
	v = pickle_store_new(s, PICKLE_ELIDED, e);
	if (v) {
		v->elided.kind = PICKLE_BYTES;
		v->elided.n = str->elided.n;
	}
	return v;
}

/* _codecs.encode(s, 'latin1'): s's code points (all below 256) as bytes.
 * Made once per string: the memo may pass one string to a million calls,
 * which then share one value instead of a million copies. */
static struct pickle_value *
latin1(struct pickle_store *s, struct pickle_value *str, const char *at,
       struct err *e)
{
	struct pickle_value **made = pickle_store_made(str);
	const unsigned char *p = (const unsigned char *)str->str.p;
	struct pickle_value *v;
	size_t n = 0;
	char *out;

	if (*made)
		return *made;
	if (str->kind == PICKLE_ELIDED) {
		*made = latin1_elided(s, str, at, e);
		return *made;
	}
	v = pickle_store_str(s, PICKLE_BYTES, str->str.p, str->str.len, e);
	if (!v)
		return NULL;
	out = (char *)v->str.p;
	for (size_t i = 0; i < str->str.len; i++) {
		if (p[i] < 0x80) {
			out[n++] = (char)p[i];
		} else if ((p[i] == 0xc2 || p[i] == 0xc3) &&
			   i + 1 < str->str.len && (p[i + 1] & 0xc0) == 0x80) {
			out[n++] = (char)((p[i] & 3) << 6 | (p[i + 1] & 0x3f));
			i++;
		} else {
			return not_latin1(at, e);
		}
	}
	out[n] = '\0';
	v->str.len = n;
	*made = v;
	return v;
}

/* torch.device(type) is type; torch.device(type, index) "type:index". */
static struct pickle_value *
device(struct pickle_store *s, struct pickle_value *type,
       const struct pickle_value *index, struct err *e)
{
	char text[DEVICE_TYPE_MAX + 24];
	int n;

	if (!index)
		return type;
	n = snprintf(text, sizeof(text), "%.*s:%" PRId64, (int)type->str.len,
		     type->str.p, index->i);
	return pickle_store_str(s, PICKLE_STR, text, (size_t)n, e);
}

/* The value a pure call makes, or NULL with *folded 0 when the call is
 * not one (*e untouched), or NULL with *folded 1 and *e. */
static struct pickle_value *
fold(struct pickle_store *s, const struct pickle_value *callee,
     struct pickle_value *args, int newobj, const char *at, int *folded,
     struct err *e)
{
	struct pickle_value *a0 = arg(args, 0), *a1 = arg(args, 1), *v;
	size_t n = args->seq.n;

	*folded = 1;
	switch (callee->kind == PICKLE_GLOBAL ? callee->global.id
					      : PICKLE_G_OTHER) {
	case PICKLE_G_ORDERED_DICT:
		if (n)
			break;
		v = pickle_store_new(s, PICKLE_DICT, e);
		if (v)
			v->dict.ordered = 1;
		return v;
	case PICKLE_G_DEFAULTDICT:
		if (newobj || n > 1)
			break;
		return pickle_store_new(s, PICKLE_DICT, e);
	case PICKLE_G_BYTES:
		if (newobj || n)
			break;
		return pickle_store_str(s, PICKLE_BYTES, "", 0, e);
	case PICKLE_G_CODECS_ENCODE:
		if (newobj || n != 2 || !is_str(a0) ||
		    a1->kind != PICKLE_STR || a1->str.len != 6 ||
		    memcmp(a1->str.p, "latin1", 6) != 0)
			break;
		/* made once per string, then held by each call: shared */
		v = latin1(s, a0, at, e);
		pickle_store_share(v);
		return v;
	case PICKLE_G_SET:
		if (newobj || n > 1 || (n == 1 && !is_seq(a0)))
			break;
		v = pickle_store_new(s, PICKLE_SET, e);
		if (v && n && pickle_store_add(s, v, a0->seq.items, a0->seq.n,
					       e) < 0)
			return NULL;
		/* the items are the sequence's too */
		for (size_t i = 0; v && n && i < a0->seq.n; i++)
			pickle_store_share(a0->seq.items[i]);
		return v;
	case PICKLE_G_SIZE:
		if (newobj || n != 1 || !is_seq(a0) || a0->kind == PICKLE_SET)
			break;
		return a0;
	case PICKLE_G_NUMPY_SCALAR:
		if (newobj)
			break;
		return pickle_numpy_scalar(s, args, folded, e);
	case PICKLE_G_DEVICE:
		/* "cuda", "cpu", "privateuseone": a longer one is no
		 * device type, and would make much text of little input */
		if (newobj || n < 1 || n > 2 || a0->kind != PICKLE_STR ||
		    a0->str.len > DEVICE_TYPE_MAX ||
		    (a1 && (a1->kind != PICKLE_INT || a1->i < 0)))
			break;
		return device(s, a0, a1, e);
	default:
		break;
	}
	*folded = 0;
	return NULL;
}

struct pickle_value *
pickle_call_make(struct pickle_store *s, struct pickle_value *callee,
		 struct pickle_value *args, struct pickle_value *kwargs,
		 int newobj, const char *at, struct err *e)
{
	struct pickle_value *v = NULL;
	int folded = 0;

	if (!kwargs)
		v = fold(s, callee, args, newobj, at, &folded, e);
	if (folded)
		return v;
	v = pickle_store_new(s, PICKLE_CALL, e);
	if (!v)
		return NULL;
	v->call.callee = callee;
	v->call.args = args;
	v->call.kwargs = kwargs;
	v->newobj = newobj;
	return v;
}
