/* pickle_seq.c - what a list of the pickle reader keeps (pickle_seq.h). */
#include "format/torch/pickle_seq.h"

#include "base/error.h"

/* 1 when v holds nothing but itself and can be passed by in a long list:
 * a number, str, bytes, None or bool. */
static int
plain(const struct pickle_value *v)
{
	switch (v->kind) {
	case PICKLE_NONE:
	case PICKLE_BOOL:
	case PICKLE_INT:
	case PICKLE_LONG:
	case PICKLE_FLOAT:
	case PICKLE_STR:
	case PICKLE_BYTES:
	case PICKLE_ELIDED:
		return 1;
	default:
		return 0;
	}
}

/* items[0..n) onto seq, which holds kept items or more. */
static int
pass(struct pickle_store *s, struct pickle_value *seq,
     struct pickle_value **items, size_t n, struct err *e)
{
	size_t i = 0;

	while (i < n) {
		size_t k = 0;

		while (i + k < n && !plain(items[i + k]))
			k++;
		if (k && pickle_store_add(s, seq, items + i, k, e) < 0)
			return -1;
		i += k;
		for (; i < n && plain(items[i]); i++) {
			struct pickle_value *last = seq->seq.n ?
				seq->seq.items[seq->seq.n - 1] : NULL;

			if (!last || last->kind != PICKLE_PASSED) {
				last = pickle_store_new(s, PICKLE_PASSED, e);
				if (!last ||
				    pickle_store_add(s, seq, &last, 1, e) < 0)
					return -1;
			}
			last->passed.n++;
			pickle_store_drop(s, items[i]);
			items[i] = NULL;
		}
	}
	return 0;
}

int
pickle_seq_add(struct pickle_store *s, struct pickle_value *seq,
	       struct pickle_value **items, size_t n, size_t kept,
	       struct err *e)
{
	size_t keep = n;

	if (kept)
		keep = seq->seq.n >= kept ? 0 :
		       kept - seq->seq.n < n ? kept - seq->seq.n : n;
	if (pickle_store_add(s, seq, items, keep, e) < 0)
		return -1;
	return keep < n ? pass(s, seq, items + keep, n - keep, e) : 0;
}

uint64_t
pickle_seq_index(const struct pickle_value *seq, size_t i)
{
	uint64_t at = i;

	for (size_t k = 0; k < i && k < seq->seq.n; k++)
		if (seq->seq.items[k]->kind == PICKLE_PASSED)
			at += seq->seq.items[k]->passed.n - 1;
	return at;
}
