/* source.c - local file sources: a path and, while it is in use, an
 * O_RDONLY descriptor from the bounded pool (srcpool.h). */
#include "source/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "source/srcpool.h"

static int
local_pread(struct source *s, void *buf, size_t len, uint64_t off)
{
	int fd = srcpool_get(s->priv), rc = 0;
	char *p = buf;

	if (fd < 0)
		return fd;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0) {
			rc = -EIO;	/* the file ends early: never short */
			break;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	srcpool_put(s->priv);
	return rc;
}

static void
local_close(struct source *s)
{
	srcpool_remove(s->priv);
}

static int
same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* 1 when the file changed (and marks s stale), 0 when it did not, -1
 * when it cannot tell now.  The fstat that was already on the read path: a rewrite in place moves
 * mtime and ctime even when the size stays (ctime also when mtime was set
 * back), a truncation the size.  Unlinking the file - renaming a new one
 * over it, the way to replace a mounted model - moves its ctime too but
 * leaves the bytes we read alone: ctime counts only while the file has a
 * name.  An error of fstat itself counts as a change: the reply cannot be
 * vouched for. */
static int
local_changed(struct source *s)
{
	struct stat st;
	char why[96];
	int fd = srcpool_get(s->priv), rc = -1;

	if (fd >= 0) {
		rc = fstat(fd, &st);
		if (rc < 0)
			rc = -errno;
		srcpool_put(s->priv);
	}
	if (fd == -ESTALE) {
		snprintf(why, sizeof(why), "reopened, and another file now");
	} else if (fd < 0) {
		return -1;	/* no descriptor now (EMFILE): cannot tell */
	} else if (rc < 0) {
		snprintf(why, sizeof(why), "cannot stat: %s", strerror(-rc));
	} else if ((uint64_t)st.st_size != s->size) {
		snprintf(why, sizeof(why), "size %llu -> %llu bytes",
			 (unsigned long long)s->size,
			 (unsigned long long)st.st_size);
	} else if (!same_time(&st.st_mtim, &s->mtime) ||
		   (st.st_nlink > 0 && !same_time(&st.st_ctim, &s->ctime))) {
		snprintf(why, sizeof(why), "modified in place (mtime or "
			 "ctime moved)");
	} else if (st.st_dev != s->dev || st.st_ino != s->ino) {
		snprintf(why, sizeof(why), "another file (device or inode)");
	} else {
		return 0;
	}
	source_mark_stale(s, why);
	return 1;
}

static const struct source_ops local_ops = {
	.pread = local_pread,
	.close = local_close,
	.changed = local_changed,
};

static const char *
path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int
source_open_local(const char *path, struct source **out, struct err *e)
{
	struct source *s;
	struct stat st;
	int fd;

	/* O_NONBLOCK so a FIFO or device cannot hang us before the
	 * regular-file check below; cleared again for the file itself. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err_set(e, ERR_IO, "cannot open: %s", strerror(errno));
		return err_at(e, path);
	}
	if (fstat(fd, &st) < 0) {
		int saved = errno;

		close(fd);
		err_set(e, ERR_IO, "cannot stat: %s", strerror(saved));
		return err_at(e, path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		err_set(e, ERR_IO, "not a regular file");
		return err_at(e, path);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(path)) ||
	    !(s->base = strdup(path_base(path))) ||
	    !(s->priv = srcpool_add(path, fd, &st))) {
		if (s) {
			free(s->name);
			free(s->base);
		}
		free(s);
		close(fd);
		err_set(e, ERR_NO_MEMORY, "out of memory");
		return err_at(e, path);
	}
	s->ops = &local_ops;	/* its descriptor is the pool's: source_fd_get */
	s->size = (uint64_t)st.st_size;
	s->mtime = st.st_mtim;
	s->ctime = st.st_ctim;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	s->mode = st.st_mode & 07777;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	*out = s;
	return 0;
}

int
source_is_url(const char *name)
{
	return strncmp(name, "http://", 7) == 0 ||
	       strncmp(name, "https://", 8) == 0 ||
	       strncmp(name, "s3://", 5) == 0;
}

void
source_opener_keep(const struct source_opener *o, const char *name,
		   struct source *s)
{
	if (o->keep)
		o->keep(o->arg, name, s);
	else
		source_close(s);
}

#ifndef STFS_HAVE_HTTP
int
source_open_http(const char *url, struct source **out, struct err *e)
{
	(void)out;
	err_set(e, ERR_USAGE, "this stfs was built without HTTP support");
	return err_at(e, url);
}
#endif

#ifndef STFS_HAVE_S3
int
source_open_s3(const char *url, struct source **out, struct err *e)
{
	(void)out;
	err_set(e, ERR_USAGE, "this stfs was built without s3:// support (it "
		"needs libcurl and libxml2)");
	return err_at(e, url);
}
#endif

void
source_watch(struct source *s, const struct source_watch *w)
{
	__atomic_store_n(&s->watch, w, __ATOMIC_RELEASE);
}

void
source_mark_stale(struct source *s, const char *why)
{
	const struct source_watch *w;

	if (__atomic_exchange_n(&s->stale, 1, __ATOMIC_ACQ_REL))
		return;
	clock_gettime(CLOCK_REALTIME, &s->stale_at);
	__atomic_store_n(&s->stale_why, strdup(why), __ATOMIC_RELEASE);
	w = __atomic_load_n(&s->watch, __ATOMIC_ACQUIRE);
	if (w && w->changed)
		w->changed(s, why, w->arg);
}

const char *
source_stale_why(const struct source *s, struct timespec *at)
{
	const char *why = __atomic_load_n(&s->stale_why, __ATOMIC_ACQUIRE);

	if (why && at)
		*at = s->stale_at;
	return why;
}

int
source_verify(struct source *s)
{
	if (__atomic_load_n(&s->stale, __ATOMIC_ACQUIRE))
		return -ESTALE;
	if (s->ops->changed) {
		int rc = s->ops->changed(s);

		if (rc > 0)
			return -ESTALE;
		if (rc < 0)
			return -EIO;	/* could not check: this read only */
	}
	return 0;
}

int
source_fd_get(struct source *s)
{
	if (s->ops != &local_ops)
		return -EOPNOTSUPP;
	return srcpool_get(s->priv);
}

void
source_fd_put(struct source *s, int fd)
{
	(void)fd;
	if (s->ops == &local_ops)
		srcpool_put(s->priv);
}

int
source_blame(struct source *s, struct err *e)
{
	enum err_code c = e->code;

	if (s->ops->server_at_fault &&
	    (c == ERR_METADATA_INCOMPLETE_BUFFER || c == ERR_HEADER_TOO_SMALL ||
	     c == ERR_INVALID_HEADER_LENGTH || c == ERR_INVALID_OFFSET) &&
	    s->ops->server_at_fault(s))
		err_replace(e, ERR_IO, "the server's Content-Range gives the "
			    "size as %llu bytes but it serves bytes past that: "
			    "a server fault, not the file's",
			    (unsigned long long)s->size);
	return -1;
}

void
source_close(struct source *s)
{
	if (!s)
		return;
	if (s->ops && s->ops->close)
		s->ops->close(s);
	free(s->name);
	free(s->base);
	free(s->stale_why);
	free(s);
}
