/* pickle.h - a pickle reader that executes nothing: the stack machine of
 * Python's pickle over the opcodes of protocols 0 to 5, building a tree
 * of values instead of objects.
 *
 * Loading a PyTorch checkpoint with Python runs its pickle, and a pickle
 * can call any function it names.  This reader calls nothing and imports
 * nothing: a global (GLOBAL, STACK_GLOBAL, INST's) is a name, looked up
 * in a short list of the ones torch.save writes (the table in
 * pickle_names.c) so that its calls can be understood; a REDUCE, NEWOBJ,
 * NEWOBJ_EX, OBJ or INST is a PICKLE_CALL value saying "a call of X with
 * these arguments" for the caller to interpret (a tensor) or show (an
 * object of a trainer's class, or os.system: nothing runs either way),
 * except for the few pure calls taken as the values they make
 * (pickle_call.h: OrderedDict(), bytes, sets, torch.Size, torch.device);
 * BINPERSID and PERSID (torch's reference to a storage) make a
 * PICKLE_PERSID value.  Protocols 0 and 1 write numbers and strings as
 * text (pickle_text.h).  Refused by name: EXT1, EXT2, EXT4 (copyreg's
 * extension registry) and NEXT_BUFFER, READONLY_BUFFER (buffers passed
 * beside the pickle), which name things that are not in the file.
 *
 * A str, bytes or int longer than the load keeps (pickle_limits:
 * str_kept, bytes_kept) is a PICKLE_ELIDED, its kind and length without
 * its content (pickle_counted.h); read from a source (pickle_read), it
 * is never held, so memory follows what is kept, not the pickle's size.
 *
 * Hostile input: lengths are checked against the bytes left before
 * anything is allocated, memory is proportional to the input (at most one
 * value per opcode, three for a global named by its text, five for an
 * INST: never more than one per byte; a memo no larger than the input;
 * protocol 0's text makes at most twice its bytes; a string passed to
 * _codecs.encode again and again makes its bytes once), nothing recurses,
 * and the finished graph is checked for depth and the size it has walked
 * as a tree (pickle_limits), its cycles cut into PICKLE_REFs
 * (pickle_store.h), so callers may walk it recursively.
 */
#ifndef STFS_PICKLE_H
#define STFS_PICKLE_H

#include <stddef.h>

#include "format/torch/pickle_input.h"
#include "format/torch/pickle_value.h"

struct err;

/* A loaded pickle: owns every value. */
struct pickle;

/* Read the pickle buf[0..len) (all of it: bytes after STOP are refused).
 * lim NULL means PICKLE_LIMITS_DEFAULT.  0 with *out set, or -1 with *e
 * (ERR_INVALID_PICKLE, ERR_NO_MEMORY), not named after a file: the caller
 * knows it and adds it with err_at().  buf is not used after the return.
 * On success the graph from the root has no cycle (a value that contained
 * itself is a PICKLE_REF where the cycle closed), is at most lim->depth
 * deep and lim->walk values walked as a tree; values reached through the
 * memo are shared (the same pointer in several places). */
int pickle_load(const void *buf, size_t len, const struct pickle_limits *lim,
		struct pickle **out, struct err *e);

/* The same, read in order from src through a window of src->window
 * bytes (pickle_input.h), never held whole: a str, bytes or int past the
 * limits of the load is passed by and made a PICKLE_ELIDED, so memory
 * follows what is kept.  Errors as pickle_load's, and the source's. */
int pickle_read(const struct pickle_source *src,
		const struct pickle_limits *lim, struct pickle **out,
		struct err *e);

/* For a scan (pickle_unsafe.h): the pickle src starts with, which bytes
 * may follow (*used: its length, where the next one would start).  0
 * with *out; -1 with *e and, when the load began, *out all the same: the
 * values and uses made before it stopped (its root NULL, nothing
 * reached), for the caller to list and free. */
int pickle_scan(const struct pickle_source *src,
		const struct pickle_limits *lim, struct pickle **out,
		size_t *used, struct err *e);

/* The root; NULL for a pickle_scan() that stopped. */
const struct pickle_value *pickle_root(const struct pickle *p);

/* What Python would import and call beyond torch.load's weights only
 * mode, and where the root reaches what each made (pickle_unsafe.h). */
struct pickle_unsafe;
const struct pickle_unsafe *pickle_unsafe_of(const struct pickle *p);

/* The value of the last pair of dict d whose key is the string key, or
 * NULL (also when d is not a dict). */
const struct pickle_value *pickle_dict_get(const struct pickle_value *d,
					   const char *key);

/* "None", "bool", "int", ..., "call": for messages. */
const char *pickle_kind_name(enum pickle_kind kind);

void pickle_free(struct pickle *p);

#endif
