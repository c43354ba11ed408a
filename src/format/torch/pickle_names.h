/* pickle_names.h - what the pickle reader knows by name: the opcodes (for
 * messages) and the globals whose calls it interprets, and how a global is
 * written in a message.
 */
#ifndef STFS_PICKLE_NAMES_H
#define STFS_PICKLE_NAMES_H

#include <stddef.h>

#include "format/torch/pickle_value.h"

struct pickle_names_global {
	const char *module, *name;
	enum pickle_global id;
};

/* "BINUNICODE" for 'X', ...: every opcode of pickle protocols 0 to 5, or
 * NULL for a byte that is none. */
const char *pickle_names_op(unsigned char op);

/* The known global module.name (lengths given: the bytes come from the
 * pickle and may hold anything), or NULL. */
const struct pickle_names_global *
pickle_names_global(const char *module, size_t mlen, const char *name,
		    size_t nlen);

/* module.name as a message shows it: plain when both are dotted Python
 * names, else quoted with the bytes escaped (err_quote); bounded. */
void pickle_names_text(char *buf, size_t cap, const char *module,
		       size_t mlen, const char *name, size_t nlen);

#endif
