/* quant_torch.h - recognising PyTorch's quantized tensors (model/quant.h,
 * on a struct quant_scan).
 *
 * A PyTorch checkpoint's quantized tensor NAME mounts as its integers
 * (I8, U8, I32) with its scheme in the metadata NAME.__quantizer__ and,
 * per channel, its scales and zero points as the tensors the scheme names
 * (format/torch/torch_qtensor.h).  Such a tensor is a weight of scheme
 * QUANT_TORCH (format/quant/torch_affine.h): parts 0 NAME, 1 the scales
 * and 2 the zero points (per channel), its logical tensor NAME in NAME's
 * shape (a strided view's too: its integers are read gathered).  The
 * telltale is the metadata key, not a tensor's name, and only a
 * PyTorch checkpoint's metadata counts (a safetensors file's is text its
 * writer chose).  A description that does not fit its tensors (a dtype
 * other than the integers', scales of another length than the axis, a
 * zero point outside the dtype's range, a scheme torch_affine.h does not
 * decode) refuses the weight with the reason.  The per-channel zero
 * points are read (8 bytes a channel, in chunks) unless counting.
 */
#ifndef STFS_QUANT_TORCH_H
#define STFS_QUANT_TORCH_H

struct buf;
struct model;
struct model_tensor;
struct quant_scan;

/* 1 when a PyTorch checkpoint of m describes a quantized tensor. */
int quant_torch_any(const struct model *m);

/* Every quantized tensor m's metadata describes: a weight added, or
 * refused. */
void quant_torch_scan(struct quant_scan *f);

/* The sidecar's "quantized" member of a quantized tensor's integers
 * (",\n  \"quantized\": {...}", the sidecar's layout: its scheme, scale
 * and zero point or the scales' and zero points' tensors, as its
 * __quantizer__ says them) appended to b; nothing for another tensor.
 * 0, or -1 when out of memory. */
int quant_torch_sidecar(const struct model *m, const struct model_tensor *mt,
			struct buf *b);

#endif
