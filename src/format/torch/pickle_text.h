/* pickle_text.h - the arguments pickle protocols 0 and 1 write as text
 * lines or as Python 2 strings, made into values as Python's Unpickler
 * makes them (pickle.h: the machine reads the lines).
 *
 * Python 2 and protocol 0 of Python 3 write ints in decimal (INT, LONG
 * with an L), floats as repr() (FLOAT), byte strings as repr() (STRING;
 * counted ones, BINSTRING and SHORT_BINSTRING, are pickle_counted.h's),
 * text in raw-unicode-escape (UNICODE), memo indices in decimal (GET,
 * PUT).  Python's int() and
 * float() accept more than that (spaces, underscores, other bases); only
 * what Python writes is read here, anything else is refused: the
 * readers of Python's own two implementations do not agree on the rest.
 * Every value is made of at most its text's bytes (twice that for
 * UNICODE's UTF-8), in time linear in them (quadratic for an int, whose
 * digits are at most Python's 4,300).
 */
#ifndef STFS_PICKLE_TEXT_H
#define STFS_PICKLE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "format/torch/pickle_store.h"
#include "format/torch/pickle_value.h"

struct err;

/* In each, p[0..n) is the opcode's argument (a line without its '\n',
 * or a counted string), at names the opcode for messages ("INT at byte
 * 12"); NULL with *e: ERR_INVALID_PICKLE naming at, or the store's
 * errors. */

/* INT (long_op 0: "00" is False, "01" True) or LONG (long_op 1: an L
 * may end it): -?[0-9]+, no leading zero; a PICKLE_INT or PICKLE_LONG. */
struct pickle_value *pickle_text_int(struct pickle_store *s, const char *p,
				     size_t n, int long_op, const char *at,
				     struct err *e);

/* FLOAT: a float as repr() writes it (1.5, 1e-05, -inf, nan). */
struct pickle_value *pickle_text_float(struct pickle_store *s, const char *p,
				       size_t n, const char *at, struct err *e);

/* STRING: a Python 2 str's repr(), quoted, with backslash escapes. */
struct pickle_value *pickle_text_string(struct pickle_store *s, const char *p,
					size_t n, const char *at,
					struct err *e);

/* UNICODE: text in raw-unicode-escape (\uXXXX, \UXXXXXXXX; any other
 * byte is its code point), as UTF-8. */
struct pickle_value *pickle_text_unicode(struct pickle_store *s,
					 const char *p, size_t n,
					 const char *at, struct err *e);

/* GET, PUT: a memo index in decimal into *out; 0, or -1 (*e). */
int pickle_text_index(const char *p, size_t n, uint64_t *out, const char *at,
		      struct err *e);

#endif
