/* nvfp4_st.h - NVFP4 weights in safetensors, as compressed-tensors
 * (llm-compressor's nvfp4-pack-quantized: `M.weight_packed` U8,
 * `M.weight_scale` F8_E4M3, `M.weight_global_scale` F32) and NVIDIA
 * ModelOpt (`M.weight` U8, `M.weight_scale` F8_E4M3, `M.weight_scale_2`
 * F32) store them.  (GGUF's NVFP4 blocks are format/dequant.h's.)
 *
 * The weight is [rows, cols], cols even: its E2M1 (FP4) codes two to a
 * byte, element 2k of a row in the LOW nibble of byte k and 2k + 1 in the
 * high one (compressed-tensors' unpack_fp4_from_uint8, ModelOpt's
 * _unpack_tensor); one F8_E4M3 scale per NVFP4_ST_BLOCK consecutive
 * values of a row (scale (r, c / 16) covers element (r, c)), and one F32
 * global scale for the tensor.
 *
 * Value, each step rounded to float32 as torch computes it:
 *   compressed-tensors (_dequantize):  e2m1 * (float(scale) / global)
 *   ModelOpt (NVFP4QTensor.dequantize): e2m1 * (float(scale) * global)
 * where e2m1 is 0, 0.5, 1, 1.5, 2, 3, 4, 6 with the code's sign bit (code
 * 8 is -0 for compressed-tensors, which multiplies a magnitude by -1, and
 * +0 for ModelOpt, whose table has 0 there).  Both then cast to the
 * model's dtype (compressed-tensors to BF16); the value here is before
 * that cast.  Pure functions; no I/O.
 */
#ifndef STFS_NVFP4_ST_H
#define STFS_NVFP4_ST_H

#include <stdint.h>

#define NVFP4_ST_BLOCK 16

struct nvfp4_st {
	uint64_t rows, cols;	/* the logical weight; cols even */
	int modelopt;		/* the global scale multiplies (ModelOpt),
				   else it divides (compressed-tensors) */
};

/* Scales per row: ceil(cols / NVFP4_ST_BLOCK). */
uint64_t nvfp4_st_scale_cols(const struct nvfp4_st *p);

/* Elements [e0, e1) of the weight in C order, e0 and e1 even: packed
 * holds bytes e0 / 2 .. e1 / 2 - 1, scales the scale rows of rows e0 /
 * cols .. (e1 - 1) / cols (nvfp4_st_scale_cols() bytes each), global the
 * global scale's value; out gets e1 - e0 floats. */
void nvfp4_st_range(const struct nvfp4_st *p, const uint8_t *packed,
		    const uint8_t *scales, float global, uint64_t e0,
		    uint64_t e1, float *out);

#endif
