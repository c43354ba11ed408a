/* nametab.h - the one name table: byte strings (tensor names, __metadata__
 * keys, file names in a directory) -> 32-bit ids.
 *
 * Names come from files, indexes and servers that an attacker may write,
 * so the table is keyed: SipHash-2-4 under a per-process random key
 * (getrandom), which makes the home slot of a name unpredictable and
 * crafted collisions (hash flooding) impossible to compute offline.  Open
 * addressing with linear probing at a load of at most 1/2.
 *
 * The table holds ids only; the caller keeps the names and answers "is id
 * this key?" through a callback, so one table serves header.c (names in a
 * parse arena), shards.c (merged tensors) and layout.c ((directory, name)
 * pairs).  A key is a name plus a 64-bit `space` (the directory in a tree
 * layout, 0 elsewhere) hashed together with it.
 */
#ifndef STFS_NAMETAB_H
#define STFS_NAMETAB_H

#include <stddef.h>
#include <stdint.h>

struct nametab_key {
	uint64_t space;		/* hashed with the name: e.g. a directory id */
	const char *name;	/* may hold NUL; len bytes */
	size_t len;
	uint64_t hash;		/* filled by nametab_key() */
};

/* 1 when id is the entry for key k, else 0. */
typedef int (*nametab_eq_fn)(const void *ctx, uint32_t id,
			     const struct nametab_key *k);

struct nametab {
	uint64_t *slot;		/* (hash >> 32) << 32 | (id + 1); 0 = empty */
	size_t cap;
	size_t used;
	nametab_eq_fn eq;
	const void *ctx;
};

#define NAMETAB_ID_MAX (UINT32_MAX - 1)

/* An empty table; expected > 0 sizes it for that many names at once. */
int nametab_init(struct nametab *t, size_t expected, nametab_eq_fn eq,
		 const void *ctx);
void nametab_free(struct nametab *t);

/* Fill in k (and its keyed hash) for name[0..len) in space. */
void nametab_key(struct nametab_key *k, uint64_t space, const char *name,
		 size_t len);

/* The id stored for k, or -1. */
long nametab_find(const struct nametab *t, const struct nametab_key *k);

/* Store id (<= NAMETAB_ID_MAX) for k.  Returns -1 when k was new, the id
 * it replaces when k was present (the new id wins), -2 when out of
 * memory. */
long nametab_put(struct nametab *t, const struct nametab_key *k, uint32_t id);

/* The longest distance of an entry from its home slot: what one lookup
 * may cost.  For tests and benchmarks of the flooding bound. */
size_t nametab_max_displacement(const struct nametab *t);

/* SipHash-2-4 of p[0..len) under a 16-byte key, as the paper defines it
 * (Aumasson and Bernstein, 2012); exposed for its test vectors. */
uint64_t nametab_siphash24(const unsigned char key[16], const void *p,
			   size_t len);

/* Replace the process key (tests only: makes a run reproducible). */
void nametab_set_key(const unsigned char key[16]);

#endif
