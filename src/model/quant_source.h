/* quant_source.h - the bytes of a model's dequantized weights as a
 * source (source/source.h): the logical tensors of quant.h, float32 (or
 * BF16, the float32 values rounded to nearest even as torch's
 * .to(torch.bfloat16) does) little-endian in C order, back to back in
 * weight order, computed when read.  It is the last shard of a derived
 * model (quant_model.h), so the views, virtual safetensors files and
 * stfs-inspect read the logical tensors as they read any F32 (or BF16)
 * tensor.
 *
 * Reads are answered from tiles (quant_render.h) kept in a small cache
 * (QUANT_SOURCE_TILES tiles, 2 to 8 MiB each; tiles being copied from
 * are never evicted), so the 128 KiB reads of a FUSE reader compute each
 * tile once.  A source that changes under a part makes every later read
 * fail (-ESTALE, sticky), cache or not, as for stored tensors.
 * Thread-safe: the cache takes a mutex, tiles are computed outside it.
 */
#ifndef STFS_QUANT_SOURCE_H
#define STFS_QUANT_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct err;
struct model;
struct quant;
struct source;

#define QUANT_SOURCE_TILES 4

/* A source over the logical tensors of q (weights of base), weight k at
 * bytes [offs[k], offs[k] + numel elements of dtype dt) (F32; BF16 or
 * F16: the float32 values rounded as torch's .to() rounds them): offs
 * has q->n entries, size the total.  Takes q and offs, also on failure;
 * takes base too when own and it succeeds (closing the source then
 * frees it).  name is for messages.  0, or -1 with *e (ERR_NO_MEMORY). */
int quant_source_open(struct model *base, int own, struct quant *q,
		      enum dtype dt, uint64_t *offs, uint64_t size,
		      const char *name, struct source **out, struct err *e);

/* The table of weights behind s and the model they are parts of, when s
 * is such a source; NULL otherwise. */
const struct quant *quant_source_quant(const struct source *s);
const struct model *quant_source_base(const struct source *s);

#endif
