/* http_spool.h - blocks on their way to the disk cache, written off the
 * transfer threads.
 *
 * Writing a block to disk takes a millisecond and more while other
 * writers share the file system's journal; done inside a transfer it slows
 * that connection down with it.  A fetched block is referenced here instead
 * (not copied: it is immutable once complete) and written by SPOOL_WRITERS
 * threads of their own, up to SPOOL_MAX_BYTES of them waiting (a quarter
 * of the cache's size at most: they are its memory), pinned in the cache
 * (a putter beyond that waits: a disk slower than the network slows the
 * fetches rather than losing blocks).  One writer was not
 * enough: among 64 transfer threads on two cores it fell behind a
 * 32 MB/s-per-connection load, and the transfers waited for it (31 s in
 * all over two loads of 1.1 GB; 3 s with four).  A source drains its
 * blocks before it closes its disk object, so that what a mount read is
 * on disk once it is unmounted.
 */
#ifndef STFS_HTTP_SPOOL_H
#define STFS_HTTP_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define SPOOL_MAX_BYTES	(64u << 20)	/* blocks waiting to be written */
#define SPOOL_WRITERS	4		/* threads writing them */

struct http_cache;
struct http_cache_block;
struct http_disk_object;
struct http_spool;

/* A spool for the blocks of cache (one per client, http_client.h), or
 * NULL (no memory).  Its writers start with the first block put. */
struct http_spool *http_spool_new(struct http_cache *cache);

/* Write what is queued, stop the writers and free s. */
void http_spool_free(struct http_spool *s);

/* Keep complete block b of d: written soon; b is referenced
 * (http_cache_ref()) until then.  d NULL (no disk cache): nothing. */
void http_spool_put(struct http_spool *s, struct http_disk_object *d,
		    struct http_cache_block *b);

/* Until every block of d put so far is written. */
void http_spool_drain(struct http_spool *s, struct http_disk_object *d);

#endif
