/* view_hint.h - telling the sources what a loader reads next.
 *
 * After every read of a model's file (a tensor, the merged
 * .safetensors/model.safetensors, a mirror view of raw bytes), the bytes
 * that follow its last source range in the model's order
 * (model/model_order.h) are hinted to their sources (source_hint()): the
 * next tensors by name across shards, the next shard when a shard ends.
 * Only when what is left of the tensor being read is less than
 * VIEW_HINT_BYTES, so a random reader in the middle of a large tensor
 * costs nothing; local sources ignore hints.  A read that starts a
 * tensor also hints the next VIEW_HINT_FIRST_BYTES of it: a source's own
 * read-ahead waits for a second read to see a stream, and loaders read a
 * tensor they start to its end.
 */
#ifndef STFS_VIEW_HINT_H
#define STFS_VIEW_HINT_H

#define VIEW_HINT_BYTES		(128ull << 20)
#define VIEW_HINT_FIRST_BYTES	(16ull << 20)

struct view;
struct view_segs;

/* After a read of v answered with segs. */
void view_hint_after(const struct view *v, const struct view_segs *segs);

/* Free what view_hint_after() built for v. */
void view_hint_free(struct view *v);

#endif
