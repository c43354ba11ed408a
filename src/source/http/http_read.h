/* http_read.h - one read of a remote source through its block cache.
 *
 * The read's blocks come from the cache, from a request of the
 * prefetcher's (read-ahead, http_prefetch.h) or from requests of its own;
 * a block can be read as soon as its last byte has arrived, before the
 * rest of its request.  A reader waits as long as the request filling
 * its block moves, and no longer than CANCEL_POLL_MS once no one wants
 * the read any more (http_conf_cancelled()).
 */
#ifndef STFS_HTTP_READ_H
#define STFS_HTTP_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct http_prefetch_src;

/* Read exactly len bytes at off (within size).  0 or -errno (EIO when
 * the bytes could not be fetched within the bound, EINTR within
 * CANCEL_POLL_MS of http_conf_cancelled(): the reader went away, or the
 * client stops). */
int http_read_copy(struct http_prefetch_src *ps, void *buf, size_t len,
		   uint64_t off);

/* The same bytes where they are, in the cache's blocks: iov[0..n) (n
 * returned), pinned until http_read_lend_end(*token).  -EOPNOTSUPP when
 * they span more than max blocks; other -errno as http_read_copy(). */
int http_read_lend(struct http_prefetch_src *ps, uint64_t off, size_t len,
		   struct iovec *iov, int max, void **token);
void http_read_lend_end(void *token);

#endif
