/* qscalar.h - the scalar steps the schemes of quantized weights share
 * (format/quant/): reading a scale stored as F32, F16 or BF16, and
 * rounding a product to the precision the reference multiplies in.
 *
 * The references (transformers, AutoGPTQ, AutoAWQ, compressed-tensors,
 * bitsandbytes) multiply in the dtype of the scale: torch promotes an
 * integer or FP8 tensor times an F16 tensor to F16, and on the CPU it
 * computes each element as the float32 product rounded to F16.  Every
 * product here is exact in float32 when the scale is F16 or BF16 (at
 * most 11 + 9 significant bits), so rounding the float32 product once
 * gives the reference's value bit for bit.
 *
 * Rounding is torch's: to nearest, ties to even; past the largest finite
 * value to infinity; NaN stays NaN (the quiet NaN, its sign kept).  The
 * result is the rounded value as a float32, exactly.
 */
#ifndef STFS_QSCALAR_H
#define STFS_QSCALAR_H

#include <stdint.h>

#include "format/dtype.h"

/* 1 for the dtypes a scale may have: F32, F16, BF16. */
int qscalar_is_scale(enum dtype d);

/* The value of a scale of dtype d (qscalar_is_scale) at p, little-endian. */
float qscalar_load(enum dtype d, const uint8_t *p);

/* x rounded to F16 or BF16 precision; any other d leaves x as it is. */
float qscalar_round(enum dtype d, float x);

/* The same, for one dtype each. */
float qscalar_round_f16(float x);
float qscalar_round_bf16(float x);

#endif
