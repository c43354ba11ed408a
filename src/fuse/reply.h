/* reply.h - a read's bytes to the kernel: the segments view_read() made
 * (view/view.h), spliced from a source's descriptor through a pipe of the
 * thread's own, else from memory a source lends (a remote source's cache
 * blocks), else copied; always all of them or an error. */
#ifndef STFS_FUSE_REPLY_H
#define STFS_FUSE_REPLY_H

#include <fuse_lowlevel.h>
#include <stddef.h>

#include "base/buf.h"
#include "view/view.h"

/* Largest reply (the adapter's max_read, 512 KiB) plus room for a rendered
 * header and page-unaligned ranges: every spliced page takes one pipe
 * slot whatever its fill. */
#define REPLY_PIPE_BYTES	(1024u * 1024)

/* A thread's means of replying, kept between requests (zeroed to start). */
struct reply_ctx {
	struct buf buf;		/* copied bytes */
	int pipe[2];		/* both ends O_NONBLOCK */
	size_t pipe_size;	/* capacity in bytes, 0: no pipe (yet) */
	int no_pipe;		/* making one failed: copy instead */
};

void reply_ctx_fini(struct reply_ctx *t);

/* Answer req with the bytes of s (or an error). */
void reply_segs(fuse_req_t req, struct reply_ctx *t,
		const struct view_segs *s);

#endif
