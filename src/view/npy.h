/* npy.h - the .npy view of a tensor, and exact decoders of the dtypes
 * numpy lacks.
 *
 * A .npy file is an NPY header generated from the tensor's dtype and shape
 * followed by the data:
 *
 *   - dtypes numpy has (BOOL |b1, U8, I8, I16, U16, F16, I32, U32, F32,
 *     C64 <c8, F64, I64, U64): the tensor's own bytes, unchanged, so the
 *     data part can be served from the source like the raw file;
 *   - BF16, the five F8 formats, F6_E2M3, F6_E3M2 and F4: every element
 *     decoded to a little-endian IEEE float32 ('<f4').  Every value of
 *     these formats is exactly a float32, so the decoding loses nothing.
 *     (The decoders are format/minifloat.c's.)
 *   - GGUF's quantized types that format/dequant.h decodes: their float32
 *     values, exactly what ggml's dequantization gives, in the tensor's
 *     row-major shape.  Other quantized types have no .npy data: reading
 *     their file fails (npy_decodes()).
 *
 * Header (numpy's own layout): "\x93NUMPY", version 1.0 with a 16-bit
 * little-endian header length, or 2.0 with a 32-bit one when the dict
 * needs more than 65535 bytes; then the dict
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ended by '\n' so that the data starts at a
 * multiple of 64 bytes (numpy's ARRAY_ALIGN).  Shapes are C order.
 *
 * Decoding (sign s, exponent e, mantissa m; "subnormal" = e == 0):
 *
 *   BF16          the upper 16 bits of a float32: bits << 16, exact, NaN
 *                 payloads included.
 *   F8_E5M2       IEEE-like, bias 15: e == 31 is inf (m == 0) or NaN.
 *   F8_E4M3       "fn", bias 7, no inf; S.1111.111 (0x7F, 0xFF) is NaN;
 *                 largest 0x7E = 448.
 *   F8_E4M3FNUZ   bias 8, no inf, no -0: 0x80 is the only NaN; 0x7F = 240.
 *   F8_E5M2FNUZ   bias 16, no inf, no -0: 0x80 is the only NaN;
 *                 0x7F = 57344.
 *   F8_E8M0       "fnu": unsigned exponent only, 2^(x - 127); 0x00 is
 *                 2^-127 (a float32 subnormal), 0xFF is NaN.
 *   F6_E2M3       bias 1, no inf/NaN, largest 7.5.
 *   F6_E3M2       bias 3, no inf/NaN, largest 28.
 *   F4 (E2M1)     bias 1, no inf/NaN: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
 *
 * NaN decodes to the quiet float32 NaN 0x7FC00000 with the input's sign
 * bit (E5M2, E4M3); the unsigned NaNs of the FNUZ formats and of E8M0
 * decode to +NaN.  BF16 keeps its exact bits.  Negative zero is kept
 * where the format has one.
 *
 * Packing of the sub-byte formats, both least significant bits first:
 *   F4   2 elements per byte, element 0 in the low nibble (bits 0-3),
 *        element 1 in the high nibble; torch.float4_e2m1fn_x2 and the
 *        OCP MX convention.
 *   F6   4 elements per 3 bytes: the 3 bytes read as a little-endian
 *        24-bit integer v, element k is (v >> 6k) & 0x3F, so element 0 is
 *        the low 6 bits of the first byte.  safetensors does not define a
 *        6-bit packing; this is stfs's convention.
 * Both formats always hold whole groups (the reference reader refuses a
 * tensor whose bits are not a whole number of bytes: F4 counts are even,
 * F6 counts multiples of 4).
 */
#ifndef STFS_NPY_H
#define STFS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct buf;
struct tensor;

#define NPY_ALIGN 64		/* header length is a multiple of this */
#define NPY_V1_MAX 65535	/* longest dict + padding in a 1.0 header */

/* 1 when the .npy data part is the tensor's bytes as they are; 0 when it
 * is decoded to float32. */
int npy_is_raw(enum dtype d);

/* 1 when the .npy view has d's values: raw, or decoded to float32. */
int npy_decodes(enum dtype d);

/* npy_decodes(t's dtype), and for quantized blocks, that t's bytes are
 * exactly its blocks: the views (.npy, .txt, .stats) read t only then. */
int npy_readable(const struct tensor *t);

/* The header's descr: dtype_info()->numpy, or "<f4" for decoded dtypes. */
const char *npy_descr(enum dtype d);

/* Length of the header, a multiple of NPY_ALIGN.  O(rank). */
uint64_t npy_header_size(const struct tensor *t);

/* Append the header (exactly npy_header_size() bytes) to out.  0, or -1
 * when out of memory. */
int npy_header(const struct tensor *t, struct buf *out);

/* Bytes of the data part: the tensor's bytes, or 4 per element. */
uint64_t npy_data_size(const struct tensor *t);

/* Header plus data: the size of the .npy file. */
uint64_t npy_size(const struct tensor *t);

/* --- random access to the decoded data part --------------------------- */

/* Elements [e0, e1) (e0 < e1) of a dtype-d tensor lie in its bytes
 * [*off, *off + *len); *first is the element that starts at *off (e0
 * rounded down to a whole packing group, so equal to e0 except for F4,
 * F6 and quantized blocks). */
void npy_elem_bytes(enum dtype d, uint64_t e0, uint64_t e1, uint64_t *first,
		    uint64_t *off, uint64_t *len);

/* The source bytes (relative to the tensor's first byte) needed to
 * produce bytes [off, off + len) of the data part of a decoded dtype;
 * the range is clamped to the data part; *src_len is 0 when nothing is
 * left.  Pass the bytes to npy_decode() with the same off and len. */
void npy_src_range(const struct tensor *t, uint64_t off, uint64_t len,
		   uint64_t *src_off, uint64_t *src_len);

/* Write bytes [off, off + len) of the decoded data part to out, from src
 * holding the bytes npy_src_range() named.  Returns the number of bytes
 * written (len clamped to the data part).  O(len). */
size_t npy_decode(const struct tensor *t, const uint8_t *src, uint64_t off,
		  size_t len, uint8_t *out);

/* --- single elements ----------------------------------------------------- */

/* The raw code (up to 16 bits) of element j of a buffer whose byte 0
 * starts a packing group. */
unsigned npy_code(enum dtype d, const uint8_t *src, uint64_t j);

/* The float32 bits of a code of BF16, F16, an F8, an F6 or F4 (F16 for
 * the text view: IEEE binary16, NaN becomes the quiet NaN with its sign).
 * 0 for other dtypes. */
uint32_t npy_code_f32(enum dtype d, unsigned code);

/* float32 bits as a float, and back. */
float npy_f32(uint32_t bits);
uint32_t npy_f32_bits(float f);

#endif
