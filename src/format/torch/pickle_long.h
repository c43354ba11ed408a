/* pickle_long.h - the ints of a pickle wider than 64 bits (PICKLE_LONG:
 * a uint64 seed, 2**70): made of the bytes LONG1 and LONG4 write or of
 * the decimal digits of protocol 0's INT and LONG, and written as text.
 */
#ifndef STFS_PICKLE_LONG_H
#define STFS_PICKLE_LONG_H

#include <stddef.h>

#include "base/buf.h"
#include "format/torch/pickle_store.h"
#include "format/torch/pickle_value.h"

struct err;

/* Bytes of magnitude up to which an int is written in decimal: 4,299
 * digits at most, under Python's own limit for str(int) (4,300).  The
 * conversion takes time quadratic in the length, so a longer int (a LONG4
 * of a million bytes) is written in hex, in linear time. */
#define PICKLE_LONG_DECIMAL_BYTES 1785

/* Digits of decimal text read at most, Python's limit for int(str). */
#define PICKLE_LONG_DIGITS_MAX 4300

/* The int of the little-endian two's complement bytes p[0..n): a
 * PICKLE_INT when it fits 64 bits (bytes that only repeat the sign do not
 * count), else a PICKLE_LONG of the bytes that matter.  NULL with *e
 * (the store's). */
struct pickle_value *pickle_long_value(struct pickle_store *s,
				       const unsigned char *p, size_t n,
				       struct err *e);

/* The int of the decimal digits p[0..n) (1 to PICKLE_LONG_DIGITS_MAX,
 * checked by the caller), negated when neg, as pickle_long_value
 * makes it.  Time quadratic in n: about 200,000 steps at the limit. */
struct pickle_value *pickle_long_decimal(struct pickle_store *s,
					 const char *p, size_t n, int neg,
					 struct err *e);

/* v, a PICKLE_LONG, appended to b: "-123..." in decimal, 1; or
 * "0x1f..." ("-0x1f...") in hex past PICKLE_LONG_DECIMAL_BYTES, 0; -1 out
 * of memory (b left valid). */
int pickle_long_text(const struct pickle_value *v, struct buf *b);

#endif
