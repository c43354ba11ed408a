/* quant_packed.h - recognising weights stored as integers packed in I32
 * (model/quant.h's matchers, on a struct quant_scan): M.qweight with
 * M.qzeros, M.scales and, for GPTQ, M.g_idx; GPTQ or AWQ by g_idx, the
 * config's quant_method or qweight's shape; and compressed-tensors'
 * pack-quantized.  Takes the model tensor i
 * whose name ends with "qweight" (base: the name's length without it).
 */
#ifndef STFS_QUANT_PACKED_H
#define STFS_QUANT_PACKED_H

#include <stddef.h>

struct quant_scan;

void quant_packed_qweight(struct quant_scan *f, size_t i, size_t base);

/* compressed-tensors' pack-quantized: M.weight_shape (i; base: the length
 * of "M.weight") with M.weight_packed I32, M.weight_scale and, when not
 * symmetric, M.weight_zero_point, optionally M.weight_g_idx. */
void quant_packed_ct(struct quant_scan *f, size_t i, size_t base);

#endif
