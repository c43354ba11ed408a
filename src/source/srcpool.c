/* srcpool.c - a bounded pool of local source descriptors (srcpool.h).
 *
 * The read path takes no lock: srcpool_get pins an open descriptor with
 * an atomic count and marks it used (a bit, not a move in a list), and
 * srcpool_put unpins it.  The lock guards the list of open descriptors,
 * the count and closing; a reopen's open+fstat runs outside it.
 *
 * Closing an idle descriptor races with a reader pinning it: the closer
 * (under the lock) sees no pins, takes the descriptor away (fd = -1), and
 * looks at the pins again; a reader adds its pin, then reads fd.  In
 * sequentially consistent order one of them sees the other: a reader that
 * got the descriptor pinned before the closer's second look (which then
 * puts the descriptor back), one that read -1 takes the slow path.
 */
#include "source/srcpool.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct srcpool_ent {
	char *path;
	int fd;				/* -1 while closed (atomic) */
	unsigned pins;			/* atomic */
	int used;			/* read since the closer last looked
					   (atomic) */
	int stale;			/* the file changed: never reopened
					   (atomic) */
	dev_t dev;			/* identity at open time */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct srcpool_ent *prev, *next;	/* open ones (lock) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct srcpool_ent *head, *tail;	/* open descriptors, newest first */
static size_t nopen, max_open;		/* written under the lock; nopen
					   is also read atomically */

static int
load(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void
store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static size_t
default_max(void)
{
	struct rlimit rl;
	size_t n = 512;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur > 80 ? (size_t)(rl.rlim_cur - 64) / 2 : 8;
	if (n > 4096)
		n = 4096;
	return n < 8 ? 8 : n;
}

void
srcpool_set_max(size_t n)
{
	pthread_mutex_lock(&lock);
	__atomic_store_n(&max_open, n ? n : default_max(), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}

size_t
srcpool_open_count(void)
{
	return __atomic_load_n(&nopen, __ATOMIC_RELAXED);
}

static void
unlink_ent(struct srcpool_ent *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		head = x->next;
	if (x->next)
		x->next->prev = x->prev;
	else
		tail = x->prev;
	x->prev = x->next = NULL;
}

static void
push_front(struct srcpool_ent *x)
{
	x->prev = NULL;
	x->next = head;
	if (head)
		head->prev = x;
	head = x;
	if (!tail)
		tail = x;
}

/* Close x's descriptor if nobody has it pinned (lock held).  1 if closed. */
static int
close_idle(struct srcpool_ent *x)
{
	int fd;

	if (__atomic_load_n(&x->pins, __ATOMIC_SEQ_CST))
		return 0;
	fd = load(&x->fd);
	store(&x->fd, -1);
	if (__atomic_load_n(&x->pins, __ATOMIC_SEQ_CST)) {
		store(&x->fd, fd);	/* a reader came: it keeps it */
		return 0;
	}
	unlink_ent(x);
	close(fd);
	__atomic_store_n(&nopen, nopen - 1, __ATOMIC_RELAXED);
	return 1;
}

/* Close idle descriptors, least recently used first, until at most keep
 * are open: from the tail, a descriptor used since the last look gets a
 * second chance at the front (the CLOCK algorithm), so a read needs no
 * move in the list.  Two rounds at most; pinned ones stay. */
static void
trim(size_t keep)
{
	int round;

	for (round = 0; round < 2 && nopen > keep; round++) {
		struct srcpool_ent *x = tail, *moved = NULL;

		while (x && x != moved && nopen > keep) {
			struct srcpool_ent *prev = x->prev;

			if (load(&x->used)) {
				store(&x->used, 0);
				unlink_ent(x);
				push_front(x);
				if (!moved)
					moved = x;	/* where the round ends */
			} else {
				close_idle(x);
			}
			x = prev;
		}
	}
}

/* Room for one more (lock held). */
static void
make_room(void)
{
	if (!max_open)
		__atomic_store_n(&max_open, default_max(), __ATOMIC_RELAXED);
	trim(max_open - 1);
}

/* A descriptor just opened, in the list (lock held). */
static void
install(struct srcpool_ent *x, int fd)
{
	make_room();
	store(&x->fd, fd);
	push_front(x);
	__atomic_store_n(&nopen, nopen + 1, __ATOMIC_RELAXED);
}

struct srcpool_ent *
srcpool_add(const char *path, int fd, const struct stat *st)
{
	struct srcpool_ent *x = calloc(1, sizeof(*x));
	char cwd[4096];

	/* Absolute: the daemon changes to / when it goes to the background,
	 * and reopens happen after that. */
	if (x && path[0] != '/' && getcwd(cwd, sizeof(cwd))) {
		if (asprintf(&x->path, "%s/%s", cwd, path) < 0)
			x->path = NULL;
	} else if (x) {
		x->path = strdup(path);
	}
	if (!x || !x->path) {
		free(x);
		return NULL;
	}
	x->dev = st->st_dev;
	x->ino = st->st_ino;
	x->size = st->st_size;
	x->mtime = st->st_mtim;
	pthread_mutex_lock(&lock);
	install(x, fd);
	pthread_mutex_unlock(&lock);
	return x;
}

/* Open the path again and check it is the file first opened. */
static int
reopen(struct srcpool_ent *x)
{
	struct stat st;
	int fd;

	fd = open(x->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	if (fstat(fd, &st) != 0 || st.st_dev != x->dev ||
	    st.st_ino != x->ino || st.st_size != x->size ||
	    st.st_mtim.tv_sec != x->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != x->mtime.tv_nsec) {
		close(fd);
		store(&x->stale, 1);
		return -ESTALE;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Pin x's descriptor if it is open: >= 0, or -1. */
static int
pin_open(struct srcpool_ent *x)
{
	int fd;

	__atomic_add_fetch(&x->pins, 1, __ATOMIC_SEQ_CST);
	fd = load(&x->fd);
	if (fd < 0) {
		__atomic_sub_fetch(&x->pins, 1, __ATOMIC_SEQ_CST);
		return -1;
	}
	if (!__atomic_load_n(&x->used, __ATOMIC_RELAXED))
		store(&x->used, 1);	/* written once per round, not per read */
	return fd;
}

int
srcpool_get(struct srcpool_ent *x)
{
	int fd = pin_open(x);

	if (fd >= 0)
		return fd;
	if (load(&x->stale))
		return -ESTALE;
	fd = reopen(x);			/* outside the lock: it may be slow */
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&lock);
	if (load(&x->fd) >= 0) {
		/* another reader reopened it meanwhile: use that one */
		int ours = fd;

		__atomic_add_fetch(&x->pins, 1, __ATOMIC_SEQ_CST);
		fd = load(&x->fd);
		pthread_mutex_unlock(&lock);
		close(ours);
		return fd;
	}
	__atomic_add_fetch(&x->pins, 1, __ATOMIC_SEQ_CST);
	install(x, fd);
	pthread_mutex_unlock(&lock);
	return fd;
}

void
srcpool_put(struct srcpool_ent *x)
{
	size_t max = __atomic_load_n(&max_open, __ATOMIC_RELAXED);

	__atomic_sub_fetch(&x->pins, 1, __ATOMIC_SEQ_CST);
	/* Pinned descriptors may have pushed the count over the top. */
	if (max && srcpool_open_count() > max) {
		pthread_mutex_lock(&lock);
		if (nopen > max_open)
			trim(max_open);
		pthread_mutex_unlock(&lock);
	}
}

void
srcpool_remove(struct srcpool_ent *x)
{
	int fd;

	if (!x)
		return;
	pthread_mutex_lock(&lock);
	fd = load(&x->fd);
	if (fd >= 0) {
		unlink_ent(x);
		close(fd);
		__atomic_store_n(&nopen, nopen - 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
	free(x->path);
	free(x);
}
