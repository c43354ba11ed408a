/* source.h - a read-only byte source: a local file or an HTTP(S) URL
 * (source_http.c).
 *
 * Every read goes through source_pread(), which either returns all the
 * requested bytes or fails: a short read (source truncated) is -EIO, never
 * a partial result.  A format's metadata (a header, an index, a directory:
 * read once, at open) goes through source_pread_meta() instead, so that a
 * remote source fetches just those bytes rather than blocks of data.
 * Local sources also lend their descriptor (source_fd_get/put) so the
 * FUSE layer can splice from it without copying.  A source that changes
 * after it was opened (rewritten in place, truncated) is stale for good:
 * source_verify() says so after every read.
 */
#ifndef STFS_SOURCE_H
#define STFS_SOURCE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "format/reader.h"

struct err;
struct source;

struct source_ops {
	/* Read exactly len bytes at off into buf.  0 or -errno. */
	int (*pread)(struct source *s, void *buf, size_t len, uint64_t off);
	/* The same for a format's metadata (source_pread_meta()).  NULL: as
	 * pread (local files: the page cache serves both alike). */
	int (*pread_meta)(struct source *s, void *buf, size_t len,
			  uint64_t off);
	/* The metadata is parsed (source_meta_done()).  NULL: nothing kept
	 * for it. */
	void (*meta_done)(struct source *s);
	void (*close)(struct source *s);
	/* 0 while the source is what was opened, 1 once it changed (after
	 * source_mark_stale()), -1 when it cannot tell now.  NULL: it never
	 * changes (or its pread detects that itself and calls
	 * source_mark_stale()). */
	int (*changed)(struct source *s);
	/* After a header failed to parse as cut short: 1 when the server,
	 * not the file, is at fault (it serves bytes past the size its
	 * Content-Range gave), else 0.  NULL: never (local files). */
	int (*server_at_fault)(struct source *s);
	/* Bytes [off, off + len) will be read soon (source_hint()).  NULL:
	 * nothing to gain (local files). */
	void (*hint)(struct source *s, uint64_t off, uint64_t len);
	/* Lend bytes [off, off + len) where they are (source_lend()).
	 * NULL: only pread (local files lend a descriptor instead). */
	int (*lend)(struct source *s, uint64_t off, size_t len,
		    struct iovec *iov, int max, void **token);
	void (*lend_end)(struct source *s, void *token);
};

struct source {
	const struct source_ops *ops;
	char *name;		/* as the user gave it (path or URL), for messages */
	char *base;		/* last path component, for sidecars' "source" */
	uint64_t size;		/* size at open time */
	struct timespec mtime;
	struct timespec ctime;
	uid_t uid;
	gid_t gid;
	mode_t mode;		/* permission bits of the source file */
	dev_t dev;		/* local files: identity at open time */
	ino_t ino;
	int stale;		/* set once a change was seen (atomic) */
	/* What changed and when (source_mark_stale()): stale_at is written
	 * before stale_why is published (atomic), once. */
	char *stale_why;
	struct timespec stale_at;
	const struct source_watch *watch;	/* source_watch(); atomic */
	void *priv;		/* backend state */
};

/* Who is told, once, when a source changed: by the thread that first sees
 * it, with a few words saying what changed (e.g. "size 10 -> 4").  The
 * FUSE adapter watches the sources it serves (it logs and drops the
 * kernel's cached pages); nothing global. */
struct source_watch {
	void (*changed)(struct source *s, const char *why, void *arg);
	void *arg;
};

/* Watch s with w (NULL: nobody). */
void source_watch(struct source *s, const struct source_watch *w);

/* Open a local regular file O_RDONLY|O_CLOEXEC.  0 or -1 with *e set
 * (ERR_IO: "No such file or directory", "is a directory", ...). */
int source_open_local(const char *path, struct source **out, struct err *e);

/* Opens a file by name for a reader that is handed names (an index's
 * shards, next to it): a local path, a URL, a file of a listing opened
 * ahead.  Who builds one decides what a name means (model/provider.h);
 * nothing here dispatches on schemes.  keep (may be NULL) gives back a
 * source open() handed out, for the next open() of the same name (an index
 * read once to find its shards, then again by the sharded-set reader).
 * meter (may be NULL) is told how far opening many files has got: the
 * readers that open many (a sharded set's shards) count them on it. */
struct meter;
struct source_opener {
	int (*open)(void *arg, const char *name, struct source **out,
		    struct err *e);
	void (*keep)(void *arg, const char *name, struct source *s);
	void *arg;
	struct meter *meter;
	/* Open name as a listing gave it, pinned to its ETag and size (an
	 * s3:// object then costs no open request, and a changed one fails
	 * its reads).  NULL: open() alone. */
	int (*open_pinned)(void *arg, const char *name, const char *etag,
			   uint64_t size, struct source **out,
			   struct err *e);
};

static inline int
source_opener_open(const struct source_opener *o, const char *name,
		   struct source **out, struct err *e)
{
	return o->open(o->arg, name, out, e);
}

/* Give s back to o (or close it when o cannot keep it). */
void source_opener_keep(const struct source_opener *o, const char *name,
			struct source *s);

/* 1 when name starts with http://, https:// or s3://. */
int source_is_url(const char *name);

/* s3://BUCKET/KEY (s3.c; a stub that refuses when built without
 * libcurl or libxml2). */
int source_open_s3(const char *url, struct source **out, struct err *e);

/* HTTP(S) range-request source (source_http.c; a stub that refuses when
 * built without libcurl). */
int source_open_http(const char *url, struct source **out, struct err *e);

static inline int
source_pread(struct source *s, void *buf, size_t len, uint64_t off)
{
	return s->ops->pread(s, buf, len, off);
}

/* Read exactly len bytes at off of a format's metadata: its header, an
 * index, a zip directory, a pickle; bytes that are parsed once and kept
 * as a table, never served as a tensor's.  Same contract as
 * source_pread().  A remote source fetches what its open did not bring
 * with one ranged GET of just the missing bytes and keeps them outside
 * its block cache (source_http.c), where a 1 MiB block for the last
 * kilobytes of a header would cost a MiB of transfer and of memory per
 * file. */
static inline int
source_pread_meta(struct source *s, void *buf, size_t len, uint64_t off)
{
	if (s->ops->pread_meta)
		return s->ops->pread_meta(s, buf, len, off);
	return s->ops->pread(s, buf, len, off);
}

/* The format has parsed what it read with source_pread_meta() (a header
 * into its table): a remote source lets go of the bytes it kept for it.
 * A later read fetches them again.  Called by whoever opened s, before
 * s serves data (model_read_header()). */
static inline void
source_meta_done(struct source *s)
{
	if (s->ops->meta_done)
		s->ops->meta_done(s);
}

/* Tell s that bytes [off, off + len) will be read soon: whoever knows the
 * order a model is read in (model/model_order.h, the view) says so, and a
 * remote source starts fetching them within its read-ahead budget.  The
 * source decides; a hint never fails and never blocks on the network. */
static inline void
source_hint(struct source *s, uint64_t off, uint64_t len)
{
	if (s->ops->hint)
		s->ops->hint(s, off, len);
}

/* The bytes [off, off + len) in memory the source holds (a remote
 * source's cache blocks), so that a reply can be sent from there without a
 * copy: iov[0..n) (n returned, at most max), valid and unchanged until
 * source_lend_end(s, *token).  -EOPNOTSUPP when s cannot (no such memory,
 * more than max pieces): pread instead; other -errno as pread. */
static inline int
source_lend(struct source *s, uint64_t off, size_t len, struct iovec *iov,
	    int max, void **token)
{
	if (!s->ops->lend)
		return -EOPNOTSUPP;
	return s->ops->lend(s, off, len, iov, max, token);
}

static inline void
source_lend_end(struct source *s, void *token)
{
	if (s->ops->lend_end)
		s->ops->lend_end(s, token);
}

static inline int
source_reader_pread(void *s, void *buf, size_t len, uint64_t off)
{
	return source_pread_meta(s, buf, len, off);
}

/* s as the format layer reads it (format/reader.h): container_open()
 * takes this.  A format reads only its metadata through a reader, so the
 * reads are source_pread_meta()'s. */
static inline struct reader
source_reader(struct source *s)
{
	return (struct reader){ source_reader_pread, s, s->size, s->name };
}

/* A descriptor to splice or pread the source's bytes from (same
 * offsets), pinned until source_fd_put(); -EOPNOTSUPP for sources without
 * one (remote), -ESTALE when a local file had to be reopened and is no
 * longer the one opened, other -errno on failure.  Local descriptors come
 * from a bounded pool (srcpool.h). */
int source_fd_get(struct source *s);
void source_fd_put(struct source *s, int fd);

/* 0 while the source is what was opened: for local files the same size,
 * mtime, ctime, device and inode (fstat); remote sources decide through
 * ops->changed.  -ESTALE once it changed: sticky, and the first time the
 * source's watch is told; -EIO when it cannot tell now (no descriptor to be
 * had).  Call it after reading, so that a change that raced with the read
 * is seen. */
int source_verify(struct source *s);

/* Mark s stale (sticky); the first call tells its watch. */
void source_mark_stale(struct source *s, const char *why);

/* What the first source_mark_stale() said (its why), with its time in
 * *at; NULL while s has not changed (or nothing could be kept). */
const char *source_stale_why(const struct source *s, struct timespec *at);

/* After container_open() failed on s: when s is remote and the server, not
 * the file, is at fault (its Content-Range total is wrong), *e is made to
 * say so (ERR_IO).  Returns -1 for the caller's convenience. */
int source_blame(struct source *s, struct err *e);

void source_close(struct source *s);

#endif
