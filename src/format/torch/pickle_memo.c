/* pickle_memo.c - the memo, holding only what is read back
 * (pickle_memo.h). */
#include "format/torch/pickle_memo.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/torch/pickle_input.h"
#include "format/torch/pickle_store.h"
#include "format/torch/pickle_text.h"

static int
bit(const uint64_t *set, uint64_t i)
{
	return (int)(set[i / 64] >> (i % 64) & 1);
}

static void
set_bit(uint64_t *set, uint64_t i)
{
	set[i / 64] |= (uint64_t)1 << (i % 64);
}

/* A zeroed array of n items of size bytes, charged to s. */
static void *
charged_calloc(struct pickle_store *s, size_t n, size_t size, struct err *e)
{
	void *p;

	if (n && size > SIZE_MAX / n)
		goto no_memory;
	if (pickle_store_charge(s, (long long)(n * size), e))
		return NULL;
	p = calloc(n ? n : 1, size);
	if (p)
		return p;
	pickle_store_charge(s, -(long long)(n * size), NULL);
no_memory:
	err_set(e, ERR_NO_MEMORY, "out of memory reading a pickle");
	return NULL;
}

int
pickle_memo_init(struct pickle_memo *mm, size_t max, struct pickle_store *s,
		 struct err *e)
{
	memset(mm, 0, sizeof(*mm));
	mm->max = max;
	mm->words = max / 64 + 1;
	mm->put = charged_calloc(s, mm->words, sizeof(*mm->put), e);
	return mm->put ? 0 : -1;
}

/* The bytes of a counted argument of n length bytes, passed by. */
static long
pass_by(void *ctx, const unsigned char *p, size_t len, int last)
{
	(void)ctx;
	(void)p;
	(void)last;
	return (long)len;
}

static int
skip_counted(struct pickle_input *in, unsigned n)
{
	uint64_t len;

	if (pickle_input_uint(in, n, &len) < 0 ||
	    pickle_input_need(in, len) < 0)
		return -1;
	return pickle_input_pass(in, (size_t)len, pass_by, NULL);
}

/* Pass lines lines; the last one at *p, *n. */
static int
skip_lines(struct pickle_input *in, int lines, const char **p, size_t *n)
{
	while (lines--) {
		if (pickle_input_line(in, 0, p, n) < 0)
			return -1;
		pickle_input_skip(in, *n + 1);
	}
	return 0;
}

/* One opcode and its argument; *idx the index a GET names (else
 * UINT64_MAX).  0, 1 at STOP, -1 (what the load will say again). */
static int
scan_op(struct pickle_input *in, uint64_t *idx, struct err *e)
{
	const char *p;
	size_t n;
	uint64_t u;

	*idx = UINT64_MAX;
	if (pickle_input_op(in) < 0)
		return -1;
	switch (in->op) {
	case '.':
		return 1;
	case 'h': case 'j':	/* BINGET, LONG_BINGET */
		return pickle_input_uint(in, in->op == 'h' ? 1 : 4, idx);
	case 'g':		/* GET */
		return skip_lines(in, 1, &p, &n) < 0 ? -1 :
		       pickle_text_index(p, n, idx, "GET", e);
	case 'K': case 'q': case 0x80: case 0x82:
		return pickle_input_uint(in, 1, &u);
	case 'M': case 0x83:
		return pickle_input_uint(in, 2, &u);
	case 'J': case 'r': case 0x84:
		return pickle_input_uint(in, 4, &u);
	case 'G': case 0x95:	/* BINFLOAT, FRAME */
		return pickle_input_uint(in, 8, &u);
	case 'C': case 'U': case 0x8c: case 0x8a:
		return skip_counted(in, 1);
	case 'X': case 'B': case 'T': case 0x8b:
		return skip_counted(in, 4);
	case 0x8d: case 0x8e: case 0x96:
		return skip_counted(in, 8);
	case 'I': case 'L': case 'F': case 'S': case 'V': case 'P':
	case 'p':
		return skip_lines(in, 1, &p, &n);
	case 'c': case 'i':	/* GLOBAL, INST: module and name */
		return skip_lines(in, 2, &p, &n);
	default:		/* no argument (or not an opcode: the
				 * load says so) */
		return 0;
	}
}

/* Read in's opcodes to STOP: 0 with the indices a GET names, or 1. */
static int
scan(struct pickle_memo *mm, struct pickle_input *in)
{
	struct err scratch;
	uint64_t idx;
	int rc = 0;

	err_clear(&scratch);
	in->e = &scratch;
	while (rc == 0 && in->pos < in->len) {
		rc = scan_op(in, &idx, &scratch);
		if (rc == 0 && idx != UINT64_MAX && idx < mm->max)
			set_bit(mm->fetched, idx);
	}
	return rc == 1 ? 0 : 1;
}

int
pickle_memo_scan(struct pickle_memo *mm, const struct pickle_input *load,
		 struct pickle_store *s, struct err *e)
{
	const struct pickle_source *src = load->src;
	struct pickle_input in;
	size_t i, rank = 0;
	int rc;

	if (src && !src->rewind)
		return 1;
	mm->fetched = charged_calloc(s, mm->words, sizeof(*mm->fetched), e);
	mm->rank = mm->fetched ? charged_calloc(s, mm->words,
						 sizeof(*mm->rank), e) : NULL;
	if (!mm->rank)
		return -1;
	if (src)
		pickle_input_stream(&in, src, e);
	else
		pickle_input_memory(&in, load->mem, load->len, e);
	rc = scan(mm, &in);
	pickle_input_free(&in);
	if (src && src->rewind(src->ctx, e) < 0)
		return -1;
	if (rc) {
		/* not read through: every index is held, as without a scan */
		pickle_store_charge(s, -(long long)(mm->words *
			(sizeof(*mm->fetched) + sizeof(*mm->rank))), NULL);
		free(mm->fetched);
		free(mm->rank);
		mm->fetched = NULL;
		mm->rank = NULL;
		return 1;
	}
	for (i = 0; i < mm->words; i++) {
		mm->rank[i] = (uint32_t)rank;
		rank += (size_t)__builtin_popcountll(mm->fetched[i]);
	}
	return 0;
}

/* Where the value of idx is kept in v, or SIZE_MAX when it is not. */
static size_t
slot(const struct pickle_memo *mm, uint64_t idx)
{
	if (!mm->fetched)
		return (size_t)idx;
	if (!bit(mm->fetched, idx))
		return SIZE_MAX;
	return mm->rank[idx / 64] + (size_t)__builtin_popcountll(
		mm->fetched[idx / 64] & (((uint64_t)1 << (idx % 64)) - 1));
}

int
pickle_memo_put(struct pickle_memo *mm, struct pickle_store *s, uint64_t idx,
		struct pickle_value *v, struct err *e)
{
	size_t at = slot(mm, idx), old = mm->vcap;

	if (!bit(mm->put, idx)) {
		set_bit(mm->put, idx);
		mm->count++;
	}
	if (at == SIZE_MAX)
		return 0;
	if (at >= mm->vcap) {
		if (pickle_store_grow(s, (void **)&mm->v, &mm->vcap, at + 1,
				      sizeof(*mm->v), e) < 0)
			return -1;
		memset(mm->v + old, 0, (mm->vcap - old) * sizeof(*mm->v));
	}
	mm->v[at] = v;
	pickle_store_share(v);
	return 0;
}

struct pickle_value *
pickle_memo_get(const struct pickle_memo *mm, uint64_t idx)
{
	size_t at = idx < mm->max ? slot(mm, idx) : SIZE_MAX;

	return at < mm->vcap ? mm->v[at] : NULL;
}

void
pickle_memo_free(struct pickle_memo *mm)
{
	free(mm->put);
	free(mm->fetched);
	free(mm->rank);
	free(mm->v);
	memset(mm, 0, sizeof(*mm));
}
