/* le.h - little-endian fields of quantized blocks and packed weights
 * (dequant.c, dequant_iq.c, quant/): any alignment, any host. */
#ifndef STFS_LE_H
#define STFS_LE_H

#include <stdint.h>

#include "format/minifloat.h"

static inline unsigned
le_u16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static inline uint32_t
le_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* An F16 ("half", ggml_half), decoded exactly. */
static inline float
le_f16(const uint8_t *p)
{
	return minifloat_f16((uint16_t)le_u16(p));
}

#endif
