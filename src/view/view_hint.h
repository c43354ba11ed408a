/* view_hint.h - telling the sources what a loader reads next.
 *
 * After every read of a model's file (a tensor, the merged
 * .safetensors/model.safetensors, a mirror view of raw bytes), the bytes
 * that follow its last source range in the model's order
 * (model/model_order.h) are hinted to their sources (source_hint()): the
 * next tensors by name across shards, the next shard when a shard ends.
 * Only when what is left of the tensor being read is less than
 * VIEW_HINT_BYTES, so a random reader in the middle of a large tensor
 * costs nothing; local sources ignore hints.
 */
#ifndef STFS_VIEW_HINT_H
#define STFS_VIEW_HINT_H

#define VIEW_HINT_BYTES	(64ull << 20)

struct view;
struct view_segs;

/* After a read of v answered with segs. */
void view_hint_after(const struct view *v, const struct view_segs *segs);

/* Free what view_hint_after() built for v. */
void view_hint_free(struct view *v);

#endif
