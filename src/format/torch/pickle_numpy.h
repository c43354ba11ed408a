/* pickle_numpy.h - numpy's values in a pickle, read from their bytes
 * without numpy (nothing is imported or called).
 *
 * Trainers keep numpy scalars (a metric, an epoch: np.float64(0.91)) and
 * small arrays (np.random.get_state()) beside their tensors.  numpy
 * pickles them as calls of its own functions, which stfs does not make
 * but reads:
 *
 *   a dtype    numpy.dtype('f8', False, True), then BUILD's state
 *              (3, '<', None, None, None, -1, -1, 0): kind and size, then
 *              the byte order;
 *   a scalar   numpy.core.multiarray.scalar(dtype, its bytes);
 *   an array   numpy.core.multiarray._reconstruct(numpy.ndarray, (0,),
 *              b'b'), then BUILD's state (1, shape, dtype, fortran order,
 *              its bytes); at protocol 5 numpy.core.numeric._frombuffer(
 *              its bytes, dtype, shape, 'C' or 'F').
 *
 * (numpy 2 names numpy._core where numpy 1 named numpy.core.)  The
 * dtypes read are the numbers: bool (b1), ints (i1 to i8, u1 to u8),
 * floats (f2, f4, f8); any other (complex, strings, records, objects,
 * datetimes) leaves the call a description.
 */
#ifndef STFS_PICKLE_NUMPY_H
#define STFS_PICKLE_NUMPY_H

#include <stddef.h>
#include <stdint.h>

#include "format/torch/pickle_store.h"
#include "format/torch/pickle_value.h"

struct err;

#define PICKLE_NUMPY_RANK_MAX 64	/* numpy 2's NPY_MAXDIMS */

struct pickle_numpy_type {
	char kind;	/* 'b' bool, 'i' int, 'u' unsigned int, 'f' float */
	unsigned size;	/* bytes: 1, 2, 4 or 8 */
	char order;	/* '<' little-endian, '>' big-endian, '|' one byte */
};

/* One element of a type, decoded: a bool or an unsigned in u, an int in
 * i, a float in f (exactly, f_bits as pickle_value.h says). */
struct pickle_numpy_number {
	char kind;
	union {
		uint64_t u;
		int64_t i;
		double f;
	};
	unsigned f_bits;
};

struct pickle_numpy_array {
	struct pickle_numpy_type type;
	unsigned rank;
	uint64_t shape[PICKLE_NUMPY_RANK_MAX];
	uint64_t numel;		/* the product of shape: len / type.size */
	int fortran;		/* 1: the bytes are in column-major order */
	const unsigned char *data;	/* NULL when they were not kept
					 * (PICKLE_ELIDED): named, not shown */
	size_t len;
};

/* numpy.core.multiarray.scalar(*args) as the number it is (a
 * PICKLE_BOOL, PICKLE_INT, PICKLE_LONG past 2^63 or PICKLE_FLOAT), or
 * NULL with *folded 0 when it is not one stfs reads (*e untouched); NULL
 * with *folded 1 and *e when the store fails. */
struct pickle_value *pickle_numpy_scalar(struct pickle_store *s,
					 const struct pickle_value *args,
					 int *folded, struct err *e);

/* 1 with *out when v is a call that makes a numpy array stfs reads (its
 * bytes as many as its shape says); else 0. */
int pickle_numpy_array(const struct pickle_value *v,
		       struct pickle_numpy_array *out);

/* Element i (in the order of the bytes) of array a, whose data is
 * there. */
void pickle_numpy_element(const struct pickle_numpy_array *a, uint64_t i,
			  struct pickle_numpy_number *out);

/* The type as numpy's dtype.str writes it: "<f8", "|b1", ">i4" (4 bytes
 * with the NUL). */
void pickle_numpy_type_text(const struct pickle_numpy_type *t, char out[4]);

#endif
