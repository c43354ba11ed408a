/* quant_plain.h - the config.json of a model whose quantized weights are
 * dequantized (MNT/.dequant/.files/, issue 36): what a loader reads to
 * load it as the plain model it stands for.
 *
 * The config without its quantization_config (a loader that finds one
 * would quantize again, or refuse the plain tensors), and the dtype the
 * dequantized weights are written in: the config's torch_dtype (or
 * dtype, transformers' newer name) when it is float16 or float32 (kept),
 * else BF16, which a config that names none is then given as
 * torch_dtype: "bfloat16" (so from_pretrained(torch_dtype="auto") loads
 * what the files hold).
 */
#ifndef STFS_QUANT_PLAIN_H
#define STFS_QUANT_PLAIN_H

#include <stddef.h>

#include "format/dtype.h"

/* The plain config of text[0..len) (a config.json) in *out (malloc'd,
 * *out_len bytes, ending in a newline, then a NUL) and the dtype of its
 * weights in
 * *dt; a text that is no JSON object is kept as it is (and *dt BF16).
 * 0, or -1 when out of memory. */
int quant_plain_config(const char *text, size_t len, char **out,
		       size_t *out_len, enum dtype *dt);

#endif
