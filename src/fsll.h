/* fsll.h - FUSE low-level operations over a view.
 *
 * Every inode of the view is permanent for the life of the mount, so the
 * adapter keeps no per-inode state and ignores FORGET; replies carry very
 * long entry/attribute timeouts and negative entries are cached too.
 * Tensor data is spliced from the source descriptor; generated files are
 * served from memory (sidecars rendered on each read into a per-thread
 * buffer), so files need no open state and, where the kernel supports
 * it, no OPEN/RELEASE requests at all.  Everything that would modify the
 * tree answers EROFS.
 */
#ifndef STFS_FSLL_H
#define STFS_FSLL_H

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif

#include <fuse_lowlevel.h>

struct view;

/* Userdata of the session (fuse_session_new's last argument). */
struct fsll {
	const struct view *view;
	/* -o max_background=, splice_move, ... as parsed by
	 * fuse_parse_conn_info_opts(); applied after stfs's defaults.
	 * May be NULL. */
	struct fuse_conn_info_opts *conn_opts;
	/* Called once, from the first request after INIT (NULL: none).
	 * The kernel lowers the mount's readahead to what INIT negotiated
	 * when it processes the INIT reply, so a larger value written to
	 * /sys/class/bdi before that is lost; any later request proves
	 * the reply has been processed. */
	void (*after_init)(void *arg);
	void *after_init_arg;
	int after_init_done;	/* atomic */
	int no_open;		/* the kernel can skip OPEN/RELEASE (atomic) */
	int truncated_logged;	/* set once the first EIO for a truncated
				   source has been logged (atomic) */
};

#define FSLL_TIMEOUT (86400.0 * 365)	/* the tree never changes */
#define FSLL_MAX_BACKGROUND 64
/* Largest READ the kernel may send (the max_read= mount option, which
 * init() must repeat in conn->max_read).  A 512 KiB reply still fits the
 * 1 MiB pipe libfuse can get without CAP_SYS_RESOURCE, so it is spliced;
 * a 1 MiB one is copied, 2.3x slower.  Without the cap, a reader that says
 * POSIX_FADV_SEQUENTIAL (cat, cp) doubles the readahead window to 1 MiB
 * and gets 1 MiB requests. */
#define FSLL_MAX_READ (512u * 1024)

extern const struct fuse_lowlevel_ops fsll_ops;

#endif
