/* bnb4.h - bitsandbytes' 4-bit weights (NF4 and FP4, Params4bit): the
 * codes of the flattened weight packed two per byte, element 2k in the
 * HIGH nibble of byte k and element 2k + 1 in the low one (bitsandbytes'
 * quantize_4bit), one absmax per block of `blocksize` elements (the last
 * block may be short) and a table of 16 values (the stored quant_map,
 * which is the code bitsandbytes dequantizes with: get_4bit_type()).
 *
 * Value (bitsandbytes' dequantize_4bit, float32 throughout like its
 * kernels): code[q] * absmax[block], the product in float32.  With nested
 * quantization (compress_statistics) the absmax values are themselves
 * 8-bit codes: absmax[b] = nested_code[a[b]] * nested_absmax[b /
 * nested_blocksize] + offset, each step in float32 (dequantize_blockwise,
 * then the offset added).  bitsandbytes then casts to the weight's dtype
 * (quant_state "dtype"); the value here is before that cast.  Pure
 * functions; no I/O.
 */
#ifndef STFS_BNB4_H
#define STFS_BNB4_H

#include <stdint.h>

/* Elements [e0, e1), e0 even: packed holds bytes e0 / 2 .. (e1 - 1) / 2,
 * absmax the values of blocks e0 / blocksize .. (e1 - 1) / blocksize,
 * code the 16 values; out gets e1 - e0 floats. */
void bnb4_run(const float code[16], const uint8_t *packed,
	      const float *absmax, uint64_t blocksize, uint64_t e0,
	      uint64_t e1, float *out);

/* Nested absmax values of blocks [b0, b1): q holds their codes, nabsmax
 * the nested absmax of nested blocks b0 / nblock .. (b1 - 1) / nblock,
 * code the 256 values; out gets b1 - b0 floats. */
void bnb4_absmax(const float code[256], const uint8_t *q,
		 const float *nabsmax, uint64_t nblock, float offset,
		 uint64_t b0, uint64_t b1, float *out);

#endif
