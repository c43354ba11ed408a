/* dequant_iq.h - the grid i-quants of GGUF (ggml's IQ1_S, IQ1_M, IQ2_XXS,
 * IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), one block of 256 elements decoded to
 * float32 as ggml's dequantize_row_* do: dequant.c's kernels for these
 * types (see dequant.h for the arithmetic's rules).
 *
 * Their elements come in groups of 8 (or two of 4) that are one entry of a
 * grid (dequant_grids.h) each, times a scale and, for the IQ2 and IQ3
 * types, signs; IQ1's entries are shifted by +-1/8 instead.
 */
#ifndef STFS_DEQUANT_IQ_H
#define STFS_DEQUANT_IQ_H

#include <stdint.h>

void dequant_iq_iq2_xxs(const uint8_t *b, float *y);	/* 66 bytes */
void dequant_iq_iq2_xs(const uint8_t *b, float *y);	/* 74 */
void dequant_iq_iq2_s(const uint8_t *b, float *y);	/* 82 */
void dequant_iq_iq3_xxs(const uint8_t *b, float *y);	/* 98 */
void dequant_iq_iq3_s(const uint8_t *b, float *y);	/* 110 */
void dequant_iq_iq1_s(const uint8_t *b, float *y);	/* 50 */
void dequant_iq_iq1_m(const uint8_t *b, float *y);	/* 56 */

#endif
