/* header.c - parse, validate and index one safetensors header.
 *
 * The checks run in the reference reader's order (safetensors 0.8
 * `read_metadata`): length prefix, UTF-8 of the whole header, JSON and
 * schema (serde_json + serde-derive semantics, see jscan.h), then
 * `validate()` on the tensors sorted by data_offsets, then full coverage of
 * the file.  One pass over the JSON fills the index's arrays directly:
 * names go into one arena, shapes into one uint64 pool, and nothing of the
 * JSON text is kept.  Duplicate tensor names are found afterwards by
 * sorting the names' keyed hashes (radix sort): several times faster than
 * inserting every name into a table at random (a cache miss per name).
 * Lookups by name belong to the layers above (layout.c, shards.c).
 *
 * Two serde details decide the order of JSON errors.  `__metadata__` is
 * deserialized straight from the stream, so its errors are reported where
 * they occur.  Tensor entries go through serde's `#[serde(flatten)]`
 * buffer and are only interpreted once the whole top-level object has been
 * read, so a schema error in a tensor entry is held back ("deferred") and
 * only reported if the rest of the object is well-formed.  Both are
 * InvalidHeaderDeserialization; the order only decides which message wins.
 *
 * Deliberate deviation: duplicate tensor names and duplicate keys inside
 * __metadata__ are refused (the reference keeps the last silently).  When
 * the reference would reject the file anyway, its error is reported (with
 * a note about the duplicate), so the error kind still agrees with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/dtype.h"
#include "base/error.h"
#include "base/text.h"
#include "format/safetensors/header.h"
#include "format/safetensors/jscan.h"
#include "base/nametab.h"
#include "format/safetensors/header_parser.h"

#define NUMTEXT_MAX 40		/* bytes of a number's text inside a message */

/* What a parsing step returns: go on, a schema error held back in the
 * tensor entry (see the top of the file), or stop with p->e set. */
enum { OK = 0, SCHEMA = 1, FATAL = -1 };

enum field { F_DTYPE, F_SHAPE, F_OFFSETS, F__COUNT };

static const char *const field_name[F__COUNT] = {
	"dtype", "shape", "data_offsets"
};

/* ---- names ------------------------------------------------------------ */

/* Hash of a name: the name table's keyed hash, so that names in a hostile
 * file cannot be made to share tags (see find_duplicates). */
static inline uint64_t
name_hash(const char *s, size_t n)
{
	struct nametab_key k;

	nametab_key(&k, 0, s, n);
	return k.hash;
}

/* nametab callback: is __metadata__ pair id the key k? */
static int
meta_key_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct header_parser *p = ctx;
	const struct arena_span *r = &p->meta[id].key;

	return r->len == k->len && memcmp(p->arena + r->off, k->name, k->len) == 0;
}


/* ---- errors ----------------------------------------------------------- */

static int
no_memory(struct header_parser *p)
{
	return err_set(p->e, ERR_NO_MEMORY, "out of memory while indexing "
		       "the header");
}

static int
syntax_error(struct header_parser *p)
{
	return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
		       "invalid JSON at header byte %zu: %s",
		       p->js.err_pos, p->js.err_msg);
}

/* A JSON error the reference reports where it occurs. */
static int __attribute__((format(printf, 3, 4)))
json_error(struct header_parser *p, size_t pos, const char *fmt, ...)
{
	char msg[ERR_DETAIL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
		       "%s (at header byte %zu)", msg, pos);
}

/* A schema error in the current tensor entry: held back (see the top of
 * the file).  Returns SCHEMA. */
static int __attribute__((format(printf, 3, 4)))
schema_error(struct header_parser *p, size_t pos, const char *fmt, ...)
{
	const struct parsed_tensor *t = &p->tensors[p->cur];
	/* sized so that the whole sentence fits in deferred_msg */
	char q[QUOTE_MAX], msg[ERR_DETAIL_MAX - QUOTE_MAX - 48];
	va_list ap;

	if (p->deferred)
		return SCHEMA;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->deferred_msg, sizeof(p->deferred_msg),
		 "tensor %s: %s (at header byte %zu)",
		 quote_name(q, p->arena + t->name.off, t->name.len), msg, pos);
	p->deferred = 1;
	return SCHEMA;
}

/* "null", "a string \"abc\"", "the number 1.0", ... for invalid-type
 * messages, in buf. */
static const char *
describe(char *buf, size_t cap, const struct jscan_tok *t)
{
	char q[QUOTE_MAX];

	switch (t->type) {
	case JSCAN_OBJECT:
		return "an object";
	case JSCAN_ARRAY:
		return "an array";
	case JSCAN_TRUE:
		return "the boolean true";
	case JSCAN_FALSE:
		return "the boolean false";
	case JSCAN_NULL:
		return "null";
	case JSCAN_STRING:
		snprintf(buf, cap, "the string %s",
			 quote_name(q, t->s, t->len));
		return buf;
	case JSCAN_NUMBER:
		snprintf(buf, cap, "the number %.*s%s",
			 (int)(t->len < NUMTEXT_MAX ? t->len : NUMTEXT_MAX),
			 t->s, t->len > NUMTEXT_MAX ? "..." : "");
		return buf;
	default:
		return "a token";
	}
}

/* ---- parser primitives ------------------------------------------------ */

static inline enum jscan_type
next(struct header_parser *p)
{
	return jscan_next(&p->js, &p->tok);
}

/* The current token starts a value: consume the rest of it. */
static int
skip_value(struct header_parser *p)
{
	if (p->tok.type != JSCAN_OBJECT && p->tok.type != JSCAN_ARRAY)
		return OK;
	if (jscan_skip_to(&p->js, p->js.depth - 1) < 0)
		return syntax_error(p);
	return OK;
}

/* Decode the current KEY/STRING token into the arena, NUL-terminated.
 * Returns its offset; the caller commits it by advancing arena_len. */
static uint32_t
arena_put(struct header_parser *p, size_t *len)
{
	char *dst = p->arena + p->arena_len;

	if (p->tok.escaped)
		*len = jscan_unescape(p->tok.s, p->tok.len, dst, p->tok.len);
	else {
		if (p->tok.len)
			memcpy(dst, p->tok.s, p->tok.len);
		*len = p->tok.len;
	}
	dst[*len] = '\0';
	return (uint32_t)p->arena_len;
}

static int
grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap < need)
		ncap = need;
	n = realloc(*arr, ncap * size);
	if (!n)
		return -1;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* ---- tensor entries --------------------------------------------------- */

static int
dtype_of_token(const struct jscan_tok *t, enum dtype *d)
{
	char name[16];
	size_t len;

	if (!t->escaped)
		return dtype_from_name(t->s, t->len, d);
	len = jscan_unescape(t->s, t->len, name, sizeof(name));
	if (len > sizeof(name))
		return -1;
	return dtype_from_name(name, len, d);
}

/* Back off a cut-short UTF-8 sequence at the end of s[0..len). */
static size_t
utf8_cut(const char *s, size_t len)
{
	size_t i = len;

	while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)s[i - 1] >= 0xC0)
		i--;
	else
		return len;
	/* keep the sequence if it was complete */
	{
		unsigned char c = (unsigned char)s[i];
		size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;

		return len - i == need ? len : i;
	}
}

static int
unknown_dtype(struct header_parser *p, const struct jscan_tok *t)
{
	char q[QUOTE_MAX], raw[64];
	size_t len = jscan_unescape(t->s, t->len, raw, sizeof(raw));

	if (len > sizeof(raw))
		len = utf8_cut(raw, sizeof(raw));
	return schema_error(p, t->pos, "unknown dtype %s: expected one of "
			    "the 22 names BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, "
			    "F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, "
			    "I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, "
			    "U64 (case-sensitive)", quote_name(q, raw, len));
}

/* dtype as {"U8": null}: serde accepts a unit variant given as a
 * one-key map whose value is null.  Through serde's flatten buffer
 * (ContentRefDeserializer) only null is a unit; {"U8": {}} is refused. */
static int
dtype_map(struct header_parser *p, enum dtype *d)
{
	struct jscan_tok key, val;
	char desc[96];
	int known;

	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type == JSCAN_OBJECT_END)
		return schema_error(p, p->tok.pos, "dtype: invalid value: an "
				    "empty object, expected a map with a single key");
	key = p->tok;
	known = dtype_of_token(&key, d) == 0;
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	val = p->tok;
	if (skip_value(p) < 0)
		return FATAL;
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type == JSCAN_KEY)
		return schema_error(p, p->tok.pos, "dtype: invalid value: a map "
				    "with several keys, expected a map with a "
				    "single key");
	if (!known)
		return unknown_dtype(p, &key);
	if (val.type != JSCAN_NULL)
		return schema_error(p, val.pos, "dtype: invalid type: %s, "
				    "expected unit (null)",
				    describe(desc, sizeof(desc), &val));
	return OK;
}

/* Equality of two short strings (dtype names) without a libc call. */
static inline int
short_eq(const char *a, const char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int
parse_dtype(struct header_parser *p)
{
	enum dtype d;
	char desc[96];
	int rc;

	if (p->tok.type == JSCAN_STRING && p->last_dtype_text &&
	    p->tok.len == p->last_dtype_len && !p->tok.escaped &&
	    short_eq(p->tok.s, p->last_dtype_text, p->last_dtype_len)) {
		d = p->last_dtype;
	} else if (p->tok.type == JSCAN_STRING) {
		if (dtype_of_token(&p->tok, &d) < 0)
			return unknown_dtype(p, &p->tok);
		if (!p->tok.escaped) {
			p->last_dtype_text = p->tok.s;
			p->last_dtype_len = p->tok.len;
			p->last_dtype = d;
		}
	} else if (p->tok.type == JSCAN_OBJECT) {
		rc = dtype_map(p, &d);
		if (rc != OK)
			return rc;
	} else {
		return schema_error(p, p->tok.pos, "dtype: invalid type: %s, "
				    "expected a string",
				    describe(desc, sizeof(desc), &p->tok));
	}
	p->tensors[p->cur].dtype = (uint8_t)d;
	return OK;
}

/* One integer element of shape or data_offsets: a plain non-negative
 * JSON integer <= 2^64-1 (what serde_json hands to usize). */
static int
expect_uint(struct header_parser *p, const char *what, uint64_t *v)
{
	char desc[96];

	if (p->tok.type == JSCAN_NUMBER && p->tok.is_uint) {
		*v = p->tok.uint;
		return OK;
	}
	return schema_error(p, p->tok.pos, "%s: invalid type: %s, expected "
			    "a non-negative integer below 2^64", what,
			    describe(desc, sizeof(desc), &p->tok));
}

/* The shape just appended at pool[off..pool_len): if a recent tensor had the
 * same one, drop the copy and share it.  Returns the offset to use. */
static size_t
intern_shape(struct header_parser *p, size_t off)
{
	size_t rank = p->pool_len - off, h = rank;
	const uint64_t *dims;

	if (rank == 0)
		return off;	/* and the pool may still be NULL */
	dims = p->pool + off;
	for (size_t i = 0; i < rank; i++)
		h = h * 31 + (size_t)(dims[i] ^ dims[i] >> 29);
	h = (h ^ h >> 17) & 63;
	if (p->shapes[h].rank == rank &&
	    memcmp(p->pool + p->shapes[h].off, dims, rank * sizeof(*dims)) == 0) {
		p->pool_len = off;
		return p->shapes[h].off;
	}
	p->shapes[h].off = (uint32_t)off;
	p->shapes[h].rank = (uint32_t)rank;
	return off;
}

static int
parse_shape(struct header_parser *p)
{
	size_t off = p->pool_len;
	char desc[96];

	if (p->tok.type != JSCAN_ARRAY)
		return schema_error(p, p->tok.pos, "shape: invalid type: %s, "
				    "expected an array",
				    describe(desc, sizeof(desc), &p->tok));
	for (;;) {
		uint64_t v = 0;
		int rc;

		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (p->tok.type == JSCAN_ARRAY_END)
			break;
		rc = expect_uint(p, "shape", &v);
		if (rc != OK)
			return rc;
		if (grow((void **)&p->pool, &p->pool_cap, p->pool_len + 1,
			 sizeof(*p->pool)) < 0)
			return no_memory(p);
		p->pool[p->pool_len++] = v;
	}
	p->tensors[p->cur].rank = (uint32_t)(p->pool_len - off);
	p->tensors[p->cur].shape_off = (uint32_t)intern_shape(p, off);
	return OK;
}

static int
parse_offsets(struct header_parser *p)
{
	uint64_t v[2];
	char desc[96];
	int rc;

	if (p->tok.type != JSCAN_ARRAY)
		return schema_error(p, p->tok.pos, "data_offsets: invalid type: "
				    "%s, expected an array of 2 integers",
				    describe(desc, sizeof(desc), &p->tok));
	for (int i = 0; i < 2; i++) {
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (p->tok.type == JSCAN_ARRAY_END)
			return schema_error(p, p->tok.pos, "data_offsets: invalid "
					    "length %d, expected 2 elements", i);
		rc = expect_uint(p, "data_offsets", &v[i]);
		if (rc != OK)
			return rc;
	}
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type != JSCAN_ARRAY_END)
		return schema_error(p, p->tok.pos, "data_offsets: invalid length, "
				    "expected 2 elements");
	p->tensors[p->cur].begin = v[0];
	p->tensors[p->cur].end = v[1];
	return OK;
}

static int
parse_field(struct header_parser *p, enum field f)
{
	switch (f) {
	case F_DTYPE:
		return parse_dtype(p);
	case F_SHAPE:
		return parse_shape(p);
	default:
		return parse_offsets(p);
	}
}

/* Which TensorInfo field a KEY token names (after unescaping), or -1. */
static int
field_of(const struct jscan_tok *t)
{
	char name[16];
	const char *s = t->s;
	size_t len = t->len;

	if (t->escaped) {
		len = jscan_unescape(t->s, t->len, name, sizeof(name));
		if (len > sizeof(name))
			return -1;
		s = name;
	}
	/* constant lengths let the compiler inline the comparisons */
	if (len == 5 && memcmp(s, "dtype", 5) == 0)
		return F_DTYPE;
	if (len == 5 && memcmp(s, "shape", 5) == 0)
		return F_SHAPE;
	if (len == 12 && memcmp(s, "data_offsets", 12) == 0)
		return F_OFFSETS;
	return -1;
}

/* {"dtype": ..., "shape": ..., "data_offsets": ...}, any order; unknown
 * fields are ignored (but still fully scanned). */
static int
entry_object(struct header_parser *p)
{
	unsigned seen = 0;
	size_t end_pos;
	int rc;

	for (;;) {
		int f;

		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (p->tok.type == JSCAN_OBJECT_END)
			break;
		f = field_of(&p->tok);
		if (f >= 0 && (seen & 1u << f))
			return schema_error(p, p->tok.pos, "duplicate field `%s`",
					    field_name[f]);
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (f < 0) {
			if (skip_value(p) < 0)
				return FATAL;
			continue;
		}
		seen |= 1u << f;
		rc = parse_field(p, (enum field)f);
		if (rc != OK)
			return rc;
	}
	end_pos = p->tok.pos;
	for (int f = 0; f < F__COUNT; f++)
		if (!(seen & 1u << f))
			return schema_error(p, end_pos, "missing field `%s`",
					    field_name[f]);
	return OK;
}

/* ["U8", [1], [0, 1]]: serde also accepts a struct as a sequence of its
 * fields in declaration order, exactly 3 of them. */
static int
entry_array(struct header_parser *p)
{
	int rc;

	for (int f = 0; f < F__COUNT; f++) {
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (p->tok.type == JSCAN_ARRAY_END)
			return schema_error(p, p->tok.pos, "invalid length %d, "
					    "expected an array of 3 elements "
					    "[dtype, shape, data_offsets]", f);
		rc = parse_field(p, (enum field)f);
		if (rc != OK)
			return rc;
	}
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type != JSCAN_ARRAY_END)
		return schema_error(p, p->tok.pos, "invalid length, expected an "
				    "array of 3 elements [dtype, shape, "
				    "data_offsets]");
	return OK;
}

static int
parse_entry(struct header_parser *p)
{
	char desc[96];

	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type == JSCAN_OBJECT)
		return entry_object(p);
	if (p->tok.type == JSCAN_ARRAY)
		return entry_array(p);
	return schema_error(p, p->tok.pos, "invalid type: %s, expected an "
			    "object with dtype, shape and data_offsets",
			    describe(desc, sizeof(desc), &p->tok));
}

/* A top-level member other than __metadata__; its decoded name is at
 * arena + arena_len, not yet committed. */
static int
parse_tensor(struct header_parser *p, size_t name_len, size_t key_pos)
{
	struct parsed_tensor *t;
	int rc;

	if (p->deferred) {
		/* an error is already certain: only the syntax matters now */
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		return skip_value(p);
	}
	if (p->ntensors >= UINT32_MAX - 1 ||
	    grow((void **)&p->tensors, &p->tensors_cap, p->ntensors + 1,
		 sizeof(*p->tensors)) < 0)
		return no_memory(p);
	p->cur = p->ntensors++;
	t = &p->tensors[p->cur];
	memset(t, 0, sizeof(*t));
	t->name.off = (uint32_t)p->arena_len;
	t->name.len = (uint32_t)name_len;
	t->name.hash = name_hash(p->arena + p->arena_len, name_len);
	t->pos = (uint32_t)key_pos;
	p->arena_len += name_len + 1;

	rc = parse_entry(p);
	if (rc == FATAL)
		return FATAL;
	if (rc == SCHEMA)
		return jscan_skip_to(&p->js, 1) < 0 ? syntax_error(p) : OK;
	return OK;
}

/* ---- __metadata__ ----------------------------------------------------- */

static int
meta_pair(struct header_parser *p)
{
	struct parsed_meta *m;
	size_t klen, vlen, key_pos = p->tok.pos;
	uint32_t koff;
	char desc[96], q[QUOTE_MAX];
	struct nametab_key k;
	long prev;

	koff = arena_put(p, &klen);
	p->arena_len += klen + 1;
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type != JSCAN_STRING)
		return json_error(p, p->tok.pos, "__metadata__ entry %s: invalid "
				  "type: %s, expected a string",
				  quote_name(q, p->arena + koff, klen),
				  describe(desc, sizeof(desc), &p->tok));
	if (grow((void **)&p->meta, &p->meta_cap, p->nmeta + 1,
		 sizeof(*p->meta)) < 0)
		return no_memory(p);
	m = &p->meta[p->nmeta];
	m->key.off = koff;
	m->key.len = (uint32_t)klen;
	nametab_key(&k, 0, p->arena + koff, klen);
	m->key.hash = k.hash;
	m->voff = arena_put(p, &vlen);
	m->vlen = (uint32_t)vlen;
	p->arena_len += vlen + 1;

	prev = p->nmeta < NAMETAB_ID_MAX ?
	       nametab_put(&p->keys, &k, (uint32_t)p->nmeta) : -2;
	if (prev == -2)
		return no_memory(p);
	if (prev >= 0 && !p->dup_meta) {
		p->dup_meta = 1;
		p->dup_meta_idx = p->nmeta;
		p->dup_meta_pos = key_pos;
	}
	p->nmeta++;
	return OK;
}

/* "__metadata__": null | {string: string, ...}, read straight from the
 * stream by the reference, so errors here are not deferred. */
static int
parse_metadata(struct header_parser *p, size_t key_pos)
{
	char desc[96];

	if (p->meta_seen)
		return json_error(p, key_pos, "duplicate field `__metadata__`");
	p->meta_seen = 1;
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type == JSCAN_NULL)
		return OK;
	if (p->tok.type != JSCAN_OBJECT)
		return json_error(p, p->tok.pos, "__metadata__: invalid type: %s, "
				  "expected an object of strings or null",
				  describe(desc, sizeof(desc), &p->tok));
	p->has_meta = 1;
	for (;;) {
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (p->tok.type == JSCAN_OBJECT_END)
			return OK;
		if (meta_pair(p) != OK)
			return FATAL;
	}
}

/* ---- the top-level object --------------------------------------------- */

static int
parse_member(struct header_parser *p)
{
	size_t len, key_pos = p->tok.pos;

	arena_put(p, &len);
	if (len == 12 &&
	    memcmp(p->arena + p->arena_len, "__metadata__", 12) == 0)
		return parse_metadata(p, key_pos);
	return parse_tensor(p, len, key_pos);
}

static int
parse_json(struct header_parser *p)
{
	char desc[96];

	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type != JSCAN_OBJECT)
		return json_error(p, p->tok.pos, "invalid type: %s, expected "
				  "an object at the top level",
				  describe(desc, sizeof(desc), &p->tok));
	for (;;) {
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		if (p->tok.type == JSCAN_OBJECT_END)
			break;
		if (parse_member(p) != OK)
			return FATAL;
	}
	if (p->deferred)
		return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION, "%s",
			       p->deferred_msg);
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	return OK;
}

static void
parser_free(struct header_parser *p)
{
	free(p->arena);
	free(p->pool);
	free(p->tensors);
	free(p->meta);
	nametab_free(&p->keys);
}

/* The reference's checks 2-3 on (n, file_size). */
static int
check_lengths(uint64_t n, uint64_t file_size, struct err *e)
{
	if (file_size < 8)
		return err_set(e, ERR_HEADER_TOO_SMALL, "the file is %" PRIu64
			       " bytes, shorter than the 8-byte header length",
			       file_size);
	if (n > HEADER_MAX_LEN)
		return err_set(e, ERR_HEADER_TOO_LARGE, "the header length "
			       "prefix says %" PRIu64 " bytes, more than the "
			       "limit of %llu", n, HEADER_MAX_LEN);
	if (n > file_size - 8)
		return err_set(e, ERR_INVALID_HEADER_LENGTH, "the header length "
			       "prefix says %" PRIu64 " bytes but only %" PRIu64
			       " follow it", n, file_size - 8);
	return 0;
}

int
header_parse(const char *buf, size_t n, uint64_t file_size,
	     struct header **out, struct err *e)
{
	struct header_parser p;
	size_t bad_at;
	unsigned bad_len;
	int rc;

	*out = NULL;
	if (check_lengths(n, file_size, e) < 0)
		return -1;
	if (text_utf8_check(buf, n, &bad_at, &bad_len) < 0) {
		if (bad_len)
			return err_set(e, ERR_INVALID_HEADER, "invalid UTF-8 in "
				       "header: invalid utf-8 sequence of %u "
				       "bytes from index %zu", bad_len, bad_at);
		return err_set(e, ERR_INVALID_HEADER, "invalid UTF-8 in header: "
			       "incomplete utf-8 byte sequence from index %zu",
			       bad_at);
	}
	memset(&p, 0, sizeof(p));
	p.e = e;
	p.arena_cap = n + 1;
	p.arena = malloc(p.arena_cap);
	if (!p.arena || nametab_init(&p.keys, 0, meta_key_eq, &p) < 0) {
		free(p.arena);
		return err_set(e, ERR_NO_MEMORY, "out of memory for a %zu-byte "
			       "header", n);
	}
	jscan_init(&p.js, buf, n, HEADER_MAX_DEPTH);
	rc = parse_json(&p);
	if (rc == OK && header_index_build(&p, n, file_size, out) < 0)
		rc = FATAL;
	parser_free(&p);
	return rc == OK ? 0 : -1;
}

static uint64_t
le64(const unsigned char *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

int
header_claims(const unsigned char *head, size_t n, uint64_t size)
{
	return n >= 9 && size >= 8 && le64(head) <= size - 8 && head[8] == '{';
}

int
header_read(const struct reader *r, struct header **out, struct err *e)
{
	unsigned char prefix[8];
	uint64_t n = 0;
	char *buf;
	int rc;

	*out = NULL;
	if (r->size >= 8) {
		rc = reader_pread(r, prefix, 8, 0);
		if (rc < 0) {
			err_set(e, ERR_IO, "reading the header length: %s",
				strerror(-rc));
			return err_at(e, r->name);
		}
		n = le64(prefix);
	}
	if (check_lengths(n, r->size, e) < 0)
		return err_at(e, r->name);
	buf = malloc(n ? n : 1);
	if (!buf) {
		err_set(e, ERR_NO_MEMORY, "out of memory for a %" PRIu64
			"-byte header", n);
		return err_at(e, r->name);
	}
	rc = n ? reader_pread(r, buf, n, 8) : 0;
	if (rc < 0) {
		free(buf);
		err_set(e, ERR_IO, "reading the %" PRIu64 "-byte header: %s", n,
			strerror(-rc));
		return err_at(e, r->name);
	}
	rc = header_parse(buf, n, r->size, out, e);
	free(buf);
	return rc < 0 ? err_at(e, r->name) : 0;
}
