/* quant_float.h - recognising weights stored as minifloat codes times
 * scales (model/quant.h's matchers, on a struct quant_scan):
 *
 *   quant_float_fp8    W (F8_E4M3/E5M2) + W_scale_inv or W_scale: one
 *                      scale, per row, per row and column group, per
 *                      block
 *   quant_float_mxfp4  P_blocks U8 [E, R, G, 16] + P_scales U8 [E, R, G]
 *   quant_float_nvfp4_ct  compressed-tensors' NVFP4: M.weight_packed U8
 *                      [rows, cols / 2] + M.weight_scale F8_E4M3 [rows,
 *                      cols / 16] + M.weight_global_scale F32 (its
 *                      suffix), the weight M.weight
 *   quant_float_nvfp4_modelopt  ModelOpt's NVFP4: M.weight U8 +
 *                      M.weight_scale F8_E4M3 + M.weight_scale_2 F32 (its
 *                      suffix), the weight M.weight in the codes' stead
 *
 * Each takes the model tensor i whose name ends with its suffix (base:
 * the name's length without it), and adds a weight, refuses the
 * candidate, or leaves it (a scale of something else).
 */
#ifndef STFS_QUANT_FLOAT_H
#define STFS_QUANT_FLOAT_H

#include <stddef.h>

struct quant_scan;

void quant_float_fp8(struct quant_scan *f, size_t i, size_t base);
void quant_float_mxfp4(struct quant_scan *f, size_t i, size_t base);
void quant_float_nvfp4_ct(struct quant_scan *f, size_t i, size_t base);
void quant_float_nvfp4_modelopt(struct quant_scan *f, size_t i,
				size_t base);

#endif
