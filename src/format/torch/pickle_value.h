/* pickle_value.h - the values the pickle reader builds (pickle.h says how
 * to load them): what a value is, the globals stfs knows by kind, the
 * limits of a load.  Types only.
 */
#ifndef STFS_PICKLE_VALUE_H
#define STFS_PICKLE_VALUE_H

#include <stddef.h>
#include <stdint.h>

enum pickle_kind {
	PICKLE_NONE,
	PICKLE_BOOL,	/* b: 0 or 1 */
	PICKLE_INT,	/* i: an int that fits 64 bits */
	PICKLE_LONG,	/* str: a wider int, as LONG1 and LONG4 write it:
			 * little-endian two's complement, 9 bytes or more
			 * (no redundant sign bytes), a NUL after len */
	PICKLE_FLOAT,	/* f; f_bits 0, or 32 or 16 for a numpy float32 or
			 * float16 (f holds its value exactly) */
	PICKLE_STR,	/* str: UTF-8 (checked: no overlongs, no
			 * surrogates), a NUL after len, maybe NULs inside */
	PICKLE_BYTES,	/* str: BINBYTES*, BYTEARRAY8, _codecs.encode(s,
			 * 'latin1'), bytes(); a Python 2 string
			 * (STRING, BINSTRING) that is not UTF-8 */
	PICKLE_TUPLE,	/* seq (torch.Size(t) is t) */
	PICKLE_LIST,	/* seq */
	PICKLE_SET,	/* seq: a set or frozenset, items in the pickle's
			 * order */
	PICKLE_DICT,	/* dict: pairs in insertion order, keys not merged
			 * (also OrderedDict() and defaultdict(f)) */
	PICKLE_GLOBAL,	/* global: a name, never imported */
	PICKLE_CALL,	/* call: a REDUCE, NEWOBJ, NEWOBJ_EX, OBJ or INST
			 * that was not folded into a value: described,
			 * never made */
	PICKLE_PERSID,	/* persid: BINPERSID's or PERSID's persistent id */
	PICKLE_ELIDED,	/* elided: a str, bytes or int longer than the load
			 * keeps (pickle_limits), passed by: what it was and
			 * how long, not its content */
	PICKLE_REF,	/* ref: where a value contains itself (a scheduler
			 * whose bound method refers back to it), the check
			 * after STOP puts this in place of the edge that
			 * closes the cycle: the value it stands for and the
			 * path to it from the root */
	PICKLE_EXTERN,	/* ext: what the load's fold (pickle_limits) made
			 * of a call as it was read: the reader's own bytes,
			 * which nothing here looks into (torch's tensors,
			 * without their arguments' values) */
	PICKLE_PASSED,	/* passed: items of a list past the load's
			 * seq_kept (pickle_limits) that were numbers,
			 * strings, bytes, None or bools, passed by one after
			 * another and counted, not kept; only ever an item
			 * of a list, or of the set builtins.set() makes of
			 * one (pickle_seq_index() gives an item's place in
			 * the list as the pickle made it) */
};

/* The last step of a path from the root (PICKLE_REF): child index of
 * parent, in the order pickle_store_check() walks them (a tuple's, list's
 * or set's item; a dict's key 2i, value 2i + 1, BUILD's state 2n; a
 * call's callee 0, args 1, state 2, items 3, kwargs 4; a persistent id's
 * 0), and the path to parent (NULL: parent is the root).  Paths share
 * their beginnings. */
struct pickle_step {
	const struct pickle_step *prev;
	const struct pickle_value *parent;
	size_t index;
};

/* The globals stfs knows, by what the name is; any other is
 * PICKLE_G_OTHER, kept as a name. */
enum pickle_global {
	PICKLE_G_OTHER,			/* none of these */
	PICKLE_G_REBUILD_TENSOR_V2,	/* torch._utils._rebuild_tensor_v2 */
	PICKLE_G_REBUILD_TENSOR_V3,	/* torch._utils._rebuild_tensor_v3: torch
					 * 2's dtypes without a typed storage
					 * (uint16, float8_*); a 7th argument
					 * is the dtype (a PICKLE_G_DTYPE) */
	PICKLE_G_REBUILD_PARAMETER,	/* torch._utils._rebuild_parameter, and
					 * _rebuild_parameter_with_state */
	PICKLE_G_REBUILD_FROM_TYPE,	/* torch._tensor._rebuild_from_type_v2:
					 * a tensor subclass, (func, type,
					 * args, state) */
	PICKLE_G_STORAGE,	/* torch.FloatStorage, torch.UntypedStorage,
				 * ...: the name says the element type */
	PICKLE_G_DTYPE,		/* torch.float32, torch.bfloat16, ... */
	PICKLE_G_ORDERED_DICT,	/* collections.OrderedDict */
	PICKLE_G_DEFAULTDICT,	/* collections.defaultdict */
	PICKLE_G_CODECS_ENCODE,	/* _codecs.encode */
	PICKLE_G_SET,		/* builtins.set, builtins.frozenset */
	PICKLE_G_SIZE,		/* torch.Size */
	PICKLE_G_DEVICE,	/* torch.device */
	PICKLE_G_BYTES,		/* builtins.bytes: bytes() is b"" */
	PICKLE_G_NUMPY_SCALAR,	/* numpy.core.multiarray.scalar (numpy 2:
				 * numpy._core...): (dtype, its bytes) */
	PICKLE_G_NUMPY_DTYPE,	/* numpy.dtype: ('f8', False, True), then
				 * BUILD's state (3, '<', ...) */
	PICKLE_G_NUMPY_RECONSTRUCT,	/* numpy.core.multiarray._reconstruct:
					 * (ndarray, (0,), b'b'), then BUILD's
					 * state (1, shape, dtype, fortran,
					 * data) */
	PICKLE_G_NUMPY_FROMBUFFER,	/* numpy.core.numeric._frombuffer:
					 * protocol 5's (data, dtype, shape,
					 * order) */
	PICKLE_G_NUMPY_NDARRAY,	/* numpy.ndarray */
};

/* The last of enum pickle_global. */
#define PICKLE_G_LAST PICKLE_G_NUMPY_NDARRAY

struct pickle_value {
	enum pickle_kind kind;
	/* a PICKLE_CALL's: 1: NEWOBJ(_EX), cls.__new__(cls, *args,
	 * **kwargs); 0: REDUCE, OBJ, INST, callee(*args).  (Here, not in
	 * call: a value is then 48 bytes, not 56.) */
	int newobj;
	union {
		int b;
		int64_t i;
		struct {
			double f;
			unsigned f_bits;
		};
		struct {
			const char *p;
			size_t len;
		} str;
		struct {
			struct pickle_value **items;
			size_t n;
		} seq;
		struct {
			struct pickle_value **keys, **values;
			size_t n;
			int ordered;	/* 1: an OrderedDict */
			/* BUILD's state (torch: {'_metadata': ...}) or NULL */
			struct pickle_value *attrs;
		} dict;
		struct {
			/* NUL-terminated UTF-8, no spaces or control
			 * bytes */
			const char *module, *name;
			enum pickle_global id;
		} global;
		struct {
			/* a PICKLE_GLOBAL (for a tensor: REBUILD_TENSOR_V2,
			 * _V3, REBUILD_PARAMETER, REBUILD_FROM_TYPE) or
			 * the PICKLE_CALL whose result is called */
			struct pickle_value *callee;
			struct pickle_value *args;	/* a PICKLE_TUPLE */
			/* NEWOBJ_EX's keyword arguments: a PICKLE_DICT
			 * with items, or NULL */
			struct pickle_value *kwargs;
			struct pickle_value *state;	/* BUILD's, or NULL */
			/* SETITEM(S) on it: a PICKLE_DICT; APPEND(S),
			 * ADDITEMS: a PICKLE_LIST; or NULL */
			struct pickle_value *items;
		} call;
		struct {
			/* as written; torch: ('storage', GLOBAL storage type,
			 * key, location, numel) */
			struct pickle_value *pid;
		} persid;
		struct {
			/* PICKLE_STR, PICKLE_BYTES or PICKLE_LONG */
			enum pickle_kind kind;
			/* what Python's len() says (a str's code points, the
			 * bytes of bytes), or an int's bit_length() */
			uint64_t n;
			int latin1;	/* a str: every code point below
					 * 256 (_codecs.encode can make it
					 * bytes) */
		} elided;
		struct {
			const void *p;	/* the fold's bytes, in the store */
			unsigned tag;	/* the fold's own */
		} ext;
		struct {
			uint64_t n;	/* items passed by, >= 1 */
		} passed;
		struct {
			/* the value, an ancestor of the ref on the path
			 * the check took */
			const struct pickle_value *to;
			/* the path from the root to it; NULL: the root */
			const struct pickle_step *path;
		} ref;
	};
};

struct err;
struct pickle_store;

struct pickle_limits {
	unsigned depth;		/* longest path from the root */
	size_t values;		/* values created (each about 100 bytes,
				 * strings aside; at most one per opcode) */
	size_t memo;		/* highest memo index + 1 */
	uint64_t walk;		/* values visited walking the graph as a tree
				 * (a shared value counted each time) */
	size_t str_kept;	/* bytes of UTF-8 of a str (BINUNICODE*,
				 * SHORT_BINUNICODE, BINSTRING) kept; a longer
				 * one is PICKLE_ELIDED */
	size_t bytes_kept;	/* bytes of a bytes value (BINBYTES*,
				 * SHORT_BINBYTES, BYTEARRAY8) or of an int
				 * (LONG1, LONG4: without the bytes that only
				 * repeat its sign) kept; a longer one is
				 * PICKLE_ELIDED */
	size_t memory;		/* bytes the load may hold at once: its values,
				 * their strings and arrays, the stack, the
				 * memo; refused past it, before it is spent */
	/* Calls to fold as they are read (NULL: none): fn(ctx, store,
	 * callee, args, &made, e) sees every REDUCE of a global, and may
	 * answer 1 with a value of its own in *made (PICKLE_EXTERN:
	 * pickle_store_extern()) that stands for the call, which holds
	 * nothing of the arguments; the load then frees the arguments (and
	 * whatever only they held), so a call folded costs what its value
	 * keeps.  0: not folded; -1 with *e: the load fails. */
	int (*fold)(void *ctx, struct pickle_store *s,
		    const struct pickle_value *callee,
		    const struct pickle_value *args,
		    struct pickle_value **made, struct err *e);
	void *fold_ctx;
	/* items a list (APPEND, APPENDS: a list, or an object's items)
	 * keeps whatever they are; past them, a number, str, bytes, None
	 * or bool appended is passed by, counted in a PICKLE_PASSED, so a
	 * list of millions of numbers (a loss history) costs what its
	 * first seq_kept do.  0: every item kept. */
	size_t seq_kept;
};

/* (All kept: the torch container asks for less, torch.c.) */
#define PICKLE_LIMITS_DEFAULT \
	{ 200, (size_t)1 << 22, (size_t)1 << 20, (uint64_t)1 << 24, \
	  SIZE_MAX, SIZE_MAX, (size_t)1 << 30, NULL, NULL, 0 }

#endif
