/* fuzz_pickle.c - libFuzzer target for the pickle reader that executes
 * nothing (src/format/torch/pickle.c).
 *
 * The input is a pickle.  It is loaded twice: with the default limits,
 * and with small ones (depth 8, 2,000 values, memo 64, walk 5,000, a str
 * kept up to 16 bytes, bytes and ints up to 8) so that the refusals at
 * each limit are reached too, and values are passed by (PICKLE_ELIDED).
 * Each load is done from memory and streamed through a small window
 * (pickle_read), which must reach the same verdict, to the byte of its
 * message, and the same values.  A refusal must be a
 * printable one-line record of ERR_INVALID_PICKLE or ERR_NO_MEMORY; an
 * accepted pickle is walked recursively (what the torch container does)
 * and must keep every promise of pickle.h: no path longer than the depth
 * limit, no more values walked than the walk limit, calls of a global or
 * of a call's result with a tuple of arguments (and a dict of keyword
 * arguments, NEWOBJ_EX's, only when it has items) and items of their kind,
 * globals named (known ones by their id), strings ending in NUL, wide
 * ints wider than 64 bits and written in decimal up to their limit,
 * values passed by longer than their limit, numpy arrays whose bytes are
 * what their shape says.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/torch/pickle.h"
#include "format/torch/pickle_long.h"
#include "format/torch/pickle_numpy.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_pickle: %s:%d: invariant failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

struct walk {
	const struct pickle_limits *lim;
	uint64_t visited;
	uint64_t sum;		/* of what was walked, to compare loads */
};

static void
add(struct walk *w, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		w->sum = (w->sum ^ b[i]) * 0x100000001b3ull;	/* FNV-1a */
}

/* A call read as a numpy array has as many bytes as its shape says, and
 * its first and last elements decode as its kind. */
static void
check_array(const struct pickle_value *v)
{
	struct pickle_numpy_array a;
	struct pickle_numpy_number n;
	char text[4];

	if (!pickle_numpy_array(v, &a))
		return;
	CHECK(a.rank <= PICKLE_NUMPY_RANK_MAX);
	CHECK(a.type.size >= 1 && a.type.size <= 8);
	CHECK(a.numel * a.type.size == a.len);
	pickle_numpy_type_text(&a.type, text);
	CHECK(strlen(text) == 3 && strchr("<>|", text[0]) &&
	      strchr("biuf", text[1]));
	if (!a.numel || !a.data)
		return;
	pickle_numpy_element(&a, 0, &n);
	CHECK(n.kind == a.type.kind);
	pickle_numpy_element(&a, a.numel - 1, &n);
	CHECK(n.kind != 'b' || n.u <= 1);
}

static void
walk(struct walk *w, const struct pickle_value *v, unsigned depth)
{
	CHECK(v != NULL);
	CHECK(depth <= w->lim->depth);
	CHECK(++w->visited <= w->lim->walk);
	add(w, &v->kind, sizeof(v->kind));
	switch (v->kind) {
	case PICKLE_NONE:
	case PICKLE_INT:
		break;
	case PICKLE_FLOAT:
		CHECK(v->f_bits == 0 || v->f_bits == 32 || v->f_bits == 16);
		break;
	case PICKLE_BOOL:
		CHECK(v->b == 0 || v->b == 1);
		break;
	case PICKLE_STR:
	case PICKLE_BYTES:
		CHECK(v->str.p != NULL && v->str.p[v->str.len] == '\0');
		add(w, v->str.p, v->str.len);
		break;
	case PICKLE_PASSED:
		/* only in a list, past what it keeps (run() checks where) */
		CHECK(w->lim->seq_kept != 0 && v->passed.n >= 1);
		add(w, &v->passed.n, sizeof(v->passed.n));
		break;
	case PICKLE_ELIDED:
		/* longer than kept: a str's code points take 1 to 4 bytes,
		 * an int's bit length is past its bytes */
		CHECK(v->elided.kind == PICKLE_STR ||
		      v->elided.kind == PICKLE_BYTES ||
		      v->elided.kind == PICKLE_LONG);
		CHECK(v->elided.kind != PICKLE_STR ||
		      4 * v->elided.n > w->lim->str_kept);
		CHECK(v->elided.kind != PICKLE_BYTES ||
		      v->elided.n > w->lim->bytes_kept ||
		      2 * v->elided.n > w->lim->str_kept);
		CHECK(v->elided.kind != PICKLE_LONG ||
		      v->elided.n >= 8 * (uint64_t)w->lim->bytes_kept);
		CHECK(v->elided.kind == PICKLE_STR || !v->elided.latin1);
		add(w, &v->elided.n, sizeof(v->elided.n));
		break;
	case PICKLE_LONG: {
		struct buf b = BUF_INIT;
		const unsigned char *p = (const unsigned char *)v->str.p;
		size_t n = v->str.len;

		/* no byte that only repeats the sign */
		CHECK(n > 8);
		CHECK(!(p[n - 1] == 0 && p[n - 2] < 0x80) &&
		      !(p[n - 1] == 0xff && p[n - 2] >= 0x80));
		add(w, p, n);
		/* (the first few times: a shared one is met again and
		 * again, and its decimal takes quadratic time) */
		if (w->visited < 64) {
			CHECK(pickle_long_text(v, &b) ==
			      (n <= PICKLE_LONG_DECIMAL_BYTES));
			CHECK(b.len > 0 && strlen(b.data) == b.len);
			buf_free(&b);
		}
		break;
	}
	case PICKLE_TUPLE:
	case PICKLE_LIST:
	case PICKLE_SET:
		CHECK(v->seq.n == 0 || v->seq.items != NULL);
		for (size_t i = 0; i < v->seq.n; i++) {
			const struct pickle_value *x = v->seq.items[i];

			/* a run passed by: in a list past what it keeps
			 * (or the set builtins.set() made of one), never two
			 * in a row */
			CHECK(x->kind != PICKLE_PASSED ||
			      (v->kind != PICKLE_TUPLE &&
			       i >= w->lim->seq_kept &&
			       v->seq.items[i - 1]->kind != PICKLE_PASSED));
			walk(w, x, depth + 1);
		}
		break;
	case PICKLE_DICT:
		CHECK(v->dict.ordered == 0 || v->dict.ordered == 1);
		for (size_t i = 0; i < v->dict.n; i++) {
			walk(w, v->dict.keys[i], depth + 1);
			walk(w, v->dict.values[i], depth + 1);
		}
		if (v->dict.attrs)
			walk(w, v->dict.attrs, depth + 1);
		break;
	case PICKLE_GLOBAL:
		CHECK(v->global.module && v->global.name);
		add(w, v->global.module, strlen(v->global.module));
		add(w, v->global.name, strlen(v->global.name));
		CHECK(v->global.module[0] && v->global.name[0]);
		CHECK(v->global.id <= PICKLE_G_LAST);
		break;
	case PICKLE_CALL:
		CHECK(v->call.callee->kind == PICKLE_GLOBAL ||
		      v->call.callee->kind == PICKLE_CALL);
		CHECK(v->call.args->kind == PICKLE_TUPLE);
		CHECK(v->newobj == 0 || v->newobj == 1);
		CHECK(!v->call.items || v->call.items->kind == PICKLE_DICT ||
		      v->call.items->kind == PICKLE_LIST);
		CHECK(!v->call.kwargs || (v->call.kwargs->kind == PICKLE_DICT &&
					  v->call.kwargs->dict.n > 0));
		CHECK(!v->call.kwargs || v->newobj);
		check_array(v);
		walk(w, v->call.callee, depth + 1);
		walk(w, v->call.args, depth + 1);
		if (v->call.state)
			walk(w, v->call.state, depth + 1);
		if (v->call.items)
			walk(w, v->call.items, depth + 1);
		if (v->call.kwargs)
			walk(w, v->call.kwargs, depth + 1);
		break;
	case PICKLE_PERSID:
		walk(w, v->persid.pid, depth + 1);
		break;
	case PICKLE_REF: {
		/* a path of steps through the values to an ancestor */
		unsigned n = 0;

		CHECK(v->ref.to != NULL);
		for (const struct pickle_step *p = v->ref.path; p; p = p->prev)
			CHECK(++n <= w->lim->depth);
		break;
	}
	default:
		CHECK(!"a kind pickle.h does not name");
	}
}

struct cursor {
	const uint8_t *p;
	size_t len, pos;
};

/* The memo's scan reads the pickle twice (pickle_memo.h). */
static int
cursor_rewind(void *ctx, struct err *e)
{
	struct cursor *c = ctx;

	(void)e;
	c->pos = 0;
	return 0;
}

static int
cursor_read(void *ctx, void *buf, size_t n, struct err *e)
{
	struct cursor *c = ctx;

	(void)e;
	CHECK(n <= c->len - c->pos);
	memcpy(buf, c->p + c->pos, n);
	c->pos += n;
	return 0;
}

/* Load data from memory (window 0) or streamed; the verdict, with *e
 * and the walk's sum. */
static int
load(const uint8_t *data, size_t size, const struct pickle_limits *lim,
     size_t window, struct err *e, uint64_t *sum)
{
	struct cursor c = { data, size, 0 };
	struct pickle_source src = { cursor_read, &c, size, window,
				     window & 1 ? cursor_rewind : NULL };
	struct pickle *p = NULL;
	int rc = window ? pickle_read(&src, lim, &p, e) :
		 pickle_load(data, size, lim, &p, e);

	if (rc < 0) {
		CHECK(p == NULL);
		CHECK(e->code == ERR_INVALID_PICKLE ||
		      e->code == ERR_NO_MEMORY);
		CHECK(memchr(e->detail, '\0', sizeof(e->detail)) != NULL);
		CHECK(strchr(e->detail, '\n') == NULL);
		CHECK(e->where[0] == '\0');
		return -1;
	}
	CHECK(e->code == ERR_OK);
	{
		struct walk w = { lim, 0, 0 };

		/* the root is at depth 1: a path of depth values */
		walk(&w, pickle_root(p), 1);
		*sum = w.sum;
	}
	pickle_free(p);
	return 0;
}

static void
run(const uint8_t *data, size_t size, const struct pickle_limits *lim)
{
	struct err e = { 0 }, es = { 0 };
	uint64_t sum = 0, sums = 0;
	int rc = load(data, size, lim, 0, &e, &sum);

	CHECK(load(data, size, lim, PICKLE_INPUT_WINDOW_MIN + size % 7, &es,
		   &sums) == rc);
	CHECK(es.code == e.code && strcmp(es.detail, e.detail) == 0);
	CHECK(sums == sum);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pickle_limits defaults = PICKLE_LIMITS_DEFAULT;
	/* small limits; memory 0, so that every pickle is refused at its
	 * first value (with a real memory limit, a load from memory and a
	 * streamed one can meet different limits first and say different
	 * things: left as it is) */
	static const struct pickle_limits small = {
		.depth = 8, .values = 2000, .memo = 64, .walk = 5000,
		.str_kept = 16, .bytes_kept = 8, .memory = 0,
	};

	run(data, size, &defaults);
	run(data, size, &small);
	/* lists that keep two items, then pass plain ones by */
	{
		struct pickle_limits kept = defaults;

		kept.seq_kept = 2;
		run(data, size, &kept);
	}
	return 0;
}
