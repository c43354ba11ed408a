/* pickle_counted.c - counted arguments read into their values
 * (pickle_counted.h).
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

/* An int of n bytes: read from the window. */
static struct pickle_value *
kept_wide(struct pickle_input *in, struct pickle_store *s, size_t n)
{
	const unsigned char *p;

	if (pickle_input_bytes(in, n, &p) < 0)
		return NULL;
	return pickle_long_value(s, p, n, in->e);
}

struct pickle_value *
pickle_counted_value(struct pickle_input *in, struct pickle_store *s)
{
	struct arg a = arg_of(in->op);
	uint64_t u;

	if (pickle_input_uint(in, a.width, &u) < 0)
		return NULL;
	if (a.is_signed && u > INT32_MAX) {
		err_set(in->e, ERR_INVALID_PICKLE, "%s at byte %zu has a "
			"negative length", pickle_names_op(in->op), in->at);
		return NULL;
	}
	if (pickle_input_need(in, u) < 0)
		return NULL;
	if (a.what == LONG)
		return kept_wide(in, s, (size_t)u);
	return kept(in, s, a.what, (size_t)u);
}
