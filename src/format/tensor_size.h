/* tensor_size.h - the byte sizes the tensors of a table (table.h) give,
 * checked once where every format's table comes in (container_open), so
 * that no layer above computes a size that wraps.
 *
 * Each format checks its own file; a table it yields then holds numbers
 * a hostile file chose: a PyTorch view (an expand: stride 0) of one
 * stored element with 2^62 elements was served as a file of 0 or 4
 * bytes, its .npy header as a few bytes, a virtual safetensors file with
 * offsets that wrapped.  The rules, for every format alike:
 *
 *   - numel is the product of the shape and at most TENSOR_SIZE_NUMEL_MAX
 *     (2^56).  Every size derived from one tensor (its file: at most 8
 *     bytes an element; its .npy view: a header of at most a few KiB, then
 *     at most 8 bytes an element; its .txt view: at most 32; its float32
 *     rendering: 4) is then below 2^62 bytes, and fits a file size (an
 *     off_t) with room for what is put in front of it.  Only sums over
 *     many tensors (a virtual safetensors file) still need checking.
 *   - a tensor stored as its bytes lies in the file and holds exactly
 *     numel * bits / 8 bytes (whole bytes: F4, F6), or for a quantized
 *     dtype numel / block * block_bytes with numel a multiple of block.
 *   - a strided view (table.h: strides set; PyTorch) has a dtype of whole
 *     bytes and reads a run of the file.  The bytes it is served as,
 *     numel elements, may exceed that run: an expand repeats stored
 *     elements.  What all of a table's views add that way is at most
 *     TENSOR_SIZE_REPEAT_MIN (1 GiB) or the file's size when larger: a
 *     600-byte checkpoint no longer shows files of 4 TiB, whose .stats/
 *     would take hours.
 *
 * A table that breaks one is refused with ERR_VALIDATION_OVERFLOW (a
 * size too large), ERR_TENSOR_INVALID_INFO or ERR_INVALID_OFFSET (sizes
 * or a range that do not agree: a format's bug), in one line naming the
 * tensor.
 */
#ifndef STFS_TENSOR_SIZE_H
#define STFS_TENSOR_SIZE_H

#include <stdint.h>

#include "format/table.h"

struct err;

#define TENSOR_SIZE_NUMEL_MAX ((uint64_t)1 << 56)
#define TENSOR_SIZE_REPEAT_MIN ((uint64_t)1 << 30)

/* Bytes of tensor t's file: its stored range, or for a strided view its
 * numel elements gathered (table.h).  Exact for a table that passed
 * tensor_size_check(). */
static inline uint64_t
tensor_size_bytes(const struct tensor *t)
{
	if (t->strides)
		return t->numel * (dtype_info(t->dtype)->bits / 8);
	return t->end - t->begin;
}

/* Check every tensor of h by the rules above: 0, or -1 with *e (the
 * file is left for the caller to name). */
int tensor_size_check(const struct header *h, struct err *e);

#endif
