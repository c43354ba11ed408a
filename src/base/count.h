/* count.h - sums of counts and sizes that stop at UINT64_MAX rather than
 * wrap.
 *
 * One tensor's numbers are bounded (format/tensor_size.h: at most 2^56
 * elements, files under 2^62 bytes); their sums over a model or a tree
 * of models are not: a GGUF file of 300 tensors of 2^56 Q1_0 elements
 * (a sparse file of 3 EB) holds more than 2^64 parameters, and a sum
 * that wrapped would report a small number as the truth.  A sum that
 * would pass UINT64_MAX stays there, the most a count can say.
 */
#ifndef STFS_COUNT_H
#define STFS_COUNT_H

#include <stdint.h>

/* a + b, or UINT64_MAX when that does not fit. */
static inline uint64_t
count_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

#endif
