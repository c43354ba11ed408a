/* srcpool.h - a bounded pool of the descriptors of local file sources.
 *
 * A folder of 3,000 LoRA files or a 3,000-shard set is 3,000 sources; the
 * usual soft limit is 1,024 descriptors.  So a local source does not own a
 * descriptor for its lifetime: the pool holds at most a bounded number of
 * them, opened on first use, the least recently used closed first, and
 * never one that is pinned (between srcpool_get and srcpool_put: a read
 * or splice in progress).  A descriptor reopened after it was closed must
 * find the same file (device, inode, size, mtime as at open time), else
 * the source has changed: -ESTALE, for good.
 *
 * Thread-safe.  Pinning an open descriptor and unpinning it take no lock
 * (atomic counts; "recently used" is a bit, and closing picks the least
 * recently used by the CLOCK algorithm's second chance); one mutex guards
 * opening, closing and the list of open descriptors, and a reopen's
 * open+fstat runs outside it.
 */
#ifndef STFS_SRCPOOL_H
#define STFS_SRCPOOL_H

#include <stddef.h>
#include <sys/stat.h>

struct srcpool_ent;

/* Register a descriptor just opened for path (st: its fstat); it may be
 * closed as soon as it is idle, and other idle ones may be closed now.
 * NULL when out of memory (fd is then left to the caller). */
struct srcpool_ent *srcpool_add(const char *path, int fd,
				const struct stat *st);

/* A pinned descriptor of the entry's file: >= 0, or -ESTALE (the file at
 * the path is no longer the one opened), or another -errno. */
int srcpool_get(struct srcpool_ent *x);

/* Unpin (one srcpool_get). */
void srcpool_put(struct srcpool_ent *x);

/* Close and forget (NULL-safe; must not be pinned). */
void srcpool_remove(struct srcpool_ent *x);

/* The most descriptors kept open: n, or (n == 0, and before any call)
 * from RLIMIT_NOFILE at first use (half the soft limit above a reserve,
 * at most 4096, at least 8).  Pinned ones may go above it for a
 * moment. */
void srcpool_set_max(size_t n);

/* Descriptors open now (tests, and the __summary__ of the daemon). */
size_t srcpool_open_count(void);

#endif
