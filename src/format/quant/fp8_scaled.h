/* fp8_scaled.h - FP8 weights times a grid of scales, as DeepSeek-V3/R1,
 * Kimi-K2 and Qwen3-FP8 store them (`W.weight` F8_E4M3 and
 * `W.weight_scale_inv`, one F32 scale per 128 x 128 block) and as
 * compressed-tensors (llm-compressor) does (`W.weight_scale`: one scale
 * for the tensor, one per output channel, per group or per block).
 *
 * The weight is seen as [rows, cols] (its last axis is cols, the others
 * rows); scale (r / brow, c / bcol) covers element (r, c), so the last
 * block of a row or a column may be cut short (a dimension that is not a
 * multiple of the block).  The grid is [ceil(rows / brow), ceil(cols /
 * bcol)]: one scale for the tensor is brow = rows, bcol = cols; one per
 * channel brow = 1, bcol = cols.  Stacked experts ([E, out, in] with
 * scales [E, ceil(out / brow), ceil(in / bcol)], as fused MoE layers
 * store them) have erows = out: each expert's rows start a block of
 * their own, row r's grid row is (r / erows) * ceil(erows / brow) +
 * (r % erows) / brow.
 *
 * Value (the references' arithmetic: DeepSeek's weight_dequant and
 * transformers' FP8 loader multiply the FP8 value, widened to float32, by
 * the scale in float32; compressed-tensors converts the FP8 value to the
 * scale's dtype and multiplies in it): the FP8 value (exact in float32,
 * format/minifloat.h) times the scale, rounded to the scale's dtype
 * (qscalar.h).  Pure functions; no I/O.
 */
#ifndef STFS_FP8_SCALED_H
#define STFS_FP8_SCALED_H

#include <stdint.h>

#include "format/dtype.h"

struct fp8_scaled {
	enum dtype wdtype;	/* F8_E4M3, F8_E5M2 (and their FNUZ forms) */
	enum dtype sdtype;	/* F32, F16, BF16 */
	uint64_t rows, cols;
	uint64_t brow, bcol;	/* >= 1 */
	uint64_t erows;		/* rows of an expert; 0: one expert */
};

/* 1 when d is an FP8 dtype a weight may have. */
int fp8_scaled_is_weight(enum dtype d);

/* Rows and columns of the grid of scales. */
uint64_t fp8_scaled_grid_rows(const struct fp8_scaled *p);
uint64_t fp8_scaled_grid_cols(const struct fp8_scaled *p);

/* The grid row of the weight's row r (it grows with r). */
uint64_t fp8_scaled_grid_row(const struct fp8_scaled *p, uint64_t r);

/* Elements [e0, e1) of the weight in C order (e0 < e1): w holds their
 * bytes, s the grid rows of their rows, from grid_row(e0 / cols) to
 * grid_row((e1 - 1) / cols) (grid_cols scales each, of sdtype,
 * little-endian); out gets e1 - e0 floats. */
void fp8_scaled_range(const struct fp8_scaled *p, const uint8_t *w,
		      const uint8_t *s, uint64_t e0, uint64_t e1, float *out);

#endif
