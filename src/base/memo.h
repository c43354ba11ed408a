/* memo.h - values computed on first use and kept for the mount's life,
 * one per index (tensor): the sha256 xattr, the .stats/ files.  Readers
 * that ask while the first one computes wait for its result instead of
 * computing again.  A failed computation is not kept: the next asker
 * tries again.  Thread-safe; no FUSE.
 *
 * Who asks on a thread (memo_asker_set) decides how memo_get behaves
 * there: with no asker it waits and computes, never giving up (the tools,
 * the tests).  An asker that may not wait (a FUSE request thread, which
 * must stay free for ls and stat) gets -EWOULDBLOCK instead of waiting or
 * computing, and its caller hands the request to a thread that may.  An
 * asker whose `gone` flag is set (the reader pressed Ctrl-C) stops
 * waiting with -EINTR within MEMO_POLL_MS, and a computation that nobody
 * wants any more is abandoned: the computing function polls
 * memo_job_abandoned() between chunks.
 */
#ifndef STFS_MEMO_H
#define STFS_MEMO_H

#include <stddef.h>

struct buf;
struct memo;
struct memo_job;

/* How often a waiting asker looks at its `gone` flag. */
#define MEMO_POLL_MS 50

struct memo_asker {
	int may_wait;	/* 0: -EWOULDBLOCK rather than wait or compute */
	int gone;	/* set (atomically, by anyone) when the value is no
			   longer wanted */
};

/* Compute value i into out (appending).  0 or -errno; -EINTR when it
 * stopped because memo_job_abandoned(job) said so. */
typedef int (*memo_fn)(void *arg, size_t i, struct buf *out,
		       const struct memo_job *job);

/* A table of n values, nothing computed yet; NULL when out of memory. */
struct memo *memo_new(size_t n);
void memo_free(struct memo *l);

/* The same, keeping at most max_bytes of values (the .png/ pictures):
 * when a new value would pass that, the least recently read ones are
 * dropped (and computed again if asked again); a value larger than the
 * budget is still kept, alone. */
struct memo *memo_new_bounded(size_t n, size_t max_bytes);

/* The asker of later memo_get calls on this thread (NULL: none).  It must
 * outlive those calls. */
void memo_asker_set(struct memo_asker *a);

/* Append value i to out, computing it with fn(arg, i, ...) when no one has
 * yet.  0, or -errno (-ENOMEM, fn's error, -EINVAL for i out of range,
 * -EWOULDBLOCK and -EINTR as above). */
int memo_get(struct memo *l, size_t i, memo_fn fn, void *arg,
	     struct buf *out);

/* The same for bytes [off, off + len) of the value only (clamped to its
 * end): a window of a large value without copying all of it. */
int memo_get_part(struct memo *l, size_t i, memo_fn fn, void *arg,
		  size_t off, size_t len, struct buf *out);

/* 1 when the asker computing the job is gone and no other asker waits
 * for its value (never without an asker, never for job NULL); the
 * function should stop. */
int memo_job_abandoned(const struct memo_job *job);

#endif
