/* mxfp4_hf.c - transformers' MXFP4 blocks (see mxfp4_hf.h). */
#include "format/quant/mxfp4_hf.h"

#include <string.h>

static const float e2m1[16] = {
	0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
	-0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

/* 2^(s - 127) as a float32: 0 is the subnormal 2^-127, 255 infinity. */
static float
e8m0_pow2(unsigned s)
{
	uint32_t b;
	float f;

	if (s == 0)
		return 0x1p-127f;
	b = s == 255 ? 0x7f800000u : (uint32_t)s << 23;
	memcpy(&f, &b, sizeof(f));
	return f;
}

/* Output rows are written one after the other and the blocks read with a
 * stride: reading two bytes' worth of codes per output pair costs less
 * than writing across rows R floats apart. */
void
mxfp4_hf_rows(const uint8_t *blk, const uint8_t *sc, uint64_t R, uint64_t c0,
	      uint64_t c1, float *pow2, float *out)
{
	uint64_t nb = (c1 - c0) / MXFP4_HF_BLOCK, stride, r, b;
	unsigned k;

	stride = nb * MXFP4_HF_BLOCK_BYTES;
	for (b = 0; b < nb; b++) {
		for (r = 0; r < R; r++)
			pow2[r] = e8m0_pow2(sc[r * nb + b]);
		for (k = 0; k < MXFP4_HF_BLOCK_BYTES; k++) {
			const uint8_t *q = blk + b * MXFP4_HF_BLOCK_BYTES + k;
			float *lo = out + (b * MXFP4_HF_BLOCK + 2 * k) * R;
			float *hi = lo + R;

			for (r = 0; r < R; r++) {
				unsigned v = q[r * stride];

				lo[r] = e2m1[v & 0xf] * pow2[r];
				hi[r] = e2m1[v >> 4] * pow2[r];
			}
		}
	}
}
