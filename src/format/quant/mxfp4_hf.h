/* mxfp4_hf.h - MXFP4 weights as transformers stores them (gpt-oss):
 * `P_blocks` U8 [E, R, G, 16] and `P_scales` U8 [E, R, G], the logical
 * tensor P being [E, 32 G, R].
 *
 * Each block of 16 bytes holds 32 E2M1 (FP4) codes, element 2k in the low
 * nibble of byte k and element 2k + 1 in its high nibble; the block's
 * scale byte s is an E8M0 exponent, 2^(s - 127).  transformers'
 * convert_moe_packed_tensors() decodes [E, R, G, 16] to [E, R, 32 G] and
 * returns it transposed to [E, 32 G, R] (the layout its experts multiply
 * by), so logical element (e, c, r) is code c % 32 of block (e, r, c /
 * 32).
 *
 * Value: the E2M1 value (0, 0.5, 1, 1.5, 2, 3, 4, 6, signed) times 2^(s -
 * 127), as torch.ldexp() computes it: the value times the float32 power
 * of two, exact but for s = 255, whose 2^128 is infinite in float32 (so a
 * zero code gives NaN there, others an infinity), as the reference gives.
 * Pure functions; no I/O.
 */
#ifndef STFS_MXFP4_HF_H
#define STFS_MXFP4_HF_H

#include <stdint.h>

#define MXFP4_HF_BLOCK 32	/* elements per block (scale) */
#define MXFP4_HF_BLOCK_BYTES 16

/* Logical rows [c0, c1) of one expert (all R columns each), c0 and c1
 * multiples of 32: blk holds, for each r in 0..R-1, the bytes of blocks
 * c0 / 32 .. ceil(c1 / 32) - 1 (16 each), sc for each r those blocks'
 * scale bytes.  out gets (c1 - c0) * R floats, row-major [c][r];
 * pow2 is scratch for R floats. */
void mxfp4_hf_rows(const uint8_t *blk, const uint8_t *sc, uint64_t R,
		   uint64_t c0, uint64_t c1, float *pow2, float *out);

#endif
