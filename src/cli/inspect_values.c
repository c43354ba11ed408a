/* inspect_values.c - the error between the values of two tensors of one
 * shape, for stfs-inspect --diff (inspect.h): how far a quantized
 * model's weights (dequantized: model/quant_model.h) are from the
 * release they were made from, tensor by tensor.
 *
 * Both tensors are decoded to float64 in chunks (floats of any width:
 * F64 and F32 as they are, F16 and the formats numpy lacks through
 * view/npy.h's exact decoders) and compared element by element: the
 * largest |a - b| and the root of the mean of (a - b)^2 over the pairs
 * where both are finite; a pair where either is not finite counts as
 * "nonfinite" unless both are the same infinity or both NaN.  A pair is
 * close (--atol, --rtol) as numpy's isclose(a, b) says: |a - b| <= atol +
 * rtol |b|, infinities only when equal, NaN never (equal_nan=False).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/inspect.h"
#include "format/dtype.h"
#include "format/minifloat.h"
#include "model/model.h"
#include "view/npy.h"

/* Elements per chunk: two float64 arrays and the bytes they come from. */
#define VALUES_CHUNK (256u << 10)

int
inspect_values_float(enum dtype d)
{
	switch (d) {
	case DTYPE_F64:
	case DTYPE_F32:
	case DTYPE_F16:
		return 1;
	default:
		/* decoded to float32 by the .npy view: minifloats and
		 * GGUF's quantized blocks */
		return npy_decodes(d) && !npy_is_raw(d);
	}
}

/* Elements [e0, e0 + n) of mt as float64 into out; raw holds the bytes
 * (at least 8 n, and what npy_src_range() asks for), f n floats. */
static int
decode(const struct model *m, const struct model_tensor *mt, uint64_t e0,
       size_t n, uint8_t *raw, float *f, double *out)
{
	const struct tensor *t = mt->t;
	uint64_t so, sl;
	size_t i;
	int rc;

	switch (t->dtype) {
	case DTYPE_F64:
		return model_tensor_read(m, mt, e0 * 8, n * 8, out);
	case DTYPE_F32:
		rc = model_tensor_read(m, mt, e0 * 4, n * 4, raw);
		for (i = 0; !rc && i < n; i++) {
			float v;

			memcpy(&v, raw + 4 * i, 4);
			out[i] = v;
		}
		return rc;
	case DTYPE_F16:
		rc = model_tensor_read(m, mt, e0 * 2, n * 2, raw);
		for (i = 0; !rc && i < n; i++)
			out[i] = minifloat_f16((uint16_t)(raw[2 * i] |
							  raw[2 * i + 1] << 8));
		return rc;
	default:
		npy_src_range(t, e0 * 4, n * 4, &so, &sl);
		rc = model_tensor_read(m, mt, so, (size_t)sl, raw);
		if (rc)
			return rc;
		npy_decode(t, raw, e0 * 4, n * 4, (uint8_t *)f);
		for (i = 0; i < n; i++)
			out[i] = f[i];
		return 0;
	}
}

int
inspect_values_diff(const struct model *ma, const struct model_tensor *a,
		    const struct model *mb, const struct model_tensor *b,
		    double atol, double rtol, struct inspect_values *out)
{
	uint64_t numel = a->t->numel, e;
	size_t raw_len = VALUES_CHUNK * 8 + 4096;
	double *x = malloc(VALUES_CHUNK * sizeof(*x));
	double *y = malloc(VALUES_CHUNK * sizeof(*y));
	float *f = malloc(VALUES_CHUNK * sizeof(*f));
	uint8_t *raw = malloc(raw_len);
	int rc = x && y && f && raw ? 0 : -ENOMEM;

	memset(out, 0, sizeof(*out));
	for (e = 0; !rc && e < numel; e += VALUES_CHUNK) {
		size_t n = numel - e < VALUES_CHUNK ? (size_t)(numel - e) :
			   VALUES_CHUNK, i;

		rc = decode(ma, a, e, n, raw, f, x);
		if (!rc)
			rc = decode(mb, b, e, n, raw, f, y);
		for (i = 0; !rc && i < n; i++) {
			double d = x[i] - y[i];

			out->count++;
			if (!isfinite(x[i]) || !isfinite(y[i])) {
				if (!(isnan(x[i]) && isnan(y[i])) &&
				    x[i] != y[i]) {
					out->nonfinite++;
					out->differ++;
				}
				if (!(x[i] == y[i]))	/* NaN: never */
					out->far++;
				continue;
			}
			if (d != 0)
				out->differ++;
			d = fabs(d);
			if (d > atol + rtol * fabs(y[i]))
				out->far++;
			if (d > out->max_abs)
				out->max_abs = d;
			out->sum_sq += d * d;
		}
	}
	free(x);
	free(y);
	free(f);
	free(raw);
	return rc;
}

double
inspect_values_rms(const struct inspect_values *v)
{
	uint64_t finite = v->count - v->nonfinite;

	return finite ? sqrt(v->sum_sq / (double)finite) : 0.0;
}
