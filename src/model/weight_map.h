/* weight_map.h - a sharded model's index (model.safetensors.index.json):
 * the file each tensor is in, the files, the metadata.
 *
 * Read with the JSON scanner of the safetensors parser
 * (format/safetensors/jscan.h), not into a tree of values: DeepSeek-V3's
 * index maps 91,991 tensors onto 163 files in 8.9 MB, and a tree of it
 * cost more time and memory than the rest of the mount.  What is checked
 * here is the index's own form: valid JSON (valid UTF-8, serde_json's
 * dialect), an object with a "weight_map" object whose values are file
 * names (strings without NUL) and whose keys are each listed once; an
 * optional "metadata" object (or null), kept as JSON.  Other members are
 * skipped.  Whether the names are safe paths and whether the shards hold
 * what it says is the caller's (shards.c).
 */
#ifndef STFS_WEIGHT_MAP_H
#define STFS_WEIGHT_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/nametab.h"

struct err;

struct weight_map_entry {
	const char *name;	/* the tensor's name (may hold NUL) */
	size_t len;
	uint32_t file;		/* index into files */
};

struct weight_map {
	struct weight_map_entry *entries;	/* in the index's order */
	size_t n;
	const char **files;	/* the distinct file names, sorted (strcmp) */
	size_t nfiles;
	char *metadata_json;	/* "metadata" with 2-space indent and a
				   newline; "{}\n" when absent or null */
	char *arena;		/* the decoded strings (NUL-terminated) */
	struct nametab byname;	/* name -> index into entries */
};

/* Read the index text[0..len) into *w (zeroed first).  0, or -1 with *e
 * (ERR_INVALID_INDEX, about the index; the caller names the file, or
 * ERR_NO_MEMORY); *w is empty after a failure. */
int weight_map_read(const char *text, size_t len, struct weight_map *w,
		    struct err *e);

/* The entry listing name[0..len), or NULL. */
const struct weight_map_entry *weight_map_find(const struct weight_map *w,
					       const char *name, size_t len);

void weight_map_free(struct weight_map *w);

#endif
