/* dequant_grids.h - the codebooks of ggml's i-quants (IQ1_S, IQ1_M,
 * IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), expanded from a compact form.
 *
 * Each grid is a list of points of a small lattice: 8 (or 4) coordinates
 * taking one of a few values (IQ2's 8, 25, 43; IQ3_XXS's 4, 12, ..., 62;
 * IQ3_S's odd 1..15; IQ1's -1, 0, 1), in ggml's order.  ggml's
 * ggml-common.h spells each entry out; dequant_grids.c keeps only which
 * lattice points are entries (scripts/iq-grids derives that from
 * ggml-common.h and checks it), and tests/gguf_dequant_ref.py checks its
 * own expansion against the sha256 of ggml's tables.
 */
#ifndef STFS_DEQUANT_GRIDS_H
#define STFS_DEQUANT_GRIDS_H

#include <stdint.h>

struct dequant_grids {
	uint8_t iq2xxs[256][8];
	uint8_t iq2xs[512][8];
	uint8_t iq2s[1024][8];
	uint8_t iq3xxs[256][4];
	uint8_t iq3s[512][4];
	int8_t iq1s[2048][8];
	/* IQ2's and IQ3_XXS's signs: 7 stored bits, the 8th their parity
	 * (an even count of minus signs; ggml's ksigns_iq2xs) */
	uint8_t signs[128];
	/* bit j of a sign byte as a factor: -1.0 when set, else 1.0 */
	float sign_factors[256][8];
};

/* The grids, expanded on the first call (any thread). */
const struct dequant_grids *dequant_grids(void);

#endif
