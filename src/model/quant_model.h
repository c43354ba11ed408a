/* quant_model.h - a model as its framework loads it: its quantized
 * weights (quant.h) dequantized.
 *
 * The derived model of a model m holds m's tensors, except that the parts
 * of each quantized weight give way to the weight's logical tensor: F32
 * (or BF16, quant_model_open()), under the name and in the shape its
 * framework gives it
 * (`model.layers.0.mlp.up_proj.weight` [out, in] for a GPTQ layer).  Its
 * shards are m's files (sharing m's sources; their tables list the
 * tensors it keeps) and one more, "dequantized", the logical tensors back
 * to back, computed when read (quant_source.h).  Everything that works on
 * a model works on it unchanged: the views (the mount's .dequant/
 * directory is its view), virtual safetensors files (a dequantized
 * model.safetensors, its bf16/ twin), stfs-inspect --stats, --diff,
 * --merge.
 *
 * Tensor order: m's kept tensors in m's order, then the logical tensors
 * in the order their weights were found (quant.h).
 */
#ifndef STFS_QUANT_MODEL_H
#define STFS_QUANT_MODEL_H

#include <stddef.h>

#include "format/dtype.h"

struct buf;
struct err;
struct model;
struct model_tensor;
struct quant;

/* The derived model of m, which must outlive it, its logical tensors of
 * dtype dt: F32, or BF16 or F16 (the float32 values rounded to nearest
 * even, as torch's .to(torch.bfloat16) and .to(torch.float16): the model
 * as a BF16 or F16 release has it); *out
 * NULL when m has no quantized weight (and no candidate was refused) or
 * is itself derived.  0, or -1 with *e (ERR_NO_MEMORY). */
int quant_model_open(const struct model *m, enum dtype dt, struct model **out,
		     struct err *e);

/* Replace *m by its derived model (F32) when there is one, which then
 * owns the original (freed with it).  0, or -1 with *e (*m unchanged). */
int quant_model_take(struct model **m, struct err *e);

/* The weights behind a derived model, NULL for any other model. */
const struct quant *quant_model_quant(const struct model *d);

/* The model a derived model was made from, NULL for any other. */
const struct model *quant_model_base(const struct model *d);

/* The tensor of derived model d that replaces tensor i of its base (the
 * logical tensor named like it: an FP8 weight, bitsandbytes' packed
 * codes), or SIZE_MAX. */
size_t quant_model_replacement(const struct model *d, size_t i);

/* The sidecar's "quantization" member of a logical tensor of d
 * (",\n  \"quantization\": {...}", the sidecar's layout) appended to b;
 * nothing for other tensors.  0, or -1 when out of memory. */
int quant_model_sidecar(const struct model *d, const struct model_tensor *mt,
			struct buf *b);

/* The "quantization" object of __summary__.json, as a jansson json_t *:
 * for a derived model, weights per scheme, the config that told
 * settings, what was assumed, the candidates left as stored and why; for
 * a model with quantized weights, where its derived model is (a mount's
 * "dequant": ".dequant/") and what it holds as far as names, dtypes,
 * shapes and the config tell (quant_count()), what was assumed too;
 * NULL for any other model.  0, or -1 when out of memory (*out NULL:
 * unknown, not absent). */
int quant_model_summary(const struct model *d, void **out);

/* What the weights of m took that no config told, as a jansson json_t *:
 * {"assumed": {setting: weights}, "assumed_why": why}, the keys
 * quant_model_summary() adds (the settings worded as in the sidecars:
 * "block [128, 128]", "checkpoint_format gptq (v1)", "group_size 128");
 * of a derived model, its weights named "PREFIX." only when prefix is
 * not NULL; of a model with quantized weights, as far as quant_count()
 * tells; NULL when none took any (or m has none).  0, or -1 when out of
 * memory (*out NULL: unknown, not absent). */
int quant_model_assumed(const struct model *m, const char *prefix,
			void **out);

#endif
