/* fsll.c - FUSE low-level operations over a view (see fsll.h).
 *
 * Handlers run concurrently on libfuse's worker threads.  The view is
 * immutable, so the only shared mutable state is the "already logged"
 * flag; scratch memory is per thread.
 */
#include "fsll.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "buf.h"
#include "source.h"
#include "view.h"

#define UNUSED __attribute__((unused))

static inline struct fsll *
fsll_data(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline const struct view *
fsll_view(fuse_req_t req)
{
	return fsll_data(req)->view;
}

/* Run the after_init hook once.  Called by the handlers a first access
 * goes through (lookup, getattr, statfs, opendir); by the time a file is
 * opened its readahead is settled. */
static void
first_request(fuse_req_t req)
{
	struct fsll *fs = fsll_data(req);

	if (__atomic_load_n(&fs->after_init_done, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_exchange_n(&fs->after_init_done, 1, __ATOMIC_ACQ_REL))
		return;
	if (fs->after_init)
		fs->after_init(fs->after_init_arg);
}

/* --- per-thread scratch buffer ----------------------------------------- */

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void
scratch_destroy(void *p)
{
	buf_free(p);
	free(p);
}

static void
scratch_key_create(void)
{
	/* Failure leaves the key unusable; scratch() then reports ENOMEM. */
	if (pthread_key_create(&scratch_key, scratch_destroy) != 0)
		scratch_key = (pthread_key_t)-1;
}

/* An empty buffer with room for n bytes, reused by this thread for every
 * sidecar rendering and non-splice read; NULL when out of memory. */
static struct buf *
scratch(size_t n)
{
	struct buf *b;

	pthread_once(&scratch_once, scratch_key_create);
	if (scratch_key == (pthread_key_t)-1)
		return NULL;
	b = pthread_getspecific(scratch_key);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b || pthread_setspecific(scratch_key, b) != 0) {
			free(b);
			return NULL;
		}
	}
	b->len = 0;
	if (buf_reserve(b, n))
		return NULL;
	return b;
}

/* --- session ----------------------------------------------------------- */

static void
fsll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fsll *fs = userdata;

	/* fuse_reply_data() only splices page-cache pages into /dev/fuse
	 * when this is wanted, and it is off by default in libfuse 3.14;
	 * without it the fd path is a slow pread + copy. */
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	/* Readahead of large tensors arrives as background requests; the
	 * kernel default of 12 in flight starves parallel readers. */
	conn->max_background = FSLL_MAX_BACKGROUND;
	conn->congestion_threshold = FSLL_MAX_BACKGROUND * 3 / 4;
	conn->time_gran = 1;
	conn->max_read = FSLL_MAX_READ;		/* see fsll.h */
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
	if (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT)
		__atomic_store_n(&fs->no_open, 1, __ATOMIC_RELAXED);
	/* The user's -o max_background=, splice_move, ... win. */
	if (fs->conn_opts)
		fuse_apply_conn_info_opts(fs->conn_opts, conn);
}

/* --- names and attributes ---------------------------------------------- */

static void
fill_entry(const struct view *v, fuse_ino_t ino, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = ino;
	e->attr_timeout = FSLL_TIMEOUT;
	e->entry_timeout = FSLL_TIMEOUT;
	if (ino)
		view_stat(v, ino, &e->attr);
}

static void
fsll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct view *v = fsll_view(req);
	struct fuse_entry_param e;

	first_request(req);

	if (view_kind(v, parent) != VIEW_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* ino 0 with a timeout is a negative entry the kernel caches: the
	 * tree never changes, so a miss stays a miss. */
	fill_entry(v, view_lookup(v, parent, name, strlen(name)), &e);
	fuse_reply_entry(req, &e);
}

static void
fsll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi UNUSED)
{
	struct stat st;

	first_request(req);

	if (view_stat(fsll_view(req), ino, &st) != 0)
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_attr(req, &st, FSLL_TIMEOUT);
}

static void
fsll_statfs(fuse_req_t req, fuse_ino_t ino UNUSED)
{
	const struct view *v = fsll_view(req);
	struct statvfs sv;

	first_request(req);

	/* Like squashfs: the size of everything, nothing free, so df shows
	 * the model's size and 100 % use. */
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = (v->total_bytes + 4095) / 4096;
	sv.f_files = v->ninodes;
	sv.f_namemax = VIEW_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

/* --- files ------------------------------------------------------------- */

static void
fsll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	switch (view_kind(fsll_view(req), ino)) {
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
	if (__atomic_load_n(&fsll_data(req)->no_open, __ATOMIC_RELAXED)) {
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
	fuse_reply_open(req, fi);
}

/* Reply with mem[off, off+size) clamped to len. */
static void
reply_mem(fuse_req_t req, const char *mem, size_t len, size_t size, off_t off)
{
	if ((uint64_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > len - (uint64_t)off)
		size = len - (uint64_t)off;
	fuse_reply_buf(req, mem + off, size);
}

static void
log_truncated(fuse_req_t req, const struct source *src, uint64_t end,
	      int64_t cur)
{
	struct fsll *fs = fsll_data(req);

	if (__atomic_exchange_n(&fs->truncated_logged, 1, __ATOMIC_RELAXED))
		return;
	if (cur < 0)
		fuse_log(FUSE_LOG_ERR, "%s: cannot stat source: %s\n",
			 src->name, strerror((int)-cur));
	else
		fuse_log(FUSE_LOG_ERR, "%s: source is %" PRId64 " bytes, "
			 "shorter than the %" PRIu64 " needed: it was "
			 "truncated or replaced in place; reads fail with "
			 "EIO\n", src->name, cur, end);
}

static void
read_tensor(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
	const struct view *v = fsll_view(req);
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
	struct source *src;
	uint64_t base, len, pos;
	int64_t cur;
	struct buf *b;
	int rc;

	view_data(v, ino, &src, &base, &len);
	if ((uint64_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > len - (uint64_t)off)
		size = len - (uint64_t)off;
	pos = base + (uint64_t)off;

	/* The kernel takes a short reply for EOF and shrinks the file, and
	 * splice just stops at the source's end: check first, so that a
	 * truncated source gives EIO rather than a silently shorter tensor. */
	cur = source_current_size(src);
	if (cur < 0 || (uint64_t)cur < pos + size) {
		log_truncated(req, src, pos + size, cur);
		fuse_reply_err(req, EIO);
		return;
	}

	if (src->fd >= 0) {
		/* Zero copy: libfuse splices the source's page-cache pages
		 * through a pipe into /dev/fuse (SPLICE_WRITE, see init);
		 * FD_RETRY makes its copy fallback loop on short preads. */
		bv.buf[0].size = size;
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK |
				  FUSE_BUF_FD_RETRY;
		bv.buf[0].fd = src->fd;
		bv.buf[0].pos = (off_t)pos;
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
		return;
	}

	/* Sources without a descriptor (remote): read into this thread's
	 * buffer; source_pread() returns all bytes or an error. */
	b = scratch(size);
	if (!b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rc = source_pread(src, b->data, size, pos);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_buf(req, b->data, size);
}

static void
fsll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	  struct fuse_file_info *fi UNUSED)
{
	const struct view *v = fsll_view(req);
	const char *mem;
	struct buf *b;
	size_t len;

	switch (view_kind(v, ino)) {
	case VIEW_TENSOR:
		read_tensor(req, ino, size, off);
		return;
	case VIEW_SIDECAR:
		/* A few hundred bytes, usually read once (keep_cache):
		 * rendering on demand beats keeping 100k of them. */
		b = scratch(view_size(v, ino));
		if (!b || view_render_sidecar(v, ino, b) != 0) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		reply_mem(req, b->data, b->len, size, off);
		return;
	case VIEW_BLOB:
		mem = view_blob(v, ino, &len);
		reply_mem(req, mem, len, size, off);
		return;
	case VIEW_DIR:
		fuse_reply_err(req, EISDIR);
		return;
	default:
		fuse_reply_err(req, ENOENT);
		return;
	}
}

/* --- directories ------------------------------------------------------- */

static void
fsll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	first_request(req);
	switch (view_kind(fsll_view(req), ino)) {
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
	const struct view *v = fsll_view(req);
	char name[VIEW_NAME_MAX + 1];
	struct fuse_entry_param e;
	uint64_t k, n = view_nchildren(v, ino);
	size_t used = 0, len;
	struct buf *b;

	if (view_kind(v, ino) != VIEW_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	b = scratch(size);
	if (!b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (k = (uint64_t)off; k < n + 2; k++) {
		fuse_ino_t child;

		if (k < 2) {
			/* The kernel ignores attributes of "." and "..";
			 * ino 0 keeps it from taking a lookup reference. */
			memcpy(name, k ? ".." : ".", 3);
			fill_entry(v, 0, &e);
			view_stat(v, ino, &e.attr);
		} else {
			child = view_child(v, ino, k - 2);
			view_name(v, child, name);
			fill_entry(v, child, &e);
		}
		if (plus)
			len = fuse_add_direntry_plus(req, b->data + used,
						     size - used, name, &e,
						     (off_t)(k + 1));
		else
			len = fuse_add_direntry(req, b->data + used,
						size - used, name, &e.attr,
						(off_t)(k + 1));
		if (len > size - used)
			break;	/* did not fit: the kernel asks again */
		used += len;
	}
	fuse_reply_buf(req, b->data, used);
}

static void
fsll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi UNUSED)
{
	do_readdir(req, ino, size, off, 0);
}

static void
fsll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi UNUSED)
{
	do_readdir(req, ino, size, off, 1);
}

/* --- everything that would write --------------------------------------- */

static void
fsll_setattr(fuse_req_t req, fuse_ino_t ino UNUSED, struct stat *attr UNUSED,
	     int to_set UNUSED, struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_mknod(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	   mode_t mode UNUSED, dev_t rdev UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_mkdir(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	   mode_t mode UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_unlink(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_symlink(fuse_req_t req, const char *link UNUSED,
	     fuse_ino_t parent UNUSED, const char *name UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_rename(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	    fuse_ino_t newparent UNUSED, const char *newname UNUSED,
	    unsigned int flags UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_link(fuse_req_t req, fuse_ino_t ino UNUSED, fuse_ino_t newparent UNUSED,
	  const char *newname UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_write(fuse_req_t req, fuse_ino_t ino UNUSED, const char *buf UNUSED,
	   size_t size UNUSED, off_t off UNUSED,
	   struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_create(fuse_req_t req, fuse_ino_t parent UNUSED, const char *name UNUSED,
	    mode_t mode UNUSED, struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_setxattr(fuse_req_t req, fuse_ino_t ino UNUSED, const char *name UNUSED,
	      const char *value UNUSED, size_t size UNUSED, int flags UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_removexattr(fuse_req_t req, fuse_ino_t ino UNUSED,
		 const char *name UNUSED)
{
	fuse_reply_err(req, EROFS);
}

static void
fsll_fallocate(fuse_req_t req, fuse_ino_t ino UNUSED, int mode UNUSED,
	       off_t offset UNUSED, off_t length UNUSED,
	       struct fuse_file_info *fi UNUSED)
{
	fuse_reply_err(req, EROFS);
}

/* Not implemented on purpose: forget (inodes are permanent), access
 * (default_permissions makes the kernel check), flush (noflush),
 * release/releasedir (no per-open state), getxattr/listxattr (ENOSYS
 * lets the kernel stop asking). */
const struct fuse_lowlevel_ops fsll_ops = {
	.init = fsll_init,
	.lookup = fsll_lookup,
	.getattr = fsll_getattr,
	.statfs = fsll_statfs,
	.open = fsll_open,
	.read = fsll_read,
	.opendir = fsll_opendir,
	.readdir = fsll_readdir,
	.readdirplus = fsll_readdirplus,
	.setattr = fsll_setattr,
	.mknod = fsll_mknod,
	.mkdir = fsll_mkdir,
	.unlink = fsll_unlink,
	.rmdir = fsll_unlink,
	.symlink = fsll_symlink,
	.rename = fsll_rename,
	.link = fsll_link,
	.write = fsll_write,
	.create = fsll_create,
	.setxattr = fsll_setxattr,
	.removexattr = fsll_removexattr,
	.fallocate = fsll_fallocate,
};
