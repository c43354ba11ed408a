/* dequant.h - GGUF's quantized blocks decoded to float32, value for value
 * what ggml's reference dequantize_row_* functions (ggml-quants.c) give.
 *
 * A quantized dtype stores its elements in blocks along the rows (ggml's
 * ne[0], the last row-major axis, is a multiple of the block): `block`
 * elements in `bytes` bytes, so element k is in block k / block whatever
 * the shape.  Pure functions on whole blocks; no I/O.
 *
 * Every quantized type of ggml is decoded (elements / bytes per block):
 *   Q4_0 32/18  Q4_1 32/20  Q5_0 32/22  Q5_1 32/24  Q8_0 32/34  Q8_1 32/36
 *   Q2_K 256/84  Q3_K 256/110  Q4_K 256/144  Q5_K 256/176  Q6_K 256/210
 *   Q8_K 256/292  IQ2_XXS 256/66  IQ2_XS 256/74  IQ3_XXS 256/98
 *   IQ1_S 256/50  IQ4_NL 32/18  IQ3_S 256/110  IQ2_S 256/82
 *   IQ4_XS 256/136  IQ1_M 256/56  TQ1_0 256/54  TQ2_0 256/66
 *   MXFP4 32/17  NVFP4 64/36  Q1_0 128/18  Q2_0 64/18
 * Q8_1 is x = d * q (ggml has no dequantizer for it: its s is d * sum q).
 * The grid i-quants (IQ1_*, IQ2_*, IQ3_*) are dequant_iq.h's.
 *
 * Arithmetic is ggml's, in float32, operation for operation and in its
 * order (the build turns off contraction into fused multiply-adds, which
 * would round differently): F16 scales are decoded exactly
 * (minifloat.h), so results are bit-identical to ggml's but for NaN
 * payloads (a NaN scale gives a NaN, its sign kept, payload canonical).
 * MXFP4's E8M0 scale is ggml's: 2^(e - 128) times the doubled E2M1
 * value, with no NaN (e = 255 is 2^127); NVFP4's UE4M3 scales are
 * ggml's too: halved, the sign bit ignored, 0x7f (E4M3's NaN) is 0.
 */
#ifndef STFS_DEQUANT_H
#define STFS_DEQUANT_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

/* The largest block, in elements (a caller's scratch for one block). */
#define DEQUANT_BLOCK_MAX 256

/* 1 when dequant_blocks() decodes d: every quantized type (dtype.h's
 * block > 0), no plain one. */
int dequant_has(enum dtype d);

/* Elements and bytes of one block of a decoded dtype d; 0 for others. */
unsigned dequant_block(enum dtype d);
unsigned dequant_block_bytes(enum dtype d);

/* Decode n whole blocks at src into n * dequant_block(d) float32 values
 * at out (host order, IEEE binary32; out need not be aligned).  d must be
 * decoded (dequant_has). */
void dequant_blocks(enum dtype d, const uint8_t *src, size_t n, void *out);

/* --- windows of the float32 output --------------------------------------
 * The decoding of a tensor is 4 bytes per element; a window [off, off +
 * len) of it needs the blocks that hold its elements, and only those. */

/* The stored bytes (relative to the tensor's first byte) that bytes
 * [off, off + len) of the float32 decoding need: whole blocks. */
void dequant_src_range(enum dtype d, uint64_t off, uint64_t len,
		       uint64_t *src_off, uint64_t *src_len);

/* Write bytes [off, off + len) of the float32 decoding to out, from src
 * holding the bytes dequant_src_range() named for the same off and len. */
void dequant_window(enum dtype d, const uint8_t *src, uint64_t off,
		    size_t len, uint8_t *out);

#endif
