/* repack_json.h - the JSON header of a virtual safetensors file
 * (repack.h): the "__metadata__" member the files of a model share, and
 * the tensors' entries with their data offsets, written as repack.h
 * says.
 *
 * One writer counts and renders: with no buffer only the length
 * advances, so the size repack_size() gives stat is the size the bytes
 * repack_file_get() renders have.
 */
#ifndef STFS_REPACK_JSON_H
#define STFS_REPACK_JSON_H

#include <stddef.h>
#include <stdint.h>

struct model;

/* The most tensor bytes a file holds: with its header (at most 100 MB)
 * its size fits an off_t.  A file whose tensors take more is refused. */
#define REPACK_DATA_MAX ((uint64_t)1 << 62)

/* Where the JSON goes: p NULL counts only.  n bytes written or counted;
 * big set when the tensors' data would pass REPACK_DATA_MAX (their
 * offsets then stop growing: the file is refused, never served). */
struct repack_json {
	char *p;
	uint64_t n;
	int big;
};

/* The "\"__metadata__\":{...}" member of m's files, malloc'd in *meta
 * (*len bytes), or *meta NULL when they have none.  0, or -1 when out of
 * memory. */
int repack_json_meta(const struct model *m, char **meta, size_t *len);

/* The JSON header (without length and padding) of m's tensors tix[0..n)
 * in that order, names cut by cut bytes, meta (meta_len bytes; NULL:
 * none) first; returns the data section's length. */
uint64_t repack_json_header(const struct model *m, const char *meta,
			    size_t meta_len, const uint32_t *tix, size_t n,
			    size_t cut, struct repack_json *o);

#endif
