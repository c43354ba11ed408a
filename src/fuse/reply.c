/* reply.c - a read's segments to the kernel (see reply.h).
 *
 * view_read() says what a reply is made of; this only moves the bytes,
 * with one rule: a reply is exactly the length the view answered (the
 * request capped at the file's end) or an error, never shorter.  The
 * kernel takes a short reply for the end of the file and lowers the
 * inode's size for as long as it caches the attributes (a year here).
 * So the bytes are first gathered in full - spliced into a pipe of this
 * thread's, or read into memory - and counted, the sources verified
 * (source_verify: a source changed or truncated since it was opened fails
 * every later read with EIO), and only then handed to the kernel.
 */
#include "fuse/reply.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "source/source.h"

static void
reply_pipe_close(struct reply_ctx *t)
{
	if (t->pipe_size) {
		close(t->pipe[0]);
		close(t->pipe[1]);
	}
	t->pipe_size = 0;
}

void
reply_ctx_fini(struct reply_ctx *t)
{
	buf_free(&t->buf);
	reply_pipe_close(t);
}

static int
pipe_open(struct reply_ctx *t)
{
	if (t->pipe_size)
		return 0;
	if (t->no_pipe || pipe2(t->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		goto fail;
	/* Without CAP_SYS_RESOURCE up to /proc/sys/fs/pipe-max-size (1 MiB
	 * by default) is allowed. */
	if (fcntl(t->pipe[1], F_SETPIPE_SZ, REPLY_PIPE_BYTES) < 0) {
		close(t->pipe[0]);
		close(t->pipe[1]);
		goto fail;
	}
	t->pipe_size = REPLY_PIPE_BYTES;
	return 0;
fail:
	t->no_pipe = 1;
	return -1;
}

/* Pipe slots (pages) the segments take: a source range one per page it
 * touches, memory one per page of its length plus one. */
static uint64_t
pipe_slots(const struct view_segs *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct view_seg *g = &s->seg[i];

		if (g->kind == VIEW_SEG_SOURCE)
			n += (g->off + g->len + 4095) / 4096 - g->off / 4096;
		else
			n += g->len / 4096 + 1;
	}
	return n;
}

/* Splice len bytes of fd at off into the pipe: 0, or a positive errno
 * (EIO when the file ends early, EAGAIN when the pipe is full). */
static int
splice_in(int fd, uint64_t off, size_t len, int pw)
{
	loff_t pos = (loff_t)off;

	while (len) {
		ssize_t n = splice(fd, &pos, pw, NULL, len,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return EIO;	/* the source ends early */
		len -= (size_t)n;
	}
	return 0;
}

static int
write_in(int pw, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(pw, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Verify every source the segments read (after reading them). */
static int
verify_sources(const struct view_segs *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->seg[i].kind == VIEW_SEG_SOURCE &&
		    source_verify(s->seg[i].src) != 0)
			return EIO;
	return 0;
}

/* Fill this thread's pipe with the segments and reply from it (zero copy
 * for source ranges: the pipe holds references to their page-cache
 * pages).  1 when it could not (no pipe, a source without descriptor,
 * too many slots, the pipe full): then nothing was replied and the pipe
 * is empty. */
static int
reply_pipe(fuse_req_t req, struct reply_ctx *t, const struct view_segs *s)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(s->len);
	int rc = 0, left, written = 0;
	size_t i;

	if (pipe_open(t) || pipe_slots(s) > t->pipe_size / 4096)
		return 1;
	for (i = 0; i < s->n && !rc; i++) {
		const struct view_seg *g = &s->seg[i];
		int fd;

		if (g->kind == VIEW_SEG_MEM) {
			rc = write_in(t->pipe[1], view_seg_mem(s, g), g->len);
			written = 1;
			continue;
		}
		fd = source_fd_get(g->src);
		if (fd == -EOPNOTSUPP) {
			/* no descriptor (remote): copy instead, keeping the
			 * pipe when nothing went in yet */
			if (!written)
				return 1;
			rc = EAGAIN;
			break;
		}
		if (fd < 0) {
			/* reopened from the pool and no longer the file
			 * opened (-ESTALE), or no descriptor to be had */
			rc = EIO;
			break;
		}
		written = 1;
		rc = splice_in(fd, g->off, g->len, t->pipe[1]);
		source_fd_put(g->src, fd);
	}
	/* Also after a failure: a change gets noticed (and logged) now. */
	if (verify_sources(s))
		rc = EIO;
	if (rc) {
		reply_pipe_close(t);	/* drop what went in */
		if (rc == EAGAIN || rc == EINVAL)
			return 1;
		fuse_reply_err(req, rc);
		return 0;
	}
	bv.buf[0].flags = FUSE_BUF_IS_FD;
	bv.buf[0].fd = t->pipe[0];
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
	/* An interrupted request leaves bytes behind: start afresh. */
	if (ioctl(t->pipe[0], FIONREAD, &left) != 0 || left != 0)
		reply_pipe_close(t);
	return 0;
}

#define LEND_PIECES	4	/* a source range's pieces: 512 KiB, 1 MiB
				   blocks, with room */
#define LEND_IOV	64

/* Add [p, p + len) to the reply's pieces, to the last one when it
 * continues it. */
static void
add_piece(struct iovec *iov, int *n, void *p, size_t len)
{
	struct iovec *last = *n ? &iov[*n - 1] : NULL;

	if (last && (char *)last->iov_base + last->iov_len == (char *)p) {
		last->iov_len += len;
		return;
	}
	iov[*n].iov_base = p;
	iov[(*n)++].iov_len = len;
}

/* Without a pipe: one reply of pieces.  Source ranges are lent where the
 * source holds them (a remote source's cache blocks: the kernel copies
 * them once, into the page cache, instead of twice) and memory goes as
 * it is, while pieces are left; the rest is copied into this thread's
 * buffer, one piece however many segments (a slot is always kept for
 * it). */
static void
reply_copy(fuse_req_t req, struct reply_ctx *t, const struct view_segs *s)
{
	struct iovec iov[LEND_IOV];
	struct { struct source *src; void *token; } lent[LEND_IOV];
	size_t i, at = 0;
	int niov = 0, nlent = 0, rc = 0;

	t->buf.len = 0;
	if (buf_reserve(&t->buf, s->len)) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (i = 0; i < s->n && !rc; i++) {
		const struct view_seg *g = &s->seg[i];
		int room = LEND_IOV - niov - 1;	/* the buffer's slot kept */
		char *dst = t->buf.data + at;
		int k;

		if (g->len == 0)
			continue;
		if (g->kind == VIEW_SEG_SOURCE && room >= LEND_PIECES) {
			void *token = NULL;

			k = source_lend(g->src, g->off, g->len, iov + niov,
					LEND_PIECES, &token);
			if (k > 0) {
				niov += k;
				lent[nlent].src = g->src;
				lent[nlent++].token = token;
				continue;
			}
			if (k != -EOPNOTSUPP) {
				rc = k == -EINTR ? EINTR : EIO;
				break;
			}
		} else if (g->kind == VIEW_SEG_MEM && room >= 1) {
			add_piece(iov, &niov, (void *)view_seg_mem(s, g),
				  g->len);
			continue;
		}
		if (g->kind == VIEW_SEG_MEM) {
			memcpy(dst, view_seg_mem(s, g), g->len);
		} else if ((k = source_pread(g->src, dst, g->len,
					    g->off)) < 0) {
			rc = k == -EINTR ? EINTR : EIO;	/* the reader left */
			break;
		}
		add_piece(iov, &niov, dst, g->len);
		at += g->len;
	}
	if (verify_sources(s) && rc != EINTR)
		rc = EIO;
	if (rc)
		fuse_reply_err(req, rc);
	else if (niov == 0)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_iov(req, iov, niov);
	while (nlent--)
		source_lend_end(lent[nlent].src, lent[nlent].token);
}

void
reply_segs(fuse_req_t req, struct reply_ctx *t, const struct view_segs *s)
{
	size_t i;
	int src = 0;

	for (i = 0; i < s->n; i++)
		src |= s->seg[i].kind == VIEW_SEG_SOURCE;
	/* Memory only (sidecars, JSON, text, decoded data): one reply. */
	if (!src) {
		if (s->n == 1)
			fuse_reply_buf(req, view_seg_mem(s, &s->seg[0]),
				       s->seg[0].len);
		else if (s->n == 0)
			fuse_reply_buf(req, NULL, 0);
		else
			reply_copy(req, t, s);
		return;
	}
	if (reply_pipe(req, t, s))
		reply_copy(req, t, s);
}

