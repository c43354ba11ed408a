/* jscan.c - pull tokenizer for serde_json's JSON dialect (see jscan.h).
 *
 * Every rule here mirrors what serde_json 1.0.150 does when safetensors
 * parses a header through `serde_json::from_str`, because a header we
 * accept must be one the reference reader accepts and vice versa.  Error
 * texts follow serde_json's wording so users can compare messages.
 */
#include <math.h>
#include <string.h>

#include "base/text.h"
#include "format/safetensors/jscan.h"

enum {
	ST_VALUE,	/* a value is required (start, after ':' or "[,") */
	ST_OBJ_FIRST,	/* after '{': a key or '}' */
	ST_ARR_FIRST,	/* after '[': a value or ']' */
	ST_OBJ_NEXT,	/* after a member: ',' or '}' */
	ST_ARR_NEXT,	/* after an element: ',' or ']' */
	ST_COLON,	/* after a key: ':' then a value */
	ST_DONE,	/* top-level value complete: only whitespace may follow */
	ST_END,		/* JSCAN_END returned */
	ST_ERR,		/* JSCAN_ERROR returned */
};

/* serde_json's POW10 table: exactly the f64 literals 1e0 .. 1e308. */
static const double pow10_tab[309] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
	1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23,
	1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
	1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39,
	1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47,
	1e48, 1e49, 1e50, 1e51, 1e52, 1e53, 1e54, 1e55,
	1e56, 1e57, 1e58, 1e59, 1e60, 1e61, 1e62, 1e63,
	1e64, 1e65, 1e66, 1e67, 1e68, 1e69, 1e70, 1e71,
	1e72, 1e73, 1e74, 1e75, 1e76, 1e77, 1e78, 1e79,
	1e80, 1e81, 1e82, 1e83, 1e84, 1e85, 1e86, 1e87,
	1e88, 1e89, 1e90, 1e91, 1e92, 1e93, 1e94, 1e95,
	1e96, 1e97, 1e98, 1e99, 1e100, 1e101, 1e102, 1e103,
	1e104, 1e105, 1e106, 1e107, 1e108, 1e109, 1e110, 1e111,
	1e112, 1e113, 1e114, 1e115, 1e116, 1e117, 1e118, 1e119,
	1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127,
	1e128, 1e129, 1e130, 1e131, 1e132, 1e133, 1e134, 1e135,
	1e136, 1e137, 1e138, 1e139, 1e140, 1e141, 1e142, 1e143,
	1e144, 1e145, 1e146, 1e147, 1e148, 1e149, 1e150, 1e151,
	1e152, 1e153, 1e154, 1e155, 1e156, 1e157, 1e158, 1e159,
	1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167,
	1e168, 1e169, 1e170, 1e171, 1e172, 1e173, 1e174, 1e175,
	1e176, 1e177, 1e178, 1e179, 1e180, 1e181, 1e182, 1e183,
	1e184, 1e185, 1e186, 1e187, 1e188, 1e189, 1e190, 1e191,
	1e192, 1e193, 1e194, 1e195, 1e196, 1e197, 1e198, 1e199,
	1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207,
	1e208, 1e209, 1e210, 1e211, 1e212, 1e213, 1e214, 1e215,
	1e216, 1e217, 1e218, 1e219, 1e220, 1e221, 1e222, 1e223,
	1e224, 1e225, 1e226, 1e227, 1e228, 1e229, 1e230, 1e231,
	1e232, 1e233, 1e234, 1e235, 1e236, 1e237, 1e238, 1e239,
	1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246, 1e247,
	1e248, 1e249, 1e250, 1e251, 1e252, 1e253, 1e254, 1e255,
	1e256, 1e257, 1e258, 1e259, 1e260, 1e261, 1e262, 1e263,
	1e264, 1e265, 1e266, 1e267, 1e268, 1e269, 1e270, 1e271,
	1e272, 1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279,
	1e280, 1e281, 1e282, 1e283, 1e284, 1e285, 1e286, 1e287,
	1e288, 1e289, 1e290, 1e291, 1e292, 1e293, 1e294, 1e295,
	1e296, 1e297, 1e298, 1e299, 1e300, 1e301, 1e302, 1e303,
	1e304, 1e305, 1e306, 1e307, 1e308,
};

void
jscan_init(struct jscan *s, const char *buf, size_t len, unsigned max_depth)
{
	s->buf = buf;
	s->len = len;
	s->pos = 0;
	s->depth = 0;
	s->max_depth = max_depth < JSCAN_MAX_DEPTH ? max_depth : JSCAN_MAX_DEPTH;
	s->state = ST_VALUE;
	s->err_pos = 0;
	s->err_msg = NULL;
}

static enum jscan_type
fail(struct jscan *s, struct jscan_tok *t, size_t pos, const char *msg)
{
	s->state = ST_ERR;
	s->err_pos = pos;
	s->err_msg = msg;
	t->type = JSCAN_ERROR;
	t->pos = pos;
	return JSCAN_ERROR;
}

static inline int
at_end(const struct jscan *s)
{
	return s->pos >= s->len;
}

static inline unsigned char
cur(const struct jscan *s)
{
	return (unsigned char)s->buf[s->pos];
}

static inline void
skip_ws(struct jscan *s)
{
	while (s->pos < s->len) {
		unsigned char c = cur(s);

		if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
			break;
		s->pos++;
	}
}

static inline int
after_value_state(const struct jscan *s)
{
	if (s->depth == 0)
		return ST_DONE;
	return s->is_obj[s->depth - 1] ? ST_OBJ_NEXT : ST_ARR_NEXT;
}

/* ---- strings ---------------------------------------------------------- */

#define ONES	0x0101010101010101ULL
#define HIGHS	0x8080808080808080ULL

/* Index of the first '"', '\\' or byte < 0x20 at or after i (n if none).
 * Eight bytes at a time: each term below is non-zero exactly when some
 * byte matches, and its lowest flagged byte is a true match, so the
 * lowest flagged byte of the union is the first special byte. */
static inline size_t
plain_run(const unsigned char *p, size_t i, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (n - i >= 8) {
		uint64_t w, q, b, m;

		memcpy(&w, p + i, 8);
		q = w ^ (ONES * '"');
		b = w ^ (ONES * '\\');
		m = ((q - ONES) & ~q) | ((b - ONES) & ~b) |
		    ((w - ONES * 0x20) & ~w);
		m &= HIGHS;
		if (m)
			return i + ((unsigned)__builtin_ctzll(m) >> 3);
		i += 8;
	}
#endif
	while (i < n && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20)
		i++;
	return i;
}

/* Four hex digits at p[i..]: 0..0xffff, or -1 when one is not hex. */
static long
hex4(const unsigned char *p, size_t i)
{
	long v = 0;

	for (int k = 0; k < 4; k++) {
		int h = text_hexval(p[i + k]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* After "\u" at *ip: one code unit, or a surrogate pair.  serde_json
 * (validate=true) rejects a lone trailing surrogate with the message
 * "lone leading surrogate in hex escape" (sic), a leading surrogate not
 * followed by "\u" with "unexpected end of hex escape", and a leading one
 * followed by a non-trailing one with "lone leading surrogate...". */
static const char *
scan_unicode_escape(const unsigned char *p, size_t n, size_t *ip)
{
	size_t i = *ip;
	long u, u2;

	if (n - i < 4) {
		*ip = n;
		return "EOF while parsing a string";
	}
	u = hex4(p, i);
	i += 4;
	*ip = i;
	if (u < 0)
		return "invalid escape";
	if (u >= 0xDC00 && u <= 0xDFFF)
		return "lone leading surrogate in hex escape";
	if (u < 0xD800 || u > 0xDBFF)
		return NULL;
	if (i >= n)
		return "EOF while parsing a string";
	if (p[i] != '\\') {
		*ip = i + 1;
		return "unexpected end of hex escape";
	}
	i++;
	if (i >= n) {
		*ip = i;
		return "EOF while parsing a string";
	}
	if (p[i] != 'u') {
		*ip = i + 1;
		return "unexpected end of hex escape";
	}
	i++;
	if (n - i < 4) {
		*ip = n;
		return "EOF while parsing a string";
	}
	u2 = hex4(p, i);
	i += 4;
	*ip = i;
	if (u2 < 0)
		return "invalid escape";
	if (u2 < 0xDC00 || u2 > 0xDFFF)
		return "lone leading surrogate in hex escape";
	return NULL;
}

/* One escape after the backslash at p[*ip - 1]. */
static const char *
scan_escape(const unsigned char *p, size_t n, size_t *ip)
{
	size_t i = *ip;

	if (i >= n)
		return "EOF while parsing a string";
	switch (p[i]) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n':
	case 'r': case 't':
		*ip = i + 1;
		return NULL;
	case 'u':
		*ip = i + 1;
		return scan_unicode_escape(p, n, ip);
	default:
		*ip = i + 1;
		return "invalid escape";
	}
}

/* A string whose opening quote is at s->pos. */
static enum jscan_type
scan_string(struct jscan *s, struct jscan_tok *t, enum jscan_type type)
{
	const unsigned char *p = (const unsigned char *)s->buf;
	size_t n = s->len, start = s->pos + 1, i = start;
	int escaped = 0;

	t->pos = s->pos;
	for (;;) {
		const char *msg;

		i = plain_run(p, i, n);
		if (i >= n)
			return fail(s, t, n, "EOF while parsing a string");
		if (p[i] == '"')
			break;
		if (p[i] < 0x20)
			return fail(s, t, i, "control character "
				    "(\\u0000-\\u001F) found while parsing a string");
		escaped = 1;
		i++;
		msg = scan_escape(p, n, &i);
		if (msg)
			return fail(s, t, i > 0 ? i - 1 : 0, msg);
	}
	t->type = type;
	t->s = s->buf + start;
	t->len = i - start;
	t->escaped = escaped;
	s->pos = i + 1;
	return type;
}

size_t
jscan_unescape(const char *raw, size_t len, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)raw;
	size_t i = 0, o = 0;

#define PUT(c) do { if (o < cap) out[o] = (char)(c); o++; } while (0)
	while (i < len) {
		const unsigned char *bs = memchr(p + i, '\\', len - i);
		size_t run = bs ? (size_t)(bs - (p + i)) : len - i;
		unsigned long cp;

		if (o < cap)
			memcpy(out + o, p + i, run < cap - o ? run : cap - o);
		o += run;
		i += run;
		if (i >= len)
			break;
		i++;		/* the backslash; the scanner checked the rest */
		switch (p[i++]) {
		case 'b': PUT('\b'); continue;
		case 'f': PUT('\f'); continue;
		case 'n': PUT('\n'); continue;
		case 'r': PUT('\r'); continue;
		case 't': PUT('\t'); continue;
		case 'u': break;
		default: PUT(p[i - 1]); continue;	/* " \ / */
		}
		cp = (unsigned long)hex4(p, i);
		i += 4;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			unsigned long lo = (unsigned long)hex4(p, i + 2);

			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i += 6;
		}
		if (cp < 0x80) {
			PUT(cp);
		} else if (cp < 0x800) {
			PUT(0xC0 | (cp >> 6));
			PUT(0x80 | (cp & 0x3F));
		} else if (cp < 0x10000) {
			PUT(0xE0 | (cp >> 12));
			PUT(0x80 | ((cp >> 6) & 0x3F));
			PUT(0x80 | (cp & 0x3F));
		} else {
			PUT(0xF0 | (cp >> 18));
			PUT(0x80 | ((cp >> 12) & 0x3F));
			PUT(0x80 | ((cp >> 6) & 0x3F));
			PUT(0x80 | (cp & 0x3F));
		}
	}
#undef PUT
	return o;
}

/* ---- numbers ---------------------------------------------------------- */

/* serde_json's overflow!(a * 10 + b, max) */
static inline int
u64_step_overflows(uint64_t a, unsigned b)
{
	return a >= UINT64_MAX / 10 && (a > UINT64_MAX / 10 || b > UINT64_MAX % 10);
}

static inline int
i32_step_overflows(int32_t a, int b)
{
	return a >= INT32_MAX / 10 && (a > INT32_MAX / 10 || b > INT32_MAX % 10);
}

static inline int
is_digit(const struct jscan *s, size_t i)
{
	return i < s->len && s->buf[i] >= '0' && s->buf[i] <= '9';
}

/* serde_json's f64_from_parts() without the float_roundtrip feature:
 * 0 when the value is finite, -1 for "number out of range".  The same
 * IEEE operations in the same order give the same verdict. */
static int
f64_parts_finite(uint64_t significand, int32_t exponent)
{
	double f = (double)significand;

	for (;;) {
		uint32_t mag = exponent < 0 ? 0u - (uint32_t)exponent
					    : (uint32_t)exponent;

		if (exponent != INT32_MIN && mag < 309) {
			if (exponent >= 0) {
				f *= pow10_tab[mag];
				if (isinf(f))
					return -1;
			}
			return 0;
		}
		if (f == 0.0)
			return 0;
		if (exponent >= 0)
			return -1;
		f /= 1e308;
		exponent += 308;
	}
}

struct numscan {
	struct jscan *s;
	size_t i;		/* next byte */
	const char *msg;	/* error, NULL when fine */
	size_t err_pos;
};

static int
num_fail(struct numscan *ns, size_t pos, const char *msg)
{
	ns->msg = msg;
	ns->err_pos = pos;
	return -1;
}

static int
num_from_parts(struct numscan *ns, uint64_t sig, int32_t exp)
{
	if (f64_parts_finite(sig, exp) < 0)
		return num_fail(ns, ns->i, "number out of range");
	return 0;
}

/* parse_exponent(): at 'e'/'E'. */
static int
num_exponent(struct numscan *ns, uint64_t sig, int32_t start_exp)
{
	struct jscan *s = ns->s;
	int positive = 1;
	int32_t exp;

	ns->i++;
	if (ns->i < s->len && (s->buf[ns->i] == '+' || s->buf[ns->i] == '-')) {
		positive = s->buf[ns->i] == '+';
		ns->i++;
	}
	if (ns->i >= s->len)
		return num_fail(ns, ns->i, "EOF while parsing a value");
	if (!is_digit(s, ns->i))
		return num_fail(ns, ns->i, "invalid number");
	exp = s->buf[ns->i++] - '0';
	while (is_digit(s, ns->i)) {
		int d = s->buf[ns->i++] - '0';

		if (i32_step_overflows(exp, d)) {
			/* parse_exponent_overflow(): huge positive exponent
			 * of a non-zero significand is an error, else 0. */
			if (sig != 0 && positive)
				return num_fail(ns, ns->i, "number out of range");
			while (is_digit(s, ns->i))
				ns->i++;
			return 0;
		}
		exp = exp * 10 + d;
	}
	if (positive)
		exp = start_exp > INT32_MAX - exp ? INT32_MAX : start_exp + exp;
	else
		exp = start_exp < INT32_MIN + exp ? INT32_MIN : start_exp - exp;
	return num_from_parts(ns, sig, exp);
}

/* parse_decimal(): at '.'. */
static int
num_decimal(struct numscan *ns, uint64_t sig, int32_t exp_before)
{
	struct jscan *s = ns->s;
	int32_t exp_after = 0;

	ns->i++;
	while (is_digit(s, ns->i)) {
		unsigned d = (unsigned)(s->buf[ns->i] - '0');

		if (u64_step_overflows(sig, d)) {
			/* parse_decimal_overflow(): drop further digits */
			while (is_digit(s, ns->i))
				ns->i++;
			if (ns->i < s->len && (s->buf[ns->i] | 0x20) == 'e')
				return num_exponent(ns, sig, exp_before + exp_after);
			return num_from_parts(ns, sig, exp_before + exp_after);
		}
		ns->i++;
		sig = sig * 10 + d;
		exp_after--;
	}
	if (exp_after == 0)
		return num_fail(ns, ns->i, ns->i >= s->len ?
				"EOF while parsing a value" : "invalid number");
	if (ns->i < s->len && (s->buf[ns->i] | 0x20) == 'e')
		return num_exponent(ns, sig, exp_before + exp_after);
	return num_from_parts(ns, sig, exp_before + exp_after);
}

/* parse_long_integer(): the integer no longer fits u64; every further
 * digit only scales it. */
static int
num_long_integer(struct numscan *ns, uint64_t sig)
{
	struct jscan *s = ns->s;
	int32_t exp = 0;

	while (is_digit(s, ns->i)) {
		ns->i++;
		exp++;		/* bounded by the header length (1e8) */
	}
	if (ns->i < s->len && s->buf[ns->i] == '.')
		return num_decimal(ns, sig, exp);
	if (ns->i < s->len && (s->buf[ns->i] | 0x20) == 'e')
		return num_exponent(ns, sig, exp);
	return num_from_parts(ns, sig, exp);
}

/* A number starting at s->pos ('-' or a digit). */
static enum jscan_type
scan_number(struct jscan *s, struct jscan_tok *t)
{
	struct numscan ns = { s, s->pos, NULL, 0 };
	int negative = 0, plain = 0, rc = 0;
	uint64_t sig = 0;

	if (s->buf[ns.i] == '-') {
		negative = 1;
		ns.i++;
	}
	if (ns.i >= s->len) {
		rc = num_fail(&ns, ns.i, "EOF while parsing a value");
	} else if (s->buf[ns.i] == '0') {
		ns.i++;
		if (is_digit(s, ns.i))
			rc = num_fail(&ns, ns.i, "invalid number");
		else
			plain = 1;
	} else if (is_digit(s, ns.i)) {
		plain = 1;
		while (is_digit(s, ns.i)) {
			unsigned d = (unsigned)(s->buf[ns.i] - '0');

			if (u64_step_overflows(sig, d)) {
				plain = 0;
				rc = num_long_integer(&ns, sig);
				break;
			}
			sig = sig * 10 + d;
			ns.i++;
		}
	} else {
		rc = num_fail(&ns, ns.i, "invalid number");
	}
	if (rc == 0 && plain && ns.i < s->len) {
		if (s->buf[ns.i] == '.') {
			plain = 0;
			rc = num_decimal(&ns, sig, 0);
		} else if ((s->buf[ns.i] | 0x20) == 'e') {
			plain = 0;
			rc = num_exponent(&ns, sig, 0);
		}
	}
	if (rc < 0)
		return fail(s, t, ns.err_pos, ns.msg);
	t->type = JSCAN_NUMBER;
	t->pos = s->pos;
	t->s = s->buf + s->pos;
	t->len = ns.i - s->pos;
	t->is_uint = plain && !negative;
	t->uint = t->is_uint ? sig : 0;
	s->pos = ns.i;
	s->state = after_value_state(s);
	return JSCAN_NUMBER;
}

/* ---- values and structure --------------------------------------------- */

static enum jscan_type
scan_ident(struct jscan *s, struct jscan_tok *t, const char *word,
	   enum jscan_type type)
{
	size_t i = s->pos, k;

	for (k = 0; word[k]; k++, i++) {
		if (i >= s->len)
			return fail(s, t, i, "EOF while parsing a value");
		if (s->buf[i] != word[k])
			return fail(s, t, i, "expected ident");
	}
	t->type = type;
	t->pos = s->pos;
	t->s = s->buf + s->pos;
	t->len = k;
	s->pos = i;
	s->state = after_value_state(s);
	return type;
}

static enum jscan_type
open_container(struct jscan *s, struct jscan_tok *t, int obj)
{
	if (s->depth >= s->max_depth)
		return fail(s, t, s->pos, "recursion limit exceeded");
	s->is_obj[s->depth++] = (unsigned char)obj;
	t->type = obj ? JSCAN_OBJECT : JSCAN_ARRAY;
	t->pos = s->pos++;
	s->state = obj ? ST_OBJ_FIRST : ST_ARR_FIRST;
	return t->type;
}

static enum jscan_type
close_container(struct jscan *s, struct jscan_tok *t)
{
	t->type = s->is_obj[--s->depth] ? JSCAN_OBJECT_END : JSCAN_ARRAY_END;
	t->pos = s->pos++;
	s->state = after_value_state(s);
	return t->type;
}

static enum jscan_type
scan_value(struct jscan *s, struct jscan_tok *t)
{
	enum jscan_type type;

	if (at_end(s))
		return fail(s, t, s->pos, "EOF while parsing a value");
	switch (cur(s)) {
	case '{':
		return open_container(s, t, 1);
	case '[':
		return open_container(s, t, 0);
	case '"':
		type = scan_string(s, t, JSCAN_STRING);
		if (type != JSCAN_ERROR)
			s->state = after_value_state(s);
		return type;
	case 't':
		return scan_ident(s, t, "true", JSCAN_TRUE);
	case 'f':
		return scan_ident(s, t, "false", JSCAN_FALSE);
	case 'n':
		return scan_ident(s, t, "null", JSCAN_NULL);
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return scan_number(s, t);
	default:
		return fail(s, t, s->pos, "expected value");
	}
}

static enum jscan_type
scan_key(struct jscan *s, struct jscan_tok *t)
{
	enum jscan_type type;

	if (at_end(s))
		return fail(s, t, s->pos, "EOF while parsing an object");
	if (cur(s) != '"')
		return fail(s, t, s->pos, "key must be a string");
	type = scan_string(s, t, JSCAN_KEY);
	if (type != JSCAN_ERROR)
		s->state = ST_COLON;
	return type;
}

/* ',' or the closing bracket after a member or element. */
static enum jscan_type
scan_next(struct jscan *s, struct jscan_tok *t, int obj)
{
	char close = obj ? '}' : ']';

	if (at_end(s))
		return fail(s, t, s->pos, obj ? "EOF while parsing an object"
						: "EOF while parsing a list");
	if (cur(s) == close)
		return close_container(s, t);
	if (cur(s) != ',')
		return fail(s, t, s->pos, obj ? "expected `,` or `}`"
						: "expected `,` or `]`");
	s->pos++;
	skip_ws(s);
	if (!at_end(s) && cur(s) == close)
		return fail(s, t, s->pos, "trailing comma");
	return obj ? scan_key(s, t) : scan_value(s, t);
}

enum jscan_type
jscan_next(struct jscan *s, struct jscan_tok *t)
{
	t->escaped = 0;
	t->is_uint = 0;
	t->s = NULL;
	t->len = 0;
	switch (s->state) {
	case ST_ERR:
		t->type = JSCAN_ERROR;
		t->pos = s->err_pos;
		return JSCAN_ERROR;
	case ST_END:
		t->type = JSCAN_END;
		t->pos = s->len;
		return JSCAN_END;
	}
	skip_ws(s);
	switch (s->state) {
	case ST_OBJ_FIRST:
		if (!at_end(s) && cur(s) == '}')
			return close_container(s, t);
		return scan_key(s, t);
	case ST_ARR_FIRST:
		if (!at_end(s) && cur(s) == ']')
			return close_container(s, t);
		return scan_value(s, t);
	case ST_OBJ_NEXT:
		return scan_next(s, t, 1);
	case ST_ARR_NEXT:
		return scan_next(s, t, 0);
	case ST_COLON:
		if (at_end(s))
			return fail(s, t, s->pos, "EOF while parsing an object");
		if (cur(s) != ':')
			return fail(s, t, s->pos, "expected `:`");
		s->pos++;
		skip_ws(s);
		return scan_value(s, t);
	case ST_DONE:
		if (!at_end(s))
			return fail(s, t, s->pos, "trailing characters");
		s->state = ST_END;
		t->type = JSCAN_END;
		t->pos = s->len;
		return JSCAN_END;
	default:
		return scan_value(s, t);
	}
}

int
jscan_skip_to(struct jscan *s, unsigned depth)
{
	struct jscan_tok t;

	while (s->depth > depth)
		if (jscan_next(s, &t) == JSCAN_ERROR)
			return -1;
	return 0;
}
