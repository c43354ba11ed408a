/* dtype.h - the 22 safetensors dtypes, their sizes and numpy names, and
 * GGUF's (ggml's) quantized types, stored in blocks.
 *
 * A GGUF file's plain types are safetensors dtypes (ggml's F32, F16, BF16,
 * F64, I8, I16, I32, I64); its quantized types follow the safetensors ones
 * in the enum, in ggml's type order.  A quantized type stores `block`
 * elements in `block_bytes` bytes (Q4_K: 256 in 144) along the rows; its
 * bits field is 0. */
#ifndef STFS_DTYPE_H
#define STFS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* Enum order is the reference's `Dtype` order (it decides the writer's
 * sort); do not reorder. */
enum dtype {
	DTYPE_BOOL,
	DTYPE_F4,
	DTYPE_F6_E2M3,
	DTYPE_F6_E3M2,
	DTYPE_U8,
	DTYPE_I8,
	DTYPE_F8_E5M2,
	DTYPE_F8_E4M3,
	DTYPE_F8_E8M0,
	DTYPE_F8_E4M3FNUZ,
	DTYPE_F8_E5M2FNUZ,
	DTYPE_I16,
	DTYPE_U16,
	DTYPE_F16,
	DTYPE_BF16,
	DTYPE_I32,
	DTYPE_U32,
	DTYPE_F32,
	DTYPE_C64,
	DTYPE_F64,
	DTYPE_I64,
	DTYPE_U64,
	/* GGUF's quantized types (ggml's order; no safetensors name) */
	DTYPE_Q4_0,
	DTYPE_Q4_1,
	DTYPE_Q5_0,
	DTYPE_Q5_1,
	DTYPE_Q8_0,
	DTYPE_Q8_1,
	DTYPE_Q2_K,
	DTYPE_Q3_K,
	DTYPE_Q4_K,
	DTYPE_Q5_K,
	DTYPE_Q6_K,
	DTYPE_Q8_K,
	DTYPE_IQ2_XXS,
	DTYPE_IQ2_XS,
	DTYPE_IQ3_XXS,
	DTYPE_IQ1_S,
	DTYPE_IQ4_NL,
	DTYPE_IQ3_S,
	DTYPE_IQ2_S,
	DTYPE_IQ4_XS,
	DTYPE_IQ1_M,
	DTYPE_TQ1_0,
	DTYPE_TQ2_0,
	DTYPE_MXFP4,
	DTYPE_NVFP4,
	DTYPE_Q1_0,
	DTYPE_Q2_0,
	DTYPE__COUNT
};

/* The dtypes safetensors has: the enum's first values. */
#define DTYPE_SAFETENSORS_COUNT (DTYPE_U64 + 1)

struct dtype_info {
	const char *name;	/* as in the header: "F32"; ggml's for GGUF's */
	unsigned bits;		/* 4, 6, 8, 16, 32 or 64; 0 for blocks */
	const char *numpy;	/* "<f4", "|b1", ... or NULL when numpy has none */
	const char *note;	/* how to decode when numpy is NULL, else NULL */
	unsigned block;		/* quantized: elements per block, else 0 */
	unsigned block_bytes;	/* quantized: bytes per block, else 0 */
};

const struct dtype_info *dtype_info(enum dtype d);

/* Exact, case-sensitive match of a safetensors header's dtype string
 * (the 22 safetensors dtypes only).  Returns 0 and sets *out, or -1 for
 * an unknown name. */
int dtype_from_name(const char *s, size_t len, enum dtype *out);

/* The same over every dtype, GGUF's quantized types included ("Q4_K"). */
int dtype_from_any_name(const char *s, size_t len, enum dtype *out);

/* The dtype of ggml type number t (a GGUF tensor info's type).  0, or -1
 * for a number ggml does not define (or no longer supports). */
int dtype_from_ggml(uint32_t t, enum dtype *out);

/* ggml's type number of d, or -1 when ggml has no such type. */
int dtype_ggml(enum dtype d);

#endif
