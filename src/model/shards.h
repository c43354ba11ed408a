/* shards.h - sharded sets: model.safetensors.index.json and its shards.
 *
 * The index is read with jansson (it is small next to the shards' headers),
 * every shard is opened once, its header read and validated like a single
 * file, and the weight_map is checked against the shards' contents before
 * anything is returned.
 */
#ifndef STFS_SHARDS_H
#define STFS_SHARDS_H

#include <stddef.h>

struct err;
struct model;
struct source_opener;

/* Open the index at index_path (a file path or a URL) and its shards (the
 * names next to it), both through op: the provider the index came from
 * (model/provider.h).  dir is the directory SOURCE when the user named one
 * (for messages), else NULL.  0 with *out set, or -1 with *e naming the
 * shard/tensor at fault. */
int shards_open_index(const struct source_opener *op, const char *dir,
		      const char *index_path, struct model **out,
		      struct err *e);

#endif
