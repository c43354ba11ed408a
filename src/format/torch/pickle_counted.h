/* pickle_counted.h - the counted arguments of a pickle: a str, bytes or
 * an int written as its length, then its bytes (BINUNICODE,
 * SHORT_BINUNICODE, BINUNICODE8, BINBYTES, SHORT_BINBYTES, BINBYTES8,
 * BYTEARRAY8, BINSTRING, SHORT_BINSTRING, LONG1, LONG4), made into a
 * value.
 *
 * One within the limits of the load (pickle_limits: str_kept, bytes_kept)
 * is read into its own allocation.  A longer one is passed by in the
 * stream, never held whole, and becomes a PICKLE_ELIDED saying what it
 * was and how long: a str is still checked to be UTF-8 (with the message
 * a kept one gets), its code points counted and whether they are all
 * latin-1; a Python 2 string (BINSTRING) is text when it is UTF-8 and
 * bytes otherwise, as a kept one; an int is read for its sign and bit
 * length, and made as usual when only bytes repeating its sign made it
 * long.
 */
#ifndef STFS_PICKLE_COUNTED_H
#define STFS_PICKLE_COUNTED_H

#include "format/torch/pickle_input.h"
#include "format/torch/pickle_store.h"
#include "format/torch/pickle_value.h"

/* The value of the counted opcode in->op (just read), its argument read
 * from in; NULL with *in->e (ERR_INVALID_PICKLE naming the opcode and
 * its byte, the store's errors, the source's). */
struct pickle_value *pickle_counted_value(struct pickle_input *in,
					  struct pickle_store *s,
					  const struct pickle_limits *lim);

#endif
