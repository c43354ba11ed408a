/* nvfp4_st.c - NVFP4 weights in safetensors (see nvfp4_st.h). */
#include "format/quant/nvfp4_st.h"

#include <string.h>

#include "format/dtype.h"
#include "format/minifloat.h"

static const float e2m1[16] = {
	0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
	-0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

uint64_t
nvfp4_st_scale_cols(const struct nvfp4_st *p)
{
	return (p->cols + NVFP4_ST_BLOCK - 1) / NVFP4_ST_BLOCK;
}

/* The float32 value of an F8_E4M3 code. */
static float
e4m3(uint8_t code)
{
	uint32_t b = minifloat_bits(DTYPE_F8_E4M3, code);
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

void
nvfp4_st_range(const struct nvfp4_st *p, const uint8_t *packed,
	       const uint8_t *scales, float global, uint64_t e0, uint64_t e1,
	       float *out)
{
	uint64_t scols = nvfp4_st_scale_cols(p), r0 = e0 / p->cols;
	uint64_t e = e0, r, c, stop, n, k;
	float prod[16], s;
	unsigned q;

	while (e < e1) {
		r = e / p->cols;
		c = e % p->cols;
		stop = (r + 1) * p->cols < e1 ? (r + 1) * p->cols : e1;
		for (; e < stop; e += n, c += n) {
			/* a run under one scale, to the block's edge: its
			 * 16 products first */
			n = NVFP4_ST_BLOCK - c % NVFP4_ST_BLOCK;
			if (n > stop - e)
				n = stop - e;
			s = e4m3(scales[(r - r0) * scols + c / NVFP4_ST_BLOCK]);
			s = p->modelopt ? s * global : s / global;
			for (q = 0; q < 16; q++)
				prod[q] = e2m1[q] * s;
			if (p->modelopt)	/* its table's code 8 is +0 */
				prod[8] = 0.0f * s;
			/* runs start at even elements and are even (e0,
			 * e1, cols and the block are): whole bytes */
			for (k = 0; k < n; k += 2) {
				uint8_t b = packed[(e - e0 + k) / 2];

				out[e - e0 + k] = prod[b & 0xf];
				out[e - e0 + k + 1] = prod[b >> 4];
			}
		}
	}
}
