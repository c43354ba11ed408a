/* quant_config.h - what a model's configuration says about its quantized
 * weights: `quantization_config` of config.json beside the model, and
 * quantize_config.json (AutoGPTQ's and AutoAWQ's own file), as
 * model/model_beside.h gives them: from a local folder (the Hugging Face
 * hub cache too), or fetched at mount from an hf:// or s3:// listing.  A
 * model named by its URL has none: it is recognised from its tensors'
 * names, dtypes and shapes alone (model/quant.h says what that cannot
 * know, and its sidecars what was assumed).
 *
 * Only the few settings the tensors do not tell are kept; a missing,
 * unreadable or odd file says nothing (it is never an error: the tensors
 * still speak for themselves).
 */
#ifndef STFS_QUANT_CONFIG_H
#define STFS_QUANT_CONFIG_H

#include <stdint.h>

struct model;

struct quant_config {
	const char *file;	/* the file that spoke ("config.json",
				   "quantize_config.json"), or NULL */
	const char *why_none;	/* file NULL: why none did, for the
				   sidecars of what was assumed */
	char method[24];	/* quant_method, lower case: "fp8", "gptq",
				   "awq", "bitsandbytes", "mxfp4",
				   "compressed-tensors", ... or "" */
	unsigned bits;		/* bits / w_bit; 0 unknown */
	int64_t group_size;	/* group_size / q_group_size; 0 unknown, -1
				   one group for the whole input */
	int gptq_v2;		/* checkpoint_format "gptq_v2" */
	int awq_gemv;		/* version "gemv" (not AutoAWQ's GEMM) */
	int symmetric;		/* compressed-tensors: 1 true, 0 false, -1
				   unknown */
	char ct_format[24];	/* compressed-tensors' format, lower case:
				   "pack-quantized", ... or "" */
	uint64_t block[2];	/* weight_block_size or block_structure;
				   0 unknown */
};

/* Read the configuration beside m into c (zeroed first): what cannot be
 * read says nothing.  0, or -1 when out of memory (then what it says is
 * unknown: no guess may stand for it). */
int quant_config_read(const struct model *m, struct quant_config *c);

#endif
