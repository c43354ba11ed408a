/* test_pickle.c - the pickle reader that executes nothing
 * (src/format/torch/pickle.c).
 *
 * The kept fixtures (tests/data/pickle/, written by make.py there with
 * Debian's torch and Python's pickle) are read and dumped in the notation
 * of make.py, and the dump must equal NAME.expect, which Python's own
 * Unpickler wrote with recorders in place of find_class and
 * persistent_load.  The hostile fixtures must be refused with their line.
 * Hand-made pickles cover the opcodes the fixtures lack and every refusal:
 * names Python could not import, deep nesting, huge lengths, every truncation of
 * every fixture, memo out of range, stack underflow, cycles, shared values
 * that would walk too far.  Every load is also streamed through a small
 * window (pickle_read), with the same outcome to the byte; a str, bytes
 * or int past the limits is passed by (PICKLE_ELIDED).  Links format
 * only.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/torch/pickle.h"
#include "format/torch/pickle_seq.h"
#include "format/torch/pickle_long.h"
#include "format/torch/pickle_numpy.h"
#include "format/torch/pickle_unsafe.h"
#include "suites.h"

/* ---- the dump (make.py's notation) ----------------------------------- */

static void
dump_bytes(struct buf *b, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\')
			buf_add(b, &p[i], 1);
		else
			buf_addf(b, "\\x%02x", c);
	}
}

static void dump(struct buf *b, const struct pickle_value *v);

static void
dump_items(struct buf *b, struct pickle_value *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_adds(b, ", ");
		dump(b, items[i]);
	}
}

static void
dump(struct buf *b, const struct pickle_value *v)
{
	uint64_t u;

	switch (v->kind) {
	case PICKLE_NONE:
		buf_adds(b, "None");
		break;
	case PICKLE_BOOL:
		buf_adds(b, v->b ? "True" : "False");
		break;
	case PICKLE_INT:
		buf_addf(b, "%lld", (long long)v->i);
		break;
	case PICKLE_LONG:
		ck_assert_uint_gt(v->str.len, 8);
		ck_assert_int_eq(pickle_long_text(v, b), 1);
		break;
	case PICKLE_FLOAT:
		memcpy(&u, &v->f, sizeof(u));
		buf_addf(b, "f:%016llx", (unsigned long long)u);
		break;
	case PICKLE_STR:
	case PICKLE_BYTES:
		buf_adds(b, v->kind == PICKLE_BYTES ? "b\"" : "\"");
		dump_bytes(b, v->str.p, v->str.len);
		buf_adds(b, "\"");
		ck_assert_int_eq(v->str.p[v->str.len], '\0');
		break;
	case PICKLE_TUPLE:
		buf_adds(b, "(");
		dump_items(b, v->seq.items, v->seq.n);
		buf_adds(b, v->seq.n == 1 ? ",)" : ")");
		break;
	case PICKLE_LIST:
	case PICKLE_SET:
		buf_adds(b, v->kind == PICKLE_SET ? "S[" : "[");
		dump_items(b, v->seq.items, v->seq.n);
		buf_adds(b, "]");
		break;
	case PICKLE_DICT:
		buf_adds(b, v->dict.ordered ? "O{" : "{");
		for (size_t i = 0; i < v->dict.n; i++) {
			if (i)
				buf_adds(b, ", ");
			dump(b, v->dict.keys[i]);
			buf_adds(b, ": ");
			dump(b, v->dict.values[i]);
		}
		buf_adds(b, "}");
		if (v->dict.attrs) {
			buf_adds(b, "@");
			dump(b, v->dict.attrs);
		}
		break;
	case PICKLE_GLOBAL:
		buf_addf(b, "%s.%s", v->global.module, v->global.name);
		break;
	case PICKLE_CALL:
		ck_assert(v->call.callee->kind == PICKLE_GLOBAL ||
			  v->call.callee->kind == PICKLE_CALL);
		ck_assert_int_eq(v->call.args->kind, PICKLE_TUPLE);
		dump(b, v->call.callee);
		if (v->newobj)
			buf_adds(b, "!");
		dump(b, v->call.args);
		if (v->call.kwargs) {
			ck_assert_int_eq(v->call.kwargs->kind, PICKLE_DICT);
			buf_adds(b, "**");
			dump(b, v->call.kwargs);
		}
		if (v->call.state) {
			buf_adds(b, "@");
			dump(b, v->call.state);
		}
		if (v->call.items) {
			buf_adds(b, "+");
			dump(b, v->call.items);
		}
		break;
	case PICKLE_PERSID:
		buf_adds(b, "P");
		dump(b, v->persid.pid);
		break;
	case PICKLE_REF: {
		size_t n = 0;

		for (const struct pickle_step *p = v->ref.path; p; p = p->prev)
			n++;
		buf_addf(b, "<ref %zu:%s>", n, pickle_kind_name(v->ref.to->kind));
		break;
	}
	case PICKLE_EXTERN:	/* (only a load that folds makes one) */
		buf_addf(b, "<extern %u>", v->ext.tag);
		break;
	case PICKLE_PASSED:
		buf_addf(b, "<passed %llu>", (unsigned long long)v->passed.n);
		break;
	case PICKLE_ELIDED:
		buf_addf(b, "<%s %llu%s>", pickle_kind_name(v->elided.kind),
			 (unsigned long long)v->elided.n,
			 v->elided.latin1 ? " latin1" : "");
		break;
	}
}

/* ---- helpers -------------------------------------------------------- */

static char *
slurp(const char *name, const char *ext, size_t *len)
{
	const char *dir = getenv("STFS_PICKLE_DIR");
	char path[4096];
	FILE *f;
	char *p;
	long n;

	ck_assert_msg(dir != NULL, "STFS_PICKLE_DIR is not set");
	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	p = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p[n] = '\0';
	*len = (size_t)n;
	return p;
}

/* A source of memory handing out its bytes in order, as a zip entry
 * does (pickle_input.h). */
struct cursor {
	const char *p;
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
	/* (no ck_assert on this path: each costs a write under CK_FORK=no,
	 * and reads are many) */
	if (n > c->len - c->pos)
		ck_abort_msg("a read past the end: %zu at %zu of %zu", n,
			     c->pos, c->len);
	memcpy(buf, c->p + c->pos, n);
	c->pos += n;
	return 0;
}

/* Load buf from memory (window 0) or streamed through a window of that
 * many bytes; its dump (caller frees), or NULL with *e. */
static char *
load_one(const void *buf, size_t len, const struct pickle_limits *lim,
	 size_t window, struct err *e)
{
	struct cursor c = { buf, len, 0 };
	/* read twice (the memo's scan) through an odd window, once through
	 * an even one: the same values either way */
	struct pickle_source src = { cursor_read, &c, len, window,
				     window & 1 ? cursor_rewind : NULL };
	struct pickle *p = NULL;
	struct buf b = BUF_INIT;
	int rc = window ? pickle_read(&src, lim, &p, e) :
		 pickle_load(buf, len, lim, &p, e);

	if (rc < 0) {
		if (p || e->code == ERR_OK || strchr(e->detail, '\n'))
			ck_abort_msg("a refusal not in one line: %s",
				     e->detail);
		return NULL;
	}
	if (e->code != ERR_OK)
		ck_abort_msg("accepted with an error: %s", e->detail);
	dump(&b, pickle_root(p));
	pickle_free(p);
	return buf_steal(&b);
}

/* Load buf and return its dump (caller frees), or NULL with *e; read
 * from memory and streamed through a small window (its size varied
 * with the length, so that chunks end everywhere), with the same
 * outcome to the byte. */
static char *
load_dump(const void *buf, size_t len, const struct pickle_limits *lim,
	  struct err *e)
{
	struct err es = { 0 };
	size_t window = PICKLE_INPUT_WINDOW_MIN + len % 7;
	char *d = load_one(buf, len, lim, 0, e);
	char *ds = load_one(buf, len, lim, window, &es);

	if (!d && (ds || es.code != e->code || strcmp(es.detail, e->detail)))
		ck_abort_msg("streamed: %s, from memory: %s", ds ? ds :
			     es.detail, e->detail);
	if (d && (!ds || strcmp(ds, d)))
		ck_abort_msg("streamed: %s, from memory: %s", ds ? ds :
			     es.detail, d);
	free(ds);
	return d;
}

/* buf must be refused with a message holding want. */
static void
refused(const void *buf, size_t len, const struct pickle_limits *lim,
	const char *want)
{
	struct err e = { 0 };
	char *d = load_dump(buf, len, lim, &e);

	ck_assert_msg(d == NULL, "accepted: %s", d ? d : "");
	ck_assert_int_eq(e.code, ERR_INVALID_PICKLE);
	ck_assert_msg(strstr(e.detail, want) != NULL,
		      "wanted \"%s\", got \"%s\"", want, e.detail);
}

/* buf must give the dump want. */
static void
accepted(const void *buf, size_t len, const char *want)
{
	struct err e = { 0 };
	char *d = load_dump(buf, len, NULL, &e);

	ck_assert_msg(d != NULL, "refused: %s", e.detail);
	ck_assert_str_eq(d, want);
	free(d);
}

#define ACCEPT(lit, want) accepted(lit, sizeof(lit) - 1, want)
#define REFUSE(lit, want) refused(lit, sizeof(lit) - 1, NULL, want)

/* ---- what torch.save and pickle.dumps wrote ------------------------- */

static const char *const good[] = {
	"state_dict", "model_state_dict", "optimizer", "parameter",
	"state_dict_proto4", "many", "plain_proto5", "trainer",
	"trainer_proto4", "os_system", "eval_proto4", "whole_module",
	"plain_proto0", "plain_proto1", "python2_proto0", "python2_proto1",
	"newobj_ex", "numpy", "numpy_proto5",
};

START_TEST(test_fixture)
{
	size_t len, elen;
	char *pkl = slurp(good[_i], ".pkl", &len);
	char *expect = slurp(good[_i], ".expect", &elen);
	struct err e = { 0 };
	char *d;

	ck_assert_int_gt(elen, 0);
	expect[elen - 1] = '\0';	/* the newline */
	d = load_dump(pkl, len, NULL, &e);
	ck_assert_msg(d != NULL, "%s: %s", good[_i], e.detail);
	ck_assert_str_eq(d, expect);
	/* the command of os_system and eval_proto4 was never run */
	ck_assert_int_ne(access("stfs-pickle-ran", F_OK), 0);
	free(d);
	free(expect);
	free(pkl);
}
END_TEST

/* Every proper prefix of every fixture is refused, in one line (a third
 * of them, and the last 64, streamed too: under valgrind all of them
 * would double the time of this suite). */
START_TEST(test_truncated)
{
	size_t len;
	char *pkl = slurp(good[_i], ".pkl", &len);

	for (size_t n = 0; n < len; n++) {
		struct err e = { 0 };
		char *d = n % 3 == 0 || n + 64 >= len ?
			  load_dump(pkl, n, NULL, &e) :
			  load_one(pkl, n, NULL, 0, &e);

		ck_assert_msg(d == NULL, "%s: prefix %zu accepted", good[_i], n);
		ck_assert_int_eq(e.code, ERR_INVALID_PICKLE);
	}
	free(pkl);
}
END_TEST

/* What a tensor looks like to the torch container (pickle.h). */
START_TEST(test_tensor_shape)
{
	size_t len;
	char *pkl = slurp("model_state_dict", ".pkl", &len);
	struct pickle *p = NULL;
	struct err e = { 0 };
	const struct pickle_value *root, *w, *args, *pid, *meta;

	ck_assert_int_eq(pickle_load(pkl, len, NULL, &p, &e), 0);
	root = pickle_root(p);
	ck_assert_int_eq(root->kind, PICKLE_DICT);
	ck_assert_int_eq(root->dict.ordered, 1);
	w = pickle_dict_get(root, "weight");
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(w->kind, PICKLE_CALL);
	ck_assert_int_eq(w->call.callee->global.id, PICKLE_G_REBUILD_TENSOR_V2);
	args = w->call.args;
	ck_assert_uint_eq(args->seq.n, 6);
	ck_assert_int_eq(args->seq.items[0]->kind, PICKLE_PERSID);
	pid = args->seq.items[0]->persid.pid;
	ck_assert_int_eq(pid->kind, PICKLE_TUPLE);
	ck_assert_uint_eq(pid->seq.n, 5);
	ck_assert_int_eq(pid->seq.items[1]->global.id, PICKLE_G_STORAGE);
	ck_assert_str_eq(pid->seq.items[1]->global.name, "FloatStorage");
	ck_assert_str_eq(pid->seq.items[2]->str.p, "0");
	/* the memo shares: both tensors name the one storage type value */
	ck_assert_ptr_eq(pickle_dict_get(root, "bias")->call.args->seq.items[0]
			 ->persid.pid->seq.items[1], pid->seq.items[1]);
	meta = pickle_dict_get(root->dict.attrs, "_metadata");
	ck_assert_ptr_nonnull(meta);
	ck_assert_ptr_null(pickle_dict_get(root, "_metadata"));
	ck_assert_ptr_null(pickle_dict_get(w, "weight"));
	ck_assert_str_eq(pickle_kind_name(PICKLE_PERSID), "persistent id");
	pickle_free(p);
	free(pkl);
}
END_TEST

/* ---- what Python would import and call ------------------------------ */

/* The uses of pickle buf as "how callable op@at where" lines. */
static char *
uses_of(const char *buf, size_t len)
{
	struct pickle *p = NULL;
	struct err e = { 0 };
	struct buf b = BUF_INIT;
	const struct pickle_unsafe *u;

	ck_assert_msg(pickle_load(buf, len, NULL, &p, &e) == 0, "%s",
		      e.detail);
	u = pickle_unsafe_of(p);
	for (size_t i = 0; i < u->n; i++) {
		const struct pickle_unsafe_use *x = &u->use[i];
		const struct pickle_value *c = x->callable;
		size_t n = 0;

		for (const struct pickle_step *s = x->path; s; s = s->prev)
			n++;
		buf_addf(&b, "%s%s %s.%s %s@%zu %s%zu", i ? "; " : "",
			 x->newobj ? "new" : x->args ? "call" : "import",
			 c->kind == PICKLE_GLOBAL ? c->global.module : "",
			 c->kind == PICKLE_GLOBAL ? c->global.name : "(call)",
			 x->op, x->at, x->reached ? "depth " : "dropped ",
			 n);
	}
	ck_assert_uint_eq(u->total, u->n);
	pickle_free(p);
	return buf_steal(&b);
}

#define USES(lit, want) do { \
	char *got_ = uses_of(lit, sizeof(lit) - 1); \
	ck_assert_str_eq(got_ ? got_ : "", want); \
	free(got_); \
} while (0)

/* What torch.load(weights_only=True) allows is not recorded; anything
 * else is, as an import and, when called, a call, with where the root
 * reaches what it made (pickle_unsafe.h). */
START_TEST(test_unsafe)
{
	size_t len;
	char *pkl, *got;

	/* allowed: torch's tensors, OrderedDict, protocol 2's
	 * __builtin__.set (Python 3 imports builtins.set), torch.device */
	pkl = slurp("model_state_dict", ".pkl", &len);
	got = uses_of(pkl, len);
	ck_assert_str_eq(got ? got : "", "");
	free(got);
	free(pkl);
	USES("c__builtin__\nset\n]\x85R.", "");
	USES("ctorch\ndevice\nX\x03\0\0\0cpu\x85R.", "");
	/* os.system at the root, under a key, and dropped (POP) */
	USES("cposix\nsystem\nX\x02\0\0\0ls\x85R.",
	     "import posix.system GLOBAL@0 depth 1; "
	     "call posix.system REDUCE@22 depth 0");
	USES("}X\x01\0\0\0kcposix\nsystem\nX\x02\0\0\0ls\x85Rs.",
	     "import posix.system GLOBAL@7 depth 2; "
	     "call posix.system REDUCE@29 depth 1");
	USES("cbuiltins\neval\nX\x01\0\0\0" "1\x85R0N.",
	     "import builtins.eval GLOBAL@0 dropped 0; "
	     "call builtins.eval REDUCE@22 dropped 0");
	/* a class made by NEWOBJ, a global kept as a value (the factory of
	 * a folded defaultdict), a call of what a call returned */
	USES("cm\nC\n)\x81.",
	     "import m.C GLOBAL@0 depth 1; new m.C NEWOBJ@6 depth 0");
	USES("ccollections\ndefaultdict\nc__builtin__\ndict\n\x85R.",
	     "import collections.defaultdict GLOBAL@0 dropped 0; "
	     "import __builtin__.dict GLOBAL@25 dropped 0; "
	     "call collections.defaultdict REDUCE@44 depth 0");
	USES("cbuiltins\ngetattr\ncm\nC\nX\x01\0\0\0f\x86R)R.",
	     "import builtins.getattr GLOBAL@0 depth 2; "
	     "import m.C GLOBAL@18 depth 3; "
	     "call builtins.getattr REDUCE@30 depth 1; "
	     "call .(call) REDUCE@32 depth 0");
	/* protocol 0's INST, protocol 4's STACK_GLOBAL */
	USES("(S'ls'\nios\nsystem\n.",
	     "import os.system INST@7 depth 1; call os.system INST@7 depth 0");
	USES("\x8c\x05posix\x8c\x06system\x93X\x02\0\0\0ls\x85R.",
	     "import posix.system STACK_GLOBAL@15 depth 1; "
	     "call posix.system REDUCE@24 depth 0");
	/* the allow-list, both ends and between (bsearch over a sorted
	 * table), and names close to allowed ones */
	ck_assert_int_eq(pickle_unsafe_global("_codecs", 7, "encode", 6), 0);
	ck_assert_int_eq(pickle_unsafe_global("torch", 5, "uint8", 5), 0);
	ck_assert_int_eq(pickle_unsafe_global("torch._utils", 12,
					      "_rebuild_tensor_v2", 18), 0);
	ck_assert_int_eq(pickle_unsafe_global("torch.cuda.sparse", 17,
					      "ShortTensor", 11), 0);
	ck_assert_int_eq(pickle_unsafe_global("__builtin__", 11, "set", 3),
			 0);
	ck_assert_int_eq(pickle_unsafe_global("torch", 5, "load", 4), 1);
	ck_assert_int_eq(pickle_unsafe_global("torch._utils", 12,
					      "_rebuild_tensor_v4", 18), 1);
	ck_assert_int_eq(pickle_unsafe_global("builtins", 8, "setattr", 7),
			 1);
	ck_assert_int_eq(pickle_unsafe_global("torch", 5, "uint8\0x", 7), 1);
}
END_TEST

/* ---- hand-made pickles ---------------------------------------------- */

START_TEST(test_opcodes)
{
	/* BINBYTES, BINBYTES8, BINUNICODE8, LONG4, LIST, DICT, BININT2 */
	ACCEPT("\x80\x02(B\x02\x00\x00\x00" "ab\x8e\x01\0\0\0\0\0\0\0c"
	       "\x8d\x01\0\0\0\0\0\0\0dl.", "[b\"ab\", b\"c\", \"d\"]");
	ACCEPT("(K\x01\x8b\x02\0\0\0\xff\x7f" "d.", "{1: 32767}");
	ACCEPT("\x8b\x00\x00\x00\x00.", "0");
	ACCEPT("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80.",
	       "-9223372036854775808");
	ACCEPT("\x8a\x02\x7f\xff.", "-129");
	ACCEPT("\x8a\x01\x80.", "-128");
	ACCEPT("J\xff\xff\xff\xff.", "-1");
	ACCEPT("M\xff\xff.", "65535");
	/* LONG_BINPUT, LONG_BINGET, MEMOIZE, BINGET */
	ACCEPT("]r\x05\x00\x00\x00\x94j\x05\x00\x00\x00h\x01\x87.",
	       "([], [], [])");
	ACCEPT("(N\x94\x88\x94h\x01h\x00t.", "(None, True, True, None)");
	/* SETITEM, APPEND, EMPTY_TUPLE, TUPLE over MARK */
	ACCEPT("}X\x01\x00\x00\x00kNs.", "{\"k\": None}");
	ACCEPT("]K\x07" "a.", "[7]");
	ACCEPT("(K\x01(K\x02tt.", "(1, (2,))");
	/* FRAME, PROTO 5 */
	ACCEPT("\x80\x05\x95\x02\x00\x00\x00\x00\x00\x00\x00N.", "None");
	/* a float, big-endian */
	ACCEPT("G\x3f\xf0\0\0\0\0\0\0.", "f:3ff0000000000000");
	/* _codecs.encode(s, 'latin1') */
	ACCEPT("c_codecs\nencode\nX\x04\x00\x00\x00\xc3\xbf\xc2\x80"
	       "X\x06\x00\x00\x00latin1\x86R.", "b\"\\xff\\x80\"");
	/* STACK_GLOBAL, a dtype, BUILD on a call */
	ACCEPT("\x8c\x05torch\x8c\x07" "float32\x93.", "torch.float32");
	ACCEPT("ctorch._utils\n_rebuild_parameter\n)R}b.",
	       "torch._utils._rebuild_parameter()@{}");
	/* a tensor as torch 2 writes one of its new dtypes (its
	 * _reduce_ex_internal: _rebuild_tensor_v3 over an untyped storage,
	 * numel in bytes, the dtype last) */
	ACCEPT("\x80\x02" "ctorch._utils\n_rebuild_tensor_v3\n"
	       "((X\x07\x00\x00\x00storage" "ctorch.storage\nUntypedStorage\n"
	       "X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x04tQ"
	       "K\x00K\x04\x85K\x01\x85\x89" "ccollections\nOrderedDict\n)R"
	       "ctorch\nfloat8_e4m3fn\ntR.",
	       "torch._utils._rebuild_tensor_v3(P(\"storage\", "
	       "torch.storage.UntypedStorage, \"0\", \"cpu\", 4), 0, (4,), (1,), "
	       "False, O{}, torch.float8_e4m3fn)");
	/* NEWOBJ of OrderedDict */
	ACCEPT("ccollections\nOrderedDict\n)\x81.", "O{}");
}
END_TEST

/* Ints wider than 64 bits are kept (a uint64 seed, 2**70); bytes that
 * only repeat the sign do not make an int wide. */
START_TEST(test_wide_ints)
{
	struct pickle *p = NULL;
	struct buf b = BUF_INIT, pkl = BUF_INIT;
	struct err e = { 0 };
	const struct pickle_value *v;

	ACCEPT("\x8a\x09\0\0\0\0\0\0\0\0\x01.", "18446744073709551616");
	ACCEPT("\x8a\x09\xfb\xff\xff\xff\xff\xff\xff\xff\x00.",
	       "18446744073709551611");		/* 2**64 - 5 */
	ACCEPT("\x8a\x09\0\0\0\0\0\0\0\x80\x00.",
	       "9223372036854775808");		/* 2**63 */
	ACCEPT("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\xff.",
	       "-9223372036854775809");
	ACCEPT("\x8a\x0b\0\0\0\0\0\0\0\0\0\0\xff.",
	       "-1208925819614629174706176");	/* -2**80 */
	/* redundant sign bytes: a 64-bit int */
	ACCEPT("\x8a\x09\x01\0\0\0\0\0\0\0\0.", "1");
	ACCEPT("\x8a\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff.", "-1");
	ACCEPT("\x8b\x0c\0\0\0" "\0\0\0\0\0\0\0\x80\xff\xff\xff\xff.",
	       "-9223372036854775808");
	/* a LONG4 of 4 MiB: kept, written in hex in linear time (decimal
	 * would take quadratic time) */
	buf_adds(&pkl, "\x8b");
	buf_add(&pkl, "\0\0\x40\0", 4);
	ck_assert_int_eq(buf_reserve(&pkl, 4u << 20), 0);
	memset(pkl.data + pkl.len, 0xab, (4u << 20) - 1);
	pkl.len += (4u << 20) - 1;
	buf_add(&pkl, "\x12.", 2);
	ck_assert_int_eq(pickle_load(pkl.data, pkl.len, NULL, &p, &e), 0);
	v = pickle_root(p);
	ck_assert_int_eq(v->kind, PICKLE_LONG);
	ck_assert_uint_eq(v->str.len, 4u << 20);
	ck_assert_int_eq(pickle_long_text(v, &b), 0);
	ck_assert_uint_eq(b.len, 2 + (8u << 20));
	ck_assert(strncmp(b.data, "0x12abab", 8) == 0);
	pickle_free(p);
	buf_free(&pkl);
	b.len = 0;
	/* and a negative one, -(2^16383 - 1): a minus and its magnitude */
	buf_adds(&pkl, "\x8b");
	buf_add(&pkl, "\x00\x08\0\0\x01", 5);
	ck_assert_int_eq(buf_reserve(&pkl, 2046), 0);
	memset(pkl.data + pkl.len, 0, 2046);
	pkl.len += 2046;
	buf_add(&pkl, "\x80.", 2);
	ck_assert_int_eq(pickle_load(pkl.data, pkl.len, NULL, &p, &e), 0);
	ck_assert_int_eq(pickle_long_text(pickle_root(p), &b), 0);
	ck_assert_uint_eq(b.len, 3 + 4096);
	ck_assert(strncmp(b.data, "-0x7fff", 7) == 0);
	ck_assert_int_eq(b.data[b.len - 1], 'f');
	pickle_free(p);
	buf_free(&pkl);
	buf_free(&b);
}
END_TEST

/* What torch.save writes beside tensors: sets, torch.Size, devices,
 * defaultdicts; objects of other classes and calls of other functions
 * are described, never made. */
START_TEST(test_values)
{
	/* sets: protocol 4's opcodes and protocol 2's calls */
	ACCEPT("\x8f.", "S[]");
	ACCEPT("\x8f(K\x02K\x01\x90.", "S[2, 1]");
	ACCEPT("(K\x01\x91.", "S[1]");
	ACCEPT("c__builtin__\nset\n]K\x01" "a\x85R.", "S[1]");
	ACCEPT("cbuiltins\nfrozenset\n)R.", "S[]");
	ACCEPT("c__builtin__\nset\nK\x01\x85R.", "__builtin__.set(1,)");
	REFUSE("](K\x01\x90.", "ADDITEMS at byte 4 adds to a list, not a set");
	/* torch.Size is its tuple; torch.device its name */
	ACCEPT("ctorch\nSize\nK\x03K\x04\x86\x85R.", "(3, 4)");
	ACCEPT("ctorch\ndevice\nX\x04\0\0\0" "cudaK\x01\x86R.", "\"cuda:1\"");
	ACCEPT("ctorch\ndevice\nX\x03\0\0\0" "cpu\x85R.", "\"cpu\"");
	ACCEPT("ctorch\ndevice\nX\x03\0\0\0" "cpu\x88\x86R.",
	       "torch.device(\"cpu\", True)");
	ACCEPT("ctorch\ndevice\nX\x21\0\0\0" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	       "\x85R.", "torch.device(\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",)");
	ACCEPT("ctorch\nfloat16\n.", "torch.float16");
	/* defaultdict(list) and its items */
	ACCEPT("ccollections\ndefaultdict\nc__builtin__\nlist\n\x85R"
	       "(X\x01\0\0\0" "aK\x01u.", "{\"a\": 1}");
	/* other globals: names; their calls: descriptions, with BUILD's
	 * state and the items set or appended on them */
	ACCEPT("c__builtin__\nset\n.", "__builtin__.set");
	ACCEPT("\x8c\x02os\x8c\x06system\x93.", "os.system");
	ACCEPT("cposix\nsystem\nX\x02\0\0\0ls\x85R.", "posix.system(\"ls\",)");
	ACCEPT("cargparse\nNamespace\n)\x81}(X\x02\0\0\0lrK\x01ub.",
	       "argparse.Namespace!()@{\"lr\": 1}");
	ACCEPT("cm\nC\n)\x81(K\x01K\x02u.", "m.C!()+{1: 2}");
	ACCEPT("cm\nC\n)\x81(K\x01" "e.", "m.C!()+[1]");
	ACCEPT("cm\nC\n)\x81" "K\x01" "aK\x02" "a.", "m.C!()+[1, 2]");
	ACCEPT("cm\nS\n)\x81(K\x01\x90.", "m.S!()+[1]");
	ACCEPT("cm\nf\n)R)R.", "m.f()()");
	ACCEPT("ctorch\nFloatStorage\n)R.", "torch.FloatStorage()");
	ACCEPT("ctorch._utils\n_rebuild_tensor_v2\n)\x81.",
	       "torch._utils._rebuild_tensor_v2!()");
	ACCEPT("c_codecs\nencode\n)\x81.", "_codecs.encode!()");
	ACCEPT("c_codecs\nencode\nX\x01\0\0\0" "aX\x05\0\0\0" "utf_8\x86R.",
	       "_codecs.encode(\"a\", \"utf_8\")");
	ACCEPT("ccollections\nOrderedDict\n]\x85R.", "collections.OrderedDict([],)");
	REFUSE("cm\nC\n)\x81(K\x01K\x02u(K\x01" "e.", "APPENDS at byte 16 both "
	       "sets items of an object and appends to it");
}
END_TEST

/* _codecs.encode of one string makes one value, however often the memo
 * passes the string: 20,000 calls share it (issue 30: 1 MB of such a
 * pickle took 3.1 GB). */
START_TEST(test_latin1_shared)
{
	static const char head[] = "\x80\x02](" "c_codecs\nencode\nq\x01"
				   "X\x06\0\0\0latin1q\x02" "X\x00\x00\x02\x00";
	struct buf pkl = BUF_INIT;
	struct pickle *p = NULL;
	struct err e = { 0 };
	const struct pickle_value *v;

	buf_add(&pkl, head, sizeof(head) - 1);
	for (size_t i = 0; i < 65536; i++)
		buf_add(&pkl, "\xc3\xbf", 2);
	buf_add(&pkl, "q\x00", 2);
	for (size_t i = 0; i < 20000; i++)
		buf_add(&pkl, "h\x01h\x00h\x02\x86R", 8);
	buf_adds(&pkl, "e.");
	ck_assert_msg(pickle_load(pkl.data, pkl.len, NULL, &p, &e) == 0, "%s",
		      e.detail);
	/* [encode, 'latin1', the string, its bytes 20,000 times] */
	v = pickle_root(p);
	ck_assert_uint_eq(v->seq.n, 3 + 20000);
	ck_assert_int_eq(v->seq.items[3]->kind, PICKLE_BYTES);
	ck_assert_uint_eq(v->seq.items[3]->str.len, 65536);
	ck_assert_int_eq((unsigned char)v->seq.items[3]->str.p[0], 0xff);
	for (size_t i = 4; i < v->seq.n; i++)
		ck_assert_ptr_eq(v->seq.items[i], v->seq.items[3]);
	pickle_free(p);
	buf_free(&pkl);
}
END_TEST

START_TEST(test_refused_opcodes)
{
	REFUSE("\x82\x01.", "opcode EXT1 at byte 0 names an object by its "
	       "number in copyreg's extension registry");
	REFUSE("\x84\x01\0\0\0.", "opcode EXT4");
	REFUSE("\x97.", "opcode NEXT_BUFFER at byte 0 refers to a buffer "
	       "passed beside the pickle");
	REFUSE("N\x98.", "opcode READONLY_BUFFER");
	REFUSE("\xff.", "byte 0xff at 0 is not a pickle opcode");
	REFUSE("\x80\x06N.", "protocol 6");
	/* names Python could not import */
	REFUSE("c\x01\x02\nx\n.", "GLOBAL at byte 0 names global "
	       "`\\x01\\x02.x`, which is no Python name");
	REFUSE("cos system\nx\n.", "which is no Python name");
	REFUSE("c\nx\n.", "which is no Python name");
	REFUSE("co\xff\nx\n.", "which is no Python name");
	REFUSE("\x8c\x02o\x00\x8c\x01x\x93.", "STACK_GLOBAL at byte 7 names "
	       "global");
	/* bytes Python could not encode */
	REFUSE("c_codecs\nencode\nX\x03\x00\x00\x00\xe2\x82\xac"
	       "X\x06\x00\x00\x00latin1\x86R.", "REDUCE at byte 36: "
	       "_codecs.encode of a string that is not latin-1");
	REFUSE("N)R.", "calls a None");
	REFUSE("ccollections\nOrderedDict\nNR.", "passes a None as arguments");
	REFUSE("STACK.", "STRING at byte 0 is not a line (truncated?)");
	REFUSE("K\x01K\x02\x93.", "wants two strings, not a int and a int");
	REFUSE("ccollections\nOrderedDict", "GLOBAL at byte 0 is not a line "
	       "(truncated?)");
	/* BUILD, APPEND, SETITEM on the wrong things */
	REFUSE("N}b.", "BUILD at byte 2 sets the state of a None");
	REFUSE("}}b}b.", "sets a state twice");
	REFUSE(")Na.", "APPEND at byte 2 adds to a tuple, not a list");
	REFUSE("(e.", "nothing to add to below its MARK");
	REFUSE("(NNu.", "nothing to add to below its MARK");
	REFUSE("]NNs.", "sets an item of a list, not a dict");
	REFUSE("}(Nu.", "odd number of values");
	REFUSE("(Nd.", "odd number of values");
	/* a negative LONG4, one past the end */
	REFUSE("\x8b\xff\xff\xff\xff.", "negative length");
	REFUSE("\x8b\x10\0\0\0\x01.", "LONG4 at byte 0 needs 16 bytes");
	/* strings are UTF-8 as Python decodes them (and names need) */
	REFUSE("X\x02\x00\x00\x00" "a\xff.", "BINUNICODE at byte 0 is not "
	       "UTF-8 (at byte 1 of the string)");
	REFUSE("\x8c\x03\xed\xa0\x80.", "SHORT_BINUNICODE at byte 0 is not "
	       "UTF-8");	/* a lone surrogate */
	REFUSE("\x8c\x02\xc0\x80.", "not UTF-8");	/* overlong NUL */
	ACCEPT("\x8c\x03" "a\0b.", "\"a\\x00b\"");
	ACCEPT("B\x01\x00\x00\x00\xff.", "b\"\\xff\"");	/* bytes are bytes */
}
END_TEST

/* Protocols 0 and 1 (and Python 2's strings, instances and persistent
 * ids): what Python writes is read, anything else refused in one line. */
START_TEST(test_protocol0)
{
	struct buf pkl = BUF_INIT;

	/* INT, LONG: decimal, no leading zero; 00 and 01 are bools */
	ACCEPT("I00\n.", "False");
	ACCEPT("I01\n.", "True");
	ACCEPT("I-7\n.", "-7");
	ACCEPT("I0\n.", "0");
	ACCEPT("I-9223372036854775808\n.", "-9223372036854775808");
	ACCEPT("I9223372036854775808\n.", "9223372036854775808");
	ACCEPT("L-1180591620717411303424L\n.", "-1180591620717411303424");
	ACCEPT("L5\n.", "5");
	REFUSE("I007\n.", "INT at byte 0 is not an integer in decimal");
	REFUSE("I 3\n.", "INT at byte 0 is not an integer");
	REFUSE("I3L\n.", "INT at byte 0 is not an integer");
	REFUSE("L0x10L\n.", "LONG at byte 0 is not an integer");
	REFUSE("LL\n.", "LONG at byte 0 is not an integer");
	REFUSE("I-\n.", "not an integer");
	REFUSE("I3", "INT at byte 0 is not a line (truncated?)");
	/* 4,300 digits (Python's limit) are read, 4,301 refused; up to
	 * 1,785 bytes (4,298 nines) an int is shown in decimal */
	buf_adds(&pkl, "L");
	for (int i = 0; i < 4298; i++)
		buf_adds(&pkl, "9");
	buf_adds(&pkl, "\n.");
	{
		struct err e = { 0 };
		char *d = load_dump(pkl.data, pkl.len, NULL, &e);

		ck_assert_msg(d != NULL, "%s", e.detail);
		ck_assert_uint_eq(strlen(d), 4298);
		ck_assert(strspn(d, "9") == 4298);
		free(d);
	}
	pkl.len -= 2;
	buf_adds(&pkl, "99\n.");
	{
		struct pickle *p = NULL;
		struct err e = { 0 };

		ck_assert_msg(pickle_load(pkl.data, pkl.len, NULL, &p, &e) == 0,
			      "%s", e.detail);
		ck_assert_int_eq(pickle_root(p)->kind, PICKLE_LONG);
		ck_assert_uint_eq(pickle_root(p)->str.len, 1786);
		pickle_free(p);
	}
	pkl.len -= 2;
	buf_adds(&pkl, "9\n.");
	refused(pkl.data, pkl.len, NULL, "more than 4,300 digits");
	buf_free(&pkl);
	/* FLOAT: repr()'s text */
	ACCEPT("F1.5\n.", "f:3ff8000000000000");
	ACCEPT("F1e-05\n.", "f:3ee4f8b588e368f1");
	ACCEPT("F-inf\n.", "f:fff0000000000000");
	ACCEPT("F-0.0\n.", "f:8000000000000000");
	REFUSE("F1.\n.", "FLOAT at byte 0 is not a float as Python's repr()");
	REFUSE("F0x1p3\n.", "is not a float");
	REFUSE("F 1\n.", "is not a float");
	REFUSE("Finfinity\n.", "is not a float");
	REFUSE("F1e\n.", "is not a float");
	/* STRING: a Python 2 str's repr(); UTF-8 is a str, else bytes */
	ACCEPT("S'a\\'b\\n\\x41\\101\\q'\n.", "\"a'b\\x0aAA\\x5cq\"");
	ACCEPT("S\"it's\"\n.", "\"it's\"");
	ACCEPT("S'\\xc3\\xa9'\n.", "\"\\xc3\\xa9\"");
	ACCEPT("S'\\xff'\n.", "b\"\\xff\"");
	REFUSE("S'abc\n.", "STRING at byte 0 is not a quoted string");
	REFUSE("S'\n.", "is not a quoted string");
	REFUSE("S'\\x4'\n.", "STRING at byte 0 has an escape Python refuses");
	REFUSE("S'\\777'\n.", "has an escape Python refuses");
	REFUSE("S'a\\'\n.", "has an escape Python refuses");
	/* BINSTRING, SHORT_BINSTRING */
	ACCEPT("T\x02\0\0\0ab.", "\"ab\"");
	ACCEPT("U\x01\xff.", "b\"\\xff\"");
	REFUSE("T\xff\xff\xff\xff.", "BINSTRING at byte 0 has a negative length");
	REFUSE("U\x05" "ab.", "SHORT_BINSTRING at byte 0 needs 5 bytes");
	/* UNICODE: raw-unicode-escape */
	ACCEPT("Va\\u00e9\\U0001f600\xe9\n.",
	       "\"a\\xc3\\xa9\\xf0\\x9f\\x98\\x80\\xc3\\xa9\"");
	ACCEPT("V\\x41\\\\u0041\n.", "\"\\x5cx41\\x5c\\x5cu0041\"");
	REFUSE("V\\ud800\n.", "UNICODE at byte 0 has a \\u escape that is no "
	       "character");
	REFUSE("V\\U00110000\n.", "is no character");
	REFUSE("V\\u12\n.", "has a truncated \\u escape");
	REFUSE("V\\u12g4\n.", "has a \\u escape that is not hex");
	/* PUT, GET */
	ACCEPT("Np0\ng0\n\x86.", "(None, None)");
	REFUSE("g5\n.", "GET at byte 0: memo 5 is not set");
	REFUSE("Np-1\n.", "PUT at byte 1 is not a memo index in decimal");
	REFUSE("Np99999999999999999999999\n.", "memo index 18446744073709551615 "
	       "is more than");
	/* POP (the value, or the MARK right below), POP_MARK, DUP */
	ACCEPT("NK\x01" "0.", "None");
	ACCEPT("(0N.", "None");
	ACCEPT("N(K\x01K\x02" "1.", "None");
	ACCEPT("K\x01" "2\x86.", "(1, 1)");
	REFUSE("0.", "POP at byte 0 needs 1 value");
	REFUSE("(2.", "DUP at byte 1 needs 1 value");
	REFUSE("1.", "POP_MARK at byte 0 has no MARK to close");
	/* PERSID: an ASCII line */
	ACCEPT("Pstorage_0\n.", "P\"storage_0\"");
	REFUSE("P\xff\n.", "PERSID at byte 0 is not ASCII");
	/* OBJ, INST: Python 2's instances, described as calls (or folded) */
	ACCEPT("(cm\nC\nK\x01o.", "m.C(1,)");
	ACCEPT("(K\x01im\nC\n.", "m.C(1,)");
	ACCEPT("(im\nC\n.", "m.C()");
	ACCEPT("(ccollections\nOrderedDict\no.", "O{}");
	ACCEPT("(icollections\nOrderedDict\n.", "O{}");
	REFUSE("(o.", "OBJ at byte 1 has no class above its MARK");
	REFUSE("(K\x01K\x02o.", "OBJ at byte 5 calls a int");
	REFUSE("(im\n.", "INST at byte 1 is not a line");
	REFUSE("im\nC\n.", "INST at byte 0 has no MARK to close");
	REFUSE("(i\x01\nC\n.", "INST at byte 1 names global");
}
END_TEST

/* NEWOBJ_EX: cls.__new__(cls, *args, **kwargs), described with its
 * keyword arguments; BYTEARRAY8 is bytes, and so is bytes(). */
START_TEST(test_newobj_ex)
{
	ACCEPT("cm\nC\n)}\x92.", "m.C!()");
	ACCEPT("cm\nC\nK\x01\x85}X\x01\0\0\0kK\x02s\x92.",
	       "m.C!(1,)**{\"k\": 2}");
	/* a pure call with keyword arguments is not one stfs folds */
	ACCEPT("ccollections\nOrderedDict\n)}X\x01\0\0\0kK\x01s\x92.",
	       "collections.OrderedDict!()**{\"k\": 1}");
	ACCEPT("ccollections\nOrderedDict\n)}\x92.", "O{}");
	REFUSE("cm\nC\n)N\x92.", "NEWOBJ_EX at byte 7 passes a None as "
	       "keyword arguments, not a dict");
	REFUSE("cm\nC\nN}\x92.", "passes a None as arguments");
	REFUSE(")}\x92.", "NEWOBJ_EX at byte 2 needs 1 value");
	ACCEPT("\x96\x02\0\0\0\0\0\0\0ab.", "b\"ab\"");
	ACCEPT("c__builtin__\nbytes\n)R.", "b\"\"");
	ACCEPT("cbuiltins\nbytes\n)R.", "b\"\"");
	ACCEPT("cbuiltins\nbytes\nK\x01\x85R.", "builtins.bytes(1,)");
}
END_TEST

/* numpy.dtype(NAME, False, True) with the state (3, ORDER, None, None,
 * None, -1, -1, 0), as numpy pickles it */
#define NP_DTYPE(name, order) \
	"cnumpy\ndtype\nX\x02\0\0\0" name "\x89\x88\x87R" \
	"(K\x03X\x01\0\0\0" order "NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xff" \
	"K\x00tb"
#define NP_SCALAR "cnumpy.core.multiarray\nscalar\n"

/* Load lit and return its root's f_bits (a float's), or -1. */
static int
float_bits(const char *lit, size_t len)
{
	struct pickle *p = NULL;
	struct err e = { 0 };
	int bits;

	ck_assert_msg(pickle_load(lit, len, NULL, &p, &e) == 0, "%s",
		      e.detail);
	bits = pickle_root(p)->kind == PICKLE_FLOAT ?
	       (int)pickle_root(p)->f_bits : -1;
	pickle_free(p);
	return bits;
}

/* numpy scalars are their numbers, read from their bytes by the dtype's
 * kind, size and byte order; what numpy would not have written stays a
 * description. */
START_TEST(test_numpy_scalars)
{
	static const char f4_big[] = NP_SCALAR NP_DTYPE("f4", ">")
				     "C\x04\x3f\xc0\0\0\x86R.";
	static const char f2[] = "cnumpy._core.multiarray\nscalar\n"
				 NP_DTYPE("f2", "<") "C\x02\x00\xc1\x86R.";

	ACCEPT(f4_big, "f:3ff8000000000000");
	ck_assert_int_eq(float_bits(f4_big, sizeof(f4_big) - 1), 32);
	ACCEPT(f2, "f:c004000000000000");		/* numpy 2's name */
	ck_assert_int_eq(float_bits(f2, sizeof(f2) - 1), 16);
	ACCEPT(NP_SCALAR NP_DTYPE("f8", "<") "C\x08\0\0\0\0\0\0\xf8\x3f\x86R.",
	       "f:3ff8000000000000");
	ACCEPT(NP_SCALAR NP_DTYPE("i2", "<") "C\x02\xfe\xff\x86R.", "-2");
	ACCEPT(NP_SCALAR NP_DTYPE("i8", ">") "C\x08\xff\xff\xff\xff\xff\xff"
	       "\xff\xfd\x86R.", "-3");
	ACCEPT(NP_SCALAR NP_DTYPE("u2", ">") "C\x02\xff\xfe\x86R.", "65534");
	ACCEPT(NP_SCALAR NP_DTYPE("u8", "<") "C\x08\xff\xff\xff\xff\xff\xff"
	       "\xff\xff\x86R.", "18446744073709551615");
	ACCEPT(NP_SCALAR NP_DTYPE("b1", "|") "C\x01\x02\x86R.", "True");
	ACCEPT(NP_SCALAR NP_DTYPE("u1", "|") "C\x01\xc8\x86R.", "200");
	/* not what numpy writes: described */
	ACCEPT(NP_SCALAR NP_DTYPE("f8", "<") "C\x04\0\0\0\0\x86R.",
	       "numpy.core.multiarray.scalar(numpy.dtype(\"f8\", False, "
	       "True)@(3, \"<\", None, None, None, -1, -1, 0), "
	       "b\"\\x00\\x00\\x00\\x00\")");
	ACCEPT(NP_SCALAR NP_DTYPE("c8", "<") "C\x08\0\0\0\0\0\0\0\0\x86R.",
	       "numpy.core.multiarray.scalar(numpy.dtype(\"c8\", False, "
	       "True)@(3, \"<\", None, None, None, -1, -1, 0), "
	       "b\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\")");
	ACCEPT(NP_SCALAR NP_DTYPE("f8", "|") "C\x08\0\0\0\0\0\0\0\0\x86R.",
	       "numpy.core.multiarray.scalar(numpy.dtype(\"f8\", False, "
	       "True)@(3, \"|\", None, None, None, -1, -1, 0), "
	       "b\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\")");
	ACCEPT(NP_SCALAR NP_DTYPE("f8", "=") "C\x08\0\0\0\0\0\0\0\0\x86R.",
	       "numpy.core.multiarray.scalar(numpy.dtype(\"f8\", False, "
	       "True)@(3, \"=\", None, None, None, -1, -1, 0), "
	       "b\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\")");
	/* a dtype without its state, with fields, of version 2; a scalar
	 * made by NEWOBJ */
	ACCEPT(NP_SCALAR "cnumpy\ndtype\nX\x02\0\0\0" "f8\x85RC\x08"
	       "\0\0\0\0\0\0\0\0\x86R.", "numpy.core.multiarray.scalar("
	       "numpy.dtype(\"f8\",), b\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
	       "\\x00\")");
	ACCEPT(NP_SCALAR "cnumpy\ndtype\nX\x02\0\0\0" "u1\x85R(K\x03X\x01\0"
	       "\0\0|N)}NK\x01K\x01K\x00tbC\x01\x07\x86R.",
	       "numpy.core.multiarray.scalar(numpy.dtype(\"u1\",)@(3, \"|\", "
	       "None, (), {}, None, 1, 1, 0), b\"\\x07\")");
	ACCEPT(NP_SCALAR "cnumpy\ndtype\nX\x02\0\0\0" "u1\x85R(K\x02X\x01\0"
	       "\0\0|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tbC\x01\x07"
	       "\x86R.", "numpy.core.multiarray.scalar(numpy.dtype(\"u1\",)@"
	       "(2, \"|\", None, None, None, -1, -1, 0), b\"\\x07\")");
	ACCEPT(NP_SCALAR NP_DTYPE("u1", "|") "C\x01\x07\x86\x81.",
	       "numpy.core.multiarray.scalar!(numpy.dtype(\"u1\", False, "
	       "True)@(3, \"|\", None, None, None, -1, -1, 0), b\"\\x07\")");
}
END_TEST

/* An array's call is kept (the torch container shows it); what it holds
 * is checked before it is read. */
static int
numpy_array(const char *lit, size_t len, struct pickle_numpy_array *a)
{
	struct pickle *p = NULL;
	struct err e = { 0 };
	int rc;

	ck_assert_msg(pickle_load(lit, len, NULL, &p, &e) == 0, "%s",
		      e.detail);
	rc = pickle_numpy_array(pickle_root(p), a);
	pickle_free(p);
	a->data = NULL;		/* freed with the pickle */
	return rc;
}

#define NP_ARRAY(lit, a) numpy_array(lit, sizeof(lit) - 1, a)
#define NP_RECONSTRUCT \
	"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n" \
	"K\x00\x85" "C\x01" "b\x87R"

START_TEST(test_numpy_arrays)
{
	struct pickle_numpy_array a;
	char text[4];

	/* (1, (2, 3), '>i2', False, 12 bytes) */
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT "(K\x01K\x02K\x03\x86"
				  NP_DTYPE("i2", ">") "\x89" "C\x0c"
				  "abcdefghijkltb.", &a), 1);
	ck_assert_uint_eq(a.rank, 2);
	ck_assert_uint_eq(a.shape[1], 3);
	ck_assert_uint_eq(a.numel, 6);
	ck_assert_int_eq(a.fortran, 0);
	ck_assert_uint_eq(a.len, 12);
	pickle_numpy_type_text(&a.type, text);
	ck_assert_str_eq(text, ">i2");
	/* the state before version 1: (shape, dtype, fortran, data) */
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT "(K\x02\x85" NP_DTYPE("u1", "|")
				  "\x88" "C\x02" "abtb.", &a), 1);
	ck_assert_int_eq(a.fortran, 1);
	pickle_numpy_type_text(&a.type, text);
	ck_assert_str_eq(text, "|u1");
	/* protocol 5: _frombuffer(data, dtype, shape, order) */
	ck_assert_int_eq(NP_ARRAY("cnumpy._core.numeric\n_frombuffer\n("
				  "\x96\x04\0\0\0\0\0\0\0" "abcd" NP_DTYPE("b1", "|")
				  "K\x02K\x02\x86X\x01\0\0\0FtR.", &a), 1);
	ck_assert_int_eq(a.fortran, 1);
	ck_assert_uint_eq(a.numel, 4);
	/* refused: bytes that are not the shape's, a negative or huge
	 * dimension, an ndarray subclass, an order that is neither, a
	 * dtype stfs does not read, no state */
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT "(K\x01K\x02\x85"
				  NP_DTYPE("i2", "<") "\x89" "C\x03" "abctb.",
				  &a), 0);
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT "(K\x01J\xff\xff\xff\xff\x85"
				  NP_DTYPE("u1", "|") "\x89" "C\x00tb.", &a), 0);
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT "(K\x01\x8a\x08\0\0\0\0\0\0"
				  "\0\x40\x8a\x08\0\0\0\0\0\0\0\x40K\x00\x87"
				  NP_DTYPE("u1", "|") "\x89" "C\x00tb.", &a), 0);
	ck_assert_int_eq(NP_ARRAY("cnumpy.core.multiarray\n_reconstruct\n"
				  "cnumpy\nmatrix\nK\x00\x85" "C\x01" "b\x87R"
				  "(K\x01K\x01\x85" NP_DTYPE("u1", "|") "\x89"
				  "C\x01" "atb.", &a), 0);
	ck_assert_int_eq(NP_ARRAY("cnumpy.core.numeric\n_frombuffer\n("
				  "C\x01" "a" NP_DTYPE("u1", "|") "K\x01\x85"
				  "X\x01\0\0\0AtR.", &a), 0);
	ck_assert_int_eq(NP_ARRAY("cnumpy.core.numeric\n_frombuffer\n("
				  "C\x01" "a" NP_DTYPE("u1", "|") "K\x01\x85"
				  "X\x01\0\0\0CtR.", &a), 1);
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT "(K\x01K\x01\x85"
				  NP_DTYPE("c8", "<") "\x89" "C\x08"
				  "abcdefghtb.", &a), 0);
	ck_assert_int_eq(NP_ARRAY(NP_RECONSTRUCT ".", &a), 0);
}
END_TEST

START_TEST(test_stack_and_memo)
{
	REFUSE(".", "STOP at byte 0 leaves 0 values");
	REFUSE("NN.", "leaves 2 values");
	REFUSE("(N.", "and 1 MARKs");
	REFUSE("N.N", "1 bytes after STOP");
	REFUSE("", "without STOP");
	REFUSE("R.", "REDUCE at byte 0 needs 1 value on the stack and finds 0");
	REFUSE("N(R.", "stack underflow");	/* the MARK fences */
	REFUSE("N(\x85.", "TUPLE1 at byte 2 needs 1 value");
	REFUSE("N\x87.", "TUPLE3 at byte 1 needs 3 values");
	REFUSE("t.", "TUPLE at byte 0 has no MARK to close");
	REFUSE("Q.", "BINPERSID at byte 0 needs 1 value");
	REFUSE("b.", "BUILD at byte 0 needs 1 value");
	REFUSE("Nb.", "stack underflow");
	REFUSE("q\x00.", "BINPUT at byte 0 needs 1 value");
	REFUSE("h\x00.", "BINGET at byte 0: memo 0 is not set");
	REFUSE("Nq\x01h\x00.", "memo 0 is not set");
	REFUSE("Nj\xff\xff\xff\xff.", "memo 4294967295 is not set");
	REFUSE("Nr\xff\xff\xff\xff.", "memo index 4294967295 is more than");
	REFUSE("Nr\x09\x00\x00\x00.", "memo index 9 is more than this pickle "
	       "can use (7)");
}
END_TEST

START_TEST(test_lengths)
{
	REFUSE("X\xff\xff\xff\xff", "BINUNICODE at byte 0 needs 4294967295 "
	       "bytes and 0 are left (truncated?)");
	REFUSE("\x8d\xff\xff\xff\xff\xff\xff\xff\xff" "abc",
	       "needs 18446744073709551615 bytes and 3 are left");
	REFUSE("\x8e\0\0\0\0\0\0\0\x80.", "BINBYTES8 at byte 0 needs "
	       "9223372036854775808 bytes");
	REFUSE("B\x02\x00\x00\x00" "a", "needs 2 bytes and 1 are left");
	REFUSE("C\x05" "abc", "SHORT_BINBYTES");
	REFUSE("\x95\xff\xff\xff\xff\xff\xff\xff\x7fN.", "FRAME");
	REFUSE("J\x01\x02", "BININT at byte 0 needs 4 bytes and 2 are left");
	REFUSE("G\x01", "BINFLOAT");
	REFUSE("\x8a\x08\x01", "LONG1 at byte 0 needs 8 bytes");
}
END_TEST

/* A list nested n deep: ']' then n times "]" + "a"-less nesting through
 * MARK/list: "(" n times, then "l" n times. */
static char *
nested(size_t n, size_t *len)
{
	char *p = malloc(2 * n + 2);

	ck_assert_ptr_nonnull(p);
	memset(p, '(', n);
	memset(p + n, 'l', n);
	p[2 * n] = '.';
	*len = 2 * n + 1;
	return p;
}

START_TEST(test_depth)
{
	static const char shared[] = "(]]]aaq\x00h\x00\x85\x85t.";
	struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
	size_t len;
	char *p;
	struct err e = { 0 };
	char *d;

	/* 200 levels pass ([[...[]...]] is 200 values on the longest path) */
	p = nested(lim.depth, &len);
	d = load_dump(p, len, NULL, &e);
	ck_assert_msg(d != NULL, "%s", e.detail);
	free(d);
	free(p);
	p = nested(lim.depth + 1, &len);
	refused(p, len, NULL, "nested deeper than 200 levels");
	free(p);
	/* a million levels: no recursion, refused by the same check (from
	 * memory: the machine is the same streamed) */
	p = nested(1000000, &len);
	ck_assert_ptr_null(load_one(p, len, NULL, 0, &e));
	ck_assert_str_eq(e.detail, "values nested deeper than 200 levels "
			 "(the limit of this reader)");
	err_clear(&e);
	free(p);
	/* X = [[[]]] reached at depth 2 first, then at depth 4 through the
	 * memo: the longest path is 6 values (found by fuzz_pickle) */
	lim.depth = 6;
	d = load_dump(shared, sizeof(shared) - 1, &lim, &e);
	ck_assert_str_eq(d, "([[[]]], (([[[]]],),))");
	free(d);
	lim.depth = 5;
	refused(shared, sizeof(shared) - 1, &lim, "deeper than 5");
}
END_TEST

START_TEST(test_cycles)
{
	/* a list that holds itself, a dict that is its own value, a call
	 * whose state is itself: the edge that closes the cycle becomes a
	 * reference to the value, with its path from the root */
	ACCEPT("]q\x00h\x00" "a.", "[<ref 0:list>]");
	ACCEPT("}q\x00K\x01h\x00s.", "{1: <ref 0:dict>}");
	ACCEPT("ctorch._utils\n_rebuild_parameter\n)Rq\x00h\x00" "b.",
	       "torch._utils._rebuild_parameter()@<ref 0:call>");
	/* indirect: an outer list in an inner one in the outer one; and an
	 * inner list that holds itself, one step from the root */
	ACCEPT("]q\x00]q\x01h\x00" "aa.", "[[<ref 0:list>]]");
	ACCEPT("](]q\x01h\x01" "ae.", "[[<ref 1:list>]]");
	/* the reference closing a cycle is a value too: a list that holds
	 * itself two tuples down, inside five tuples, is 9 deep (found by
	 * fuzz_pickle) */
	{
		static const char deep[] = "]q\x00h\x00\x85\x85" "a"
			"\x85\x85\x85\x85\x85.";
		struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
		struct err e = { 0 };
		char *d;

		lim.depth = 8;
		refused(deep, sizeof(deep) - 1, &lim, "deeper than 8");
		lim.depth = 9;
		d = load_dump(deep, sizeof(deep) - 1, &lim, &e);
		ck_assert_msg(d != NULL, "%s", e.detail);
		ck_assert_str_eq(d, "((((([((<ref 5:list>,),)],),),),),)");
		free(d);
	}
	/* a cycle through a call's arguments: no pickler writes one */
	REFUSE("]q\x00\x85q\x01" "0h\x00" "cm\nf\nh\x01R" "a0h\x01.",
	       "a value contains itself through the callable or the "
	       "arguments of a call");
}
END_TEST

/* "Billion laughs": each level a pair of the one before, 2^n values
 * to walk from the root although only n + 1 exist. */
START_TEST(test_shared_walk)
{
	struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
	char p[400];
	size_t n = 0;

	p[n++] = ']';
	for (int i = 0; i < 40; i++) {
		p[n++] = 'q';
		p[n++] = 0;
		p[n++] = 'h';
		p[n++] = 0;
		p[n++] = '\x86';
	}
	p[n++] = '.';
	refused(p, n, NULL, "shared values make more than 16777216 values");
	/* with 20 levels, 2^21 - 1 values: under the default, over a limit */
	n = 1 + 5 * 20;
	p[n++] = '.';
	lim.walk = 1000;
	refused(p, n, &lim, "more than 1000 values to walk");
	lim = (struct pickle_limits)PICKLE_LIMITS_DEFAULT;
	lim.values = 3;
	refused("K\x01K\x02K\x03\x87.", 8, &lim, "more than 3 values");
	lim.values = 4;
	{
		struct err e = { 0 };
		char *d = load_dump("K\x01K\x02K\x03\x87.", 8, &lim, &e);

		ck_assert_str_eq(d, "(1, 2, 3)");
		free(d);
	}
	/* None, True, False and () are made once, however many there are */
	lim.values = 5;
	{
		struct err e = { 0 };
		char *d = load_dump("(NNN\x88\x89\x88))t.", 11, &lim, &e);

		ck_assert_msg(d != NULL, "%s", e.detail);
		ck_assert_str_eq(d, "(None, None, None, True, False, True, (), "
				 "())");
		free(d);
	}
}
END_TEST

/* A list past lim.seq_kept passes its plain items by: each run a
 * PICKLE_PASSED counting them, the others kept where they were (their
 * places from pickle_seq_index), a memoized str still in the memo; a
 * tuple, a dict, a set and a list within the limit keep everything. */
START_TEST(test_seq_kept)
{
	struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
	/* [1, 2, 3, 4, 'ab', (5,), None, True, 6.5, [7], 8, 'ab' again
	 * from the memo, 9] in APPENDS of 4, 5 and 4, then the memo's
	 * 'ab' in a tuple beside it */
	static const char p[] = "]q\x00(K\x01K\x02K\x03K\x04" "e"
		"(X\x02\0\0\0" "abq\x01K\x05\x85N\x88G@\x1a\0\0\0\0\0\0e"
		"(]K\x07" "aK\x08h\x01K\x09" "eh\x01\x86.";
	struct pickle *pk = NULL;
	const struct pickle_value *r, *l;
	struct err e = { 0 };
	char *d;

	d = load_dump(p, sizeof(p) - 1, &lim, &e);
	ck_assert_msg(d != NULL, "%s", e.detail);
	ck_assert_str_eq(d, "([1, 2, 3, 4, \"ab\", (5,), None, True, "
			 "f:401a000000000000, [7], 8, \"ab\", 9], \"ab\")");
	free(d);
	lim.seq_kept = 3;
	d = load_dump(p, sizeof(p) - 1, &lim, &e);
	ck_assert_msg(d != NULL, "%s", e.detail);
	ck_assert_str_eq(d, "([1, 2, 3, <passed 2>, (5,), <passed 3>, [7], "
			 "<passed 3>], \"ab\")");
	free(d);
	ck_assert_int_eq(pickle_load(p, sizeof(p) - 1, &lim, &pk, &e), 0);
	r = pickle_root(pk);
	l = r->seq.items[0];
	ck_assert_uint_eq(l->seq.n, 8);
	ck_assert_uint_eq(pickle_seq_index(l, 3), 3);	/* the first run */
	ck_assert_uint_eq(pickle_seq_index(l, 4), 5);	/* (5,) */
	ck_assert_uint_eq(pickle_seq_index(l, 6), 9);	/* [7] */
	ck_assert_uint_eq(pickle_seq_index(l, 7), 10);
	pickle_free(pk);
	/* APPEND one at a time: one run */
	{
		static const char q[] = "]K\x01" "aK\x02" "aK\x03" "aK\x04" "a.";

		lim.seq_kept = 1;
		d = load_dump(q, sizeof(q) - 1, &lim, &e);
		ck_assert_msg(d != NULL, "%s", e.detail);
		ck_assert_str_eq(d, "[1, <passed 3>]");
		free(d);
	}
}
END_TEST

/* A str, bytes or int past the limits of the load is passed by: a
 * PICKLE_ELIDED of its kind and length, from memory and streamed alike
 * (load_dump). */
START_TEST(test_elided)
{
	static const char not_latin1[] = "c_codecs\nencode\nX\x12\0\0\0"
		"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		"\xe2\x82\xac" "X\x06\0\0\0latin1\x86R.";
	struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
	struct err e = { 0 };
	char *d;

#define ELIDED(lit, want) do { \
	d = load_dump(lit, sizeof(lit) - 1, &lim, &e); \
	ck_assert_msg(d != NULL, "%s", e.detail); \
	ck_assert_str_eq(d, want); \
	free(d); \
} while (0)
	lim.str_kept = 16;
	lim.bytes_kept = 8;
	/* str: its code points, and whether _codecs.encode can make bytes
	 * of them */
	ELIDED("X\x10\0\0\0" "aaaaaaaaaaaaaaaa.", "\"aaaaaaaaaaaaaaaa\"");
	ELIDED("X\x11\0\0\0" "aaaaaaaaaaaaaaaaa.", "<str 17 latin1>");
	ELIDED("\x8c\x12" "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	       "\xc3\xa9\xc3\xa9\xc3\xa9.", "<str 9 latin1>");
	ELIDED("\x8d\x12\0\0\0\0\0\0\0" "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
	       "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac.", "<str 6>");
	ELIDED("X\x14\0\0\0" "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
	       "\xf0\x9f\x98\x80\xf0\x9f\x98\x80.", "<str 5>");
	/* bytes, and a Python 2 string: text when UTF-8 */
	ELIDED("C\x08" "abcdefgh.", "b\"abcdefgh\"");
	ELIDED("C\x09" "abcdefghi.", "<bytes 9>");
	ELIDED("B\x09\0\0\0" "abcdefghi.", "<bytes 9>");
	ELIDED("\x8e\x09\0\0\0\0\0\0\0" "abcdefghi.", "<bytes 9>");
	ELIDED("\x96\x09\0\0\0\0\0\0\0" "abcdefghi.", "<bytes 9>");
	ELIDED("T\x11\0\0\0" "aaaaaaaaaaaaaaaaa.", "<str 17 latin1>");
	ELIDED("U\x11" "aaaaaaaa\xff" "aaaaaaaa.", "<bytes 17>");
	/* _codecs.encode of a str passed by: bytes passed by */
	ELIDED("c_codecs\nencode\nX\x12\0\0\0" "\xc3\xa9\xc3\xa9\xc3\xa9"
	       "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	       "X\x06\0\0\0latin1\x86R.", "<bytes 9>");
	refused(not_latin1, sizeof(not_latin1) - 1, &lim, "REDUCE at byte "
		"51: _codecs.encode of a string that is not latin-1 in UTF-8");
	/* ints: their bit_length(), or made as usual when only bytes
	 * repeating the sign made them long */
	ELIDED("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.",
	       "9223372036854775807");
	ELIDED("\x8a\x09\0\0\0\0\0\0\0\0\x40.", "<int 71>");	/* 2**70 */
	ELIDED("\x8a\x09\0\0\0\0\0\0\0\0\xc0.", "<int 71>");	/* -2**70 */
	ELIDED("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xbf.", "<int 71>");
	ELIDED("\x8a\x09\0\0\0\0\0\0\0\0\x01.", "<int 65>");	/* 2**64 */
	ELIDED("\x8a\x09\0\0\0\0\0\0\0\0\xff.", "<int 65>");	/* -2**64 */
	ELIDED("\x8a\x09\0\0\0\0\0\0\0\x80\0.", "<int 64>");	/* 2**63 */
	ELIDED("\x8a\x09\0\0\0\0\0\0\0\0\xa0.", "<int 71>");
	ELIDED("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x7f.", "<int 71>");
	ELIDED("\x8a\x09\x01\0\0\0\0\0\0\0\x80.", "<int 71>");
	ELIDED("\x8b\x0c\0\0\0" "\0\0\0\0\0\0\0\0\x40\0\0\0.", "<int 71>");
	ELIDED("\x8b\x0c\0\0\0" "\0\0\0\0\0\0\0\0\xc0\xff\xff\xff.",
	       "<int 71>");
	ELIDED("\x8b\x0c\0\0\0" "\x05\0\0\0\0\0\0\0\0\0\0\0.", "5");
	ELIDED("\x8b\x0c\0\0\0" "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
	       "\xff\xff.", "-1");
	ELIDED("\x8b\x0c\0\0\0" "\0\0\0\0\0\0\0\0\0\0\0\0.", "0");
	ELIDED("\x8b\x0c\0\0\0" "\0\0\0\0\0\0\0\x80\xff\xff\xff\xff.",
	       "-9223372036854775808");
	lim.bytes_kept = 12;
	ELIDED("\x8b\x14\0\0\0" "\0\0\0\0\0\0\0\0\x40\0\0\0\0\0\0\0\0\0\0\0.",
	       "1180591620717411303424");
	ELIDED("\x8b\x14\0\0\0" "\0\0\0\0\0\0\0\0\0\0\0\0\x40\0\0\0\0\0\0\0.",
	       "<int 103>");
#undef ELIDED
	/* a str passed by that is not UTF-8: the message of one kept,
	 * wherever it lies in the chunks */
	for (size_t bad = 0; bad < 24; bad++) {
		/* bad, cut at the end, a bad continuation, a surrogate */
		static const char *const tails[] = {
			"\xff", "\xe2\x82", "\xc3\x28", "\xed\xa0\x80"
		};

		for (size_t t = 0; t < 4; t++) {
			char pkl[64], want[ERR_DETAIL_MAX];
			size_t n = 5, len = bad + strlen(tails[t]) + 3;

			pkl[0] = 'X';
			pkl[1] = (char)len;
			pkl[2] = pkl[3] = pkl[4] = 0;
			memset(pkl + n, 'a', bad);
			n += bad;
			memcpy(pkl + n, tails[t], strlen(tails[t]));
			n += strlen(tails[t]);
			memcpy(pkl + n, "aaa.", 4);
			n += 4;
			refused(pkl, n, NULL, "is not UTF-8");
			err_clear(&e);
			ck_assert_ptr_null(load_one(pkl, n, NULL, 0, &e));
			snprintf(want, sizeof(want), "%s", e.detail);
			for (size_t w = PICKLE_INPUT_WINDOW_MIN; w < 16; w++) {
				err_clear(&e);
				ck_assert_ptr_null(load_one(pkl, n, &lim, w,
							    &e));
				ck_assert_str_eq(e.detail, want);
			}
		}
	}
	/* four-byte sequences cut by every chunk */
	for (size_t w = PICKLE_INPUT_WINDOW_MIN; w < 16; w++) {
		static const char four[] = "X\x1c\0\0\0" "aaa"
			"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
			"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
			"a.";

		err_clear(&e);
		d = load_one(four, sizeof(four) - 1, &lim, w, &e);
		ck_assert_msg(d != NULL, "%s", e.detail);
		ck_assert_str_eq(d, "<str 10>");
		free(d);
	}
}
END_TEST

Suite *
pickle_suite(void)
{
	Suite *s = suite_create("pickle");
	TCase *tc = tcase_create("pickle");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_fixture, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_truncated, 0,
			    sizeof(good) / sizeof(good[0]));
	tcase_add_test(tc, test_tensor_shape);
	tcase_add_test(tc, test_unsafe);
	tcase_add_test(tc, test_opcodes);
	tcase_add_test(tc, test_wide_ints);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_latin1_shared);
	tcase_add_test(tc, test_refused_opcodes);
	tcase_add_test(tc, test_protocol0);
	tcase_add_test(tc, test_newobj_ex);
	tcase_add_test(tc, test_numpy_scalars);
	tcase_add_test(tc, test_numpy_arrays);
	tcase_add_test(tc, test_stack_and_memo);
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_cycles);
	tcase_add_test(tc, test_shared_walk);
	tcase_add_test(tc, test_elided);
	tcase_add_test(tc, test_seq_kept);
	suite_add_tcase(s, tc);
	return s;
}
