/* pickle_unsafe.h - what loading a pickle in Python would import and
 * call beyond what torch.load(weights_only=True) allows.
 *
 * The pickle reader (pickle.h) imports and calls nothing; Python's
 * unpickler imports every global a pickle names and makes every call it
 * holds (REDUCE, NEWOBJ, NEWOBJ_EX, OBJ, INST), also those whose result
 * is dropped at once.  torch.load(weights_only=True) allows a short list
 * of globals (torch's tensor rebuilders, storage and tensor classes,
 * dtypes, torch.Size, torch.device, OrderedDict, ...): the allow-lists of
 * torch 1.13's and of newer torch's _weights_only_unpickler, together.
 * Every other global is an unsafe import, and every call of one (or of
 * what a call returned: getattr(obj, name)(...)) an unsafe call.  The
 * reader records each as it meets it, with its opcode and byte; the
 * graph check after STOP (pickle_store_check) says where in the tree the
 * root reaches what each made, if it does.
 */
#ifndef STFS_PICKLE_UNSAFE_H
#define STFS_PICKLE_UNSAFE_H

#include <stddef.h>
#include <stdint.h>

#include "format/torch/pickle_value.h"

struct err;

/* Uses kept with their details; the rest are counted. */
#define PICKLE_UNSAFE_KEPT 256

struct pickle_unsafe_use {
	/* the global imported or called (a PICKLE_GLOBAL), or the
	 * PICKLE_CALL whose result is called */
	const struct pickle_value *callable;
	/* the call's arguments (a PICKLE_TUPLE) and keyword arguments (a
	 * PICKLE_DICT or NULL); args NULL: an import */
	const struct pickle_value *args, *kwargs;
	/* what it made: the call's value (a PICKLE_CALL, or the value a
	 * pure call folded to), the global of an import */
	const struct pickle_value *made;
	int newobj;		/* cls.__new__(cls, ...): NEWOBJ(_EX) */
	const char *op;		/* its opcode: "REDUCE", "GLOBAL", ... */
	size_t at;		/* the opcode's byte in the pickle */
	/* where the root reaches made (reached 1): path NULL, the root
	 * itself; reached 0: nowhere (dropped, or the load stopped) */
	int reached;
	const struct pickle_step *path;
};

struct pickle_unsafe {
	struct pickle_unsafe_use *use;
	size_t n, cap;		/* kept: at most PICKLE_UNSAFE_KEPT */
	uint64_t total;		/* met, kept or not */
};

/* 1 when torch.load(weights_only=True) refuses the global module.name
 * (protocol 2's __builtin__ read as builtins, as Python 3 reads it);
 * lengths given, the bytes are the pickle's. */
int pickle_unsafe_global(const char *module, size_t mlen, const char *name,
			 size_t nlen);

/* Record a use (copied); 0, or -1 with ERR_NO_MEMORY. */
int pickle_unsafe_add(struct pickle_unsafe *u,
		      const struct pickle_unsafe_use *use, struct err *e);

/* The root reaches made by path (pickle_store_check's callback, for a
 * value flagged with pickle_store_flag): every use that made it, where
 * none was seen yet. */
void pickle_unsafe_reached(void *u, const struct pickle_value *made,
			   const struct pickle_step *path);

void pickle_unsafe_free(struct pickle_unsafe *u);

#endif
