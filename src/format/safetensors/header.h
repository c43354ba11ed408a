/* header.h - parse and validate one safetensors header into an immutable
 * index.  No FUSE, no I/O beyond header_read()'s two preads.
 *
 * Accepts exactly what the reference Rust reader (safetensors 0.8,
 * serde_json 1.0.150) accepts, except that duplicate keys (tensor names,
 * keys inside __metadata__) are refused: the format forbids them.
 */
#ifndef STFS_HEADER_H
#define STFS_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct err;
struct source;

#define HEADER_MAX_LEN 100000000ULL	/* reference MAX_HEADER_SIZE */
#define HEADER_MAX_DEPTH 127		/* nested containers incl. the root */

struct tensor {
	const char *name;	/* unescaped UTF-8; may contain NUL; also
				   NUL-terminated for convenience */
	uint32_t name_len;
	enum dtype dtype;
	uint32_t rank;
	const uint64_t *shape;	/* rank entries */
	uint64_t begin, end;	/* data_offsets, relative to the data section */
	uint64_t numel;		/* product of shape (1 for rank 0) */
};

struct meta_pair {
	const char *key;	/* NUL-terminated, may contain NUL */
	uint32_t key_len;
	const char *val;
	uint32_t val_len;
};

struct header {
	uint64_t header_len;	/* n, the 8-byte little-endian prefix */
	uint64_t data_start;	/* 8 + n: absolute offset of data_offsets 0 */
	uint64_t file_size;
	uint64_t data_len;	/* end of the last tensor */

	size_t ntensors;
	struct tensor *tensors;	/* sorted by data_offsets: file order */

	int has_metadata;	/* "__metadata__" present and not null */
	size_t nmeta;
	struct meta_pair *meta;	/* in header order */

	void *priv;		/* arena and shape pool */
};

/* Parse and validate header bytes buf[0..n) of a file of file_size bytes
 * (file_size counts the 8-byte prefix).  0 with *out set, or -1 with *e. */
int header_parse(const char *buf, size_t n, uint64_t file_size,
		 struct header **out, struct err *e);

/* Read the prefix and header of a source with two preads (never the data
 * section) and parse them.  0 or -1 with *e (ERR_IO for read failures). */
int header_read(struct source *src, struct header **out, struct err *e);

void header_free(struct header *h);

#endif
