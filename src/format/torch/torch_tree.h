/* torch_tree.h - what a checkpoint's pickle means: its value tree
 * (pickle.h) interpreted as the table of table.h.
 *
 * The root is a dict (a state dict, an optimizer state, a Trainer's
 * dict of both) or a whole nn.Module (torch.save(model)).  Dicts are
 * flattened with dots ("state.0.exp_avg"; an integer key is written in
 * decimal); a call of
 * torch._utils._rebuild_tensor_v2 (or _rebuild_parameter around one) is a
 * tensor: its storage (a persistent id naming FOLDER/data/KEY and the
 * storage type, which says the dtype), its storage offset, sizes and
 * strides; torch 2's _rebuild_tensor_v3 (its own dtypes: uint16 to
 * uint64, the float8s) names the dtype last, over an UntypedStorage of
 * bytes.  A whole module, wherever it is, is named as its state_dict()
 * names its tensors (parameters, persistent buffers, submodules; its
 * other attributes are not kept), with the outermost one's class as
 * __class__.  A list or tuple holding tensors is flattened by index; any
 * other value (epoch, step, lr, betas, param_groups) is a metadata pair,
 * its value as text: a string as itself, anything else as JSON.
 *
 * A tensor's byte range is in the checkpoint file (data_start 0): its
 * storage's zip entry from the view's first element on.  A tensor that is
 * contiguous in its storage is exactly that range; one that is not (a
 * transpose, a slice with a step, an expand) has its strides set and the
 * range its elements lie in: it is served gathered (table.h).
 */
#ifndef STFS_TORCH_TREE_H
#define STFS_TORCH_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "format/table.h"
#include "format/torch/pickle.h"
#include "format/torch/torch_zip.h"

struct err;

/* What the table may make of a pickle beyond its values: bounds that
 * follow the pickle's size, so that values the memo shares (a string
 * referenced a million times, a dict under a million names) cannot make
 * much more than the input. */
struct torch_tree_budget {
	uint64_t names;		/* bytes of all names; refused beyond */
	uint64_t meta;		/* bytes of metadata text: a value beyond is
				 * {"__elided__": "..."} */
	uint64_t entries;	/* tensors and metadata pairs; refused beyond */
	uint64_t visits;	/* values looked at, all passes; refused
				 * beyond */
	uint64_t tensors;	/* not a bound: the tensors the pickle's
				 * reading folded (torch_fold.h), room made
				 * for that many at first */
};

/* The budget of a pickle of pickle_len bytes: names 8 times its size,
 * metadata twice, each and 1 MiB more; an entry per 2 bytes and 65,536
 * more (a state dict has one per 40 bytes or so); 16 visits a byte and
 * 1 Mi more, at most 2^25. */
struct torch_tree_budget torch_tree_budget_for(size_t pickle_len);

/* Build the table of the checkpoint whose pickle is *pk (its root) and
 * whose storages are entries of z; file_size is the checkpoint's.  0 with
 * *out (freed with container_free) and *pk freed (NULL: once walked, the
 * pickle's memory is the table's to use), or -1 with *e (not named) and
 * *pk the caller's. */
int torch_tree_table(struct pickle **pk, struct torch_zip *z,
		     uint64_t file_size, const struct torch_tree_budget *budget,
		     struct header **out, struct err *e);

#endif
