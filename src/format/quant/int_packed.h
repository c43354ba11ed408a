/* int_packed.h - integer weights packed in 32-bit words, with a scale and
 * a zero point per group of input rows: GPTQ (AutoGPTQ, GPTQModel), AWQ
 * (AutoAWQ's GEMM layout) and compressed-tensors' pack-quantized (vLLM's
 * W4A16 / W8A16).  The logical weight is [out, in], a linear layer's.
 *
 * GPTQ: qweight I32 [ceil(in * bits / 32), out], packed along the input:
 * for bits 2, 4 and 8 word (k, o) holds input rows k * 32 / bits + j at
 * bits j * bits (lowest first); for 3 bits every 3 words hold 32 rows,
 * values 10 and 21 split across two words (AutoGPTQ's layout).  qzeros I32
 * [groups, ceil(out * bits / 32)], packed along the output the same way;
 * scales [groups, out]; g_idx I32 [in]: the group of input row i (rows
 * in any order: act-order), or without it i / group_size.  Checkpoints
 * in GPTQ's v1 format store each zero minus one (AutoGPTQ adds the one
 * back after masking, so a stored 2^bits - 1 is the zero 2^bits); v2
 * (GPTQModel's own) stores it as it is.
 *
 * AWQ: qweight I32 [in, ceil(out / 8)], 4 bits, packed along the output
 * in AutoAWQ's order: output column 8 c + j is nibble ORDER^-1[j] of word
 * c, with ORDER = [0, 2, 4, 6, 1, 3, 5, 7] (so nibbles [0, 4, 1, 5, 2, 6,
 * 3, 7] in column order); qzeros I32 [groups, ceil(out / 8)] the same;
 * scales [groups, out]; input row i is in group i / group_size.
 *
 * compressed-tensors (pack-quantized): weight_packed I32 [out, ceil(in /
 * (32 / bits))], packed along the input: input column k * (32 / bits) + j
 * of a row is at bits j * bits of its word k; weight_zero_point I32
 * [ceil(out / (32 / bits)), groups] packed along the output the same way,
 * or none (symmetric); weight_scale [out, groups]; weight_g_idx I32 [in]
 * or i / group_size.  Codes are stored unsigned, the signed value plus
 * 2^(bits - 1), zero points too, so q - z is the stored codes'
 * difference, and symmetric weights have the zero 2^(bits - 1).  Bits 2,
 * 4 or 8 (a word then holds whole 32-column runs' worth of zero points).
 *
 * Value (AutoGPTQ's and GPTQModel's dequantize_weight, AutoAWQ's
 * dequantize_gemm, compressed-tensors' unpack_from_int32 and dequantize):
 * scale * (q - z), where q - z is an exact integer and
 * torch multiplies in the scale's dtype, so the product is rounded to it
 * (qscalar.h): F16 scales give F16 values.  Pure functions; no I/O.
 */
#ifndef STFS_INT_PACKED_H
#define STFS_INT_PACKED_H

#include <stdint.h>

#include "format/dtype.h"

enum int_packed_kind {
	INT_PACKED_GPTQ,
	INT_PACKED_AWQ,
	INT_PACKED_CT,		/* compressed-tensors' pack-quantized */
};

struct int_packed {
	enum int_packed_kind kind;
	unsigned bits;		/* GPTQ: 2, 3, 4 or 8; AWQ: 4 */
	uint64_t in, out;
	uint64_t groups;	/* rows of scales and qzeros */
	uint64_t group_size;	/* input rows per group (without g_idx) */
	int zero_offset;	/* 1: stored zeros are zero - 1 (GPTQ v1) */
	enum dtype sdtype;	/* the scales': F16, BF16 or F32 */
	int symmetric;		/* CT: no zero points, the zero 2^(bits-1) */
};

/* Output columns a band starts at a multiple of: every word of qzeros
 * (and of AWQ's qweight) then lies in one band. */
#define INT_PACKED_ALIGN 32

/* The stored shapes p implies: qweight [*qrows, *qcols], qzeros [groups,
 * *zcols]; for CT weight_packed [*qrows, *qcols] and weight_zero_point
 * [*zcols, groups]. */
void int_packed_shapes(const struct int_packed *p, uint64_t *qrows,
		       uint64_t *qcols, uint64_t *zcols);

/* Words of a qweight row, and of a qzeros row, that output columns [o0,
 * o1) take (o0 a multiple of INT_PACKED_ALIGN), and the first of them.
 * CT: the words of weight_packed's rows [o0, o1) (*qfirst the first,
 * *qn all of them) and weight_zero_point's rows that hold them. */
void int_packed_band_words(const struct int_packed *p, uint64_t o0,
			   uint64_t o1, uint64_t *qfirst, uint64_t *qn,
			   uint64_t *zfirst, uint64_t *zn);

/* Logical rows (output columns) [o0, o1), o0 a multiple of
 * INT_PACKED_ALIGN, each of in values, into out ((o1 - o0) * in floats).
 *   qw    every qweight row's words of the band (int_packed_band_words),
 *         little-endian, row after row (CT: its rows [o0, o1))
 *   qz    every qzeros row's words of the band, the same way (CT: the
 *         rows of weight_zero_point the band takes, or NULL symmetric)
 *   sc    every scales row's values of columns [o0, o1), little-endian
 *         (CT: weight_scale's rows [o0, o1))
 *   gidx  GPTQ's g_idx (in I32, little-endian), or NULL
 * 0; -1 when a g_idx entry names no group, -2 out of memory (nothing
 * is written then). */
int int_packed_rows(const struct int_packed *p, const uint8_t *qw,
		    const uint8_t *qz, const uint8_t *sc, const uint8_t *gidx,
		    uint64_t o0, uint64_t o1, float *out);

#endif
