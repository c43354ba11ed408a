/* tensor_values.h - a tensor's bytes as float64 values, for the pictures
 * (.png/): every dtype, decoded as .npy/ decodes it (npy.h), GGUF's
 * quantized blocks as their float32 values (format/dequant.h), integers
 * and BOOL as numbers, C64 as its real and imaginary parts (two values
 * per element, as .stats/ counts it).  No I/O.
 */
#ifndef STFS_TENSOR_VALUES_H
#define STFS_TENSOR_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct tensor;

/* 1 when tensor_values_decode() decodes t (npy_readable(t)). */
int tensor_values_readable(const struct tensor *t);

/* Bytes of t's data (numel elements; a strided view's gathered). */
uint64_t tensor_values_bytes(const struct tensor *t);

/* Values per element: 2 for C64, else 1. */
unsigned tensor_values_per_elem(enum dtype d);

/* A chunk size near `want` bytes that holds whole packing groups and
 * quantized blocks. */
size_t tensor_values_chunk(enum dtype d, size_t want);

/* Values in len bytes (whole groups or blocks, or the tensor's end). */
size_t tensor_values_count(enum dtype d, size_t len);

/* Decode len bytes into tensor_values_count() values. */
void tensor_values_decode(enum dtype d, const uint8_t *src, size_t len,
			  double *out);

#endif
