/* bnb4.c - bitsandbytes' 4-bit blocks (see bnb4.h). */
#include "format/quant/bnb4.h"

void
bnb4_run(const float code[16], const uint8_t *packed, const float *absmax,
	 uint64_t blocksize, uint64_t e0, uint64_t e1, float *out)
{
	uint64_t b0 = e0 / blocksize, e = e0, stop, k;

	while (e < e1) {
		float a = absmax[e / blocksize - b0];

		stop = (e / blocksize + 1) * blocksize;
		if (stop > e1)
			stop = e1;
		for (k = e; k < stop; k++) {
			unsigned v = packed[(k - e0) / 2];

			out[k - e0] = code[k & 1 ? v & 0xf : v >> 4] * a;
		}
		e = stop;
	}
}

void
bnb4_absmax(const float code[256], const uint8_t *q, const float *nabsmax,
	    uint64_t nblock, float offset, uint64_t b0, uint64_t b1,
	    float *out)
{
	uint64_t n0 = b0 / nblock, b;

	for (b = b0; b < b1; b++) {
		float v = code[q[b - b0]] * nabsmax[b / nblock - n0];

		out[b - b0] = v + offset;
	}
}
