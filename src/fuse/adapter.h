/* adapter.h - FUSE low-level operations over a view.
 *
 * Every inode of the view is permanent for the life of the mount, so the
 * adapter keeps no per-inode state and ignores FORGET; replies carry very
 * long entry/attribute timeouts and negative entries are cached too.
 * Reads execute the segments view_read() answers: source ranges are
 * spliced from the source's descriptor into a pipe of the thread's own,
 * counted and verified, then handed to the kernel; memory is copied.  A
 * reply is exactly the length asked for (capped at the file's end) or
 * EIO.  Files need no open state and, where the kernel supports it, no
 * OPEN/RELEASE requests at all.  Everything that would modify the tree
 * answers EROFS.
 *
 * A source that changed since it was opened (source_verify) fails every
 * later read; the first time, it is logged and a helper thread drops the
 * kernel's cached pages of the files it backs (not from a request
 * handler: invalidation waits for pages that a pending read may hold).
 */
#ifndef STFS_ADAPTER_H
#define STFS_ADAPTER_H

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif

#include <fuse_lowlevel.h>
#include <pthread.h>

#include "source/source.h"

struct view;
struct adapter_stale;
struct offload;

/* Userdata of the session (fuse_session_new's last argument). */
struct adapter {
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
	/* Called at the end of INIT (NULL: none), on a worker thread: the
	 * loop runs and answers, which a front end that waits for the mount
	 * to be usable (a daemon's parent) wants to know; before INIT, a
	 * loop that cannot start a worker or allocate its buffer (too little
	 * memory) just ends. */
	void (*on_init)(void *arg);
	void *on_init_arg;
	int no_open;		/* the kernel can skip OPEN/RELEASE (atomic) */
	/* The session, for invalidations (set before the loop runs). */
	struct fuse_session *se;
	/* Stale sources waiting for their pages to be dropped, and the
	 * thread that does it (started by init, joined by destroy). */
	pthread_mutex_t stale_lock;
	pthread_cond_t stale_cond;
	struct adapter_stale *stale;
	pthread_t stale_thread;
	int stale_running, stale_stop;
	/* What the served sources tell when they change (adapter_setup
	 * fills it; the front end hands it to the sources). */
	struct source_watch stale_watch;
	/* The threads that answer requests which may wait long (offload.h;
	 * started by init, stopped by destroy). */
	struct offload *offload;
};

/* Set up and tear down the parts of *fs that need it (call around the
 * session's life, after filling view and se). */
void adapter_setup(struct adapter *fs);
void adapter_cleanup(struct adapter *fs);

#define ADAPTER_TIMEOUT (86400.0 * 365)	/* the tree never changes */
#define ADAPTER_MAX_BACKGROUND 64
/* Computations of .stats/ files and sha256 xattrs at once (offload.h);
 * more wait in its queue, interruptible, on no request thread. */
#define ADAPTER_OFFLOAD_THREADS 4
/* Largest READ the kernel may send (the max_read= mount option, which
 * init() must repeat in conn->max_read).  A 512 KiB reply still fits the
 * 1 MiB pipe libfuse can get without CAP_SYS_RESOURCE, so it is spliced;
 * a 1 MiB one is copied, 2.3x slower.  Without the cap, a reader that says
 * POSIX_FADV_SEQUENTIAL (cat, cp) doubles the readahead window to 1 MiB
 * and gets 1 MiB requests. */
#define ADAPTER_MAX_READ (512u * 1024)
/* st_blksize of a directory.  glibc's readdir() reads a directory in
 * getdents64 calls of its st_blksize (32 KiB at least, 1 MiB at most),
 * and since Linux 6.16 the kernel asks READDIRPLUS for as much as the
 * call can take, up to max_pages (1 MiB with libfuse's max_write): a
 * listing of 184k entries is then 38 round trips to the daemon, not 1,180
 * (each a wait for a thread to be scheduled on a loaded machine).  Older
 * kernels ask one page at a time whatever the buffer. */
#define ADAPTER_DIR_BLKSIZE (1u << 20)

extern const struct fuse_lowlevel_ops adapter_ops;

#endif
