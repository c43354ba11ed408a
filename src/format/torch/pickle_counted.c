/* pickle_counted.c - counted arguments kept or passed by
 * (pickle_counted.h).
 *
 * What is passed by is looked at a chunk at a time (pickle_input_pass):
 * a str's UTF-8 is checked with text_utf8_check chunk by chunk, a
 * sequence cut by the chunk's end left for the next chunk, so the first
 * invalid byte found is the one a check of the whole string finds.  An
 * int's bytes are little-endian two's complement: its first bytes are
 * kept (as many as a kept int may have), and the last byte that is not
 * 0x00 and the last that is not 0xff are tracked, so that at its end,
 * when its sign is known, its length without the bytes that repeat the
 * sign and its bit length are too.
 */
#include "format/torch/pickle_counted.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "format/torch/pickle_long.h"
#include "format/torch/pickle_names.h"

enum what { STR, BYTES, PY2, LONG };

/* The argument of a counted opcode: what it makes, the width of its
 * length, whether that length is signed (a 4-byte one past INT32_MAX is
 * negative). */
struct arg {
	enum what what;
	unsigned width;
	int is_signed;
};

static struct arg
arg_of(unsigned char op)
{
	switch (op) {
	case 'X':	/* BINUNICODE */
		return (struct arg){ STR, 4, 0 };
	case 0x8c:	/* SHORT_BINUNICODE */
		return (struct arg){ STR, 1, 0 };
	case 0x8d:	/* BINUNICODE8 */
		return (struct arg){ STR, 8, 0 };
	case 'B':	/* BINBYTES */
		return (struct arg){ BYTES, 4, 0 };
	case 'C':	/* SHORT_BINBYTES */
		return (struct arg){ BYTES, 1, 0 };
	case 'T':	/* BINSTRING */
		return (struct arg){ PY2, 4, 1 };
	case 'U':	/* SHORT_BINSTRING */
		return (struct arg){ PY2, 1, 0 };
	case 0x8a:	/* LONG1 */
		return (struct arg){ LONG, 1, 0 };
	case 0x8b:	/* LONG4 */
		return (struct arg){ LONG, 4, 1 };
	default:	/* BINBYTES8, BYTEARRAY8 (bytes, to what stfs shows) */
		return (struct arg){ BYTES, 8, 0 };
	}
}

static struct pickle_value *
not_utf8(struct pickle_input *in, size_t bad)
{
	err_set(in->e, ERR_INVALID_PICKLE, "%s at byte %zu is not UTF-8 (at "
		"byte %zu of the string)", pickle_names_op(in->op), in->at,
		bad);
	return NULL;
}

static struct pickle_value *
elided(struct pickle_store *s, enum pickle_kind kind, uint64_t n, int latin1,
       struct err *e)
{
	struct pickle_value *v = pickle_store_new(s, PICKLE_ELIDED, e);

	if (v) {
		v->elided.kind = kind;
		v->elided.n = n;
		v->elided.latin1 = latin1;
	}
	return v;
}

/* ---- kept ------------------------------------------------------------ */

/* A str, bytes or Python 2 string of n bytes, in its own allocation. */
static struct pickle_value *
kept(struct pickle_input *in, struct pickle_store *s, enum what what,
     size_t n)
{
	enum pickle_kind kind = what == BYTES ? PICKLE_BYTES : PICKLE_STR;
	char *str = malloc(n + 1);	/* n < the pickle's size */
	size_t bad;
	unsigned bad_len;

	if (!str) {
		err_set(in->e, ERR_NO_MEMORY, "out of memory reading a pickle");
		return NULL;
	}
	if (pickle_input_copy(in, str, n) < 0) {
		free(str);
		return NULL;
	}
	str[n] = '\0';
	/* Python decodes a str or fails, names and JSON need UTF-8 too; a
	 * Python 2 string is text when it is UTF-8, as torch.load reads
	 * it, else bytes */
	if (what != BYTES && text_utf8_check(str, n, &bad, &bad_len) < 0) {
		if (what == STR) {
			free(str);
			return not_utf8(in, bad);
		}
		kind = PICKLE_BYTES;
	}
	return pickle_store_take(s, kind, str, n, in->e);
}

/* ---- a str passed by ------------------------------------------------- */

struct text {
	struct pickle_input *in;
	int py2;		/* a Python 2 string: bytes when not UTF-8 */
	int bytes;		/* it is not UTF-8: only counted */
	size_t done;		/* bytes taken */
	uint64_t chars;		/* code points in them */
	int latin1;		/* each below 256 */
};

/* Count the code points of the valid UTF-8 p[0..n). */
static void
count(struct text *t, const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t v;

		/* ASCII eight bytes at a time */
		if (n - i >= 8) {
			memcpy(&v, p + i, 8);
			if (!(v & 0x8080808080808080ULL)) {
				t->chars += 8;
				i += 8;
				continue;
			}
		}
		/* a lead byte past 0xc3 starts a code point past 0xff */
		if (p[i] >= 0xc4)
			t->latin1 = 0;
		t->chars += (p[i] & 0xc0) != 0x80;
		i++;
	}
}

static long
visit_text(void *ctx, const unsigned char *p, size_t n, int last)
{
	struct text *t = ctx;
	size_t bad;
	unsigned bad_len;

	if (t->bytes) {
		t->done += n;
		return (long)n;
	}
	if (text_utf8_check((const char *)p, n, &bad, &bad_len) == 0) {
		count(t, p, n);
		t->done += n;
		return (long)n;
	}
	count(t, p, bad);
	if (bad_len == 0 && !last) {
		/* a sequence the next chunk may complete */
		t->done += bad;
		return (long)bad;
	}
	if (!t->py2) {
		not_utf8(t->in, t->done + bad);
		return -1;
	}
	t->bytes = 1;
	t->done += n;
	return (long)n;
}

static struct pickle_value *
passed_text(struct pickle_input *in, struct pickle_store *s, int py2,
	    size_t n)
{
	struct text t = { in, py2, 0, 0, 0, 1 };

	if (pickle_input_pass(in, n, visit_text, &t) < 0)
		return NULL;
	if (t.bytes)
		return elided(s, PICKLE_BYTES, n, 0, in->e);
	return elided(s, PICKLE_STR, t.chars, t.latin1, in->e);
}

/* ---- bytes passed by ------------------------------------------------- */

static long
visit_bytes(void *ctx, const unsigned char *p, size_t n, int last)
{
	(void)ctx;
	(void)p;
	(void)last;
	return (long)n;
}

/* ---- an int ---------------------------------------------------------- */

/* Bits in b, a byte other than 0. */
static unsigned
bit_length(unsigned b)
{
	unsigned k = 0;

	while (b) {
		k++;
		b >>= 1;
	}
	return k;
}

struct wide {
	unsigned char *head;	/* the first bytes */
	size_t head_len;
	size_t done;		/* bytes taken */
	size_t not0, not1;	/* 1 + the index of the last byte that is not
				 * 0x00, not 0xff; 0: none */
	unsigned char v0, v1;	/* those bytes */
	size_t zeros;		/* the bytes 0x00 from the first on */
	unsigned char last;	/* the last byte: its sign */
};

static long
visit_wide(void *ctx, const unsigned char *p, size_t n, int last)
{
	struct wide *w = ctx;

	(void)last;
	for (size_t k = 0; k < n; k++) {
		size_t i = w->done + k;
		unsigned char b = p[k];

		if (i < w->head_len)
			w->head[i] = b;
		if (b != 0) {
			w->not0 = i + 1;
			w->v0 = b;
		} else if (w->zeros == i) {
			w->zeros++;
		}
		if (b != 0xff) {
			w->not1 = i + 1;
			w->v1 = b;
		}
	}
	if (n)
		w->last = p[n - 1];
	w->done += n;
	return (long)n;
}

/* The int of the n bytes (more than bytes_kept) passed by. */
static struct pickle_value *
passed_wide(struct pickle_input *in, struct pickle_store *s,
	    const struct pickle_limits *lim, size_t n)
{
	struct wide w = { 0 };
	struct pickle_value *v;
	unsigned neg, top;
	size_t len, bits;

	w.head_len = lim->bytes_kept;
	w.head = malloc(w.head_len ? w.head_len : 1);
	if (!w.head) {
		err_set(in->e, ERR_NO_MEMORY, "out of memory reading a pickle");
		return NULL;
	}
	if (pickle_input_pass(in, n, visit_wide, &w) < 0) {
		free(w.head);
		return NULL;
	}
	/* the bytes up to the last that is not the sign's, and one more
	 * when that one's top bit would say the other sign */
	neg = w.last >> 7;
	len = neg ? w.not1 : w.not0;
	top = neg ? w.v1 : w.v0;
	len = !len ? 1 : len + ((top >> 7) != neg);
	if (len <= w.head_len) {
		v = pickle_long_value(s, w.head, len, in->e);
		free(w.head);
		return v;
	}
	free(w.head);
	if (!neg) {
		bits = w.not0 ? 8 * (w.not0 - 1) + bit_length(w.v0) : 0;
	} else if (!w.not1) {
		bits = 1;			/* -1 */
	} else {
		/* -x is ~x + 1: the bit length of ~x, one more when ~x
		 * is all ones (then -x is a power of two) */
		top = ~top & 0xffu;
		bits = 8 * (w.not1 - 1) + bit_length(top);
		if (w.zeros >= w.not1 - 1 && !(top & (top + 1)))
			bits++;
	}
	return elided(s, PICKLE_LONG, bits, 0, in->e);
}

/* An int of n bytes within the limit: read from the window. */
static struct pickle_value *
kept_wide(struct pickle_input *in, struct pickle_store *s, size_t n)
{
	const unsigned char *p;

	if (pickle_input_bytes(in, n, &p) < 0)
		return NULL;
	return pickle_long_value(s, p, n, in->e);
}

/* ---- the argument ---------------------------------------------------- */

struct pickle_value *
pickle_counted_value(struct pickle_input *in, struct pickle_store *s,
		     const struct pickle_limits *lim)
{
	struct arg a = arg_of(in->op);
	uint64_t u;
	size_t n;

	if (pickle_input_uint(in, a.width, &u) < 0)
		return NULL;
	if (a.is_signed && u > INT32_MAX) {
		err_set(in->e, ERR_INVALID_PICKLE, "%s at byte %zu has a "
			"negative length", pickle_names_op(in->op), in->at);
		return NULL;
	}
	if (pickle_input_need(in, u) < 0)
		return NULL;
	n = (size_t)u;
	switch (a.what) {
	case LONG:
		return n <= lim->bytes_kept ? kept_wide(in, s, n) :
		       passed_wide(in, s, lim, n);
	case BYTES:
		if (n <= lim->bytes_kept)
			return kept(in, s, BYTES, n);
		if (pickle_input_pass(in, n, visit_bytes, NULL) < 0)
			return NULL;
		return elided(s, PICKLE_BYTES, n, 0, in->e);
	default:
		return n <= lim->str_kept ? kept(in, s, a.what, n) :
		       passed_text(in, s, a.what == PY2, n);
	}
}
