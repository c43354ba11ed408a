/* torch_fold.h - a tensor's call (torch._utils._rebuild_tensor_v2 or _v3)
 * as what the table needs of it: its storage and its view.
 *
 * torch.save writes a dozen values per tensor (the persistent id and its
 * tuple, the offset, the size and stride tuples and their ints, the hooks,
 * the arguments, the call): a checkpoint of 100,000 tensors held them all
 * until the pickle was read, 1.2 KB a tensor (issue 38).  The pickle
 * reader hands each such call to torch_fold_call as it reads it
 * (pickle_limits' fold); a call whose arguments are what torch.save writes
 * becomes one PICKLE_EXTERN value holding a struct torch_fold_tensor's
 * parts (about 80 bytes for a matrix), and the arguments are freed.  Any
 * other call (a hook, an argument of another kind) is left as it is, and
 * the table reads its arguments the same way (torch_fold_read), so that
 * one reading, one set of messages, serves both.
 */
#ifndef STFS_TORCH_FOLD_H
#define STFS_TORCH_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"
#include "format/torch/pickle_value.h"

#define TORCH_FOLD_RANK_MAX 64	/* torch allows 64 dimensions */

struct err;
struct pickle_store;

struct torch_fold_tensor {
	const char *key;	/* the storage's key (not NUL-terminated) */
	size_t key_len;		/* 1 to 200, no NUL */
	enum dtype storage_dtype;	/* the storage type's */
	enum dtype dtype;	/* the tensor's: _v3's argument, else the
				 * storage's */
	uint64_t numel;		/* the storage's elements, as its id says */
	uint64_t offset;	/* the storage offset, in elements */
	uint32_t rank;
	uint64_t size[TORCH_FOLD_RANK_MAX], stride[TORCH_FOLD_RANK_MAX];
};

/* The arguments a of a _rebuild_tensor_v2 call (v3: _v3's): 0 with *t
 * (pointing into a), or -1 with why[cap] saying what is wrong, to follow
 * the tensor's name ("has sizes that are not a tuple of ...").  The
 * message of a dtype safetensors lacks names it. */
int torch_fold_read(const struct pickle_value *a, int v3,
		    struct torch_fold_tensor *t, char *why, size_t cap);

/* pickle_limits' fold (ctx NULL, or a size_t counting the calls folded):
 * 1 with *made, a PICKLE_EXTERN, for a
 * _rebuild_tensor_v2 or _v3 call whose arguments torch_fold_read reads and
 * whose others are torch.save's (requires_grad a bool, the hooks an empty
 * dict, _v2's metadata None); 0 for any other call; -1 with *e (out of
 * memory, the store's limit). */
int torch_fold_call(void *ctx, struct pickle_store *s,
		    const struct pickle_value *callee,
		    const struct pickle_value *args,
		    struct pickle_value **made, struct err *e);

/* 1 when v is a call torch_fold_call folded, with its tensor in *t (its
 * key in v's bytes), else 0. */
int torch_fold_get(const struct pickle_value *v, struct torch_fold_tensor *t);

#endif
