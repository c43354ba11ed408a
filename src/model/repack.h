/* repack.h - virtual safetensors files: new safetensors files made of a
 * header that stfs writes and byte ranges of the model's sources.
 *
 * For a model (one file or a sharded set) the files are
 *   id 0 (REPACK_WHOLE)  every tensor of every shard: the merged model;
 *   id 1..nprefixes      one per dotted-name prefix P that names a module
 *                        (some tensor name starts with "P."): the tensors
 *                        whose names start with "P.", names kept whole
 *                        or, with strip, with "P." removed.
 * A prefix is a tensor name cut before one of its '.' bytes, so a prefix
 * always holds at least one tensor.  Prefix ids follow the bytewise order
 * of the prefixes.
 *
 * Each file is a valid safetensors file: 8-byte little-endian length N,
 * N bytes of compact JSON padded with spaces to a multiple of 8, then the
 * tensors' bytes back to back with no gaps.  A tensor of a dtype
 * safetensors lacks is written as its rendering (tensor_render.h: a GGUF
 * quantized tensor as F32, its dequantized values) or, when it has none
 * (a quantization stfs does not decode), left out.  The header lists
 * "__metadata__" first (when there is one, see below), then the tensors
 * in model order (shard order, then file order), which is also the order
 * of their data: a sequential read of a virtual file reads each source
 * forward.  The bytes depend only on the model, never on the mount.
 *
 * __metadata__: a single file's own (as it has it: absent, or its pairs
 * in header order).  A sharded set: the shards' __metadata__ when every
 * shard has the same pairs (in the first shard's order; also when none
 * has one: then there is none), else the index's "metadata" object, its
 * string values kept and other values written as their compact JSON text
 * (safetensors metadata values are strings); an index without "metadata"
 * or with an empty one gives no __metadata__.
 *
 * Cost: repack_open() sorts the tensor names (O(n log n), 4 bytes per tensor
 * and 16 per prefix); no header is rendered up front.  repack_size() walks
 * the tensors of one file once and caches the result (8 bytes per file).
 * repack_file_get() renders a header and its read map on demand into a cache
 * bounded in bytes (REPACK_CACHE_BYTES; files in use are never evicted).
 * Thread-safe after repack_open(): the cache takes a mutex, sizes are atomic.
 * No FUSE and no file names here: the view layer names the files.
 */
#ifndef STFS_REPACK_H
#define STFS_REPACK_H

#include <stddef.h>
#include <stdint.h>

#include "model/repack_json.h"	/* REPACK_DATA_MAX */

struct err;
struct model;
struct model_tensor;
struct repack;
struct repack_file;

#define REPACK_WHOLE 0
#define REPACK_CACHE_BYTES (64u << 20)

/* Where a piece of a virtual file's bytes comes from. */
struct repack_seg {
	const char *mem;	/* non-NULL: these len bytes (the header) */
	const struct model_tensor *render;	/* non-NULL: bytes [off, off
				   + len) of this tensor's rendering
				   (tensor_render_read(), tensor_render.h) */
	uint32_t shard;		/* else bytes [off, off + len) of the source
				   of model->shards[shard] */
	uint64_t off;
	uint64_t len;
};

/* Index the prefixes of m (m must outlive the repack).  0, or -1 with *e
 * (ERR_NO_MEMORY). */
int repack_open(const struct model *m, struct repack **out, struct err *e);

void repack_free(struct repack *v);

const struct model *repack_model(const struct repack *v);

/* Number of prefixes (ids 1..repack_nprefixes()). */
size_t repack_nprefixes(const struct repack *v);

/* The prefix of id (1..nprefixes), not NUL-terminated, in *len bytes.
 * NULL (and *len 0) for REPACK_WHOLE. */
const char *repack_prefix(const struct repack *v, size_t id, size_t *len);

/* The id of prefix p[0..len), or 0 when no tensor name starts with it
 * followed by '.'.  O(log nprefixes). */
size_t repack_find(const struct repack *v, const char *p, size_t len);

/* Number of tensors in file id. */
size_t repack_ntensors(const struct repack *v, size_t id);

/* 1 when the file (id, strip) exists.  The stripped form of a prefix
 * does not when a tensor "P.__metadata__" would become "__metadata__";
 * nor does REPACK_WHOLE when a tensor is named "__metadata__" (a GGUF
 * file may have one); strip is ignored for REPACK_WHOLE. */
int repack_offered(const struct repack *v, size_t id, int strip);

/* Exact size of file (id, strip) in *size, without rendering it.  0, or
 * -1 with *e when the file is not offered, its header would exceed the
 * reference reader's 100 MB limit (ERR_HEADER_TOO_LARGE) or its tensors
 * REPACK_DATA_MAX bytes (ERR_VALIDATION_OVERFLOW). */
int repack_size(struct repack *v, size_t id, int strip, uint64_t *size,
		struct err *e);

/* A rendered file from the cache (rendered now on a miss), held until
 * repack_file_put().  0 or -1 with *e. */
int repack_file_get(struct repack *v, size_t id, int strip,
		    struct repack_file **out, struct err *e);
void repack_file_put(struct repack *v, struct repack_file *f);

uint64_t repack_file_size(const struct repack_file *f);

/* The header: 8-byte length, JSON and padding (*len bytes). */
const char *repack_file_header(const struct repack_file *f, size_t *len);

/* Map bytes [off, off + len) of f (clipped at its end) to at most nseg
 * segments in file order; adjacent tensors stored back to back in the
 * same source become one segment.  Returns the number of segments and
 * the bytes they cover in *covered (less than asked when nseg ran out or
 * at the end of the file: call again from off + *covered). */
size_t repack_file_map(const struct repack_file *f, uint64_t off,
		       uint64_t len, struct repack_seg *segs, size_t nseg,
		       uint64_t *covered);

#endif
