/* quant.h - the quantized weights of a model: which stored tensors make
 * up each one, by which scheme, and the weight's name and shape as its
 * framework knows it (the logical tensor).  The decoding itself is the
 * format layer's (format/quant/); reading it through a model is
 * quant_model.h's.
 *
 * Recognised from the tensors' names, dtypes and shapes, with the
 * model's configuration (quant_config.h) for what they do not tell:
 *
 *   scheme    stored tensors                      logical tensor
 *   fp8-*     W (F8_E4M3/E5M2), W_scale_inv or    W, W's shape
 *             W_scale (F32/F16/BF16): one scale
 *             (-tensor), per row (-channel), per
 *             row and column group (-group), per
 *             block (-block: weight_block_size,
 *             else 128 x 128)
 *   mxfp4     P_blocks U8 [E, R, G, 16],          P, [E, 32 G, R]
 *             P_scales U8 [E, R, G]
 *   gptq      M.qweight, M.qzeros (I32), M.scales, M.weight, [out, in]
 *             M.g_idx (I32, optional)
 *   awq       M.qweight, M.qzeros (I32), M.scales  M.weight, [out, in]
 *   bnb-nf4,  W (packed codes), W.absmax,           W, the shape of the
 *   bnb-fp4   W.quant_map, W.quant_state.          quant_state's JSON
 *             bitsandbytes__nf4|fp4 (JSON), and
 *             W.nested_absmax, W.nested_quant_map
 *             when nested
 *   nvfp4     M.weight_packed U8, M.weight_scale  M.weight, [out, in]
 *             F8_E4M3, M.weight_global_scale F32
 *             (compressed-tensors)
 *   nvfp4-    M.weight U8, M.weight_scale         M.weight, [out, in]
 *   modelopt  F8_E4M3, M.weight_scale_2 F32
 *
 * (M. is the module's prefix: "model.layers.0.mlp.up_proj.".)  GPTQ and
 * AWQ share tensor names: g_idx, the config's quant_method, or qweight's
 * shape ([in * bits / 32, out] for GPTQ, [in, out / 8] for AWQ) tell
 * them apart.  What only a config says: GPTQ's checkpoint format (v2
 * stores zeros as they are; without a config, v1: zeros minus one, the
 * format every published GPTQ checkpoint uses), a group size that does
 * not divide the input (without g_idx), GPTQ's bits when several fit the
 * shapes, AWQ's GEMV layout (refused: only GEMM is decoded).  A weight
 * whose values depend on a setting no config told notes it (assumed),
 * so that its sidecar says what was taken and why.
 *
 * A candidate whose tensors do not fit together (a scale grid that does
 * not tile its weight, a missing sibling, a logical name taken by a
 * stored tensor that is not one of its parts, a g_idx naming a group that
 * is not there) is left as it is stored and named in refused[] with the
 * reason.  bitsandbytes' quant_state tensors (a few hundred bytes each),
 * GPTQ's and compressed-tensors' g_idx (4 bytes per input row) and
 * compressed-tensors' weight_shape (16 bytes) are read here; nothing
 * else is.
 */
#ifndef STFS_QUANT_H
#define STFS_QUANT_H

#include <stddef.h>

#include "model/quant_weight.h"

struct err;
struct model;

/* The quantized weights of m: *out NULL when there are none (and nothing
 * was refused).  0, or -1 with *e (ERR_NO_MEMORY only). */
int quant_find(const struct model *m, struct quant **out, struct err *e);

void quant_free(struct quant *q);

/* What quant_find() would find, as far as names, dtypes, shapes and the
 * config tell: no tensor is read but compressed-tensors' weight_shape
 * (16 bytes, the weight's shape: a lying one is refused here as there;
 * a bitsandbytes quant_state or a g_idx that lies is found out by
 * quant_find() only), no weight kept.
 * The cheap question a mount asks before it offers .dequant/, whose
 * answer its __summary__.json gives.  0, or -1 with *e (ERR_NO_MEMORY). */
int quant_count(const struct model *m, struct quant_count *out,
		struct err *e);

/* The weight that replaces stored tensor i (its logical tensor has i's
 * name), or QUANT_ABSENT.  O(log n). */
size_t quant_replacing(const struct quant *q, size_t i);

/* The name of part k of scheme s ("scale", "qzeros", ...), NULL past the
 * scheme's parts. */
const char *quant_role(enum quant_scheme s, unsigned k);

#endif
