/* pickle_long.h - the ints of a pickle wider than 64 bits (PICKLE_LONG:
 * a uint64 seed, 2**70) as text.
 */
#ifndef STFS_PICKLE_LONG_H
#define STFS_PICKLE_LONG_H

#include "base/buf.h"
#include "format/torch/pickle_value.h"

/* Bytes of magnitude up to which an int is written in decimal: 4,299
 * digits at most, under Python's own limit for str(int) (4,300).  The
 * conversion takes time quadratic in the length, so a longer int (a LONG4
 * of a million bytes) is written in hex, in linear time. */
#define PICKLE_LONG_DECIMAL_BYTES 1785

/* v, a PICKLE_LONG, appended to b: "-123..." in decimal, 1; or
 * "0x1f..." ("-0x1f...") in hex past PICKLE_LONG_DECIMAL_BYTES, 0; -1 out
 * of memory (b left valid). */
int pickle_long_text(const struct pickle_value *v, struct buf *b);

#endif
