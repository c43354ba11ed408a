/* memo.h - values computed on first use and kept for the mount's life,
 * one per index (tensor): the sha256 xattr, the .stats/ files.  Readers
 * that ask while the first one computes wait for its result instead of
 * computing again.  A failed computation is not kept: the next asker
 * tries again.  Thread-safe; no FUSE.
 */
#ifndef STFS_MEMO_H
#define STFS_MEMO_H

#include <stddef.h>

struct buf;
struct memo;

/* Compute value i into out (appending).  0 or -errno. */
typedef int (*memo_fn)(void *arg, size_t i, struct buf *out);

/* A table of n values, nothing computed yet; NULL when out of memory. */
struct memo *memo_new(size_t n);
void memo_free(struct memo *l);

/* Append value i to out, computing it with fn(arg, i, ...) when no one has
 * yet.  0, or -errno (-ENOMEM, fn's error, -EINVAL for i out of range). */
int memo_get(struct memo *l, size_t i, memo_fn fn, void *arg,
	     struct buf *out);

#endif
