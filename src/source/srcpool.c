/* srcpool.c - a bounded LRU pool of local source descriptors (srcpool.h). */
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
	int fd;				/* -1 while closed */
	unsigned pins;
	int stale;			/* the file changed: never reopened */
	dev_t dev;			/* identity at open time */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct srcpool_ent *prev, *next;	/* open ones, most recent first */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct srcpool_ent *head, *tail;	/* open descriptors */
static size_t nopen, max_open;

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
	max_open = n ? n : default_max();
	pthread_mutex_unlock(&lock);
}

size_t
srcpool_open_count(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = nopen;
	pthread_mutex_unlock(&lock);
	return n;
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

/* Close idle descriptors, least recently used first, until at most keep
 * are open.  Pinned ones stay. */
static void
trim(size_t keep)
{
	struct srcpool_ent *x = tail;

	while (x && nopen > keep) {
		struct srcpool_ent *prev = x->prev;

		if (!x->pins) {
			unlink_ent(x);
			close(x->fd);
			x->fd = -1;
			nopen--;
		}
		x = prev;
	}
}

/* Room for one more. */
static void
make_room(void)
{
	if (!max_open)
		max_open = default_max();
	trim(max_open - 1);
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
	make_room();
	x->fd = fd;
	push_front(x);
	nopen++;
	pthread_mutex_unlock(&lock);
	return x;
}

/* Open the path again and check it is the file first opened. */
static int
reopen(struct srcpool_ent *x)
{
	struct stat st;
	int fd;

	if (x->stale)
		return -ESTALE;
	fd = open(x->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	if (fstat(fd, &st) != 0 || st.st_dev != x->dev ||
	    st.st_ino != x->ino || st.st_size != x->size ||
	    st.st_mtim.tv_sec != x->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != x->mtime.tv_nsec) {
		close(fd);
		x->stale = 1;
		return -ESTALE;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int
srcpool_get(struct srcpool_ent *x)
{
	int fd;

	pthread_mutex_lock(&lock);
	if (x->fd >= 0) {
		unlink_ent(x);
		push_front(x);
		x->pins++;
		fd = x->fd;
		pthread_mutex_unlock(&lock);
		return fd;
	}
	make_room();
	fd = reopen(x);
	if (fd >= 0) {
		x->fd = fd;
		x->pins++;
		push_front(x);
		nopen++;
	}
	pthread_mutex_unlock(&lock);
	return fd;
}

void
srcpool_put(struct srcpool_ent *x)
{
	pthread_mutex_lock(&lock);
	if (x->pins)
		x->pins--;
	/* Pinned descriptors may have pushed the count over the top. */
	if (max_open && nopen > max_open)
		trim(max_open);
	pthread_mutex_unlock(&lock);
}

void
srcpool_remove(struct srcpool_ent *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&lock);
	if (x->fd >= 0) {
		unlink_ent(x);
		close(x->fd);
		nopen--;
	}
	pthread_mutex_unlock(&lock);
	free(x->path);
	free(x);
}
