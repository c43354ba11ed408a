/* model_order.h - what a loader reads next.
 *
 * Loaders read a sharded model shard after shard, and each shard tensor
 * after tensor in name order: transformers and vLLM open the shard files
 * in turn and read safe_open's keys(), which are sorted.  Name order
 * jumps within a file sorted by dtype first; and since names sort as
 * strings ("h.10." before "h.2."), the model's global name order (the
 * index's weight_map) jumps between shards, which such a loader does
 * not: hints in that order fetched the next shard's layers while the
 * loader still read its own shard's (under a cap on the whole link it
 * fell 170 MiB behind what had arrived).  The merged
 * .safetensors/model.safetensors lists the tensors shard after shard
 * too.  A source's own read-ahead only follows a stream of one file;
 * this module says which bytes of which sources follow the end of a read
 * in load order (shard, then name), so that the view can hint them to
 * the sources (source_hint()) before the reader gets there.
 */
#ifndef STFS_MODEL_ORDER_H
#define STFS_MODEL_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct model;
struct source;
struct model_order;

#define MODEL_ORDER_MAX_RANGES	16	/* ranges one call returns */

struct model_order_range {
	struct source *src;
	uint64_t off, len;		/* absolute, in src */
};

/* The order of m (borrowed; must outlive it), or NULL when out of
 * memory. */
struct model_order *model_order_new(const struct model *m);
void model_order_free(struct model_order *o);

/* A read of shard's source ended at byte end (absolute): the ranges read
 * next, up to want bytes counted from end (the rest of the tensor being
 * read counts too), in load order, then the start of the next shard when
 * the read is in the last tensor of its shard.  Adjacent ranges of one
 * source are merged; at most max (<= MODEL_ORDER_MAX_RANGES) are
 * written; returns how many.  0 when the read is not in a tensor or the
 * tensor's own rest is at least want. */
size_t model_order_next(const struct model_order *o, uint32_t shard,
			uint64_t end, uint64_t want,
			struct model_order_range *out, size_t max);

/* A read of shard's source covered [begin, end).  When begin is the first
 * byte of a tensor (a reader that starts a tensor reads it on), the bytes
 * of that tensor after end, up to want, in *out: returns 1; else 0. */
int model_order_rest(const struct model_order *o, uint32_t shard,
		     uint64_t begin, uint64_t end, uint64_t want,
		     struct model_order_range *out);

#endif
