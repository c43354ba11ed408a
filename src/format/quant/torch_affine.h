/* torch_affine.h - PyTorch's quantized tensors (torch.quantize_per_tensor,
 * quantize_per_channel, the weights of torch.ao.nn.quantized modules) as
 * the floats Tensor.dequantize() gives, bit for bit (torch 1.13, checked
 * on its CPU kernels: the scalar path and the AVX2 and AVX-512 ones agree).
 *
 * The integers q are torch.qint8 (I8), quint8 (U8) or qint32 (I32), in C
 * order (a strided view's gathered).  Three schemes:
 *
 *   per_tensor_affine   float32(scale) * (float)(q - zero_point): the
 *                       difference in 32-bit integers (a qint32's wraps
 *                       as torch's does), the product in float32
 *   per_channel_affine  float32(((float)q - (float)zero_point[c]) *
 *                       scale[c]): the difference in float32, the
 *                       product in float64 (scales F64, zero points I64;
 *                       F32 scales are widened, as torch stores them)
 *   per_channel_affine_float_qparams  ((float)q - zero_point[c]) *
 *                       scale[c], all float32 (zero points F32, the
 *                       embedding bags' scheme; F64 scales are rounded
 *                       to float32, as torch keeps them)
 *
 * c is the element's index along the axis: element e of a tensor whose
 * dimensions after the axis hold `inner` elements, `channels` along it,
 * has c = (e / inner) % channels.  Zero points outside the dtype's range
 * are refused by torch's dequantize(), and so by the caller
 * (torch_affine_zero_point_fits()).  Pure functions; no I/O.
 */
#ifndef STFS_TORCH_AFFINE_H
#define STFS_TORCH_AFFINE_H

#include <stdint.h>

#include "format/dtype.h"

struct torch_affine {
	enum dtype qdtype;	/* I8, U8, I32 */
	int per_channel;
	/* per tensor */
	double scale;		/* as the checkpoint holds it */
	int64_t zero_point;	/* in qdtype's range */
	/* per channel */
	uint32_t axis;
	uint64_t channels, inner;	/* >= 1 */
	enum dtype sdtype;	/* scales: F64, F32 */
	enum dtype zdtype;	/* zero points: I64, or F32 (float qparams) */
};

/* torch's name of the integers of qdtype: "torch.qint8" (I8),
 * "torch.quint8" (U8), "torch.qint32" (I32); NULL for another dtype. */
const char *torch_affine_dtype_name(enum dtype qdtype);

/* 1 when z is in the range of qdtype's integers (I8, U8, I32). */
int torch_affine_zero_point_fits(enum dtype qdtype, int64_t z);

/* The first of zero points z[0..n) (of p->zdtype I64, little-endian)
 * outside qdtype's range, or n when all fit; float zero points always
 * fit. */
uint64_t torch_affine_bad_zero_point(const struct torch_affine *p,
				     const uint8_t *z, uint64_t n);

/* The channels elements [e0, e1) use (e0 < e1): *n of them, from channel
 * *c0 on, past the last going on from channel 0 (n <= channels). */
void torch_affine_channels(const struct torch_affine *p, uint64_t e0,
			   uint64_t e1, uint64_t *c0, uint64_t *n);

/* Elements [e0, e1) of the tensor in C order: q holds their integers
 * (little-endian); per channel, s and z the scales and zero points of the
 * channels torch_affine_channels() names, in that order (little-endian,
 * of sdtype and zdtype; per tensor NULL).  out gets e1 - e0 floats. */
void torch_affine_range(const struct torch_affine *p, const uint8_t *q,
			const uint8_t *s, const uint8_t *z, uint64_t e0,
			uint64_t e1, float *out);

#endif
