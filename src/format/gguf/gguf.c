/* gguf.c - parse and validate a GGUF file's header and tensor infos into
 * the table of table.h (see gguf.h).  Reads through the reader in chunks
 * of GGUF_CHUNK bytes; grows its arrays as entries are read, so a count
 * costs memory only for the entries the file really holds. */
#include "format/gguf/gguf.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/text.h"

#define GGUF_CHUNK 65536
#define GGUF_MAX_NAME 63	/* ggml's GGML_MAX_NAME, less the NUL */

enum gguf_value {
	V_U8, V_I8, V_U16, V_I16, V_U32, V_I32, V_F32, V_BOOL, V_STRING,
	V_ARRAY, V_U64, V_I64, V_F64, V__COUNT
};

static const char *const value_names[V__COUNT] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string",
	"array", "u64", "i64", "f64",
};

/* Fewest bytes one value of each type takes in the file. */
static const unsigned value_min[V__COUNT] = {
	1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8,
};

struct span {
	size_t off, len;	/* in text */
};

struct kv {
	struct span key, val;
	int json;
};

struct info {
	struct span name;
	uint32_t rank;
	uint64_t ne[GGUF_MAX_DIMS];
	enum dtype dtype;
	uint64_t offset, nbytes, numel;
};

struct gguf_in {
	const struct reader *r;
	struct err *e;
	uint64_t pos;		/* next byte to read */
	uint64_t buf_off;	/* file offset of buf[0] */
	size_t buf_len;
	char field[160];	/* what is being read, for messages */
	struct buf text;	/* keys, names, values; NUL after each */
	struct buf scratch;	/* one string inside an array */
	struct kv *kv;
	size_t nkv, kv_cap;
	struct info *ti;
	size_t nti, ti_cap;
	uint32_t alignment;
	unsigned char buf[GGUF_CHUNK];
};

/* What a table keeps: text and shapes; everything else points in. */
struct gguf_priv {
	char *text;
	uint64_t *shapes;
};

static int __attribute__((format(printf, 2, 3)))
fail(struct gguf_in *in, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(in->e, ERR_INVALID_GGUF, "GGUF %s: %s", in->field, msg);
}

/* in->field = what, then a key or name quoted on one line: at most 100
 * bytes, control bytes as '?'. */
static void
set_field(struct gguf_in *in, const char *what, const char *name)
{
	size_t k = (size_t)snprintf(in->field, sizeof(in->field), "%s \"",
				    what);
	size_t i;

	for (i = 0; name[i] && i < 100 && k + 3 < sizeof(in->field); i++) {
		unsigned char c = (unsigned char)name[i];

		in->field[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	in->field[k++] = '"';
	in->field[k] = '\0';
}

static int
no_memory(struct gguf_in *in)
{
	return err_set(in->e, ERR_NO_MEMORY, "out of memory reading GGUF %s",
		       in->field);
}

static uint64_t
left(const struct gguf_in *in)
{
	return in->r->size - in->pos;
}

/* Copy the next n bytes into dst (NULL: into in->text). */
static int
get(struct gguf_in *in, void *dst, uint64_t n, const char *what)
{
	unsigned char *d = dst;

	if (n > left(in))
		return fail(in, "%s of %" PRIu64 " bytes at offset %" PRIu64
			    " runs past the file's end (%" PRIu64 " bytes)",
			    what, n, in->pos, in->r->size);
	while (n) {
		size_t k;

		if (in->pos < in->buf_off ||
		    in->pos >= in->buf_off + in->buf_len) {
			uint64_t want = left(in) < GGUF_CHUNK ? left(in) :
					GGUF_CHUNK;
			int rc = reader_pread(in->r, in->buf, (size_t)want,
					      in->pos);

			if (rc < 0)
				return err_set(in->e, ERR_IO, "reading %" PRIu64
					       " bytes at offset %" PRIu64
					       ": %s", want, in->pos,
					       strerror(-rc));
			in->buf_off = in->pos;
			in->buf_len = (size_t)want;
		}
		k = (size_t)(in->buf_off + in->buf_len - in->pos);
		if (k > n)
			k = (size_t)n;
		if (d) {
			memcpy(d, in->buf + (in->pos - in->buf_off), k);
			d += k;
		} else if (buf_add(&in->text, in->buf + (in->pos - in->buf_off),
				   k)) {
			return no_memory(in);
		}
		in->pos += k;
		n -= k;
	}
	return 0;
}

static int
get_u32(struct gguf_in *in, uint32_t *v, const char *what)
{
	unsigned char b[4];

	if (get(in, b, 4, what))
		return -1;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	     (uint32_t)b[3] << 24;
	return 0;
}

static int
get_u64(struct gguf_in *in, uint64_t *v, const char *what)
{
	unsigned char b[8];
	int i;

	if (get(in, b, 8, what))
		return -1;
	*v = 0;
	for (i = 7; i >= 0; i--)
		*v = *v << 8 | b[i];
	return 0;
}

/* A GGUF string (u64 length, bytes) appended to in->text as it is. */
static int
get_string(struct gguf_in *in, struct span *s, const char *what)
{
	uint64_t len;
	size_t bad;
	unsigned bad_len;

	if (get_u64(in, &len, what))
		return -1;
	if (len > left(in))
		return fail(in, "%s of %" PRIu64 " bytes at offset %" PRIu64
			    " runs past the file's end (%" PRIu64 " bytes)",
			    what, len, in->pos, in->r->size);
	if (len > GGUF_META_TEXT_MAX - in->text.len)
		return fail(in, "more than %llu bytes of text in the header",
			    GGUF_META_TEXT_MAX);
	if (buf_reserve(&in->text, 1))	/* data is never NULL below */
		return no_memory(in);
	s->off = in->text.len;
	s->len = (size_t)len;
	if (get(in, NULL, len, what))
		return -1;
	if (text_utf8_check(in->text.data + s->off, s->len, &bad, &bad_len))
		return fail(in, "%s is not UTF-8 (byte %zu of %zu)", what, bad,
			    s->len);
	if (buf_add(&in->text, "", 1))
		return no_memory(in);
	return 0;
}

static int
grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*arr, c * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

/* A finite float with digits enough to read back (9 for f32, 17 for
 * f64), written as a float: "-0.0" and "3.0", not "-0" and "3", which
 * JSON readers take for the integers 0 and 3. */
static int
add_real(struct gguf_in *in, double d, int digits)
{
	char t[40];

	snprintf(t, sizeof(t), "%.*g", digits, d);
	if (!strpbrk(t, ".e"))
		strcat(t, ".0");
	return buf_adds(&in->text, t);
}

static int
add_double(struct gguf_in *in, double d)
{
	if (isnan(d))
		return buf_adds(&in->text, "\"nan\"");
	if (isinf(d))
		return buf_adds(&in->text, d < 0 ? "\"-inf\"" : "\"inf\"");
	return add_real(in, d, 17);
}

static int
add_float(struct gguf_in *in, float f)
{
	if (!isfinite(f))
		return add_double(in, f);
	return add_real(in, (double)f, 9);
}

/* One scalar of type t as JSON, appended to in->text. */
static int
scalar(struct gguf_in *in, uint32_t t)
{
	unsigned char b[8];
	uint64_t u = 0;
	int i, rc;

	if (get(in, b, value_min[t], value_names[t]))
		return -1;
	for (i = (int)value_min[t] - 1; i >= 0; i--)
		u = u << 8 | b[i];
	switch (t) {
	case V_I8: rc = buf_addf(&in->text, "%d", (int8_t)u); break;
	case V_I16: rc = buf_addf(&in->text, "%d", (int16_t)u); break;
	case V_I32: rc = buf_addf(&in->text, "%" PRId32, (int32_t)u); break;
	case V_I64: rc = buf_addf(&in->text, "%" PRId64, (int64_t)u); break;
	case V_F32: {
		uint32_t w = (uint32_t)u;
		float f;

		memcpy(&f, &w, 4);
		rc = add_float(in, f);
		break;
	}
	case V_F64: {
		double d;

		memcpy(&d, &u, 8);
		rc = add_double(in, d);
		break;
	}
	case V_BOOL:
		if (u > 1)
			return fail(in, "bool value %" PRIu64 " is neither 0 "
				    "nor 1", u);
		rc = buf_adds(&in->text, u ? "true" : "false");
		break;
	default:	/* unsigned; past 2^63 - 1 a string, as jansson
			   and JavaScript read no such integer */
		rc = u > INT64_MAX ? buf_addf(&in->text, "\"%" PRIu64 "\"", u) :
		     buf_add_u64(&in->text, u);
	}
	return rc ? no_memory(in) : 0;
}

static int value(struct gguf_in *in, uint32_t t, unsigned depth);

/* A string inside an array: read aside, appended as a JSON string. */
static int
json_string(struct gguf_in *in)
{
	struct buf keep = in->text;
	struct span s;
	int rc;

	in->text = in->scratch;
	in->text.len = 0;
	rc = get_string(in, &s, "string");
	in->scratch = in->text;
	in->text = keep;
	if (rc)
		return -1;
	if (buf_add_json_string(&in->text, in->scratch.data, s.len))
		return no_memory(in);
	return 0;
}

static int
array(struct gguf_in *in, unsigned depth)
{
	uint32_t t;
	uint64_t n, i;

	if (depth >= GGUF_MAX_DEPTH)
		return fail(in, "arrays nested deeper than %d",
			    GGUF_MAX_DEPTH);
	if (get_u32(in, &t, "array type") || get_u64(in, &n, "array length"))
		return -1;
	if (t >= V__COUNT)
		return fail(in, "unknown array element type %" PRIu32, t);
	if (n > left(in) / value_min[t])
		return fail(in, "array of %" PRIu64 " %s values cannot fit in "
			    "the %" PRIu64 " bytes left in the file", n,
			    value_names[t], left(in));
	if (buf_adds(&in->text, "["))
		return no_memory(in);
	for (i = 0; i < n; i++) {
		if (i && buf_adds(&in->text, ","))
			return no_memory(in);
		if (value(in, t, depth + 1))
			return -1;
		if (in->text.len > GGUF_META_TEXT_MAX)
			return fail(in, "more than %llu bytes of text in the "
				    "header", GGUF_META_TEXT_MAX);
	}
	return buf_adds(&in->text, "]") ? no_memory(in) : 0;
}

static int
value(struct gguf_in *in, uint32_t t, unsigned depth)
{
	if (t == V_STRING)
		return json_string(in);
	if (t == V_ARRAY)
		return array(in, depth);
	return scalar(in, t);
}

static int
alignment(struct gguf_in *in, uint32_t t, const struct kv *kv)
{
	unsigned long long a;

	if (t != V_U32)
		return fail(in, "is a %s, GGUF wants a u32",
			    t < V__COUNT ? value_names[t] : "?");
	a = strtoull(in->text.data + kv->val.off, NULL, 10);
	/* the spec wants a multiple of 8, ggml (gguf.cpp) a power of two */
	if (a < 8 || (a & (a - 1)))
		return fail(in, "%llu is not a power of two multiple of 8", a);
	in->alignment = (uint32_t)a;
	return 0;
}

static int
read_kv(struct gguf_in *in, uint64_t i)
{
	struct kv *kv;
	uint32_t t;

	snprintf(in->field, sizeof(in->field), "metadata key #%" PRIu64, i);
	if (grow((void **)&in->kv, &in->kv_cap, in->nkv + 1, sizeof(*in->kv)))
		return no_memory(in);
	kv = &in->kv[in->nkv];
	if (get_string(in, &kv->key, "key"))
		return -1;
	set_field(in, "metadata key", in->text.data + kv->key.off);
	if (get_u32(in, &t, "value type"))
		return -1;
	if (t >= V__COUNT)
		return fail(in, "unknown value type %" PRIu32, t);
	if (t == V_STRING) {
		kv->json = 0;
		if (get_string(in, &kv->val, "string value"))
			return -1;
	} else {
		kv->json = 1;
		kv->val.off = in->text.len;
		if (value(in, t, 0))
			return -1;
		kv->val.len = in->text.len - kv->val.off;
		if (buf_add(&in->text, "", 1))
			return no_memory(in);
	}
	if (kv->val.len > UINT32_MAX)
		return fail(in, "value of %zu bytes as text", kv->val.len);
	in->nkv++;
	if (strcmp(in->text.data + kv->key.off, "general.alignment") == 0)
		return alignment(in, t, kv);
	return 0;
}

static int
read_info(struct gguf_in *in, uint64_t i)
{
	struct info *ti;
	const struct dtype_info *di;
	uint32_t t, j;

	snprintf(in->field, sizeof(in->field), "tensor info #%" PRIu64, i);
	if (grow((void **)&in->ti, &in->ti_cap, in->nti + 1, sizeof(*in->ti)))
		return no_memory(in);
	ti = &in->ti[in->nti];
	if (get_string(in, &ti->name, "name"))
		return -1;
	set_field(in, "tensor", in->text.data + ti->name.off);
	if (ti->name.len > GGUF_MAX_NAME)
		return fail(in, "name of %zu bytes; ggml allows at most %d",
			    ti->name.len, GGUF_MAX_NAME);
	if (get_u32(in, &ti->rank, "n_dims"))
		return -1;
	if (ti->rank > GGUF_MAX_DIMS)
		return fail(in, "%" PRIu32 " dimensions; ggml has at most %d",
			    ti->rank, GGUF_MAX_DIMS);
	ti->numel = 1;
	for (j = 0; j < ti->rank; j++) {
		if (get_u64(in, &ti->ne[j], "ne"))
			return -1;
		if (ti->ne[j] > INT64_MAX ||
		    (ti->ne[j] && ti->numel > INT64_MAX / ti->ne[j]))
			return fail(in, "ne[%" PRIu32 "] = %" PRIu64 ": the "
				    "element count overflows 2^63", j,
				    ti->ne[j]);
		ti->numel *= ti->ne[j];
	}
	if (get_u32(in, &t, "type"))
		return -1;
	if (dtype_from_ggml(t, &ti->dtype))
		return fail(in, "unknown ggml type %" PRIu32, t);
	di = dtype_info(ti->dtype);
	if (di->block) {
		if ((ti->rank ? ti->ne[0] : 1) % di->block)
			return fail(in, "%s rows of %" PRIu64 " elements are "
				    "not whole blocks of %u", di->name,
				    ti->rank ? ti->ne[0] : 1, di->block);
		ti->nbytes = ti->numel / di->block * di->block_bytes;
	} else {
		ti->nbytes = ti->numel * (di->bits / 8);
	}
	if (ti->nbytes / (di->block ? di->block_bytes : di->bits / 8) !=
	    (di->block ? ti->numel / di->block : ti->numel))
		return fail(in, "byte size overflows");
	if (get_u64(in, &ti->offset, "offset"))
		return -1;
	in->nti++;
	return 0;
}

/* qsort_r comparisons of indices: by key, by name, by offset. */

static int
cmp_key(const void *a, const void *b, void *arg)
{
	const struct gguf_in *sort_in = arg;
	const struct kv *x = &sort_in->kv[*(const size_t *)a];
	const struct kv *y = &sort_in->kv[*(const size_t *)b];
	size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
	int c = memcmp(sort_in->text.data + x->key.off,
		       sort_in->text.data + y->key.off, n);

	return c ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

static int
cmp_name(const void *a, const void *b, void *arg)
{
	const struct gguf_in *sort_in = arg;
	const struct info *x = &sort_in->ti[*(const size_t *)a];
	const struct info *y = &sort_in->ti[*(const size_t *)b];
	size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
	int c = memcmp(sort_in->text.data + x->name.off,
		       sort_in->text.data + y->name.off, n);

	return c ? c : (x->name.len > y->name.len) -
		       (x->name.len < y->name.len);
}

static int
cmp_offset(const void *a, const void *b, void *arg)
{
	const struct gguf_in *sort_in = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct info *x = &sort_in->ti[i], *y = &sort_in->ti[j];

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->nbytes != y->nbytes)
		return x->nbytes < y->nbytes ? -1 : 1;
	return (i > j) - (i < j);
}

/* Duplicate keys and names; overlapping or misplaced tensors.  order
 * gets the tensors' indices in file order. */
static int
check(struct gguf_in *in, uint64_t data_start, size_t *order)
{
	size_t n = in->nkv > in->nti ? in->nkv : in->nti, i;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	uint64_t room = in->r->size - data_start, end = 0;

	if (!idx)
		return no_memory(in);
	for (i = 0; i < in->nkv; i++)
		idx[i] = i;
	qsort_r(idx, in->nkv, sizeof(*idx), cmp_key, in);
	for (i = 1; i < in->nkv; i++) {
		if (cmp_key(&idx[i - 1], &idx[i], in) == 0) {
			set_field(in, "metadata key", in->text.data +
				  in->kv[idx[i]].key.off);
			free(idx);
			return fail(in, "appears twice");
		}
	}
	for (i = 0; i < in->nti; i++)
		idx[i] = i;
	qsort_r(idx, in->nti, sizeof(*idx), cmp_name, in);
	for (i = 1; i < in->nti; i++) {
		if (cmp_name(&idx[i - 1], &idx[i], in) == 0) {
			set_field(in, "tensor", in->text.data +
				  in->ti[idx[i]].name.off);
			free(idx);
			return fail(in, "name appears twice");
		}
	}
	free(idx);
	for (i = 0; i < in->nti; i++)
		order[i] = i;
	qsort_r(order, in->nti, sizeof(*order), cmp_offset, in);
	for (i = 0; i < in->nti; i++) {
		const struct info *t = &in->ti[order[i]];

		set_field(in, "tensor", in->text.data + t->name.off);
		if (t->offset % in->alignment)
			return fail(in, "offset %" PRIu64 " is not a multiple "
				    "of the alignment %" PRIu32, t->offset,
				    in->alignment);
		if (t->offset > room || t->nbytes > room - t->offset)
			return fail(in, "%" PRIu64 " bytes at data offset %"
				    PRIu64 " run past the file's end (%"
				    PRIu64 " bytes of data from offset %"
				    PRIu64 ")", t->nbytes, t->offset, room,
				    data_start);
		if (t->offset < end)
			return fail(in, "bytes [%" PRIu64 ", %" PRIu64 ") "
				    "overlap the previous tensor's, which "
				    "ends at %" PRIu64, t->offset,
				    t->offset + t->nbytes, end);
		end = t->offset + t->nbytes;
	}
	return 0;
}

static void
priv_free(void *p)
{
	struct gguf_priv *g = p;

	if (!g)
		return;
	free(g->text);
	free(g->shapes);
	free(g);
}

/* The table, in file order; in->text moves into it. */
static int
build(struct gguf_in *in, uint64_t data_start, const size_t *order,
      struct header **out)
{
	struct header *h = calloc(1, sizeof(*h));
	struct gguf_priv *g = calloc(1, sizeof(*g));
	size_t i;

	if (!h || !g)
		goto oom;
	h->priv = g;
	h->free_priv = priv_free;
	h->tensors = calloc(in->nti ? in->nti : 1, sizeof(*h->tensors));
	h->meta = calloc(in->nkv ? in->nkv : 1, sizeof(*h->meta));
	g->shapes = calloc(in->nti ? in->nti * GGUF_MAX_DIMS : 1,
			   sizeof(*g->shapes));
	if (!h->tensors || !h->meta || !g->shapes)
		goto oom;
	g->text = buf_steal(&in->text);
	if (!g->text)
		goto oom;
	for (i = 0; i < in->nti; i++) {
		const struct info *ti = &in->ti[order[i]];
		struct tensor *t = &h->tensors[i];
		uint64_t *shape = g->shapes + i * GGUF_MAX_DIMS;
		uint32_t j;

		for (j = 0; j < ti->rank; j++)
			shape[j] = ti->ne[ti->rank - 1 - j];
		t->name = g->text + ti->name.off;
		t->name_len = (uint32_t)ti->name.len;
		t->dtype = ti->dtype;
		t->rank = ti->rank;
		t->shape = shape;
		t->begin = ti->offset;
		t->end = ti->offset + ti->nbytes;
		t->numel = ti->numel;
		if (t->end > h->data_len)
			h->data_len = t->end;
	}
	for (i = 0; i < in->nkv; i++) {
		const struct kv *kv = &in->kv[i];

		h->meta[i].key = g->text + kv->key.off;
		h->meta[i].key_len = (uint32_t)kv->key.len;
		h->meta[i].val = g->text + kv->val.off;
		h->meta[i].val_len = (uint32_t)kv->val.len;
		h->meta[i].json = kv->json;
	}
	h->ntensors = in->nti;
	h->nmeta = in->nkv;
	h->has_metadata = 1;
	h->header_len = data_start;
	h->data_start = data_start;
	h->file_size = in->r->size;
	*out = h;
	return 0;
oom:
	if (h) {
		free(h->tensors);
		free(h->meta);
	}
	free(h);
	priv_free(g);
	return no_memory(in);
}

/* llama.cpp's formats before GGUF: their magic numbers as the files hold
 * them (a little-endian u32 of "ggml", "ggmf", "ggjt", "ggla"). */
static const char *
legacy_magic(const unsigned char *m)
{
	static const char *const names[] = { "ggml", "ggmf", "ggjt", "ggla" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (m[0] == names[i][3] && m[1] == names[i][2] &&
		    m[2] == 'g' && m[3] == 'g')
			return names[i];
	return NULL;
}

/* What was found instead of "GGUF", what it means, what to do. */
static int
bad_magic(struct gguf_in *in, const unsigned char *m)
{
	const char *legacy = legacy_magic(m);
	char text[5];
	int i;

	if (legacy)
		return fail(in, "magic \"%s\" is llama.cpp's format from "
			    "before GGUF (2023), which stfs does not read: "
			    "convert the model to GGUF with llama.cpp "
			    "(convert_llama_ggml_to_gguf.py)", legacy);
	for (i = 0; i < 4; i++)
		text[i] = m[i] >= 0x20 && m[i] < 0x7f && m[i] != '"' ?
			  (char)m[i] : '?';
	text[4] = '\0';
	return fail(in, "magic is \"%s\" (bytes %02x %02x %02x %02x), not "
		    "\"GGUF\": not a GGUF file, or a damaged one (an "
		    "interrupted download?): fetch it again", text, m[0],
		    m[1], m[2], m[3]);
}

static int
read_header(struct gguf_in *in, uint64_t *nti, uint64_t *nkv)
{
	unsigned char magic[4];
	uint32_t version;

	snprintf(in->field, sizeof(in->field), "header");
	if (get(in, magic, 4, "magic"))
		return -1;
	if (memcmp(magic, "GGUF", 4) != 0)
		return bad_magic(in, magic);
	if (get_u32(in, &version, "version"))
		return -1;
	if (version == 1)
		return fail(in, "version 1 (32-bit counts) is not read; "
			    "convert the model again with llama.cpp");
	if (version == 0x02000000 || version == 0x03000000)
		return fail(in, "big-endian GGUF is not read");
	if (version != 2 && version != 3)
		return fail(in, "unknown version %" PRIu32 " (stfs reads 2 "
			    "and 3)", version);
	if (get_u64(in, nti, "tensor count") ||
	    get_u64(in, nkv, "metadata count"))
		return -1;
	/* each tensor info takes >= 24 bytes, each key/value >= 13 */
	if (*nti > left(in) / 24)
		return fail(in, "tensor count %" PRIu64 " cannot fit in the %"
			    PRIu64 " bytes left in the file", *nti, left(in));
	if (*nkv > left(in) / 13)
		return fail(in, "metadata count %" PRIu64 " cannot fit in the "
			    "%" PRIu64 " bytes left in the file", *nkv,
			    left(in));
	return 0;
}

/* llama.h's enum llama_ftype; the gaps are types llama.cpp removed. */
static const char *const file_types[] = {
	[0] = "ALL_F32", [1] = "F16", [2] = "Q4_0", [3] = "Q4_1",
	[7] = "Q8_0", [8] = "Q5_0", [9] = "Q5_1", [10] = "Q2_K",
	[11] = "Q3_K_S", [12] = "Q3_K_M", [13] = "Q3_K_L", [14] = "Q4_K_S",
	[15] = "Q4_K_M", [16] = "Q5_K_S", [17] = "Q5_K_M", [18] = "Q6_K",
	[19] = "IQ2_XXS", [20] = "IQ2_XS", [21] = "Q2_K_S", [22] = "IQ3_XS",
	[23] = "IQ3_XXS", [24] = "IQ1_S", [25] = "IQ4_NL", [26] = "IQ3_S",
	[27] = "IQ3_M", [28] = "IQ2_S", [29] = "IQ2_M", [30] = "IQ4_XS",
	[31] = "IQ1_M", [32] = "BF16", [36] = "TQ1_0", [37] = "TQ2_0",
	[38] = "MXFP4_MOE", [39] = "NVFP4", [40] = "Q1_0", [41] = "Q2_0",
};

const char *
gguf_file_type_name(uint64_t file_type)
{
	if (file_type >= sizeof(file_types) / sizeof(file_types[0]))
		return NULL;
	return file_types[file_type];
}

int
gguf_claims(const unsigned char *head, size_t n, uint64_t size)
{
	(void)size;
	if (n >= 4 && (memcmp(head, "GGUF", 4) == 0 || legacy_magic(head)))
		return 1;
	/* A damaged magic before a GGUF version (1 to 3) and a tensor
	 * count below 2^32: no safetensors file starts so (its length
	 * prefix would say 4 GiB and more), nor a zip, pickle, npy, HDF5,
	 * gzip or text file. */
	return n >= 16 && head[4] >= 1 && head[4] <= 3 && !head[5] &&
	       !head[6] && !head[7] && !head[12] && !head[13] && !head[14] &&
	       !head[15];
}

int
gguf_read(const struct reader *r, struct header **out, struct err *e)
{
	struct gguf_in *in = calloc(1, sizeof(*in));
	uint64_t nti = 0, nkv = 0, i, data_start;
	size_t *order = NULL;
	int rc = -1;

	*out = NULL;
	if (!in)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	in->r = r;
	in->e = e;
	in->alignment = GGUF_DEFAULT_ALIGNMENT;
	if (read_header(in, &nti, &nkv))
		goto done;
	for (i = 0; i < nkv; i++)
		if (read_kv(in, i))
			goto done;
	for (i = 0; i < nti; i++)
		if (read_info(in, i))
			goto done;
	data_start = in->pos + (in->alignment - in->pos % in->alignment) %
				in->alignment;
	if (data_start > r->size) {
		snprintf(in->field, sizeof(in->field), "data section");
		if (nti) {
			fail(in, "starts at %" PRIu64 ", past the file's end "
			     "(%" PRIu64 " bytes)", data_start, r->size);
			goto done;
		}
		data_start = r->size;
	}
	order = malloc((in->nti ? in->nti : 1) * sizeof(*order));
	if (!order) {
		no_memory(in);
		goto done;
	}
	if (check(in, data_start, order) == 0 &&
	    build(in, data_start, order, out) == 0)
		rc = 0;
done:
	free(order);
	buf_free(&in->text);
	buf_free(&in->scratch);
	free(in->kv);
	free(in->ti);
	free(in);
	return rc ? err_at(e, r->name) : 0;
}
