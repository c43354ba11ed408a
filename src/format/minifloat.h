/* minifloat.h - exact float32 values of the small float formats: BF16,
 * F16 (IEEE binary16), the five F8 formats, F6_E2M3, F6_E3M2 and F4
 * (E2M1).  The format layer holds them because more than the views need
 * them: GGUF's quantized blocks carry F16 scales (dequant.h).
 *
 * Every value of these formats is exactly a float32 (their smallest
 * subnormal, 2^-17 for E5M2FNUZ and 2^-24 for F16, is far above
 * float32's 2^-126).  NaN decodes to the quiet float32 NaN 0x7FC00000
 * with the input's sign bit (F16, E5M2, E4M3); the unsigned NaNs of the
 * FNUZ formats and of E8M0 decode to +NaN.  BF16 keeps its exact bits.
 * Negative zero is kept where the format has one.  view/npy.h lists each
 * format's bias and specials.
 */
#ifndef STFS_MINIFLOAT_H
#define STFS_MINIFLOAT_H

#include <stdint.h>

#include "format/dtype.h"

/* The float32 bits of code (the low bits of the format's width) of
 * dtype d; 0 for a dtype that is not one of these formats. */
uint32_t minifloat_bits(enum dtype d, unsigned code);

/* F16 alone, the scale of most quantized blocks: the value of
 * minifloat_bits(DTYPE_F16, code) as a float. */
float minifloat_f16(uint16_t code);

/* The F16 code nearest to x, ties to even (the rounding numpy uses when
 * it reads text into float16); finite x only. */
uint16_t minifloat_f16_nearest(double x);

#endif
