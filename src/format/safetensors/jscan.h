/* jscan.h - a pull tokenizer for JSON in serde_json's exact dialect.
 *
 * No DOM: the caller pulls one token at a time and keeps only what it
 * needs.  The scanner alone enforces the grammar, so a caller that stops
 * caring about a value can skip its tokens without re-checking syntax.
 *
 * Dialect (serde_json 1.0.150, default features):
 *   - whitespace is only space, tab, LF and CR;
 *   - strings: no raw byte < 0x20, escapes " \ / b f n r t uXXXX only,
 *     \u surrogates must form valid pairs;
 *   - numbers: JSON grammar; a number whose f64 value would be infinite
 *     ("1e400", a 400-digit integer) is "number out of range", decided the
 *     way serde_json decides it (not correctly rounded near DBL_MAX);
 *   - at most max_depth nested containers (serde_json: 127 incl. the root);
 *   - exactly one top-level value.
 * The input must already be valid UTF-8 (text_utf8_check(), base/text.h).
 */
#ifndef STFS_JSCAN_H
#define STFS_JSCAN_H

#include <stddef.h>
#include <stdint.h>

#define JSCAN_MAX_DEPTH 128	/* upper bound for max_depth */

enum jscan_type {
	JSCAN_ERROR = -1,	/* see jscan.err_pos / jscan.err_msg */
	JSCAN_END = 0,		/* input exhausted after the top-level value */
	JSCAN_OBJECT,		/* '{' */
	JSCAN_OBJECT_END,	/* '}' */
	JSCAN_ARRAY,		/* '[' */
	JSCAN_ARRAY_END,	/* ']' */
	JSCAN_KEY,		/* a member name (the ':' is checked later) */
	JSCAN_STRING,
	JSCAN_NUMBER,
	JSCAN_TRUE,
	JSCAN_FALSE,
	JSCAN_NULL,
};

struct jscan_tok {
	enum jscan_type type;
	size_t pos;		/* byte offset of the token's first byte */
	const char *s;		/* KEY/STRING: raw bytes between the quotes;
				   NUMBER: its text */
	size_t len;
	int escaped;		/* KEY/STRING: holds at least one backslash */
	int is_uint;		/* NUMBER: plain digits whose value fits u64
				   (what serde_json turns into a u64) */
	uint64_t uint;		/* NUMBER: the value when is_uint */
};

struct jscan {
	const char *buf;
	size_t len;
	size_t pos;		/* next byte to look at */
	unsigned depth;		/* containers currently open */
	unsigned max_depth;
	int state;
	unsigned char is_obj[JSCAN_MAX_DEPTH];	/* per open container */
	size_t err_pos;		/* set with JSCAN_ERROR */
	const char *err_msg;	/* static string, serde_json's wording */
};

/* max_depth is clamped to JSCAN_MAX_DEPTH. */
void jscan_init(struct jscan *s, const char *buf, size_t len,
		unsigned max_depth);

/* Next token into *t; returns t->type.  After JSCAN_ERROR or JSCAN_END
 * every further call returns the same. */
enum jscan_type jscan_next(struct jscan *s, struct jscan_tok *t);

/* Pull tokens until at most `depth` containers are open.  0, or -1 on a
 * syntax error. */
int jscan_skip_to(struct jscan *s, unsigned depth);

/* Decode a KEY/STRING token's raw bytes (already validated by the scanner)
 * into out, writing at most cap bytes.  Returns the full decoded length,
 * which is never more than len, so cap == len always suffices. */
size_t jscan_unescape(const char *raw, size_t len, char *out, size_t cap);

#endif
