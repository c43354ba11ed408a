/* torch_value.h - what a value of a checkpoint's pickle is to the table
 * (torch_tree.h): a tensor, or data shown as text in __metadata__.json.
 *
 * Data is JSON: None, bools, ints (any width: an int past 64 bits in
 * decimal, and past 4,299 digits in hex as a string, pickle_long.h; one
 * the pickle reader did not keep as {"__int__": {"bit_length": N}}),
 * floats as Python's repr writes them (numpy's float32 and float16 with
 * the digits numpy writes for them), strings (one over
 * TORCH_VALUE_STR_SHOWN bytes as {"__str__": N}, N its code points),
 * bytes as "0x" and their hex (over TORCH_VALUE_BYTES_SHOWN bytes as
 * {"__bytes__": N}), tuples, lists and sets as arrays (in a list past
 * TORCH_VALUE_ITEMS_KEPT items, each run of numbers, strings, bytes,
 * None and bools the reader passed by as {"__not_kept__": N}, N the
 * items of the run), dicts as objects
 * (a key that is not a string as its text: 1, true, null, 1.5), a global
 * as "module.name" (torch.float16), a numpy array as the nested lists of
 * its tolist() (one over TORCH_VALUE_BYTES_SHOWN bytes or as many lists,
 * or whose bytes the reader did not keep, as
 * {"__ndarray__": {"dtype": "<f8", "shape": [300, 300]}}; numpy's scalars
 * are numbers already, pickle_numpy.h).  What the pickle would make by
 * calling something else is named, with what it would be made of, never
 * made:
 *
 *     {"__class__": "argparse.Namespace", "state": {"lr": 0.1}}   NEWOBJ
 *     {"__call__": "posix.system", "args": ["touch x"]}           REDUCE
 *
 * with "args" when there are any, "kwargs" when NEWOBJ_EX passed some,
 * "state" when BUILD gave one, "items" when items were set or appended
 * on the object; a storage outside a tensor is
 * {"__persistent_id__": [...]}; where a value contains itself (a
 * scheduler's bound method refers back to the scheduler), the edge that
 * closes the cycle is {"__ref__": "PATH"}, the dotted path from the root
 * to the value it is (pickle_store.h; its parts named as the flattened
 * names and the descriptions here name them, "" for the root).
 *
 * Rendering is bounded: by a count of values looked at that the caller
 * shares across its walk, and by the bytes of text the caller still
 * allows (a value whose text would pass them is not rendered: 2, and the
 * walk goes on only to find whether a tensor is inside).
 */
#ifndef STFS_TORCH_VALUE_H
#define STFS_TORCH_VALUE_H

#include <stdint.h>

#include "base/buf.h"
#include "format/torch/pickle_value.h"

struct err;

/* Bytes values longer than this are named by their length, not shown.
 * (torch.c has the pickle reader keep no more of a bytes value or an int
 * than this, nor of a str than the next.) */
#define TORCH_VALUE_BYTES_SHOWN (64u << 10)

/* Strings of more bytes of UTF-8 than this are named by their length
 * (their code points), not shown.  At least twice the above: a str kept
 * makes every bytes value _codecs.encode makes of it that is shown. */
#define TORCH_VALUE_STR_SHOWN (1u << 20)

/* Items of a list the pickle reader keeps whatever they are; past them
 * it passes numbers, strings, bytes, None and bools by, counted
 * (pickle_limits' seq_kept): a checkpoint's list of a million losses
 * costs what 4,096 do, and the tensors and objects after them are kept
 * under their places in the list. */
#define TORCH_VALUE_ITEMS_KEPT 4096u

struct torch_value {
	struct err *e;
	uint64_t *visits;	/* values looked at, shared with the walk */
	uint64_t visits_max;	/* refused beyond */
	uint64_t left;		/* bytes of text a rendering may make */
};

/* 1 when v is a tensor: a call of torch's _rebuild functions (a
 * quantized one's too). */
int torch_value_is_tensor(const struct pickle_value *v);

/* 1 when v is a quantized tensor: a call of _rebuild_qtensor(storage,
 * offset, size, stride, quantizer_params, requires_grad, hooks). */
int torch_value_is_qtensor(const struct pickle_value *v);

/* v as JSON appended to b.  0; 1 when v holds a tensor (b is then to be
 * dropped); 2 when v holds none but its text would pass j->left (b to be
 * dropped too); -1 with *j->e (too many values looked at, out of
 * memory). */
int torch_value_json(struct torch_value *j, const struct pickle_value *v,
		     struct buf *b);

/* v as a metadata value's text appended to b: a string as itself, a
 * global as module.name, bytes as 0x and hex, an int as its digits,
 * anything else as JSON.  Returns as torch_value_json. */
int torch_value_text(struct torch_value *j, const struct pickle_value *v,
		     struct buf *b);

/* The text of a dict key k: a string as itself, an int in decimal, any
 * other value as its JSON.  Returns as torch_value_json (1: the key is
 * a tensor). */
int torch_value_key(struct torch_value *j, const struct pickle_value *k,
		    struct buf *b);

/* The dotted text of a path from the root (pickle_value.h; NULL: the
 * root, ""), as {"__ref__": ...} shows it.  Returns as
 * torch_value_json. */
int torch_value_path(struct torch_value *j, const struct pickle_step *path,
		     struct buf *b);

#endif
