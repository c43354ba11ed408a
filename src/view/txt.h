/* txt.h - the text view of a tensor: its values as text that awk, sort
 * and numpy.loadtxt read.
 *
 * Layout: one line per row of the last dimension (a scalar is one line,
 * a rank-1 tensor one line, a [2, 3, 4] tensor 6 lines of 4 values).
 * Every element takes exactly txt_width(dtype) bytes, right-aligned with
 * leading spaces, followed by ' ', or by '\n' when it ends its row.  So
 * element k starts at byte k * (width + 1), any byte offset maps to an
 * element in O(1), and a read of [off, off + len) renders only the
 * elements it covers: `tail`, `dd skip=` and random reads never render
 * the whole tensor.  A tensor with no elements is an empty file.
 *
 * Values (widths in brackets):
 *   BOOL          0 or 1 (any non-zero byte is 1) [1]
 *   U8 I8 U16 I16 U32 I32 U64 I64
 *                 decimal, '-' for negatives [3 4 5 6 10 11 20 20]
 *   F64           the shortest of %.15g, %.16g, %.17g that strtod()
 *                 reads back to the same double [24]
 *   F32           the shortest of %.6g .. %.9g that strtof() reads back
 *                 to the same float [15]
 *   F16           the shortest of %.3g .. %.5g that reads back (nearest
 *                 binary16, ties to even) to the same half [11]
 *   BF16, F8_*, F6_*, F4
 *                 the float32 value of the .npy view (see npy.h), printed
 *                 like F32; the width is the longest text any code of the
 *                 format produces [BF16 15, E5M2 14, E4M3 12, E8M0 14,
 *                 E4M3FNUZ 13, E5M2FNUZ 14, E2M3 6, E3M2 7, F4 4]
 *   Q4_0 ... MXFP4 (GGUF's quantized types that format/dequant.h decodes)
 *                 the float32 value of the .npy view, printed like F32 [15]
 *   C64           real part like F32, then the imaginary part with its
 *                 sign ('+' or '-') and 'j': "1.5-2j" [31]
 * Not-a-number is "nan" (never "-nan"), infinities are "inf" and "-inf";
 * negative zero is "-0".  So np.loadtxt(path, dtype=D) gives back exactly
 * the values of the .npy view, D being its dtype (float32 for the decoded
 * formats, complex64 for C64: np.loadtxt parses "re+imj").
 */
#ifndef STFS_TXT_H
#define STFS_TXT_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct tensor;

#define TXT_WIDTH_MAX 31	/* C64 */

/* Bytes of one element's text, separator not counted. */
unsigned txt_width(enum dtype d);

/* Size of the text view: numel * (width + 1). */
uint64_t txt_size(const struct tensor *t);

/* The source bytes (relative to the tensor's first byte) that
 * txt_render() needs for bytes [off, off + len) of the text; clamped to
 * the text's size, *src_len is 0 when nothing is left. */
void txt_src_range(const struct tensor *t, uint64_t off, uint64_t len,
		   uint64_t *src_off, uint64_t *src_len);

/* Write bytes [off, off + len) of the text to out, from src holding the
 * bytes txt_src_range() named for the same off and len.  Returns the
 * number of bytes written (len clamped to the text).  O(len). */
size_t txt_render(const struct tensor *t, const uint8_t *src, uint64_t off,
		  size_t len, char *out);

/* The text of element j of a buffer whose byte 0 starts a packing group
 * (see npy_elem_bytes()), unpadded and not NUL-terminated, into out
 * (room for TXT_WIDTH_MAX bytes).  Returns its length. */
size_t txt_format(enum dtype d, const uint8_t *src, uint64_t j, char *out);

#endif
