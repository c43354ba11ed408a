/* source.c - local file sources: a path and, while it is in use, an
 * O_RDONLY descriptor from the bounded pool (srcpool.h). */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "srcpool.h"
#ifdef STFS_HAVE_HTTP
#include "http_url.h"
#include "source_http.h"
#endif

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

static const struct source_ops local_ops = {
	.pread = local_pread,
	.close = local_close,
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

	err_where(e, path);
	/* O_NONBLOCK so a FIFO or device cannot hang us before the
	 * regular-file check below; cleared again for the file itself. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return err_set(e, ERR_IO, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		int saved = errno;

		close(fd);
		return err_set(e, ERR_IO, "cannot stat: %s", strerror(saved));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(e, ERR_IO, "not a regular file");
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
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	s->ops = &local_ops;
	/* The descriptor belongs to the pool: source_fd_get/put. */
	s->fd = -1;
	s->size = (uint64_t)st.st_size;
	s->mtime = st.st_mtim;
	s->ctime = st.st_ctim;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	s->mode = st.st_mode & 07777;
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

static source_open_hook open_hook;

void
source_set_open_hook(source_open_hook fn)
{
	open_hook = fn;
}

char *
source_display(const char *name)
{
	if (!source_is_url(name))
		return strdup(name);
#ifdef STFS_HAVE_HTTP
	return hurl_redact(name);
#else
	return strndup(name, strcspn(name, "?#"));
#endif
}

int
source_open(const char *name, struct source **out, struct err *e)
{
	if (open_hook) {
		int r = open_hook(name, out, e);

		if (r <= 0)
			return r;
	}
	if (strncmp(name, "s3://", 5) == 0)
		return source_open_s3(name, out, e);
	if (source_is_url(name))
		return source_open_http(name, out, e);
	return source_open_local(name, out, e);
}

#ifndef STFS_HAVE_HTTP
int
source_open_http(const char *url, struct source **out, struct err *e)
{
	(void)out;
	err_where(e, url);
	return err_set(e, ERR_USAGE, "this stfs was built without HTTP support");
}
#endif

#ifndef STFS_HAVE_S3
int
source_open_s3(const char *url, struct source **out, struct err *e)
{
	(void)out;
	err_where(e, url);
	return err_set(e, ERR_USAGE, "this stfs was built without s3:// "
		       "support (it needs libcurl and libxml2)");
}
#endif

int64_t
source_current_size(struct source *s)
{
	struct stat st;
	int fd, rc;

	if (s->ops != &local_ops)
		return (int64_t)s->size;	/* remote: checked per response */
	fd = srcpool_get(s->priv);
	if (fd < 0)
		return fd;
	rc = fstat(fd, &st);
	srcpool_put(s->priv);
	if (rc < 0)
		return -errno;
	return (int64_t)st.st_size;
}

int
source_fd_get(struct source *s)
{
	if (s->ops != &local_ops)
		return s->fd >= 0 ? s->fd : -EOPNOTSUPP;
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
#ifdef STFS_HAVE_HTTP
	enum err_code c = e->code;

	if (s->name && source_is_url(s->name) &&
	    (c == ERR_METADATA_INCOMPLETE_BUFFER || c == ERR_HEADER_TOO_SMALL ||
	     c == ERR_INVALID_HEADER_LENGTH || c == ERR_INVALID_OFFSET) &&
	    source_http_size_wrong(s)) {
		e->code = ERR_OK;
		err_set(e, ERR_IO, "the server's Content-Range gives the size "
			"as %llu bytes but it serves bytes past that: a server "
			"fault, not the file's", (unsigned long long)s->size);
	}
#else
	(void)s;
	(void)e;
#endif
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
	free(s);
}
