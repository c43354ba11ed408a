/* adapter.c - FUSE low-level operations over a view (see adapter.h).
 *
 * Handlers run concurrently on libfuse's worker threads.  The view is
 * immutable and scratch memory, segments and pipes are per thread; the
 * only lock guards the queue of stale sources, taken once per source
 * that changes, never on the read path.  A request that would wait for
 * a computation (.stats/, sha256) is answered by the offload pool's
 * threads instead (offload.h).  A read that waits for the network asks
 * its thread's cancel (base/cancel.h) whether it is still wanted, and is
 * answered EINTR within a fraction of a second, however slow the server,
 * once it is not (read_gone()).
 */
#include "fuse/adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/cancel.h"
#include "base/memo.h"
#include "fuse/offload.h"
#include "fuse/reply.h"
#include "source/source.h"
#include "view/view.h"

#define UNUSED __attribute__((unused))

_Static_assert(REPLY_PIPE_BYTES >= 2 * ADAPTER_MAX_READ,
	       "a reply's pipe holds the largest read, unaligned");

static inline struct adapter *
adapter_data(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline const struct view *
adapter_view(fuse_req_t req)
{
	return adapter_data(req)->view;
}

/* Run the after_init hook once.  Called by the handlers a first access
 * goes through (lookup, getattr, statfs, opendir); by the time a file is
 * opened its readahead is settled. */
static void
first_request(fuse_req_t req)
{
	struct adapter *fs = adapter_data(req);

	if (__atomic_load_n(&fs->after_init_done, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_exchange_n(&fs->after_init_done, 1, __ATOMIC_ACQ_REL))
		return;
	if (fs->after_init)
		fs->after_init(fs->after_init_arg);
}

/* --- per-thread state -------------------------------------------------- */

/* What each worker thread keeps between requests: the segments of the
 * last read, and what replies are made with (fuse/reply.h): a pipe of its
 * own and a buffer, also the scratch buffer of listings and xattrs. */
struct tls {
	struct view_segs segs;
	struct reply_ctx r;
};

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void
tls_destroy(void *p)
{
	struct tls *t = p;

	view_segs_free(&t->segs);
	reply_ctx_fini(&t->r);
	free(t);
}

static void
tls_key_create(void)
{
	/* Failure leaves the key unusable; tls() then reports ENOMEM. */
	if (pthread_key_create(&tls_key, tls_destroy) != 0)
		tls_key = (pthread_key_t)-1;
}

static struct tls *
tls(void)
{
	struct tls *t;

	pthread_once(&tls_once, tls_key_create);
	if (tls_key == (pthread_key_t)-1)
		return NULL;
	t = pthread_getspecific(tls_key);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || pthread_setspecific(tls_key, t) != 0) {
			free(t);
			return NULL;
		}
	}
	return t;
}

/* An empty buffer with room for n bytes, reused by this thread for every
 * listing and xattr; NULL when out of memory. */
static struct buf *
scratch(size_t n)
{
	struct tls *t = tls();

	if (!t)
		return NULL;
	t->r.buf.len = 0;
	if (buf_reserve(&t->r.buf, n))
		return NULL;
	return &t->r.buf;
}

/* --- stale sources ------------------------------------------------------ */

struct adapter_stale {
	struct source *src;
	struct adapter_stale *next;
};

/* The sources' watch (source.h): runs once per source, on the thread that
 * saw the change, maybe inside a request handler. */
static void
on_stale(struct source *src, const char *why, void *arg)
{
	struct adapter *fs = arg;
	struct adapter_stale *q;

	fuse_log(FUSE_LOG_ERR, "%s: changed while mounted (%s): every "
		 "further read of it fails with EIO; replace a mounted model "
		 "by renaming a new file over it, and remount to see the new "
		 "one\n", src->name, why);
	q = malloc(sizeof(*q));
	if (!q)
		return;		/* its pages stay cached: still one version */
	q->src = src;
	pthread_mutex_lock(&fs->stale_lock);
	q->next = fs->stale;
	fs->stale = q;
	pthread_cond_signal(&fs->stale_cond);
	pthread_mutex_unlock(&fs->stale_lock);
}

static void
inval_one(uint64_t ino, void *arg)
{
	/* -ENOENT: the kernel has no such inode cached, nothing to drop. */
	fuse_lowlevel_notify_inval_inode(arg, (fuse_ino_t)ino, 0, 0);
}

static void *
stale_main(void *arg)
{
	struct adapter *fs = arg;
	struct adapter_stale *q;

	pthread_mutex_lock(&fs->stale_lock);
	for (;;) {
		while (!fs->stale && !fs->stale_stop)
			pthread_cond_wait(&fs->stale_cond, &fs->stale_lock);
		if (fs->stale_stop)
			break;
		q = fs->stale;
		fs->stale = q->next;
		pthread_mutex_unlock(&fs->stale_lock);
		if (fs->se)
			view_for_source(fs->view, q->src, inval_one, fs->se);
		free(q);
		pthread_mutex_lock(&fs->stale_lock);
	}
	pthread_mutex_unlock(&fs->stale_lock);
	return NULL;
}

void
adapter_setup(struct adapter *fs)
{
	pthread_mutex_init(&fs->stale_lock, NULL);
	pthread_cond_init(&fs->stale_cond, NULL);
	fs->stale_watch.changed = on_stale;
	fs->stale_watch.arg = fs;
}

static void
stale_stop(struct adapter *fs)
{
	if (!fs->stale_running)
		return;
	pthread_mutex_lock(&fs->stale_lock);
	fs->stale_stop = 1;
	pthread_cond_signal(&fs->stale_cond);
	pthread_mutex_unlock(&fs->stale_lock);
	pthread_join(fs->stale_thread, NULL);
	fs->stale_running = 0;
}

void
adapter_cleanup(struct adapter *fs)
{
	struct adapter_stale *q;

	offload_stop(fs->offload);
	fs->offload = NULL;
	stale_stop(fs);
	while ((q = fs->stale)) {
		fs->stale = q->next;
		free(q);
	}
	pthread_cond_destroy(&fs->stale_cond);
	pthread_mutex_destroy(&fs->stale_lock);
}

static void
adapter_destroy(void *userdata)
{
	struct adapter *fs = userdata;

	offload_stop(fs->offload);
	fs->offload = NULL;
	stale_stop(fs);
}

/* --- session ----------------------------------------------------------- */

static void
adapter_init(void *userdata, struct fuse_conn_info *conn)
{
	struct adapter *fs = userdata;

	/* fuse_reply_data() only splices page-cache pages into /dev/fuse
	 * when this is wanted, and it is off by default in libfuse 3.14;
	 * without it the fd path is a slow pread + copy. */
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	/* Readahead of large tensors arrives as background requests; the
	 * kernel default of 12 in flight starves parallel readers. */
	conn->max_background = ADAPTER_MAX_BACKGROUND;
	conn->congestion_threshold = ADAPTER_MAX_BACKGROUND * 3 / 4;
	conn->time_gran = 1;
	conn->max_read = ADAPTER_MAX_READ;		/* see adapter.h */
	/* Always READDIRPLUS, not the kernel's adaptive mode: that one
	 * lists with plain READDIR once the first chunk is done, and then
	 * (with the listing cached) `ls -l` of 100k tensors costs 200k
	 * LOOKUPs: 17 s instead of 1.7 s, measured. */
	if (conn->capable & FUSE_CAP_READDIRPLUS) {
		conn->want |= FUSE_CAP_READDIRPLUS;
		conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	}
	/* Files need no per-open state (sidecars are rendered on read), so
	 * let open() be answered by the kernel: it then sends no OPEN and
	 * RELEASE at all and keeps the page cache (FOPEN_KEEP_CACHE).  50k
	 * open+read+close: 5.4 s -> 1.1 s cold, 2.3 s -> 0.3 s cached. */
	if ((conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) &&
	    !view_volatile(fs->view, 0))	/* it needs direct_io */
		__atomic_store_n(&fs->no_open, 1, __ATOMIC_RELAXED);
	/* The user's -o max_background=, splice_move, ... win. */
	if (fs->conn_opts)
		fuse_apply_conn_info_opts(fs->conn_opts, conn);
	/* Here, when the loop runs, not at setup: threads do not follow a
	 * fork, and a front end may fork in between.  Without the thread a stale source still fails its reads;
	 * only its cached pages are not dropped. */
	if (pthread_create(&fs->stale_thread, NULL, stale_main, fs) == 0)
		fs->stale_running = 1;
	/* Without the pool such requests are answered on the request
	 * thread, as before. */
	fs->offload = offload_start(ADAPTER_OFFLOAD_THREADS);
	if (fs->on_init)
		fs->on_init(fs->on_init_arg);
}

/* --- names and attributes ---------------------------------------------- */

/* What every reply says of ino's attributes: the view's, with a
 * directory's block size the listing's request size (adapter.h).  0, or
 * the positive errno to answer: ENOENT, or ENOMEM when the view could
 * not compute them now (never cached: the next request asks again). */
static int
stat_ino(const struct view *v, fuse_ino_t ino, struct stat *st)
{
	int rc = view_stat(v, ino, st);

	if (rc)
		return rc == -ENOMEM ? ENOMEM : ENOENT;
	if (S_ISDIR(st->st_mode))
		st->st_blksize = ADAPTER_DIR_BLKSIZE;
	return 0;
}

/* How long the kernel may keep ino's attributes: the tree never changes,
 * but a file of .stfs/ does (the log grows, stats.json moves).  Their
 * attributes are asked for every time, and a size or time that moved
 * drops the pages the kernel cached of them (auto_inval_data, libfuse's
 * default): also in a mount that answers no opens (no_open), where
 * direct_io cannot be had. */
static double
attr_timeout(const struct view *v, fuse_ino_t ino)
{
	return view_kind(v, ino) == VIEW_HIDDEN_FILE &&
	       view_volatile(v, ino) ? 0 : ADAPTER_TIMEOUT;
}

/* A lookup's reply: every field libfuse reads is set (the rest zero).
 * 0, or stat_ino()'s errno. */
static int
fill_entry(const struct view *v, fuse_ino_t ino,
	   struct fuse_entry_param *ent)
{
	memset(ent, 0, sizeof(*ent));
	ent->ino = ino;
	ent->attr_timeout = ino ? attr_timeout(v, ino) : ADAPTER_TIMEOUT;
	ent->entry_timeout = ADAPTER_TIMEOUT;
	return ino ? stat_ino(v, ino, &ent->attr) : 0;
}

static void
adapter_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct view *v = adapter_view(req);
	struct fuse_entry_param ent;
	uint64_t ino;
	int rc;

	first_request(req);

	if (view_kind(v, parent) != VIEW_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* ino 0 with a timeout is a negative entry the kernel caches: the
	 * tree never changes, so a miss stays a miss.  A name the view
	 * cannot look up now (out of memory) is an error, which the kernel
	 * does not cache: never a negative entry for a file that exists. */
	ino = view_lookup(v, parent, name, strlen(name));
	rc = ino == VIEW_INO_AGAIN ? ENOMEM : fill_entry(v, ino, &ent);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_entry(req, &ent);
}

static void
adapter_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi UNUSED)
{
	struct stat st;
	int rc;

	first_request(req);

	rc = stat_ino(adapter_view(req), ino, &st);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_attr(req, &st, attr_timeout(adapter_view(req),
							ino));
}

static void
adapter_statfs(fuse_req_t req, fuse_ino_t ino UNUSED)
{
	const struct view *v = adapter_view(req);
	struct statvfs sv;

	first_request(req);

	/* Like squashfs: the size of everything, nothing free, so df shows
	 * the model's size and 100 % use. */
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = v->total_bytes / 4096 + (v->total_bytes % 4096 != 0);
	sv.f_files = v->ninodes;
	sv.f_namemax = VIEW_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

/* --- files ------------------------------------------------------------- */

static void
adapter_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	switch (view_kind(adapter_view(req), ino)) {
	case VIEW_NONE:
		fuse_reply_err(req, ENOENT);
		return;
	case VIEW_DIR:
		fuse_reply_err(req, EISDIR);
		return;
	default:
		break;
	}
	/* ENOSYS here means "no open needed" to the kernel (see init); the
	 * mount is read-only, so the VFS already refused any write open. */
	if (__atomic_load_n(&adapter_data(req)->no_open, __ATOMIC_RELAXED)) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY ||
	    (fi->flags & (O_TRUNC | O_APPEND))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	/* Contents never change: keep the page cache across opens and skip
	 * the FLUSH round trip on every close. */
	fi->keep_cache = 1;
	fi->noflush = 1;
	fi->fh = 0;
	/* .stfs/stats.json: every read asks for the current counters */
	if (view_volatile(adapter_view(req), ino)) {
		fi->keep_cache = 0;
		fi->direct_io = 1;
	}
	fuse_reply_open(req, fi);
}

/* What a request thread's memo_get does (memo.h): never wait, never
 * compute; -EWOULDBLOCK sends the request to the offload pool. */
static struct memo_asker request_thread = { 0, 0 };

/* A read that computes (.stats/), on an offload thread. */
static void
read_offloaded(fuse_req_t req, const struct offload_call *c)
{
	struct tls *t = tls();
	int rc = t ? view_read(adapter_view(req), c->ino, (uint64_t)c->off,
			       c->size, &t->segs) : -ENOMEM;

	if (!offload_claim(req, c))
		return;
	if (rc)
		fuse_reply_err(req, -rc);
	else
		reply_segs(req, &t->r, &t->segs);
}

/* A signal is pending for thread tid (the reader) that it neither
 * blocks nor ignores (/proc/TID/status; 0 when that cannot be read). */
static int
signal_pending_for(pid_t tid)
{
	char path[64], text[4096], *p;
	unsigned long long pnd = 0, shd = 0, blk = 0, ign = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	if ((p = strstr(text, "\nSigPnd:")))
		pnd = strtoull(p + 8, NULL, 16);
	if ((p = strstr(text, "\nShdPnd:")))
		shd = strtoull(p + 8, NULL, 16);
	if ((p = strstr(text, "\nSigBlk:")))
		blk = strtoull(p + 8, NULL, 16);
	if ((p = strstr(text, "\nSigIgn:")))
		ign = strtoull(p + 8, NULL, 16);
	return ((pnd | shd) & ~blk & ~ign) != 0;
}

/* A read's cancel (base/cancel.h): the reader is gone or wants to go,
 * or the session ends (unmount, SIGTERM).  The kernel says so with an
 * INTERRUPT only for a READ its reader waits for itself: it waits for
 * the answer of one it has sent uninterruptibly, even for a killed
 * reader.  A page-cache read arrives as readahead, which the kernel
 * never interrupts, and a reader whose signal is caught (dd, Python's
 * KeyboardInterrupt) waits for those pages whatever it is sent; so the
 * reader that asked (the request's thread) is looked at too: a signal
 * pending for it fails the readahead, and its own read of the pages
 * that follows is interrupted (10 such readers on a 1 MB/s link stayed
 * for 12 s after Ctrl-C). */
static int
read_gone(void *arg)
{
	fuse_req_t req = arg;
	struct fuse_session *se = adapter_data(req)->se;
	pid_t tid = fuse_req_ctx(req)->pid;

	return fuse_req_interrupted(req) || (se && fuse_session_exited(se)) ||
	       (tid > 0 && signal_pending_for(tid));
}

static void
adapter_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	  struct fuse_file_info *fi UNUSED)
{
	struct cancel c = { read_gone, req };
	struct tls *t = tls();
	int rc;

	if (!t) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memo_asker_set(&request_thread);
	cancel_set(&c);
	rc = view_read(adapter_view(req), ino, (uint64_t)off, size, &t->segs);
	if (rc == -EWOULDBLOCK)
		offload_submit(adapter_data(req)->offload, req, read_offloaded,
			       ino, off, size, NULL);
	else if (rc)	/* a view that rendered: any error of an abandoned
			   read is the interrupt's */
		fuse_reply_err(req, read_gone(req) ? EINTR : -rc);
	else
		reply_segs(req, &t->r, &t->segs);
	cancel_set(NULL);
}

/* --- directories ------------------------------------------------------- */

static void
adapter_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	first_request(req);
	switch (view_kind(adapter_view(req), ino)) {
	case VIEW_DIR:
		break;
	case VIEW_NONE:
		fuse_reply_err(req, ENOENT);
		return;
	default:
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* Let the kernel cache the listing too (it never changes). */
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

/* Directory offsets: 0 ".", 1 "..", 2 + k the k-th child; each entry
 * carries the offset of the next one. */
static void
do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus)
{
	const struct view *v = adapter_view(req);
	char name[VIEW_NAME_MAX + 1];
	struct fuse_entry_param ent;
	uint64_t k, n = view_nchildren(v, ino);
	size_t used = 0, len;
	struct buf *b;

	if (view_kind(v, ino) != VIEW_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	b = scratch(size);
	/* Short of memory for a large buffer (ADAPTER_DIR_BLKSIZE): a page
	 * of entries at a time still lists the directory. */
	if (!b && size > 4096)
		b = scratch(size = 4096);
	if (!b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (k = (uint64_t)off; k < n + 2; k++) {
		fuse_ino_t child;
		int rc = 0;

		if (k < 2) {
			/* The kernel ignores attributes of "." and "..";
			 * ino 0 keeps it from taking a lookup reference. */
			strcpy(name, k ? ".." : ".");
			fill_entry(v, 0, &ent);
			rc = stat_ino(v, ino, &ent.attr);
		} else {
			child = view_child(v, ino, k - 2);
			view_name(v, child, name);
			/* READDIRPLUS hands out inodes as lookups do (and
			 * READDIR wants the type) */
			rc = fill_entry(v, child, &ent);
		}
		if (rc && used == 0) {
			fuse_reply_err(req, rc);
			return;
		}
		if (rc)
			break;	/* the kernel asks again from here */
		if (plus)
			len = fuse_add_direntry_plus(req, b->data + used,
						     size - used, name, &ent,
						     (off_t)(k + 1));
		else
			len = fuse_add_direntry(req, b->data + used,
						size - used, name, &ent.attr,
						(off_t)(k + 1));
		if (len > size - used)
			break;	/* did not fit: the kernel asks again */
		used += len;
	}
	fuse_reply_buf(req, b->data, used);
}

static void
adapter_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi UNUSED)
{
	do_readdir(req, ino, size, off, 0);
}

static void
adapter_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi UNUSED)
{
	do_readdir(req, ino, size, off, 1);
}

/* --- everything that would write --------------------------------------- */

static void
adapter_setattr(fuse_req_t req, fuse_ino_t ino UNUSED, struct stat *attr UNUSED,
	     int to_set UNUSED, struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_mknod(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	   mode_t mode UNUSED, dev_t rdev UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_mkdir(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	   mode_t mode UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_unlink(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_symlink(fuse_req_t req, const char *link UNUSED,
	     fuse_ino_t parent UNUSED, const char *name UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_rename(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	    fuse_ino_t newparent UNUSED, const char *newname UNUSED,
	    unsigned int flags UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_link(fuse_req_t req, fuse_ino_t ino UNUSED, fuse_ino_t newparent UNUSED,
	  const char *newname UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_write(fuse_req_t req, fuse_ino_t ino UNUSED, const char *buf UNUSED,
	   size_t size UNUSED, off_t off UNUSED,
	   struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_create(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	    mode_t mode UNUSED, struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

/* --- extended attributes ------------------------------------------------ */

/* The xattr size protocol: size 0 asks for the length, a smaller buffer
 * is ERANGE. */
static void
reply_sized(fuse_req_t req, const char *data, size_t len, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, data, len);
}

/* Reply to getxattr with what view_xattr_get() said. */
static void
reply_xattr(fuse_req_t req, const char *name, int rc, const struct buf *b,
	    size_t size)
{
	if (rc == -4) {
		fuse_reply_err(req, EINTR);
	} else if (rc < 0) {
		fuse_reply_err(req, rc == -2 ? EIO : ENOMEM);
	} else if (rc > 0) {
		/* Only user.* exists here: for security.*, system.* (ACLs)
		 * and trusted.* say "not supported", which also lets ls(1)
		 * stop asking for every file of the mount. */
		fuse_reply_err(req, strncmp(name, "user.", 5) == 0 ?
			       ENODATA : EOPNOTSUPP);
	} else {
		reply_sized(req, b->data, b->len, size);
	}
}

/* A value that computes (sha256), on an offload thread. */
static void
xattr_offloaded(fuse_req_t req, const struct offload_call *c)
{
	struct buf *b = scratch(256);
	int rc = b ? view_xattr_get(adapter_view(req), c->ino, c->name, b) : -1;

	if (offload_claim(req, c))
		reply_xattr(req, c->name, rc, b, c->size);
}

static void
adapter_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	const struct view *v = adapter_view(req);
	struct buf *b;
	int rc;

	if (view_kind(v, ino) == VIEW_NONE) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	b = scratch(256);
	if (!b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memo_asker_set(&request_thread);
	rc = view_xattr_get(v, ino, name, b);
	if (rc == -3)
		offload_submit(adapter_data(req)->offload, req, xattr_offloaded,
			       ino, 0, size, name);
	else
		reply_xattr(req, name, rc, b, size);
}

static void
adapter_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	const struct view *v = adapter_view(req);
	struct buf *b;

	if (view_kind(v, ino) == VIEW_NONE) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	b = scratch(256);
	if (!b || view_xattr_list(v, ino, b) != 0) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	reply_sized(req, b->data, b->len, size);
}

static void
adapter_setxattr(fuse_req_t req, fuse_ino_t ino UNUSED, const char *name UNUSED,
	      const char *value UNUSED, size_t size UNUSED, int flags UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_removexattr(fuse_req_t req, fuse_ino_t ino UNUSED,
		 const char *name UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
adapter_fallocate(fuse_req_t req, fuse_ino_t ino UNUSED, int mode UNUSED,
	       off_t offset UNUSED, off_t length UNUSED,
	       struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

/* Not implemented on purpose: forget (inodes are permanent), access
 * (default_permissions makes the kernel check), flush (noflush),
 * release/releasedir (no per-open state). */
const struct fuse_lowlevel_ops adapter_ops = {
	.init = adapter_init,
	.destroy = adapter_destroy,
	.lookup = adapter_lookup,
	.getattr = adapter_getattr,
	.statfs = adapter_statfs,
	.open = adapter_open,
	.read = adapter_read,
	.opendir = adapter_opendir,
	.readdir = adapter_readdir,
	.readdirplus = adapter_readdirplus,
	.setattr = adapter_setattr,
	.mknod = adapter_mknod,
	.mkdir = adapter_mkdir,
	.unlink = adapter_unlink,
	.rmdir = adapter_unlink,
	.symlink = adapter_symlink,
	.rename = adapter_rename,
	.link = adapter_link,
	.write = adapter_write,
	.create = adapter_create,
	.getxattr = adapter_getxattr,
	.listxattr = adapter_listxattr,
	.setxattr = adapter_setxattr,
	.removexattr = adapter_removexattr,
	.fallocate = adapter_fallocate,
};
