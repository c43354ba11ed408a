/* pickle_call.h - what a REDUCE or NEWOBJ of the pickle reader stands for
 * (pickle.h), without making the call.
 *
 * A few calls of globals stfs knows are pure and taken as the values they
 * make: OrderedDict() and defaultdict(f) are empty dicts,
 * _codecs.encode(s, 'latin1') (how protocol 2 writes bytes) is bytes and
 * bytes() empty bytes, set(items) and frozenset(items) are sets,
 * torch.Size(t) is the tuple t, torch.device('cuda', 0) is the string
 * "cuda:0", a numpy scalar is its number (pickle_numpy.h).  Every other
 * call (a tensor's _rebuild function, a class of the trainer's,
 * os.system) is a PICKLE_CALL value that describes it: what is called and
 * with what, for the caller to interpret or to show.
 */
#ifndef STFS_PICKLE_CALL_H
#define STFS_PICKLE_CALL_H

#include "format/torch/pickle_store.h"
#include "format/torch/pickle_value.h"

struct err;

/* The value of callee(*args) (newobj 0: REDUCE, OBJ, INST) or of
 * callee.__new__(callee, *args, **kwargs) (newobj 1: NEWOBJ, NEWOBJ_EX);
 * callee is a PICKLE_GLOBAL or a PICKLE_CALL, args a PICKLE_TUPLE, kwargs
 * NULL or a PICKLE_DICT with items (such a call is described).  at names the
 * opcode for messages ("REDUCE at byte 12").  NULL with *e:
 * ERR_INVALID_PICKLE (a call Python would fail too: bytes that are not
 * latin-1, or the store's value limit) or ERR_NO_MEMORY. */
struct pickle_value *pickle_call_make(struct pickle_store *s,
				      struct pickle_value *callee,
				      struct pickle_value *args,
				      struct pickle_value *kwargs, int newobj,
				      const char *at, struct err *e);

#endif
