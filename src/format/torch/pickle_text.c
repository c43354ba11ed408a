/* pickle_text.c - protocol 0 and 1's text arguments and Python 2 strings
 * (pickle_text.h).
 */
#include "format/torch/pickle_text.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "format/torch/pickle_long.h"

#define FLOAT_TEXT_MAX 64	/* repr() of a float is at most 24 */

static struct pickle_value *
refuse(struct err *e, const char *at, const char *what)
{
	err_set(e, ERR_INVALID_PICKLE, "%s %s", at, what);
	return NULL;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The length of the run of digits at p[0..n). */
static size_t
digits(const char *p, size_t n)
{
	size_t k = 0;

	while (k < n && is_digit(p[k]))
		k++;
	return k;
}

struct pickle_value *
pickle_text_int(struct pickle_store *s, const char *p, size_t n, int long_op,
		const char *at, struct err *e)
{
	struct pickle_value *v;
	int neg = 0;

	if (!long_op && n == 2 && p[0] == '0' && (p[1] == '0' || p[1] == '1')) {
		v = pickle_store_new(s, PICKLE_BOOL, e);
		if (v)
			v->b = p[1] == '1';
		return v;
	}
	if (long_op && n && p[n - 1] == 'L')
		n--;
	if (n && p[0] == '-') {
		neg = 1;
		p++;
		n--;
	}
	if (!n || digits(p, n) != n || (p[0] == '0' && n > 1))
		return refuse(e, at, "is not an integer in decimal as Python "
			      "writes one");
	if (n > PICKLE_LONG_DIGITS_MAX)
		return refuse(e, at, "has more than 4,300 digits, Python's own "
			      "limit");
	return pickle_long_decimal(s, p, n, neg, e);
}

/* repr()'s form: -?(inf|nan|D+(.D+)?([eE][+-]?D+)?) */
static int
float_form(const char *p, size_t n)
{
	size_t k = 0, d;

	if (k < n && p[k] == '-')
		k++;
	if ((n - k == 3 && memcmp(p + k, "inf", 3) == 0) ||
	    (n - k == 3 && memcmp(p + k, "nan", 3) == 0))
		return 1;
	d = digits(p + k, n - k);
	if (!d)
		return 0;
	k += d;
	if (k < n && p[k] == '.') {
		d = digits(p + k + 1, n - k - 1);
		if (!d)
			return 0;
		k += 1 + d;
	}
	if (k < n && (p[k] == 'e' || p[k] == 'E')) {
		k++;
		if (k < n && (p[k] == '+' || p[k] == '-'))
			k++;
		d = digits(p + k, n - k);
		if (!d)
			return 0;
		k += d;
	}
	return k == n;
}

struct pickle_value *
pickle_text_float(struct pickle_store *s, const char *p, size_t n,
		  const char *at, struct err *e)
{
	char text[FLOAT_TEXT_MAX + 1];
	struct pickle_value *v;

	if (n > FLOAT_TEXT_MAX || !float_form(p, n))
		return refuse(e, at, "is not a float as Python's repr() writes "
			      "one");
	memcpy(text, p, n);
	text[n] = '\0';
	v = pickle_store_new(s, PICKLE_FLOAT, e);
	if (!v)
		return NULL;
	/* (stfs never sets a locale: strtod reads the C locale's point) */
	v->f = strtod(text, NULL);
	return v;
}

/* STRING's bytes: a Python 2 str, which torch.load reads as UTF-8: a
 * PICKLE_STR when it is UTF-8, else the PICKLE_BYTES Python reads with
 * encoding='bytes' (pickle_counted.c makes BINSTRING's alike). */
static struct pickle_value *
py2(struct pickle_store *s, const char *p, size_t n, struct err *e)
{
	size_t bad;
	unsigned bad_len;

	return pickle_store_str(s, text_utf8_check(p, n, &bad, &bad_len) ?
				PICKLE_BYTES : PICKLE_STR, p, n, e);
}

/* Python's escape_decode of a byte string's repr (quotes removed) into
 * out (room for n bytes); its length, or -1 for an escape Python
 * refuses. */
static long
unescape(const char *p, size_t n, char *out)
{
	static const char simple[] = "\\\\''\"\"a\ab\bf\fn\nr\rt\tv\v";
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *x;
		unsigned c;

		if (p[i] != '\\') {
			out[k++] = p[i];
			continue;
		}
		if (++i == n)
			return -1;		/* a trailing backslash */
		if (p[i] == '\n')
			continue;		/* a continued line */
		x = memchr(simple, p[i], sizeof(simple) - 1);
		if (x && (x - simple) % 2 == 0) {
			out[k++] = x[1];
		} else if (p[i] == 'x') {
			if (i + 2 >= n || text_hexval(p[i + 1]) < 0 ||
			    text_hexval(p[i + 2]) < 0)
				return -1;
			out[k++] = (char)(text_hexval(p[i + 1]) << 4 |
					  text_hexval(p[i + 2]));
			i += 2;
		} else if (p[i] >= '0' && p[i] <= '7') {
			c = 0;
			for (int j = 0; j < 3 && i < n && p[i] >= '0' &&
			     p[i] <= '7'; j++, i++)
				c = c * 8 + (unsigned)(p[i] - '0');
			i--;
			if (c > 0377)
				return -1;
			out[k++] = (char)c;
		} else {
			out[k++] = '\\';	/* kept, as Python keeps it */
			out[k++] = p[i];
		}
	}
	return (long)k;
}

struct pickle_value *
pickle_text_string(struct pickle_store *s, const char *p, size_t n,
		   const char *at, struct err *e)
{
	struct pickle_value *v;
	char *out;
	long k;

	if (n < 2 || p[0] != p[n - 1] || (p[0] != '\'' && p[0] != '"'))
		return refuse(e, at, "is not a quoted string");
	out = malloc(n);
	if (!out) {
		err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
		return NULL;
	}
	k = unescape(p + 1, n - 2, out);
	v = k < 0 ? refuse(e, at, "has an escape Python refuses") :
	    py2(s, out, (size_t)k, e);
	free(out);
	return v;
}

/* c as UTF-8 at out; its length. */
static size_t
utf8(unsigned long c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* raw-unicode-escape as CPython decodes it: a backslash and u or U
 * start an escape of 4 or 8 hex digits; a backslash and any other byte
 * are both kept; every other byte is its code point.  The length of the
 * UTF-8 at out (room for 2 n), or -1 with *why. */
static long
raw_unicode(const unsigned char *p, size_t n, char *out, const char **why)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned long c = p[i];
		unsigned count;

		if (c == '\\' && i + 1 < n && (p[i + 1] == 'u' ||
					       p[i + 1] == 'U')) {
			count = p[i + 1] == 'u' ? 4 : 8;
			if (n - i - 2 < count) {
				*why = "has a truncated \\u escape";
				return -1;
			}
			c = 0;
			for (unsigned j = 0; j < count; j++) {
				int h = text_hexval(p[i + 2 + j]);

				if (h < 0) {
					*why = "has a \\u escape that is not "
					       "hex";
					return -1;
				}
				c = c << 4 | (unsigned)h;
			}
			i += 1 + count;
			if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
				*why = "has a \\u escape that is no "
				       "character (a surrogate, or past "
				       "U+10FFFF)";
				return -1;
			}
		} else if (c == '\\' && i + 1 < n) {
			out[k++] = '\\';
			c = p[++i];
		}
		k += utf8(c, out + k);
	}
	return (long)k;
}

struct pickle_value *
pickle_text_unicode(struct pickle_store *s, const char *p, size_t n,
		    const char *at, struct err *e)
{
	struct pickle_value *v;
	const char *why = NULL;
	char *out = n <= (SIZE_MAX - 4) / 2 ? malloc(2 * n + 4) : NULL;
	long k;

	if (!out) {
		err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
		return NULL;
	}
	k = raw_unicode((const unsigned char *)p, n, out, &why);
	v = k < 0 ? refuse(e, at, why) :
	    pickle_store_str(s, PICKLE_STR, out, (size_t)k, e);
	free(out);
	return v;
}

int
pickle_text_index(const char *p, size_t n, uint64_t *out, const char *at,
		  struct err *e)
{
	uint64_t v = 0;

	if (!n || digits(p, n) != n)
		return err_set(e, ERR_INVALID_PICKLE, "%s is not a memo index "
			       "in decimal", at);
	for (size_t i = 0; i < n; i++)
		v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX :
		    v * 10 + (uint64_t)(p[i] - '0');
	*out = v;
	return 0;
}
