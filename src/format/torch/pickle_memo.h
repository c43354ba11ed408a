/* pickle_memo.h - the pickle machine's memo, holding only what the pickle
 * reads back.
 *
 * Python's pickler memoizes nearly every value it writes (torch.save's
 * eight per tensor: the name, the storage's key and id, size, stride, the
 * hooks, the arguments, the tensor) and fetches few of them again (the
 * globals, "storage", "cpu").  A memo that keeps every value keeps every
 * value alive, whatever the load makes of them.  So the opcodes are read
 * once first (pickle_memo_scan: no value made, a few bits per index) for
 * the indices a GET, BINGET or LONG_BINGET names; a PUT of another index
 * is counted (MEMOIZE's next index is how many were put) but holds
 * nothing, and a value the memo does hold is shared (pickle_store.h), so
 * nothing drops it.  Without a scan (a source that cannot be read twice),
 * every index is held, as Python does.
 */
#ifndef STFS_PICKLE_MEMO_H
#define STFS_PICKLE_MEMO_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct pickle_input;
struct pickle_store;
struct pickle_value;

struct pickle_memo {
	size_t max;		/* indices are below */
	size_t words;		/* of each bitset below */
	uint64_t *fetched;	/* scanned: a GET names the index */
	uint32_t *rank;		/* scanned: fetched bits before each word */
	uint64_t *put;		/* indices put (the count for MEMOIZE) */
	struct pickle_value **v;	/* the values: by rank when
					   scanned, else by index */
	size_t vcap;
	size_t count;		/* distinct indices put */
};

/* A memo for indices below max, every index held (no scan yet).  Its
 * bitset is charged to s.  0, or -1 with *e. */
int pickle_memo_init(struct pickle_memo *mm, size_t max,
		     struct pickle_store *s, struct err *e);

/* Before the load reads load (its input, nothing read yet): its opcodes
 * read to STOP, noting the indices read back; from memory, or from a
 * source that rewinds (which is then rewound).  0; 1 when there is no
 * scan (a source read once, or a pickle this cannot read through: the
 * load will say why), and the memo holds every index; -1 with *e (out of
 * memory, the store's limit, the source's error). */
int pickle_memo_scan(struct pickle_memo *mm, const struct pickle_input *load,
		     struct pickle_store *s, struct err *e);

/* Store v at idx (< max), shared when held.  0, or -1 with *e. */
int pickle_memo_put(struct pickle_memo *mm, struct pickle_store *s,
		    uint64_t idx, struct pickle_value *v, struct err *e);

/* The value at idx, or NULL (never put, or not held: never fetched). */
struct pickle_value *pickle_memo_get(const struct pickle_memo *mm,
				     uint64_t idx);

void pickle_memo_free(struct pickle_memo *mm);

#endif
