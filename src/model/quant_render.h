/* quant_render.h - a window of a quantized weight's logical tensor
 * (quant.h) computed from its stored parts: the parts' bytes read
 * through the model, then decoded by the scheme's functions of
 * format/quant/.
 *
 * A logical tensor is computed in tiles: runs of whole units (FP8's,
 * PyTorch's quantized tensors', NVFP4's and bitsandbytes' elements, two
 * at a time for the last two's bytes; an
 * MXFP4 expert's rows c, R values each, 32 at a time; a GPTQ or AWQ
 * weight's output rows, `in` values each, 32 at a time: every packed word
 * a tile needs lies in it whole), about QUANT_RENDER_TILE elements each,
 * QUANT_RENDER_TILE_T for the transposed layouts (fewer tiles, fewer
 * passes over their parts).  Tiles are numbered in logical order and each
 * is a contiguous run of the logical tensor in C order, so any byte
 * window maps to a few tiles.
 *
 * Reading a tile of a weight whose logical layout is the transpose of its
 * packing (GPTQ, AWQ, MXFP4) reads a band of columns of the parts: the
 * span that holds the band's pieces when they are close (in reads of
 * QUANT_RENDER_SPAN bytes at most), else one read per stored row.  Memory: the
 * tile's output and the parts' bytes it needs (a PyTorch per-channel
 * tensor's: the scales and zero points of the channels the tile spans, at
 * most 16 bytes an element when each element is a channel).
 */
#ifndef STFS_QUANT_RENDER_H
#define STFS_QUANT_RENDER_H

#include <stdint.h>

struct model;
struct quant_weight;

/* Elements per tile, about: 2 MiB of float32; 8 MiB for the transposed
 * layouts, each of whose tiles reads a band across all of its parts'
 * rows. */
#define QUANT_RENDER_TILE (512u << 10)
#define QUANT_RENDER_TILE_T (2u << 20)

/* Largest span of a part read at once to gather a band of it, and the
 * largest gap between two of the band's rows that the span may hold
 * (wider gaps: a read per row). */
#define QUANT_RENDER_SPAN (8u << 20)
#define QUANT_RENDER_GAP (4u << 10)

struct quant_tiling {
	uint64_t unit;		/* elements per unit */
	uint64_t per_outer;	/* units per outer block (an expert) */
	uint64_t k;		/* units per tile */
	uint64_t tiles_per_outer;
	uint64_t ntiles;
};

void quant_render_tiling(const struct quant_weight *w, struct quant_tiling *g);

/* The logical elements [*e0, *e1) tile t holds. */
void quant_render_range(const struct quant_tiling *g, uint64_t t,
			uint64_t *e0, uint64_t *e1);

/* The tile that holds logical element e. */
uint64_t quant_render_tile_of(const struct quant_tiling *g, uint64_t e);

/* Tile t of w (a weight of m) into out (its e1 - e0 floats, host order).
 * 0, or -errno: a part's read failed, -ENOMEM, -EINVAL for stored values
 * the scheme cannot take (a g_idx entry naming no group). */
int quant_render_tile(const struct model *m, const struct quant_weight *w,
		      const struct quant_tiling *g, uint64_t t, float *out);

#endif
