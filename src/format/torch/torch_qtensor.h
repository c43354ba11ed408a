/* torch_qtensor.h - a quantized tensor of a checkpoint
 * (torch.quantize_per_tensor, quantize_per_channel: a call of
 * torch._utils._rebuild_qtensor(storage, offset, size, stride,
 * quantizer_params, requires_grad, hooks)) described.
 *
 * Its integers (torch.qint8, quint8, qint32: I8, U8, I32) are a tensor
 * like any other (torch_tree.c); its scheme is metadata, NAME.__quantizer__:
 *
 *   {"qscheme": "torch.per_tensor_affine", "dtype": "torch.quint8",
 *    "scale": 0.05, "zero_point": 3, "value": "(q - zero_point) * scale"}
 *   {"qscheme": "torch.per_channel_affine", "dtype": "torch.qint8",
 *    "axis": 0, "scales": "NAME.q_per_channel_scales",
 *    "zero_points": "NAME.q_per_channel_zero_points", "value": ...}
 *
 * where a per-channel scheme's scales (F64) and zero points (I64) are
 * tensors of those names (what Tensor.q_per_channel_scales() and
 * q_per_channel_zero_points() return); float zero points (F32, with F32
 * scales) make it "torch.per_channel_affine_float_qparams", the qscheme
 * torch.load gives it (torch.save writes per_channel_affine for both);
 * "value" is the formula of Tensor.dequantize(), which
 * format/quant/torch_affine.h computes exactly (model/quant_torch.h
 * recognises the tensor by this description: MNT/.dequant/NAME holds its
 * values).  Other schemes and packed 4- and 2-bit storages
 * (QUInt4x2Storage) have no such description: the checkpoint is refused,
 * naming the tensor and what it is.
 */
#ifndef STFS_TORCH_QTENSOR_H
#define STFS_TORCH_QTENSOR_H

#include <stddef.h>

#include "base/buf.h"

struct pickle_value;
struct torch_value;

struct torch_qtensor {
	char why[200];		/* not described: "is ...", what it is */
	/* a per-channel scheme's tensors (PICKLE_CALLs), else NULL */
	const struct pickle_value *scales, *zero_points;
};

/* The quantizer of _rebuild_qtensor's arguments a, for the tensor named
 * name (len bytes), as JSON appended to text (val renders its scale).
 * 0; 1 with q->why when it is not one stfs describes; -1 with *val->e
 * (out of memory, too many values). */
int torch_qtensor_describe(const struct pickle_value *a, const char *name,
			   size_t len, struct torch_value *val,
			   struct buf *text, struct torch_qtensor *q);

#endif
