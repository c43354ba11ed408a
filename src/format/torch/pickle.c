/* pickle.c - the pickle stack machine that executes nothing (pickle.h).
 *
 * The machine follows CPython's _pickle.c where it matters for what is
 * accepted: a MARK fences the stack (values below it cannot be popped
 * until the mark is; POP right above one pops the mark), BINPUT stores
 * the top value, MEMOIZE stores it at the memo's current size, STOP takes
 * the top.  It is stricter where Python's pickles never go: the stack
 * must hold exactly the result at STOP and nothing may follow it, APPEND
 * needs a list, SETITEM a dict, ADDITEMS a set (or, each, an object
 * described by a call), BUILD a dict or a call, a global must be a name
 * Python could import, and the text of protocol 0 must be what Python
 * writes (pickle_text.h).
 *
 * The values live in a pickle_store (pickle_store.h), which also checks
 * the finished graph; the names of opcodes and the known globals are in
 * pickle_names.c, what a call stands for in pickle_call.c.  Nothing here
 * recurses.
 */
#include "format/torch/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "format/torch/pickle_call.h"
#include "format/torch/pickle_counted.h"
#include "format/torch/pickle_input.h"
#include "format/torch/pickle_memo.h"
#include "format/torch/pickle_names.h"
#include "format/torch/pickle_seq.h"
#include "format/torch/pickle_store.h"
#include "format/torch/pickle_text.h"
#include "format/torch/pickle_unsafe.h"

struct pickle {
	struct pickle_store store;
	struct pickle_value *root;
	struct pickle_unsafe unsafe;	/* what Python would import, call */
};

struct machine {
	struct pickle_input in;	/* in.op, in.at: the current opcode */
	struct pickle_limits lim;
	size_t memo_max;	/* min(lim.memo, len): indices are below */
	struct pickle *pk;
	struct pickle_value **stack;
	size_t sn, scap;
	size_t *marks;		/* stack heights at each open MARK */
	size_t mn, mcap;
	struct pickle_memo memo;
	int rest_ok;		/* bytes may follow STOP (pickle_scan) */
	struct err *e;
};

static int
fail(struct machine *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
fail(struct machine *m, const char *fmt, ...)
{
	char detail[ERR_DETAIL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return err_set(m->e, ERR_INVALID_PICKLE, "%s", detail);
}

static int
no_memory(struct machine *m)
{
	return err_set(m->e, ERR_NO_MEMORY, "out of memory reading a pickle");
}

/* The opcode being run, for messages. */
static const char *
cur_op(const struct machine *m)
{
	return pickle_names_op(m->in.op);
}

static int
grow(struct machine *m, void **arr, size_t *cap, size_t need, size_t size)
{
	return pickle_store_grow(&m->pk->store, arr, cap, need, size, m->e);
}

static struct pickle_value *
new_value(struct machine *m, enum pickle_kind kind)
{
	return pickle_store_new(&m->pk->store, kind, m->e);
}

/* ---- the stack ------------------------------------------------------ */

static int
push(struct machine *m, struct pickle_value *v)
{
	if (!v)
		return -1;
	if (grow(m, (void **)&m->stack, &m->scap, m->sn + 1,
		 sizeof(*m->stack)) < 0)
		return -1;
	m->stack[m->sn++] = v;
	return 0;
}

/* The stack height below which the current opcode cannot reach. */
static size_t
fence(const struct machine *m)
{
	return m->mn ? m->marks[m->mn - 1] : 0;
}

/* 0 when n values are above the fence. */
static int
need_values(struct machine *m, size_t n)
{
	if (m->sn - fence(m) < n)
		return fail(m, "%s at byte %zu needs %zu value%s on the stack "
			    "and finds %zu (stack underflow)", cur_op(m),
			    m->in.at, n, n == 1 ? "" : "s", m->sn - fence(m));
	return 0;
}

static struct pickle_value *
pop(struct machine *m)
{
	if (need_values(m, 1) < 0)
		return NULL;
	return m->stack[--m->sn];
}

static struct pickle_value *
top(struct machine *m)
{
	if (need_values(m, 1) < 0)
		return NULL;
	return m->stack[m->sn - 1];
}

/* Close the innermost MARK: *from is where its values start. */
static int
pop_mark(struct machine *m, size_t *from)
{
	if (!m->mn) {
		/* (-1 said here: the callers' *from is unset) */
		fail(m, "%s at byte %zu has no MARK to close", cur_op(m),
		     m->in.at);
		return -1;
	}
	*from = m->marks[--m->mn];
	return 0;
}

/* SETITEMS, APPENDS: 0 when the value they add to, just below the MARK
 * closed at from, is above the next fence. */
static int
below_mark(struct machine *m, size_t from)
{
	if (from <= fence(m))
		return fail(m, "%s at byte %zu has nothing to add to below its "
			    "MARK (stack underflow)", cur_op(m), m->in.at);
	return 0;
}

/* ---- reading the opcode's argument ---------------------------------- */

/* An n-byte little-endian unsigned argument. */
static int
arg_uint(struct machine *m, unsigned n, uint64_t *out)
{
	return pickle_input_uint(&m->in, n, out);
}

/* A protocol 0 argument: the bytes up to the next newline (read, not
 * kept). */
static int
arg_line(struct machine *m, const char **p, size_t *n)
{
	if (pickle_input_line(&m->in, 0, p, n) < 0)
		return -1;
	pickle_input_skip(&m->in, *n + 1);
	return 0;
}

/* "OPCODE at byte N" into at, for messages made elsewhere. */
static const char *
where(const struct machine *m, char *at, size_t cap)
{
	snprintf(at, cap, "%s at byte %zu", cur_op(m), m->in.at);
	return at;
}

/* ---- making values -------------------------------------------------- */

static struct pickle_value *
new_int(struct machine *m, int64_t i)
{
	struct pickle_value *v = new_value(m, PICKLE_INT);

	if (v)
		v->i = i;
	return v;
}

/* INT, LONG, FLOAT, STRING, UNICODE: a value written as a line of text
 * (pickle_text.h). */
static int
op_text(struct machine *m, unsigned char op)
{
	struct pickle_store *s = &m->pk->store;
	const char *p;
	char at[64];
	size_t n;

	if (arg_line(m, &p, &n) < 0)
		return -1;
	where(m, at, sizeof(at));
	switch (op) {
	case 'I':
	case 'L':
		return push(m, pickle_text_int(s, p, n, op == 'L', at, m->e));
	case 'F':
		return push(m, pickle_text_float(s, p, n, at, m->e));
	case 'S':
		return push(m, pickle_text_string(s, p, n, at, m->e));
	default:
		return push(m, pickle_text_unicode(s, p, n, at, m->e));
	}
}

/* A tuple, list or set of the stack's values from index from up. */
static int
collect(struct machine *m, enum pickle_kind kind, size_t from)
{
	struct pickle_value *v = new_value(m, kind);

	if (!v || pickle_store_add(&m->pk->store, v, m->stack + from, m->sn - from, m->e) < 0)
		return -1;
	m->sn = from;
	return push(m, v);
}

/* The items of the object call describes: its dict (SETITEM) or list
 * (APPEND, ADDITEMS) of kind, made the first time. */
static struct pickle_value *
call_items(struct machine *m, struct pickle_value *call,
	   enum pickle_kind kind)
{
	if (!call->call.items) {
		call->call.items = new_value(m, kind);
		return call->call.items;
	}
	if (call->call.items->kind != kind) {
		fail(m, "%s at byte %zu both sets items of an object and "
		     "appends to it", cur_op(m), m->in.at);
		return NULL;
	}
	return call->call.items;
}

/* APPEND, APPENDS (to a list), ADDITEMS (to a set): n values onto seq,
 * or onto the list of the object a call describes; a list keeps its
 * first lim.seq_kept items, then passes plain ones by (pickle_seq.h). */
static int
seq_add(struct machine *m, struct pickle_value *seq,
	struct pickle_value **items, size_t n, enum pickle_kind kind)
{
	if (seq->kind == PICKLE_CALL) {
		seq = call_items(m, seq, PICKLE_LIST);
		if (!seq)
			return -1;
	} else if (seq->kind != kind) {
		return fail(m, "%s at byte %zu adds to a %s, not a %s",
			    cur_op(m), m->in.at, pickle_kind_name(seq->kind),
			    pickle_kind_name(kind));
	}
	return pickle_seq_add(&m->pk->store, seq, items, n,
			      seq->kind == PICKLE_LIST ? m->lim.seq_kept : 0,
			      m->e);
}

/* SETITEM, SETITEMS, DICT: the n values kv[0], kv[1], ... as key, value,
 * key, ... into d, or into the dict of the object a call describes. */
static int
dict_add(struct machine *m, struct pickle_value *d,
	 struct pickle_value *const *kv, size_t n)
{
	if (n % 2)
		return fail(m, "%s at byte %zu has an odd number of values",
			    cur_op(m), m->in.at);
	if (d->kind == PICKLE_CALL) {
		d = call_items(m, d, PICKLE_DICT);
		if (!d)
			return -1;
	} else if (d->kind != PICKLE_DICT) {
		return fail(m, "%s at byte %zu sets an item of a %s, not a "
			    "dict", cur_op(m), m->in.at,
			    pickle_kind_name(d->kind));
	}
	return pickle_store_add(&m->pk->store, d, kv, n, m->e);
}

/* ---- globals, calls ------------------------------------------------- */

/* A copy of a global's module or name, kept by the store (as a string
 * value no other value points to). */
static const char *
keep_name(struct machine *m, const char *p, size_t n)
{
	struct pickle_value *v = pickle_store_str(&m->pk->store, PICKLE_STR,
						  p, n, m->e);

	return v ? v->str.p : NULL;
}

/* 1 when p[0..n) could name a module or an attribute Python imports:
 * UTF-8 without spaces or control bytes. */
static int
python_name(const char *p, size_t n)
{
	size_t bad;
	unsigned bad_len;

	if (!n || text_utf8_check(p, n, &bad, &bad_len) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
			return 0;
	return 1;
}

/* Record what Python would import or call that torch.load's weights
 * only mode refuses (pickle_unsafe.h): an import of global g (args NULL),
 * or a call of callee that made made.  0, or -1 with *m->e. */
static int
unsafe_use(struct machine *m, const struct pickle_value *callee,
	   const struct pickle_value *args, const struct pickle_value *kwargs,
	   int newobj, struct pickle_value *made)
{
	struct pickle_unsafe_use u = { callee, args, kwargs, made, newobj,
				       cur_op(m), m->in.at, 0, NULL };

	if (callee->kind == PICKLE_GLOBAL &&
	    !pickle_unsafe_global(callee->global.module,
				  strlen(callee->global.module),
				  callee->global.name,
				  strlen(callee->global.name)))
		return 0;
	if (m->pk->unsafe.n < PICKLE_UNSAFE_KEPT)
		pickle_store_flag(made);
	return pickle_unsafe_add(&m->pk->unsafe, &u, m->e);
}

/* A global: a known one by its id, any other as its name, never
 * imported. */
static struct pickle_value *
make_global(struct machine *m, const char *mod, size_t mlen,
	    const char *name, size_t nlen)
{
	const struct pickle_names_global *a =
		pickle_names_global(mod, mlen, name, nlen);
	struct pickle_value *v;
	char text[400];

	if (!a && (!python_name(mod, mlen) || !python_name(name, nlen))) {
		pickle_names_text(text, sizeof(text), mod, mlen, name, nlen);
		fail(m, "%s at byte %zu names global %s, which is no Python "
		     "name", cur_op(m), m->in.at, text);
		return NULL;
	}
	v = new_value(m, PICKLE_GLOBAL);
	if (!v)
		return NULL;
	if (a) {
		v->global.module = a->module;
		v->global.name = a->name;
		v->global.id = a->id;
	} else {
		v->global.id = PICKLE_G_OTHER;
		v->global.module = keep_name(m, mod, mlen);
		v->global.name = v->global.module ? keep_name(m, name, nlen) :
				 NULL;
		if (!v->global.name)
			return NULL;
	}
	return unsafe_use(m, v, NULL, NULL, 0, v) ? NULL : v;
}

/* GLOBAL and INST: "module\nname\n". */
static struct pickle_value *
line_global(struct machine *m)
{
	const char *mod, *name;
	size_t mlen, nlen;

	/* both lines held in the window at once: looked at, then taken */
	if (pickle_input_line(&m->in, 0, &mod, &mlen) < 0 ||
	    pickle_input_line(&m->in, mlen + 1, &name, &nlen) < 0)
		return NULL;
	mod = (const char *)pickle_input_next(&m->in);
	pickle_input_skip(&m->in, mlen + 1 + nlen + 1);
	return make_global(m, mod, mlen, name, nlen);
}

static int
op_stack_global(struct machine *m)
{
	struct pickle_value *name = pop(m), *mod = name ? pop(m) : NULL;

	if (!mod)
		return -1;
	if (mod->kind != PICKLE_STR || name->kind != PICKLE_STR)
		return fail(m, "STACK_GLOBAL at byte %zu wants two strings, "
			    "not a %s and a %s", m->in.at,
			    pickle_kind_name(mod->kind),
			    pickle_kind_name(name->kind));
	return push(m, make_global(m, mod->str.p, mod->str.len, name->str.p,
				   name->str.len));
}

/* The value a pure call makes, or a description of the call
 * (pickle_call.h); never the call. */
static int
push_call(struct machine *m, struct pickle_value *callee,
	  struct pickle_value *args, struct pickle_value *kwargs, int newobj)
{
	struct pickle_value *made;
	char at[64];

	if (callee->kind != PICKLE_GLOBAL && callee->kind != PICKLE_CALL)
		return fail(m, "%s at byte %zu calls a %s", cur_op(m), m->in.at,
			    pickle_kind_name(callee->kind));
	if (args->kind != PICKLE_TUPLE)
		return fail(m, "%s at byte %zu passes a %s as arguments, not a "
			    "tuple", cur_op(m), m->in.at,
			    pickle_kind_name(args->kind));
	if (kwargs && kwargs->kind != PICKLE_DICT)
		return fail(m, "%s at byte %zu passes a %s as keyword "
			    "arguments, not a dict", cur_op(m), m->in.at,
			    pickle_kind_name(kwargs->kind));
	if (kwargs && !kwargs->dict.n)
		kwargs = NULL;		/* cls.__new__(cls, *args, **{}) */
	/* folded by the load's caller: the arguments go */
	if (m->lim.fold && !kwargs && !newobj &&
	    callee->kind == PICKLE_GLOBAL) {
		int rc = m->lim.fold(m->lim.fold_ctx, &m->pk->store, callee,
				     args, &made, m->e);

		if (rc < 0)
			return -1;
		if (rc) {
			pickle_store_drop(&m->pk->store, args);
			pickle_store_drop(&m->pk->store, callee);
			return push(m, made);
		}
	}
	made = pickle_call_make(&m->pk->store, callee, args, kwargs, newobj,
				where(m, at, sizeof(at)), m->e);
	if (!made || unsafe_use(m, callee, args, kwargs, newobj, made))
		return -1;
	return push(m, made);
}

/* REDUCE (callee, args), NEWOBJ (cls, args), NEWOBJ_EX (cls, args,
 * kwargs). */
static int
op_call(struct machine *m, int newobj, int with_kwargs)
{
	struct pickle_value *kwargs = with_kwargs ? pop(m) : NULL, *args,
			    *callee;

	if (with_kwargs && !kwargs)
		return -1;
	args = pop(m);
	callee = args ? pop(m) : NULL;
	if (!callee)
		return -1;
	return push_call(m, callee, args, kwargs, newobj);
}

/* OBJ (MARK cls args...) and INST (MARK args..., the class named by
 * its lines): Python 2's instances, callee(*args). */
static int
op_instance(struct machine *m, int inst)
{
	struct pickle_value *callee = inst ? line_global(m) : NULL, *args;
	size_t mark, from;

	if ((inst && !callee) || pop_mark(m, &mark) < 0)
		return -1;
	from = mark;
	if (!inst) {
		if (from == m->sn)
			return fail(m, "OBJ at byte %zu has no class above its "
				    "MARK", m->in.at);
		callee = m->stack[from++];
	}
	args = new_value(m, PICKLE_TUPLE);
	if (!args || pickle_store_add(&m->pk->store, args, m->stack + from, m->sn - from,
				      m->e) < 0)
		return -1;
	m->sn = mark;
	return push_call(m, callee, args, NULL, 0);
}

static int
op_build(struct machine *m)
{
	struct pickle_value *state = pop(m), *obj = state ? top(m) : NULL;
	struct pickle_value **slot;

	if (!obj)
		return -1;
	if (obj->kind == PICKLE_DICT)
		slot = &obj->dict.attrs;
	else if (obj->kind == PICKLE_CALL)
		slot = &obj->call.state;
	else
		return fail(m, "BUILD at byte %zu sets the state of a %s",
			    m->in.at, pickle_kind_name(obj->kind));
	if (*slot)
		return fail(m, "BUILD at byte %zu sets a state twice",
			    m->in.at);
	*slot = state;
	return 0;
}

/* BINPERSID (the id on the stack) and PERSID (an ASCII line). */
static int
op_persid(struct machine *m, int line)
{
	struct pickle_value *pid, *v;
	const char *p;
	size_t n;

	if (!line) {
		pid = pop(m);
	} else if (arg_line(m, &p, &n) < 0) {
		return -1;
	} else {
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] >= 0x80)
				return fail(m, "PERSID at byte %zu is not "
					    "ASCII", m->in.at);
		pid = pickle_store_str(&m->pk->store, PICKLE_STR, p, n, m->e);
	}

	if (!pid)
		return -1;
	v = new_value(m, PICKLE_PERSID);
	if (!v)
		return -1;
	v->persid.pid = pid;
	return push(m, v);
}

/* ---- the memo ------------------------------------------------------- */

static int
memo_put(struct machine *m, uint64_t idx)
{
	struct pickle_value *v = top(m);

	if (!v)
		return -1;
	if (idx >= m->memo_max)
		return fail(m, "%s at byte %zu: memo index %llu is more than "
			    "this pickle can use (%zu)", cur_op(m), m->in.at,
			    (unsigned long long)idx, m->memo_max);
	return pickle_memo_put(&m->memo, &m->pk->store, idx, v, m->e);
}

static int
memo_get(struct machine *m, uint64_t idx)
{
	struct pickle_value *v = pickle_memo_get(&m->memo, idx);

	if (!v)
		return fail(m, "%s at byte %zu: memo %llu is not set", cur_op(m),
			    m->in.at, (unsigned long long)idx);
	return push(m, v);
}

/* PUT, GET: the index as a line of decimal digits. */
static int
op_memo_text(struct machine *m, int put)
{
	const char *p;
	char at[64];
	uint64_t idx;
	size_t n;

	if (arg_line(m, &p, &n) < 0 ||
	    pickle_text_index(p, n, &idx, where(m, at, sizeof(at)), m->e) < 0)
		return -1;
	return put ? memo_put(m, idx) : memo_get(m, idx);
}

/* ---- the machine ---------------------------------------------------- */

/* POP: the top value, or (as CPython) the MARK right below it. */
static int
op_pop(struct machine *m)
{
	if (m->mn && m->marks[m->mn - 1] == m->sn) {
		m->mn--;
		return 0;
	}
	return pop(m) ? 0 : -1;
}

/* Run one opcode; 1 at STOP. */
static int
step(struct machine *m)
{
	struct pickle_value *v;
	const unsigned char *b;
	unsigned char op;
	uint64_t u;
	size_t from;
	double f;

	if (pickle_input_op(&m->in) < 0)
		return -1;
	op = m->in.op;

	switch (op) {
	case 0x80:	/* PROTO */
		if (arg_uint(m, 1, &u) < 0)
			return -1;
		if (u > 5)
			return fail(m, "PROTO at byte %zu: protocol %llu is newer "
				    "than Python's 5", m->in.at,
				    (unsigned long long)u);
		return 0;
	case 0x95:	/* FRAME: a length that only helps buffering */
		if (arg_uint(m, 8, &u) < 0 ||
		    pickle_input_need(&m->in, u) < 0)
			return -1;
		return 0;
	case '(':	/* MARK */
		if (grow(m, (void **)&m->marks, &m->mcap, m->mn + 1,
			 sizeof(*m->marks)) < 0)
			return -1;
		m->marks[m->mn++] = m->sn;
		return 0;
	case '0':	/* POP */
		return op_pop(m);
	case '1':	/* POP_MARK */
		if (pop_mark(m, &from) < 0)
			return -1;
		m->sn = from;
		return 0;
	case '2':	/* DUP: held twice */
		v = top(m);
		pickle_store_share(v);
		return push(m, v);
	case '.':	/* STOP */
		if (m->mn || m->sn != 1)
			return fail(m, "STOP at byte %zu leaves %zu values and %zu "
				    "MARKs (only the result should be left)",
				    m->in.at, m->sn, m->mn);
		if (m->in.pos != m->in.len && !m->rest_ok)
			return fail(m, "%zu bytes after STOP at byte %zu",
				    m->in.len - m->in.pos, m->in.at);
		return 1;
	case '}':	/* EMPTY_DICT */
		return push(m, new_value(m, PICKLE_DICT));
	case ']':	/* EMPTY_LIST */
		return push(m, new_value(m, PICKLE_LIST));
	case ')':	/* EMPTY_TUPLE: made once, as None */
		return push(m, pickle_store_unit(&m->pk->store, m->e));
	case 't':	/* TUPLE */
		if (pop_mark(m, &from) < 0)
			return -1;
		return collect(m, PICKLE_TUPLE, from);
	case 'l':	/* LIST */
		if (pop_mark(m, &from) < 0)
			return -1;
		return collect(m, PICKLE_LIST, from);
	case 0x85:	/* TUPLE1 */
	case 0x86:	/* TUPLE2 */
	case 0x87:	/* TUPLE3 */
		if (need_values(m, op - 0x84u) < 0)
			return -1;
		return collect(m, PICKLE_TUPLE, m->sn - (op - 0x84u));
	case 'd':	/* DICT */
		if (pop_mark(m, &from) < 0)
			return -1;
		v = new_value(m, PICKLE_DICT);
		if (!v || dict_add(m, v, m->stack + from, m->sn - from) < 0)
			return -1;
		m->sn = from;
		return push(m, v);
	case 's':	/* SETITEM */
		if (need_values(m, 3) < 0)
			return -1;
		m->sn -= 2;
		return dict_add(m, m->stack[m->sn - 1], m->stack + m->sn, 2);
	case 'u':	/* SETITEMS */
		if (pop_mark(m, &from) < 0 || below_mark(m, from) < 0)
			return -1;
		if (dict_add(m, m->stack[from - 1], m->stack + from,
			     m->sn - from) < 0)
			return -1;
		m->sn = from;
		return 0;
	case 'a':	/* APPEND */
		if (need_values(m, 2) < 0)
			return -1;
		m->sn--;
		return seq_add(m, m->stack[m->sn - 1], m->stack + m->sn, 1,
			       PICKLE_LIST);
	case 'e':	/* APPENDS */
	case 0x90:	/* ADDITEMS */
		if (pop_mark(m, &from) < 0 || below_mark(m, from) < 0)
			return -1;
		if (seq_add(m, m->stack[from - 1], m->stack + from,
			    m->sn - from, op == 'e' ? PICKLE_LIST : PICKLE_SET))
			return -1;
		m->sn = from;
		return 0;
	case 0x8f:	/* EMPTY_SET */
		return push(m, new_value(m, PICKLE_SET));
	case 0x91:	/* FROZENSET */
		if (pop_mark(m, &from) < 0)
			return -1;
		return collect(m, PICKLE_SET, from);
	case 'J':	/* BININT */
		if (arg_uint(m, 4, &u) < 0)
			return -1;
		return push(m, new_int(m, (int32_t)(uint32_t)u));
	case 'K':	/* BININT1 */
		if (arg_uint(m, 1, &u) < 0)
			return -1;
		return push(m, new_int(m, (int64_t)u));
	case 'M':	/* BININT2 */
		if (arg_uint(m, 2, &u) < 0)
			return -1;
		return push(m, new_int(m, (int64_t)u));
	case 0x8a:	/* LONG1 */
	case 0x8b:	/* LONG4 */
		return push(m, pickle_counted_value(&m->in, &m->pk->store,
						    &m->lim));
	case 'G':	/* BINFLOAT: big-endian */
		if (pickle_input_bytes(&m->in, 8, &b) < 0)
			return -1;
		u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | b[i];
		memcpy(&f, &u, sizeof(f));
		v = new_value(m, PICKLE_FLOAT);
		if (v)
			v->f = f;
		return push(m, v);
	case 'X':	/* BINUNICODE */
	case 0x8c:	/* SHORT_BINUNICODE */
	case 0x8d:	/* BINUNICODE8 */
	case 'B':	/* BINBYTES */
	case 'C':	/* SHORT_BINBYTES */
	case 0x8e:	/* BINBYTES8 */
	case 'T':	/* BINSTRING */
	case 'U':	/* SHORT_BINSTRING */
	case 0x96:	/* BYTEARRAY8: bytes, to what stfs shows */
		return push(m, pickle_counted_value(&m->in, &m->pk->store,
						    &m->lim));
	case 'I':	/* INT */
	case 'L':	/* LONG */
	case 'F':	/* FLOAT */
	case 'S':	/* STRING */
	case 'V':	/* UNICODE */
		return op_text(m, op);
	case 'N':	/* NONE: made once, as the booleans */
		return push(m, pickle_store_none(&m->pk->store, m->e));
	case 0x88:	/* NEWTRUE */
	case 0x89:	/* NEWFALSE */
		return push(m, pickle_store_bool(&m->pk->store, op == 0x88,
						 m->e));
	case 'q':	/* BINPUT */
		return arg_uint(m, 1, &u) < 0 ? -1 : memo_put(m, u);
	case 'r':	/* LONG_BINPUT */
		return arg_uint(m, 4, &u) < 0 ? -1 : memo_put(m, u);
	case 0x94:	/* MEMOIZE */
		return memo_put(m, m->memo.count);
	case 'p':	/* PUT */
		return op_memo_text(m, 1);
	case 'g':	/* GET */
		return op_memo_text(m, 0);
	case 'h':	/* BINGET */
		return arg_uint(m, 1, &u) < 0 ? -1 : memo_get(m, u);
	case 'j':	/* LONG_BINGET */
		return arg_uint(m, 4, &u) < 0 ? -1 : memo_get(m, u);
	case 'c':	/* GLOBAL */
		return push(m, line_global(m));
	case 0x93:	/* STACK_GLOBAL */
		return op_stack_global(m);
	case 'R':	/* REDUCE */
		return op_call(m, 0, 0);
	case 0x81:	/* NEWOBJ */
		return op_call(m, 1, 0);
	case 0x92:	/* NEWOBJ_EX */
		return op_call(m, 1, 1);
	case 'o':	/* OBJ */
		return op_instance(m, 0);
	case 'i':	/* INST */
		return op_instance(m, 1);
	case 'b':	/* BUILD */
		return op_build(m);
	case 'Q':	/* BINPERSID */
		return op_persid(m, 0);
	case 'P':	/* PERSID */
		return op_persid(m, 1);
	case 0x82:	/* EXT1 */
	case 0x83:	/* EXT2 */
	case 0x84:	/* EXT4 */
		return fail(m, "opcode %s at byte %zu names an object by its "
			    "number in copyreg's extension registry (pickle "
			    "protocol 2), which is not in the file",
			    cur_op(m), m->in.at);
	default:
		if (!pickle_names_op(op))
			return fail(m, "byte 0x%02x at %zu is not a pickle "
				    "opcode", op, m->in.at);
		/* NEXT_BUFFER, READONLY_BUFFER */
		return fail(m, "opcode %s at byte %zu refers to a buffer "
			    "passed beside the pickle (pickle protocol 5's "
			    "out-of-band data), which is not in the file",
			    cur_op(m), m->in.at);
	}
}

/* Run the machine over m->in to STOP. */
static int
load(struct machine *m, const struct pickle_limits *lim, struct pickle **out)
{
	static const struct pickle_limits defaults = PICKLE_LIMITS_DEFAULT;
	int rc = 0;

	*out = NULL;
	m->lim = lim ? *lim : defaults;
	m->memo_max = m->lim.memo < m->in.len ? m->lim.memo : m->in.len;
	m->pk = calloc(1, sizeof(*m->pk));
	if (!m->pk)
		return no_memory(m);
	m->pk->store.max_values = m->lim.values;
	m->pk->store.max_bytes = m->lim.memory;
	if (pickle_memo_init(&m->memo, m->memo_max, &m->pk->store, m->e) < 0 ||
	    pickle_memo_scan(&m->memo, &m->in, &m->pk->store, m->e) < 0)
		rc = -1;
	/* never NULL, so stack + from is defined for an empty TUPLE too */
	if (rc == 0 && grow(m, (void **)&m->stack, &m->scap, 16, sizeof(*m->stack)) < 0)
		rc = -1;
	while (rc == 0) {
		if (m->in.pos == m->in.len) {
			rc = fail(m, "the pickle ends at byte %zu without STOP "
				  "(truncated?)", m->in.len);
			break;
		}
		rc = step(m);
	}
	if (rc == 1) {
		m->pk->root = m->stack[0];
		m->pk->store.seen = pickle_unsafe_reached;
		m->pk->store.seen_ctx = &m->pk->unsafe;
		rc = pickle_store_check(&m->pk->store, m->pk->root, &m->lim,
					m->e);
	}
	free(m->stack);
	free(m->marks);
	pickle_memo_free(&m->memo);
	if (rc < 0 && !m->rest_ok) {
		pickle_free(m->pk);
		return -1;
	}
	*out = m->pk;
	return rc < 0 ? -1 : 0;
}

int
pickle_load(const void *buf, size_t len, const struct pickle_limits *lim,
	    struct pickle **out, struct err *e)
{
	struct machine m = { .e = e };

	pickle_input_memory(&m.in, buf, len, e);
	return load(&m, lim, out);
}

int
pickle_read(const struct pickle_source *src, const struct pickle_limits *lim,
	    struct pickle **out, struct err *e)
{
	struct machine m = { .e = e };
	int rc;

	pickle_input_stream(&m.in, src, e);
	rc = load(&m, lim, out);
	pickle_input_free(&m.in);
	return rc;
}

int
pickle_scan(const struct pickle_source *src, const struct pickle_limits *lim,
	    struct pickle **out, size_t *used, struct err *e)
{
	struct machine m = { .e = e, .rest_ok = 1 };
	int rc;

	pickle_input_stream(&m.in, src, e);
	rc = load(&m, lim, out);
	*used = m.in.pos;
	pickle_input_free(&m.in);
	return rc;
}

const struct pickle_value *
pickle_root(const struct pickle *p)
{
	return p->root;
}

const struct pickle_unsafe *
pickle_unsafe_of(const struct pickle *p)
{
	return &p->unsafe;
}

const struct pickle_value *
pickle_dict_get(const struct pickle_value *d, const char *key)
{
	size_t len = strlen(key);

	if (!d || d->kind != PICKLE_DICT)
		return NULL;
	for (size_t i = d->dict.n; i-- > 0;) {
		const struct pickle_value *k = d->dict.keys[i];

		if (k->kind == PICKLE_STR && k->str.len == len &&
		    memcmp(k->str.p, key, len) == 0)
			return d->dict.values[i];
	}
	return NULL;
}

const char *
pickle_kind_name(enum pickle_kind kind)
{
	static const char *const names[] = {
		[PICKLE_NONE] = "None", [PICKLE_BOOL] = "bool",
		[PICKLE_INT] = "int", [PICKLE_LONG] = "int",
		[PICKLE_FLOAT] = "float", [PICKLE_STR] = "str",
		[PICKLE_BYTES] = "bytes", [PICKLE_TUPLE] = "tuple",
		[PICKLE_LIST] = "list", [PICKLE_SET] = "set",
		[PICKLE_DICT] = "dict", [PICKLE_GLOBAL] = "global",
		[PICKLE_CALL] = "call", [PICKLE_PERSID] = "persistent id",
		[PICKLE_ELIDED] = "value too long to keep",
		[PICKLE_REF] = "reference to a value that contains it",
		[PICKLE_EXTERN] = "tensor",
		[PICKLE_PASSED] = "items of a list passed by",
	};

	if ((unsigned)kind >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[kind];
}

void
pickle_free(struct pickle *p)
{
	if (!p)
		return;
	pickle_store_free(&p->store);
	pickle_unsafe_free(&p->unsafe);
	free(p);
}
