/* pickle_seq.h - what a list of the pickle reader keeps (pickle.h):
 * every item up to the load's seq_kept (pickle_limits), then the items
 * that hold more than themselves (tuples, lists, dicts, calls, tensors)
 * and, for each run of plain ones (numbers, str, bytes, None, bools),
 * one PICKLE_PASSED counting them, so that a list of a million numbers
 * costs what seq_kept of them do, and the place of an item in the list
 * the pickle made is still known.
 */
#ifndef STFS_PICKLE_SEQ_H
#define STFS_PICKLE_SEQ_H

#include <stddef.h>
#include <stdint.h>

#include "format/torch/pickle_store.h"
#include "format/torch/pickle_value.h"

struct err;

/* items[0..n) onto the tuple, list or set seq (in s): all of them while
 * seq holds fewer than kept items (kept 0: all, always), then each plain
 * one counted in the PICKLE_PASSED that ends seq (made when seq does not
 * end in one) and dropped from s (the memo still holds it if it does),
 * the others kept in their order.  items is overwritten.  0, or -1 with
 * *e (the store's errors). */
int pickle_seq_add(struct pickle_store *s, struct pickle_value *seq,
		   struct pickle_value **items, size_t n, size_t kept,
		   struct err *e);

/* The place item i of the tuple, list or set seq had in the pickle: i,
 * plus the items the PICKLE_PASSED before it stand for. */
uint64_t pickle_seq_index(const struct pickle_value *seq, size_t i);

#endif
