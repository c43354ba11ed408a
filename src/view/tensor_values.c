/* tensor_values.c - a tensor's bytes as float64 values (see
 * tensor_values.h). */
#include "view/tensor_values.h"

#include <string.h>

#include "format/dequant.h"
#include "format/table.h"
#include "view/npy.h"
#include "view/tensor_stats.h"

int
tensor_values_readable(const struct tensor *t)
{
	return npy_readable(t);
}

uint64_t
tensor_values_bytes(const struct tensor *t)
{
	/* a strided view's bytes are its elements gathered (table.h) */
	return t->strides ? t->numel * (dtype_info(t->dtype)->bits / 8) :
	       t->end - t->begin;
}

unsigned
tensor_values_per_elem(enum dtype d)
{
	return d == DTYPE_C64 ? 2 : 1;
}

size_t
tensor_values_chunk(enum dtype d, size_t want)
{
	size_t bb = dequant_block_bytes(d);

	if (bb)
		return want < bb ? bb : want / bb * bb;
	if (want < TENSOR_STATS_GRAIN)
		return TENSOR_STATS_GRAIN;
	return want / TENSOR_STATS_GRAIN * TENSOR_STATS_GRAIN;
}

size_t
tensor_values_count(enum dtype d, size_t len)
{
	unsigned bits = dtype_info(d)->bits;

	if (dequant_has(d))
		return len / dequant_block_bytes(d) * dequant_block(d);
	if (d == DTYPE_C64)
		return len / 4;
	return bits ? (size_t)(len * 8 / bits) : 0;
}

#define INTS(T)								\
	do {								\
		T v_;							\
		for (i = 0; i < n; i++) {				\
			memcpy(&v_, src + sizeof(T) * i, sizeof(T));	\
			out[i] = (double)v_;				\
		}							\
	} while (0)

void
tensor_values_decode(enum dtype d, const uint8_t *src, size_t len,
		     double *out)
{
	size_t n = tensor_values_count(d, len), i;

	if (dequant_has(d)) {
		enum { BATCH = 4096 };
		float vals[BATCH];
		size_t per = BATCH / dequant_block(d), nb, k, j, at = 0;
		size_t bb = dequant_block_bytes(d);

		nb = len / bb;
		while (nb) {
			k = nb < per ? nb : per;
			dequant_blocks(d, src, k, vals);
			for (j = 0; j < k * dequant_block(d); j++)
				out[at++] = vals[j];
			src += k * bb;
			nb -= k;
		}
		return;
	}
	switch (d) {
	case DTYPE_BOOL:
	case DTYPE_U8:
		INTS(uint8_t);
		return;
	case DTYPE_I8:
		INTS(int8_t);
		return;
	case DTYPE_I16:
		INTS(int16_t);
		return;
	case DTYPE_U16:
		INTS(uint16_t);
		return;
	case DTYPE_I32:
		INTS(int32_t);
		return;
	case DTYPE_U32:
		INTS(uint32_t);
		return;
	case DTYPE_I64:
		INTS(int64_t);
		return;
	case DTYPE_U64:
		INTS(uint64_t);
		return;
	case DTYPE_F32:
	case DTYPE_C64:
		INTS(float);
		return;
	case DTYPE_F64:
		INTS(double);
		return;
	default:	/* F16, BF16, the F8s, F6, F4 */
		for (i = 0; i < n; i++)
			out[i] = npy_f32(npy_code_f32(d, npy_code(d, src, i)));
		return;
	}
}
