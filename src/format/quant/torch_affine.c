/* torch_affine.c - PyTorch's quantized tensors dequantized (see
 * torch_affine.h). */
#include "format/quant/torch_affine.h"

#include <string.h>

static uint64_t
load_le(const uint8_t *p, unsigned n)
{
	uint64_t x = 0;
	unsigned k;

	for (k = 0; k < n; k++)
		x |= (uint64_t)p[k] << (8 * k);
	return x;
}

static float
load_f32(const uint8_t *p)
{
	uint32_t b = (uint32_t)load_le(p, 4);
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

static double
load_f64(const uint8_t *p)
{
	uint64_t b = load_le(p, 8);
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* Integer k of q. */
static inline int32_t
qval(enum dtype d, const uint8_t *q, uint64_t k)
{
	switch (d) {
	case DTYPE_I8:
		return (int8_t)q[k];
	case DTYPE_U8:
		return q[k];
	default:
		return (int32_t)(uint32_t)load_le(q + 4 * k, 4);
	}
}

const char *
torch_affine_dtype_name(enum dtype qdtype)
{
	switch (qdtype) {
	case DTYPE_I8:
		return "torch.qint8";
	case DTYPE_U8:
		return "torch.quint8";
	case DTYPE_I32:
		return "torch.qint32";
	default:
		return NULL;
	}
}

int
torch_affine_zero_point_fits(enum dtype qdtype, int64_t z)
{
	switch (qdtype) {
	case DTYPE_I8:
		return z >= INT8_MIN && z <= INT8_MAX;
	case DTYPE_U8:
		return z >= 0 && z <= UINT8_MAX;
	case DTYPE_I32:
		return z >= INT32_MIN && z <= INT32_MAX;
	default:
		return 0;
	}
}

uint64_t
torch_affine_bad_zero_point(const struct torch_affine *p, const uint8_t *z,
			    uint64_t n)
{
	uint64_t k;

	if (p->zdtype != DTYPE_I64)
		return n;
	for (k = 0; k < n; k++)
		if (!torch_affine_zero_point_fits(p->qdtype,
				(int64_t)load_le(z + 8 * k, 8)))
			return k;
	return n;
}

void
torch_affine_channels(const struct torch_affine *p, uint64_t e0, uint64_t e1,
		      uint64_t *c0, uint64_t *n)
{
	uint64_t j0 = e0 / p->inner, j1 = (e1 - 1) / p->inner;

	*c0 = j0 % p->channels;
	*n = j1 - j0 + 1 < p->channels ? j1 - j0 + 1 : p->channels;
}

/* Per tensor: float32(scale) * (q - zero_point), the difference in 32-bit
 * integers. */
static void
per_tensor(const struct torch_affine *p, const uint8_t *q, uint64_t n,
	   float *out)
{
	float s = (float)p->scale;
	uint32_t z = (uint32_t)p->zero_point;
	uint64_t k;

	for (k = 0; k < n; k++)
		out[k] = s * (float)(int32_t)((uint32_t)qval(p->qdtype, q, k) -
					      z);
}

void
torch_affine_range(const struct torch_affine *p, const uint8_t *q,
		   const uint8_t *s, const uint8_t *z, uint64_t e0, uint64_t e1,
		   float *out)
{
	unsigned ssz = p->sdtype == DTYPE_F64 ? 8 : 4;
	unsigned zsz = p->zdtype == DTYPE_I64 ? 8 : 4;
	int fq = p->zdtype == DTYPE_F32;
	uint64_t j0, e, stop, k;

	if (!p->per_channel) {
		per_tensor(p, q, e1 - e0, out);
		return;
	}
	j0 = e0 / p->inner;
	for (e = e0; e < e1; e = stop) {
		uint64_t j = e / p->inner, c = (j - j0) % p->channels;
		double sd = ssz == 8 ? load_f64(s + 8 * c) :
			    (double)load_f32(s + 4 * c);
		float zf = zsz == 8 ? (float)(int64_t)load_le(z + 8 * c, 8) :
			   load_f32(z + 4 * c);
		float sf = (float)sd;

		stop = (j + 1) * p->inner < e1 ? (j + 1) * p->inner : e1;
		if (fq)
			for (k = e; k < stop; k++)
				out[k - e0] = ((float)qval(p->qdtype, q,
							   k - e0) - zf) * sf;
		else
			for (k = e; k < stop; k++)
				out[k - e0] = (float)((double)((float)qval(
					p->qdtype, q, k - e0) - zf) * sd);
	}
}
