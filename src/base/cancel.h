/* cancel.h - whether the work a thread does is still wanted.
 *
 * A thread that answers someone (the FUSE adapter's request threads, for
 * a READ) says so with a struct cancel whose gone() tells when that
 * someone went away: the request was interrupted (a reader's Ctrl-C), the
 * session ended (unmount, SIGTERM).  Code far below that may wait long
 * (the HTTP client: a transfer, a retry's pause, a wait for a block
 * someone else fetches) asks cancel_requested() at least every
 * CANCEL_POLL_MS and gives up (-EINTR) when it says so, so that a reader
 * whose read was interrupted is answered within a second however slow the
 * server.  A thread without one is never cancelled here.
 */
#ifndef STFS_CANCEL_H
#define STFS_CANCEL_H

#define CANCEL_POLL_MS	100	/* how often a long wait asks */

struct cancel {
	int (*gone)(void *arg);	/* 1: no longer wanted (cheap; any
				   thread may set what it reads) */
	void *arg;
};

/* This thread's (NULL: none); c must outlive the work it covers. */
void cancel_set(const struct cancel *c);

/* 1 when this thread's cancel says its work is no longer wanted. */
int cancel_requested(void);

#endif
