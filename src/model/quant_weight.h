/* quant_weight.h - what a quantized weight of a model is (struct
 * quant_weight) and the table of a model's weights (struct quant): the
 * types model/quant.h finds and the modules around it (quant_scan.h,
 * quant_render.h, quant_model.h) read.  Types only.
 */
#ifndef STFS_QUANT_WEIGHT_H
#define STFS_QUANT_WEIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "format/quant/fp8_scaled.h"
#include "format/quant/int_packed.h"
#include "format/quant/nvfp4_st.h"
#include "format/quant/torch_affine.h"

enum quant_scheme {
	QUANT_FP8,	/* format/quant/fp8_scaled.h */
	QUANT_MXFP4,	/* format/quant/mxfp4_hf.h */
	QUANT_GPTQ,	/* format/quant/int_packed.h */
	QUANT_AWQ,	/* format/quant/int_packed.h */
	QUANT_BNB4,	/* format/quant/bnb4.h */
	QUANT_NVFP4,	/* format/quant/nvfp4_st.h */
	QUANT_CT_INT,	/* format/quant/int_packed.h: compressed-tensors'
			   pack-quantized */
	QUANT_TORCH,	/* format/quant/torch_affine.h: PyTorch's quantized
			   tensors */
};

#define QUANT_PARTS 6		/* stored tensors of one weight, at most */
#define QUANT_ABSENT SIZE_MAX	/* an optional part that is not there */
#define QUANT_RANK_MAX 8
/* Values in a logical row of a transposed layout (GPTQ's and AWQ's
 * inputs, MXFP4's R), which is computed whole: more is refused. */
#define QUANT_ROW_MAX (1u << 24)
/* The float32 bytes of every weight computed (the computed shard of the
 * dequantized model, quant_model.h) stay a file size: a weight past it,
 * like one of more than 2^56 values, is refused. */
#define QUANT_DATA_MAX ((uint64_t)1 << 62)

/* Settings that change values, taken without a config that tells them
 * (when struct quant's config is NULL, its assumed_why says why none
 * did; else that config does not say). */
enum quant_assumed {
	QUANT_ASSUMED_FORMAT = 1,	/* GPTQ's checkpoint format: v1 */
	QUANT_ASSUMED_BLOCK = 2,	/* FP8's block: 128 x 128, or what
					   the shapes divide into */
	QUANT_ASSUMED_GROUP = 4,	/* GPTQ's, AWQ's or CT's group size (no
					   g_idx): the input over the groups */
};

/* What a weight took that no config told: which settings and the values
 * taken (its sidecar's "assumed"; the summaries count weights per
 * distinct one). */
struct quant_assumption {
	unsigned what;		/* enum quant_assumed; 0: nothing */
	uint64_t block[2];	/* QUANT_ASSUMED_BLOCK: FP8's, else 0 */
	uint64_t group_size;	/* QUANT_ASSUMED_GROUP, else 0 */
};

/* Parts, by scheme (quant_role() names them):
 *   fp8    0 weight, 1 scale
 *   mxfp4  0 blocks, 1 scales
 *   gptq   0 qweight, 1 qzeros, 2 scales, 3 g_idx (optional)
 *   awq    0 qweight, 1 qzeros, 2 scales
 *   bnb4   0 weight, 1 absmax, 2 quant_map, 3 quant_state,
 *          4 nested_absmax, 5 nested_quant_map (both or neither)
 *   nvfp4  0 packed, 1 scale, 2 global_scale
 *   ct-int 0 packed, 1 zero_point (asymmetric), 2 scale, 3 g_idx
 *          (optional), 4 shape
 *   torch  0 int_repr, 1 scales, 2 zero_points (both per channel only) */
struct quant_weight {
	const char *name;	/* logical name, NUL-terminated too */
	uint32_t name_len;
	uint32_t rank;
	uint64_t shape[QUANT_RANK_MAX];
	uint64_t numel;
	enum quant_scheme scheme;
	const char *label;	/* "fp8-block", "gptq", "bnb-nf4", ... */
	size_t part[QUANT_PARTS];	/* model tensor indexes */
	size_t replaces;	/* the part named like the logical tensor
				   (fp8: the weight, bnb4: the packed codes),
				   else QUANT_ABSENT */
	struct quant_assumption assumed;
	union {
		struct fp8_scaled fp8;
		struct {
			uint64_t experts, rows, groups;	/* blocks
						   [E, R, G, 16] */
		} mx;
		struct int_packed ip;
		struct {
			uint64_t blocksize, nested_blocksize;
			float offset;	/* nested only */
			int nested;
			char dtype[16];	/* the quant_state's "dtype" */
		} bnb;
		struct nvfp4_st nv;
		struct torch_affine ta;
	} u;
};

struct quant {
	size_t n;
	struct quant_weight *w;	/* in model order of their first part */
	const char *config;	/* the file that told settings, or NULL */
	const char *assumed_why;	/* config NULL: why none did */
	size_t nrefused;	/* candidates left as stored */
	struct quant_refusal {	/* the first QUANT_REFUSED_KEPT of them */
		char *text;	/* "NAME: why" (the name may hold NUL) */
		size_t len;
	} *refused;
	size_t nkept;
	/* per stored tensor, or NULL when none is: 1 for a refused
	 * weight's own tensor (its name in refused[]), which has no plain
	 * form and is left out of the dequantized model */
	uint8_t *refused_at;
	size_t *by_replaced;	/* weights that replace a part, by the
				   part's index (quant_replacing()) */
	size_t nreplacing;
	void *priv;		/* names */
};

#define QUANT_REFUSED_KEPT 64

/* Weights per scheme label and per assumption, as far as names, dtypes,
 * shapes and the config tell (quant_count()). */
#define QUANT_LABELS 16
#define QUANT_ASSUMPTIONS 16
struct quant_count {
	size_t weights;
	size_t refused;		/* candidates left as stored */
	size_t nlabels;
	struct {
		const char *label;	/* "fp8-block", ... */
		size_t n;
	} label[QUANT_LABELS];
	const char *config;	/* as struct quant's */
	const char *assumed_why;
	size_t nassumed;	/* distinct assumptions, the first ones */
	struct {
		struct quant_assumption a;
		size_t n;	/* weights that took it */
	} assumed[QUANT_ASSUMPTIONS];
	size_t assumed_more;	/* weights of the assumptions past those
				   (the summaries' "other settings") */
};

#endif
