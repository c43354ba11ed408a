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

#include "dtype.h"
#include "error.h"
#include "header.h"
#include "jscan.h"
#include "nametab.h"
#include "source.h"

#define QUOTE_MAX 160		/* bytes of a quoted name inside a message */
#define NUMTEXT_MAX 40		/* bytes of a number's text inside a message */

enum { OK = 0, SCHEMA = 1, FATAL = -1 };

enum field { F_DTYPE, F_SHAPE, F_OFFSETS, F__COUNT };

static const char *const field_name[F__COUNT] = {
	"dtype", "shape", "data_offsets"
};

/* A string in the arena, with its keyed hash (nametab.h). */
struct sref {
	uint64_t hash;
	uint32_t off;
	uint32_t len;
};

struct ptensor {		/* a tensor while parsing */
	struct sref name;
	uint64_t begin, end;
	uint32_t shape_off;
	uint32_t rank;
	uint32_t pos;		/* header byte of its key, for messages */
	uint8_t dtype;
	uint8_t shadowed;	/* a later entry has the same name */
};

struct pmeta {			/* a __metadata__ pair while parsing */
	struct sref key;
	uint32_t voff, vlen;
};

struct hindex {			/* what header->priv points to */
	char *arena;
	uint64_t *pool;
};

struct parser {
	struct jscan js;
	struct jscan_tok tok;
	struct err *e;

	char *arena;		/* capacity n + 1: every decoded string plus its
				   NUL fits in the bytes of its JSON literal */
	size_t alen, acap;
	uint64_t *pool;
	size_t plen, pcap;
	struct ptensor *pt;
	size_t npt, ptcap;
	struct pmeta *pm;
	size_t npm, pmcap;
	struct nametab keys;	/* __metadata__ keys, for duplicates */

	int meta_seen;		/* "__metadata__" key seen (even if null) */
	int has_meta;		/* ... and not null */

	struct {		/* recent shapes in the pool, by hash: models */
		uint32_t off;	/* repeat a few shapes in every layer, so */
		uint32_t rank;	/* most shapes are stored once */
	} shapes[64];

	const char *dt_text;	/* the last dtype string seen, raw, and its */
	size_t dt_len;		/* value: the writer groups tensors by dtype */
	enum dtype dt_last;

	size_t cur;		/* tensor being parsed (index into pt) */
	int deferred;		/* a tensor schema error is held in dmsg */
	char dmsg[ERR_DETAIL_MAX];

	int dup_tensor;		/* first duplicate tensor name: index, pos */
	size_t dup_tensor_idx;
	int dup_meta;		/* first duplicate __metadata__ key */
	size_t dup_meta_idx, dup_meta_pos;
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
	const struct parser *p = ctx;
	const struct sref *r = &p->pm[id].key;

	return r->len == k->len && memcmp(p->arena + r->off, k->name, k->len) == 0;
}

/* Stable sort of v[0..n) by the upper 32 bits: three 11-bit LSD radix
 * passes through tmp.  Returns whichever of the two holds the result.
 * Equal names then sit next to each other without a cache miss per name
 * that a table's random inserts would cost. */
static uint64_t *
sort_by_tag(uint64_t *v, uint64_t *tmp, size_t n)
{
	static const unsigned radix = 11;
	size_t count[1u << 11];

	for (unsigned shift = 32; shift < 64; shift += radix) {
		size_t sum = 0;
		uint64_t *x;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(v[i] >> shift) & 2047]++;
		for (size_t k = 0; k < 2048; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i] >> shift) & 2047]++] = v[i];
		x = v;
		v = tmp;
		tmp = x;
	}
	return v;
}

/* ---- errors ----------------------------------------------------------- */

/* buf has QUOTE_MAX bytes (err_quote never writes past its cap). */
static const char *
quote(char *buf, const char *s, size_t len)
{
	return err_quote(buf, QUOTE_MAX, s, len);
}

static int
no_memory(struct parser *p)
{
	return err_set(p->e, ERR_NO_MEMORY, "out of memory while indexing "
		       "the header");
}

static int
syntax_error(struct parser *p)
{
	return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
		       "invalid JSON at header byte %zu: %s",
		       p->js.err_pos, p->js.err_msg);
}

/* A JSON error the reference reports where it occurs. */
static int __attribute__((format(printf, 3, 4)))
json_error(struct parser *p, size_t pos, const char *fmt, ...)
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
schema_error(struct parser *p, size_t pos, const char *fmt, ...)
{
	const struct ptensor *t = &p->pt[p->cur];
	/* sized so that the whole sentence fits in dmsg */
	char q[QUOTE_MAX], msg[ERR_DETAIL_MAX - QUOTE_MAX - 48];
	va_list ap;

	if (p->deferred)
		return SCHEMA;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->dmsg, sizeof(p->dmsg), "tensor %s: %s (at header byte %zu)",
		 quote(q, p->arena + t->name.off, t->name.len), msg, pos);
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
			 quote(q, t->s, t->len));
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
next(struct parser *p)
{
	return jscan_next(&p->js, &p->tok);
}

/* The current token starts a value: consume the rest of it. */
static int
skip_value(struct parser *p)
{
	if (p->tok.type != JSCAN_OBJECT && p->tok.type != JSCAN_ARRAY)
		return OK;
	if (jscan_skip_to(&p->js, p->js.depth - 1) < 0)
		return syntax_error(p);
	return OK;
}

/* Decode the current KEY/STRING token into the arena, NUL-terminated.
 * Returns its offset; the caller commits it by advancing alen. */
static uint32_t
arena_put(struct parser *p, size_t *len)
{
	char *dst = p->arena + p->alen;

	if (p->tok.escaped)
		*len = jscan_unescape(p->tok.s, p->tok.len, dst, p->tok.len);
	else {
		if (p->tok.len)
			memcpy(dst, p->tok.s, p->tok.len);
		*len = p->tok.len;
	}
	dst[*len] = '\0';
	return (uint32_t)p->alen;
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
unknown_dtype(struct parser *p, const struct jscan_tok *t)
{
	char q[QUOTE_MAX], raw[64];
	size_t len = jscan_unescape(t->s, t->len, raw, sizeof(raw));

	if (len > sizeof(raw))
		len = utf8_cut(raw, sizeof(raw));
	return schema_error(p, t->pos, "unknown dtype %s: expected one of "
			    "the 22 names BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, "
			    "F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, "
			    "I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, "
			    "U64 (case-sensitive)", quote(q, raw, len));
}

/* dtype as {"U8": null}: serde accepts a unit variant given as a
 * one-key map whose value is null.  Through serde's flatten buffer
 * (ContentRefDeserializer) only null is a unit; {"U8": {}} is refused. */
static int
dtype_map(struct parser *p, enum dtype *d)
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
parse_dtype(struct parser *p)
{
	enum dtype d;
	char desc[96];
	int rc;

	if (p->tok.type == JSCAN_STRING && p->dt_text &&
	    p->tok.len == p->dt_len && !p->tok.escaped &&
	    short_eq(p->tok.s, p->dt_text, p->dt_len)) {
		d = p->dt_last;
	} else if (p->tok.type == JSCAN_STRING) {
		if (dtype_of_token(&p->tok, &d) < 0)
			return unknown_dtype(p, &p->tok);
		if (!p->tok.escaped) {
			p->dt_text = p->tok.s;
			p->dt_len = p->tok.len;
			p->dt_last = d;
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
	p->pt[p->cur].dtype = (uint8_t)d;
	return OK;
}

/* One integer element of shape or data_offsets: a plain non-negative
 * JSON integer <= 2^64-1 (what serde_json hands to usize). */
static int
expect_uint(struct parser *p, const char *what, uint64_t *v)
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

/* The shape just appended at pool[off..plen): if a recent tensor had the
 * same one, drop the copy and share it.  Returns the offset to use. */
static size_t
intern_shape(struct parser *p, size_t off)
{
	size_t rank = p->plen - off, h = rank;
	const uint64_t *dims;

	if (rank == 0)
		return off;	/* and the pool may still be NULL */
	dims = p->pool + off;
	for (size_t i = 0; i < rank; i++)
		h = h * 31 + (size_t)(dims[i] ^ dims[i] >> 29);
	h = (h ^ h >> 17) & 63;
	if (p->shapes[h].rank == rank &&
	    memcmp(p->pool + p->shapes[h].off, dims, rank * sizeof(*dims)) == 0) {
		p->plen = off;
		return p->shapes[h].off;
	}
	p->shapes[h].off = (uint32_t)off;
	p->shapes[h].rank = (uint32_t)rank;
	return off;
}

static int
parse_shape(struct parser *p)
{
	size_t off = p->plen;
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
		if (grow((void **)&p->pool, &p->pcap, p->plen + 1,
			 sizeof(*p->pool)) < 0)
			return no_memory(p);
		p->pool[p->plen++] = v;
	}
	p->pt[p->cur].rank = (uint32_t)(p->plen - off);
	p->pt[p->cur].shape_off = (uint32_t)intern_shape(p, off);
	return OK;
}

static int
parse_offsets(struct parser *p)
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
	p->pt[p->cur].begin = v[0];
	p->pt[p->cur].end = v[1];
	return OK;
}

static int
parse_field(struct parser *p, enum field f)
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
entry_object(struct parser *p)
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
entry_array(struct parser *p)
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
parse_entry(struct parser *p)
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
 * arena + alen, not yet committed. */
static int
parse_tensor(struct parser *p, size_t name_len, size_t key_pos)
{
	struct ptensor *t;
	int rc;

	if (p->deferred) {
		/* an error is already certain: only the syntax matters now */
		if (next(p) == JSCAN_ERROR)
			return syntax_error(p);
		return skip_value(p);
	}
	if (p->npt >= UINT32_MAX - 1 ||
	    grow((void **)&p->pt, &p->ptcap, p->npt + 1, sizeof(*p->pt)) < 0)
		return no_memory(p);
	p->cur = p->npt++;
	t = &p->pt[p->cur];
	memset(t, 0, sizeof(*t));
	t->name.off = (uint32_t)p->alen;
	t->name.len = (uint32_t)name_len;
	t->name.hash = name_hash(p->arena + p->alen, name_len);
	t->pos = (uint32_t)key_pos;
	p->alen += name_len + 1;

	rc = parse_entry(p);
	if (rc == FATAL)
		return FATAL;
	if (rc == SCHEMA)
		return jscan_skip_to(&p->js, 1) < 0 ? syntax_error(p) : OK;
	return OK;
}

/* ---- __metadata__ ----------------------------------------------------- */

static int
meta_pair(struct parser *p)
{
	struct pmeta *m;
	size_t klen, vlen, key_pos = p->tok.pos;
	uint32_t koff;
	char desc[96], q[QUOTE_MAX];
	struct nametab_key k;
	long prev;

	koff = arena_put(p, &klen);
	p->alen += klen + 1;
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	if (p->tok.type != JSCAN_STRING)
		return json_error(p, p->tok.pos, "__metadata__ entry %s: invalid "
				  "type: %s, expected a string",
				  quote(q, p->arena + koff, klen),
				  describe(desc, sizeof(desc), &p->tok));
	if (grow((void **)&p->pm, &p->pmcap, p->npm + 1, sizeof(*p->pm)) < 0)
		return no_memory(p);
	m = &p->pm[p->npm];
	m->key.off = koff;
	m->key.len = (uint32_t)klen;
	nametab_key(&k, 0, p->arena + koff, klen);
	m->key.hash = k.hash;
	m->voff = arena_put(p, &vlen);
	m->vlen = (uint32_t)vlen;
	p->alen += vlen + 1;

	prev = p->npm < NAMETAB_ID_MAX ?
	       nametab_put(&p->keys, &k, (uint32_t)p->npm) : -2;
	if (prev == -2)
		return no_memory(p);
	if (prev >= 0 && !p->dup_meta) {
		p->dup_meta = 1;
		p->dup_meta_idx = p->npm;
		p->dup_meta_pos = key_pos;
	}
	p->npm++;
	return OK;
}

/* "__metadata__": null | {string: string, ...}, read straight from the
 * stream by the reference, so errors here are not deferred. */
static int
parse_metadata(struct parser *p, size_t key_pos)
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
parse_member(struct parser *p)
{
	size_t len, key_pos = p->tok.pos;

	arena_put(p, &len);
	if (len == 12 && memcmp(p->arena + p->alen, "__metadata__", 12) == 0)
		return parse_metadata(p, key_pos);
	return parse_tensor(p, len, key_pos);
}

static int
parse_json(struct parser *p)
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
			       p->dmsg);
	if (next(p) == JSCAN_ERROR)
		return syntax_error(p);
	return OK;
}

/* ---- validation (the reference's validate()) -------------------------- */

struct okey {
	uint64_t begin, end;
	uint32_t idx;
};

static int
okey_cmp(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	/* the index makes the order total: a stable sort, deterministic
	 * where the reference's HashMap order is not */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Indices of the tensors the reference would keep (the last entry of
 * each name), in data_offsets order; *identity tells that this is simply
 * 0..npt-1 (the writer emits file order).  NULL on allocation failure. */
static uint32_t *
sorted_order(const struct parser *p, size_t *count, int *identity)
{
	struct okey *k = malloc((p->npt ? p->npt : 1) * sizeof(*k));
	uint32_t *order;
	size_t m = 0;
	int sorted = 1;

	if (!k)
		return NULL;
	for (size_t i = 0; i < p->npt; i++) {
		if (p->pt[i].shadowed)
			continue;
		k[m].begin = p->pt[i].begin;
		k[m].end = p->pt[i].end;
		k[m].idx = (uint32_t)i;
		if (m && okey_cmp(&k[m - 1], &k[m]) > 0)
			sorted = 0;
		m++;
	}
	if (!sorted)
		qsort(k, m, sizeof(*k), okey_cmp);
	*identity = sorted && m == p->npt;
	order = malloc((m ? m : 1) * sizeof(*order));
	if (order)
		for (size_t i = 0; i < m; i++)
			order[i] = k[i].idx;
	free(k);
	*count = m;
	return order;
}

static inline int
same_name(const struct parser *p, uint32_t a, uint32_t b)
{
	const struct sref *x = &p->pt[a].name, *y = &p->pt[b].name;

	return x->len == y->len &&
	       memcmp(p->arena + x->off, p->arena + y->off, x->len) == 0;
}

/* v: (tag << 32 | index) of every tensor, sorted by tag, indices rising
 * within a tag.  Marks every entry whose name comes again later as
 * shadowed (the reference keeps the last one) and notes the first
 * repeated entry in header order.  Entries of one name sit in the same
 * run of equal tags, and each is compared until its next occurrence, so
 * even a header of one name repeated stays linear. */
static void
find_duplicates(struct parser *p, const uint64_t *v, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j] >> 32 == v[i] >> 32; j++)
			;
		for (size_t a = i; a + 1 < j; a++) {
			for (size_t b = a + 1; b < j; b++) {
				uint32_t x = (uint32_t)v[a], y = (uint32_t)v[b];

				if (!same_name(p, x, y))
					continue;
				p->pt[x].shadowed = 1;
				if (!p->dup_tensor || y < p->dup_tensor_idx) {
					p->dup_tensor = 1;
					p->dup_tensor_idx = y;
				}
				break;
			}
		}
	}
}

/* The note appended to a validation error when names were duplicated. */
static void
dup_note(const struct parser *p, char *buf, size_t cap)
{
	char q[QUOTE_MAX];

	buf[0] = '\0';
	if (p->dup_tensor) {
		const struct ptensor *t = &p->pt[p->dup_tensor_idx];

		snprintf(buf, cap, "; also, tensor %s appears more than once "
			 "(header byte %" PRIu32 ")",
			 quote(q, p->arena + t->name.off, t->name.len), t->pos);
	} else if (p->dup_meta) {
		const struct pmeta *m = &p->pm[p->dup_meta_idx];

		snprintf(buf, cap, "; also, __metadata__ key %s appears more "
			 "than once", quote(q, p->arena + m->key.off, m->key.len));
	}
}

/* A validation error about tensor t: the sentence, the quoted name in
 * front and the duplicate note behind.  Returns FATAL. */
static int __attribute__((format(printf, 4, 5)))
tensor_error(struct parser *p, const struct ptensor *t, enum err_code code,
	     const char *fmt, ...)
{
	char q[QUOTE_MAX], note[ERR_DETAIL_MAX / 2], msg[ERR_DETAIL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dup_note(p, note, sizeof(note));
	err_set(p->e, code, "tensor %s: %s%s",
		quote(q, p->arena + t->name.off, t->name.len), msg, note);
	return FATAL;
}

/* One step of the reference's validate(): the same checks in the same
 * order, with checked arithmetic where it has checked_mul. */
static int
validate_one(struct parser *p, const struct ptensor *t, uint64_t start,
	     uint64_t *numel)
{
	const struct dtype_info *di = dtype_info((enum dtype)t->dtype);
	uint64_t n = 1, nbits;

	if (t->begin != start || t->end < t->begin)
		return tensor_error(p, t, ERR_INVALID_OFFSET, "data_offsets "
				    "[%" PRIu64 ", %" PRIu64 "] %s", t->begin,
				    t->end, t->end < t->begin ?
				    "end before they begin" :
				    "do not start where the previous tensor (in "
				    "offset order) ends");
	for (uint32_t i = 0; i < t->rank; i++) {
		uint64_t d = p->pool[t->shape_off + i];

		if (d && n > UINT64_MAX / d)
			return tensor_error(p, t, ERR_VALIDATION_OVERFLOW, "the "
					    "product of the shape overflows 64 "
					    "bits at dimension %" PRIu32, i);
		n *= d;
	}
	if (n > UINT64_MAX / di->bits)
		return tensor_error(p, t, ERR_VALIDATION_OVERFLOW, "%" PRIu64
				    " elements of %s overflow 64 bits as a size "
				    "in bits", n, di->name);
	nbits = n * di->bits;
	if (nbits % 8)
		return tensor_error(p, t, ERR_MISALIGNED_SLICE, "%" PRIu64
				    " elements of %s (%u bits each) do not fill "
				    "whole bytes", n, di->name, di->bits);
	if (t->end - t->begin != nbits / 8)
		return tensor_error(p, t, ERR_TENSOR_INVALID_INFO, "its shape and "
				    "dtype %s need %" PRIu64 " bytes but "
				    "data_offsets [%" PRIu64 ", %" PRIu64 "] hold %"
				    PRIu64, di->name, nbits / 8, t->begin, t->end,
				    t->end - t->begin);
	*numel = n;
	return OK;
}

/* ---- building the index ----------------------------------------------- */

static void
hindex_free(struct hindex *x)
{
	if (!x)
		return;
	free(x->arena);
	free(x->pool);
	free(x);
}

/* Hand the parser's arrays over to a new header: tensors in `order`. */
static struct header *
build(struct parser *p, const uint32_t *order, const uint64_t *numel,
      uint64_t n, uint64_t file_size, uint64_t data_len)
{
	struct header *h = calloc(1, sizeof(*h));
	struct hindex *x = calloc(1, sizeof(*x));
	char *arena;

	if (!h || !x)
		goto fail;
	h->tensors = calloc(p->npt ? p->npt : 1, sizeof(*h->tensors));
	h->meta = calloc(p->npm ? p->npm : 1, sizeof(*h->meta));
	if (!h->tensors || !h->meta)
		goto fail;
	/* give back the arena's unused tail (it was sized for the worst case) */
	arena = realloc(p->arena, p->alen ? p->alen : 1);
	if (arena)
		p->arena = arena;
	if (p->pool && p->plen < p->pcap) {
		uint64_t *pool = realloc(p->pool, (p->plen ? p->plen : 1) *
					 sizeof(*pool));

		if (pool)
			p->pool = pool;
	}
	for (size_t i = 0; i < p->npt; i++) {
		const struct ptensor *s = &p->pt[order[i]];
		struct tensor *t = &h->tensors[i];

		t->name = p->arena + s->name.off;
		t->name_len = s->name.len;
		t->dtype = (enum dtype)s->dtype;
		t->rank = s->rank;
		t->shape = p->pool ? p->pool + s->shape_off : NULL;
		t->begin = s->begin;
		t->end = s->end;
		t->numel = numel[i];
	}
	for (size_t i = 0; i < p->npm; i++) {
		h->meta[i].key = p->arena + p->pm[i].key.off;
		h->meta[i].key_len = p->pm[i].key.len;
		h->meta[i].val = p->arena + p->pm[i].voff;
		h->meta[i].val_len = p->pm[i].vlen;
	}
	h->header_len = n;
	h->data_start = 8 + n;
	h->file_size = file_size;
	h->data_len = data_len;
	h->ntensors = p->npt;
	h->has_metadata = p->has_meta;
	h->nmeta = p->npm;
	x->arena = p->arena;
	x->pool = p->pool;
	h->priv = x;
	p->arena = NULL;
	p->pool = NULL;
	return h;
fail:
	free(x);
	if (h) {
		free(h->tensors);
		free(h->meta);
		free(h);
	}
	return NULL;
}

static int
duplicate_error(struct parser *p)
{
	char q[QUOTE_MAX];

	if (p->dup_tensor) {
		const struct ptensor *t = &p->pt[p->dup_tensor_idx];

		return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
			       "duplicate tensor name %s (at header byte %"
			       PRIu32 "): the format forbids duplicate keys; "
			       "the reference reader would silently keep the "
			       "last", quote(q, p->arena + t->name.off,
					     t->name.len), t->pos);
	}
	return err_set(p->e, ERR_INVALID_HEADER_DESERIALIZATION,
		       "duplicate __metadata__ key %s (at header byte %zu): the "
		       "format forbids duplicate keys; the reference reader "
		       "would silently keep the last",
		       quote(q, p->arena + p->pm[p->dup_meta_idx].key.off,
			     p->pm[p->dup_meta_idx].key.len), p->dup_meta_pos);
}

/* validate() over the kept tensors, the coverage check, then the index. */
static int
finish(struct parser *p, uint64_t n, uint64_t file_size, struct header **out)
{
	size_t m = 0, nt = p->npt ? p->npt : 1;
	uint64_t *keys = malloc(nt * sizeof(*keys));
	uint64_t *tmp = malloc(nt * sizeof(*tmp));
	uint64_t *tags = NULL, *numel = NULL;
	uint64_t start = 0, data_start = 8 + n;
	uint32_t *order = NULL;
	int rc = FATAL, identity = 0;

	if (!keys || !tmp) {
		no_memory(p);
		goto out;
	}
	for (size_t i = 0; i < p->npt; i++)
		keys[i] = (p->pt[i].name.hash >> 32) << 32 | i;
	tags = sort_by_tag(keys, tmp, p->npt);
	find_duplicates(p, tags, p->npt);
	order = sorted_order(p, &m, &identity);
	numel = malloc((m ? m : 1) * sizeof(*numel));
	if (!order || !numel) {
		no_memory(p);
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		const struct ptensor *t = &p->pt[order[i]];

		if (validate_one(p, t, start, &numel[i]) != OK)
			goto out;
		start = t->end;
	}
	if (file_size < data_start || start != file_size - data_start) {
		char note[ERR_DETAIL_MAX / 2];

		dup_note(p, note, sizeof(note));
		err_set(p->e, ERR_METADATA_INCOMPLETE_BUFFER, "the tensors "
			"cover %" PRIu64 " bytes of data but the file has %"
			PRIu64 " bytes after the header%s", start,
			file_size - data_start, note);
		goto out;
	}
	if (p->dup_tensor || p->dup_meta) {
		duplicate_error(p);
		goto out;
	}
	*out = build(p, order, numel, n, file_size, start);
	if (!*out) {
		no_memory(p);
		goto out;
	}
	rc = OK;
out:
	free(order);
	free(numel);
	free(keys);
	free(tmp);
	return rc;
}

static void
parser_free(struct parser *p)
{
	free(p->arena);
	free(p->pool);
	free(p->pt);
	free(p->pm);
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
	struct parser p;
	size_t bad_at;
	unsigned bad_len;
	int rc;

	*out = NULL;
	if (check_lengths(n, file_size, e) < 0)
		return -1;
	if (jscan_utf8_check(buf, n, &bad_at, &bad_len) < 0) {
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
	p.acap = n + 1;
	p.arena = malloc(p.acap);
	if (!p.arena || nametab_init(&p.keys, 0, meta_key_eq, &p) < 0) {
		free(p.arena);
		return err_set(e, ERR_NO_MEMORY, "out of memory for a %zu-byte "
			       "header", n);
	}
	jscan_init(&p.js, buf, n, HEADER_MAX_DEPTH);
	rc = parse_json(&p);
	if (rc == OK)
		rc = finish(&p, n, file_size, out);
	parser_free(&p);
	return rc == OK ? 0 : -1;
}

static uint64_t
le64(const unsigned char b[8])
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

int
header_read(struct source *src, struct header **out, struct err *e)
{
	unsigned char prefix[8];
	uint64_t n;
	char *buf;
	int rc;

	*out = NULL;
	if (src->size >= 8) {
		rc = source_pread(src, prefix, 8, 0);
		if (rc < 0) {
			err_where(e, src->name);
			return err_set(e, ERR_IO, "reading the header length: %s",
				       strerror(-rc));
		}
		n = le64(prefix);
	} else {
		n = 0;
	}
	if (check_lengths(n, src->size, e) < 0) {
		err_where(e, src->name);
		return -1;
	}
	buf = malloc(n ? n : 1);
	if (!buf)
		return err_set(e, ERR_NO_MEMORY, "out of memory for a %" PRIu64
			       "-byte header", n);
	rc = n ? source_pread(src, buf, n, 8) : 0;
	if (rc < 0) {
		free(buf);
		err_where(e, src->name);
		return err_set(e, ERR_IO, "reading the %" PRIu64 "-byte header: "
			       "%s", n, strerror(-rc));
	}
	rc = header_parse(buf, n, src->size, out, e);
	free(buf);
	if (rc < 0)
		err_where(e, src->name);
	return rc;
}

void
header_free(struct header *h)
{
	if (!h)
		return;
	hindex_free(h->priv);
	free(h->tensors);
	free(h->meta);
	free(h);
}
