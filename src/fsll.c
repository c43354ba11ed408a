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
#include "header.h"
#include "model.h"
#include "npy.h"
#include "source.h"
#include "txt.h"
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

/* 0 when the source still holds [pos, pos + n), else EIO (logged once):
 * the kernel takes a short reply for EOF and shrinks the file, and splice
 * just stops at the source's end, so a truncated source must give EIO
 * rather than a silently shorter file. */
static int
check_source(fuse_req_t req, struct source *src, uint64_t pos, uint64_t n)
{
	int64_t cur = source_current_size(src);

	if (cur < 0 || (uint64_t)cur < pos + n) {
		log_truncated(req, src, pos + n, cur);
		return EIO;
	}
	return 0;
}

/* Read n source bytes at pos into dst; 0 or a positive errno. */
static int
fetch(fuse_req_t req, struct source *src, uint64_t pos, size_t n, char *dst)
{
	int rc;

	if (n == 0)
		return 0;
	rc = check_source(req, src, pos, n);
	if (rc)
		return rc;
	rc = source_pread(src, dst, n, pos);
	return rc < 0 ? -rc : 0;
}

/* Reply with size source bytes at pos (already clamped to the file). */
static void
reply_source(fuse_req_t req, struct source *src, uint64_t pos, size_t size)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
	struct buf *b;
	int rc, fd;

	rc = check_source(req, src, pos, size);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	fd = source_fd_get(src);
	if (fd == -ESTALE) {
		fuse_reply_err(req, EIO);
		return;
	}
	if (fd >= 0) {
		/* Zero copy: libfuse splices the source's page-cache pages
		 * through a pipe into /dev/fuse (SPLICE_WRITE, see init);
		 * FD_RETRY makes its copy fallback loop on short preads.
		 * The descriptor is pinned in the pool until then. */
		bv.buf[0].size = size;
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK |
				  FUSE_BUF_FD_RETRY;
		bv.buf[0].fd = fd;
		bv.buf[0].pos = (off_t)pos;
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
		source_fd_put(src, fd);
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

/* Clamp [off, off + *size) to a file of len bytes; 0 when nothing is
 * left (and the empty reply is sent). */
static int
clamp_read(fuse_req_t req, uint64_t len, size_t *size, off_t off)
{
	if ((uint64_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return 0;
	}
	if (*size > len - (uint64_t)off)
		*size = (size_t)(len - (uint64_t)off);
	return 1;
}

static void
read_tensor(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
	struct source *src;
	uint64_t base, len;

	view_data(fsll_view(req), ino, &src, &base, &len);
	if (clamp_read(req, len, &size, off))
		reply_source(req, src, base + (uint64_t)off, size);
}

/* .npy/: the generated header, then the data.  Reads of the data part of
 * a dtype numpy has are spliced from the source like the tensor itself;
 * only the first read, which also covers the header, is copied. */
static void
read_npy(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
	const struct view *v = fsll_view(req);
	const struct tensor *t = view_tensor(v, ino)->t;
	uint64_t base, len, hsize = npy_header_size(t), doff, so, sl;
	size_t hpart, dlen, need;
	struct source *src;
	struct buf *b;
	char *out;
	int rc;

	view_data(v, ino, &src, &base, &len);
	if (!clamp_read(req, hsize + npy_data_size(t), &size, off))
		return;
	hpart = (uint64_t)off < hsize ? (size_t)(hsize - (uint64_t)off) : 0;
	if (hpart > size)
		hpart = size;
	dlen = size - hpart;
	doff = (uint64_t)off + hpart - hsize;
	if (hpart == 0 && npy_is_raw(t->dtype)) {
		reply_source(req, src, base + doff, dlen);
		return;
	}
	/* One buffer: [header part | data part | source bytes to decode];
	 * the whole header is rendered first, its part moved to the front. */
	sl = 0;
	so = 0;
	if (!npy_is_raw(t->dtype))
		npy_src_range(t, doff, dlen, &so, &sl);
	need = hpart + dlen + (size_t)sl;
	b = scratch(need > hsize ? need : (size_t)hsize);
	if (!b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (hpart) {
		if (npy_header(t, b) != 0) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memmove(b->data, b->data + off, hpart);
	}
	out = b->data + hpart;
	if (npy_is_raw(t->dtype)) {
		rc = fetch(req, src, base + doff, dlen, out);
	} else {
		rc = fetch(req, src, base + so, (size_t)sl, out + dlen);
		if (!rc)
			npy_decode(t, (const uint8_t *)out + dlen, doff, dlen,
				   (uint8_t *)out);
	}
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_buf(req, b->data, hpart + dlen);
}

/* .txt/: render only the elements the range covers (txt.h). */
static void
read_txt(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
	const struct view *v = fsll_view(req);
	const struct tensor *t = view_tensor(v, ino)->t;
	uint64_t base, len, so, sl;
	struct source *src;
	struct buf *b;
	int rc;

	view_data(v, ino, &src, &base, &len);
	if (!clamp_read(req, txt_size(t), &size, off))
		return;
	txt_src_range(t, (uint64_t)off, size, &so, &sl);
	b = scratch(size + (size_t)sl);
	if (!b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rc = fetch(req, src, base + so, (size_t)sl, b->data + size);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	txt_render(t, (const uint8_t *)b->data + size, (uint64_t)off, size,
		   b->data);
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
	case VIEW_NPY:
		read_npy(req, ino, size, off);
		return;
	case VIEW_TXT:
		read_txt(req, ino, size, off);
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
			strcpy(name, k ? ".." : ".");
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

static void
fsll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	const struct view *v = fsll_view(req);
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
	rc = view_xattr_get(v, ino, name, b);
	if (rc < 0) {
		fuse_reply_err(req, ENOMEM);
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

static void
fsll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	const struct view *v = fsll_view(req);
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
 * release/releasedir (no per-open state). */
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
	.getxattr = fsll_getxattr,
	.listxattr = fsll_listxattr,
	.setxattr = fsll_setxattr,
	.removexattr = fsll_removexattr,
	.fallocate = fsll_fallocate,
};
