/* pickle_store.h - where the pickle reader's values live: allocated in
 * chunks up to a limit, freed together, and checked as a graph once the
 * pickle is read (no cycle, bounded depth and walk; pickle.h).
 *
 * What the store holds is counted in bytes against pickle_limits' memory
 * (its values, their strings and arrays, and what the machine charges:
 * its stack and memo), so a pickle made to spend memory is refused before
 * it has.  A value held in one place only (not shared: pickle_store_share)
 * can be dropped with everything only it holds, and its node is used
 * again: a fold (pickle_limits) frees the arguments of the calls it
 * stands for.
 */
#ifndef STFS_PICKLE_STORE_H
#define STFS_PICKLE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "format/torch/pickle_value.h"

struct err;
struct pickle_store_chunk;
struct pickle_store_ext;
struct pickle_store_steps;

struct pickle_store {
	struct pickle_store_chunk *chunks;
	struct pickle_store_steps *steps;	/* the paths of PICKLE_REFs */
	size_t values;		/* made so far (steps counted as values) */
	size_t max_values;	/* refused beyond */
	size_t bytes;		/* held now (pickle_store_charge) */
	size_t max_bytes;	/* refused beyond */
	void *free_nodes;	/* dropped nodes, to be used again */
	struct pickle_store_ext *ext;	/* PICKLE_EXTERN bytes */
	struct pickle_value *none, *yes, *no, *unit;	/* made once, shared */
	/* pickle_store_check calls seen(seen_ctx, v, path) when it first
	 * reaches a value flagged with pickle_store_flag (NULL: never) */
	void (*seen)(void *ctx, const struct pickle_value *v,
		     const struct pickle_step *path);
	void *seen_ctx;
};

/* Make room for need items in *arr, an array of *cap items of size bytes
 * (need at first, then doubling), charged to s; 0, or -1 with
 * ERR_NO_MEMORY or the store's limit. */
int pickle_store_grow(struct pickle_store *s, void **arr, size_t *cap,
		      size_t need, size_t size, struct err *e);

/* Count delta more bytes held (or fewer: delta < 0): 0, or -1 with
 * ERR_INVALID_PICKLE past max_bytes (nothing counted then). */
int pickle_store_charge(struct pickle_store *s, long long delta,
			struct err *e);

/* None, True, False: one value each per store, shared (a pickle of
 * millions of Nones makes one). */
struct pickle_value *pickle_store_none(struct pickle_store *s, struct err *e);
struct pickle_value *pickle_store_bool(struct pickle_store *s, int b,
				       struct err *e);
/* The empty tuple (nothing adds to a tuple once made): one, shared. */
struct pickle_value *pickle_store_unit(struct pickle_store *s, struct err *e);

/* v is held in more than one place (the memo, DUP, a fold's value, a
 * list of the load's): never dropped. */
void pickle_store_share(struct pickle_value *v);

/* Drop v, held in one place that is letting it go, and what only it
 * holds (values shared stay); their nodes are used again.  Nothing if v
 * is shared or NULL. */
void pickle_store_drop(struct pickle_store *s, struct pickle_value *v);

/* A PICKLE_EXTERN value of tag with size zeroed bytes of its own at
 * v->ext.p (aligned for a uint64_t; freed with the store); NULL with *e. */
struct pickle_value *pickle_store_extern(struct pickle_store *s, unsigned tag,
					 size_t size, struct err *e);

/* A new value of kind, zeroed; NULL with *e past max_values or out of
 * memory. */
struct pickle_value *pickle_store_new(struct pickle_store *s,
				      enum pickle_kind kind, struct err *e);

/* A PICKLE_STR, PICKLE_BYTES or PICKLE_LONG of the n bytes at p (copied,
 * NUL added). */
struct pickle_value *pickle_store_str(struct pickle_store *s,
				      enum pickle_kind kind, const void *p,
				      size_t n, struct err *e);

/* A PICKLE_STR or PICKLE_BYTES of the n bytes at str, a malloc'd buffer
 * of n + 1 whose last byte is NUL, which the value now owns (freed at
 * once when NULL is returned). */
struct pickle_value *pickle_store_take(struct pickle_store *s,
				       enum pickle_kind kind, char *str,
				       size_t n, struct err *e);

/* The slot of the one value made of the string str (what
 * _codecs.encode(str, 'latin1') gives, made once however often the memo
 * passes str to it): NULL until set.  Only for PICKLE_STR values and
 * PICKLE_ELIDED ones of a str. */
struct pickle_value **pickle_store_made(struct pickle_value *str);

/* Have the check tell where the root reaches v (s->seen). */
void pickle_store_flag(struct pickle_value *v);

/* Append items[0..n) to a tuple, list or set v, or the n / 2 pairs
 * items[0], items[1], ... to a dict v.  0, or -1 with ERR_NO_MEMORY. */
int pickle_store_add(struct pickle_store *s, struct pickle_value *v,
		     struct pickle_value *const *items, size_t n,
		     struct err *e);

/* The check after STOP, from root: no path longer than lim->depth, at
 * most lim->walk values walked as a tree.  A value that contains itself
 * (a scheduler's bound method whose object holds the method: torch.save
 * writes those) has the edge that closes the cycle replaced by a
 * PICKLE_REF to it, made in s, so the graph has no cycle; one closed
 * through a call's callable or arguments (which Python's pickler never
 * writes) is refused.  Runs once per store.  0, or -1 with
 * ERR_INVALID_PICKLE (ERR_NO_MEMORY). */
int pickle_store_check(struct pickle_store *s, struct pickle_value *root,
		       const struct pickle_limits *lim, struct err *e);

/* Free every value and the chunks (the store itself is the caller's). */
void pickle_store_free(struct pickle_store *s);

#endif
