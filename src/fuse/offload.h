/* offload.h - requests that may wait long, answered by a small pool of
 * threads of their own so that libfuse's request threads stay free.
 *
 * A .stats/ file or the sha256 xattr is computed over a whole tensor on
 * its first read; on a slow source that is minutes.  Done on a request
 * thread, ten such readers take all of libfuse's threads and every ls and
 * stat of the mount waits behind them.  So a request thread never waits
 * for such a value (memo.h: its asker may not wait and gets
 * -EWOULDBLOCK); it hands the request to this pool and returns, and a
 * pool thread answers it (the low-level API lets any thread reply).
 *
 * Interrupts: a reader's Ctrl-C answers its request EINTR at once
 * (queued or running) and marks its asker gone, so a computation that
 * nobody waits for any more is abandoned between chunks (memo.h).  (A
 * page-cache read arrives as background readahead, which the kernel never
 * interrupts; a reader killed by the signal still leaves, as the kernel
 * does not wait for readahead.)
 */
#ifndef STFS_OFFLOAD_H
#define STFS_OFFLOAD_H

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif

#include <fuse_lowlevel.h>

struct offload;
struct job;

/* What the request asked: a read (ino, off, size) or a getxattr (ino,
 * name, size). */
struct offload_call {
	fuse_ino_t ino;
	off_t off;
	size_t size;
	struct job *job;	/* offload.c's */
	char name[];		/* "" for a read */
};

/* Answers req on a pool thread, whose memo asker may wait and is gone
 * once req is interrupted.  It replies only if offload_claim() says so
 * (else an interrupt has answered EINTR already). */
typedef void (*offload_fn)(fuse_req_t req, const struct offload_call *c);

/* A pool of n threads (start it after daemonizing: threads do not follow
 * a fork); NULL when none could be started. */
struct offload *offload_start(unsigned n);

/* Queued requests are answered EIO, running ones told that their askers
 * are gone; then the threads are joined.  NULL-safe. */
void offload_stop(struct offload *o);

/* Have fn(req, call) answer req on a pool thread (name NULL for a
 * read).  Without a pool (o NULL) fn runs here, with an asker that
 * waits; out of memory, req is answered ENOMEM. */
void offload_submit(struct offload *o, fuse_req_t req, offload_fn fn,
		    fuse_ino_t ino, off_t off, size_t size, const char *name);

/* 1: the caller answers req now (no interrupt reaches it after this);
 * 0: it was answered EINTR, leave it alone. */
int offload_claim(fuse_req_t req, const struct offload_call *c);

#endif
