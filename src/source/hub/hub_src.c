/* hub_src.c - the files of a pinned commit as sources.
 *
 * A remote file costs one request to resolve/ (with the token) at open.
 * The Hub answers a large (LFS) file with a redirect to a signed CDN URL:
 * the file is then read through an HTTP range source opened on that URL,
 * without the token.  The signed URL is used until a read through it
 * fails (it expired, or the CDN answers 401/403/410): then the file is
 * resolved again, checked to be the same object (size, ETag), and the
 * read retried once on the new URL, so the reader sees no error.  A full
 * read of a model therefore costs one resolve per file (plus one per
 * expiry), not one per block.  Small files the Hub serves itself (200)
 * are kept in memory.
 *
 * Files are opened HUB_PARALLEL at a time and registered by URL;
 * source_open() (through its open hook) hands them to model_open() and the
 * sharded-index reader, which open files by name one after the other.
 */
#include "source/hub/hub_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "source/source.h"

#define HUB_REDIRECTS	5
#define HUB_RETRY_GAP_MS 500	/* no second re-resolve sooner than this */

struct hub_src {
	pthread_mutex_t lock;
	char *url;		/* resolve URL */
	char *path;		/* repo path, for messages */
	char etag[256];
	uint64_t size;
	struct source *inner;	/* range source on the signed URL */
	unsigned gen;		/* bumped at every re-resolve */
	uint64_t resolved_ms;
	struct source **old;	/* replaced inners: readers may hold them */
	size_t nold;
	char *mem;		/* small file, served from memory */
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Resolve url: follow redirects within the endpoint's origin (with the
 * token), stop at the first one that leaves it.  On success either
 * *location is the signed URL to read (caller frees), or *mem holds the
 * whole file (small files).  size and etag describe the object. */
static int
resolve(const char *url, const char *path, char **location, char **mem,
	uint64_t *size, char *etag, size_t etag_cap, struct err *e)
{
	struct hub_resp r = { 0 };
	char *cur = strdup(url);
	int hops;

	*location = NULL;
	*mem = NULL;
	if (!cur)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (hops = 0; hops <= HUB_REDIRECTS; hops++) {
		size_t n = strlen(hub_cfg.origin);

		if (hub_request(cur, HUB_SMALL_MAX, &r) != 0 &&
		    r.status == 0) {
			err_where(e, url);
			err_set(e, ERR_IO, "cannot fetch %s: %s", path,
				r.why);
			break;
		}
		if (r.status >= 300 && r.status < 400 && r.location) {
			free(cur);
			cur = r.location;
			r.location = NULL;
			if (strncmp(cur, hub_cfg.origin, n) == 0 &&
			    cur[n] == '/')
				continue;	/* e.g. a renamed repo */
			if (!r.have_size) {
				err_where(e, url);
				err_set(e, ERR_IO, "the Hub redirected %s "
					"without X-Linked-Size", path);
				break;
			}
			*location = cur;
			*size = r.size;
			snprintf(etag, etag_cap, "%s", r.etag);
			hub_resp_free(&r);
			return 0;
		}
		if (r.status == 200) {
			free(cur);
			*size = r.body.len;
			snprintf(etag, etag_cap, "%s", r.etag);
			*mem = r.body.data ? buf_steal(&r.body) : strdup("");
			hub_resp_free(&r);
			return *mem ? 0 : err_set(e, ERR_NO_MEMORY,
						  "out of memory");
		}
		err_where(e, url);
		hub_status_error(&r, "the repository", "the pinned commit",
				 path, e);
		break;
	}
	if (hops > HUB_REDIRECTS) {
		err_where(e, url);
		err_set(e, ERR_IO, "too many redirects for %s", path);
	}
	free(cur);
	hub_resp_free(&r);
	return -1;
}

/* Open the range source on a signed location; it must be the object the
 * Hub described. */
static int
open_inner(struct hub_src *hs, const char *location, uint64_t size,
	   const char *etag, struct source **out, struct err *e)
{
	struct source *in;

	if (source_open_http(location, &in, e) != 0) {
		err_reset_where(e);
		err_where(e, hs->url);
		return -1;
	}
	if (in->size != size || (etag[0] && hs->etag[0] &&
				  strcmp(etag, hs->etag) != 0)) {
		source_close(in);
		err_where(e, hs->url);
		return err_set(e, ERR_IO, "the CDN serves %llu bytes for %s, "
			       "the Hub said %llu", (unsigned long long)in->size,
			       hs->path, (unsigned long long)size);
	}
	*out = in;
	return 0;
}

static int
mem_pread(struct hub_src *hs, void *buf, size_t len, uint64_t off)
{
	if (off > hs->size || len > hs->size - off)
		return -EIO;
	memcpy(buf, hs->mem + off, len);
	return 0;
}

static int
hub_pread(struct source *s, void *buf, size_t len, uint64_t off)
{
	struct hub_src *hs = s->priv;
	struct source *in, *fresh;
	char *location, *mem, etag[256];
	struct err e = { 0 };
	uint64_t size;
	unsigned gen;
	int r;

	if (hs->mem)
		return mem_pread(hs, buf, len, off);
	pthread_mutex_lock(&hs->lock);
	in = hs->inner;
	gen = hs->gen;
	pthread_mutex_unlock(&hs->lock);
	r = source_pread(in, buf, len, off);
	if (r == 0 || r == -ESTALE)
		return r;
	/* The signed URL may have expired: resolve again (once per failure
	 * burst; other readers wait here and use the new one). */
	pthread_mutex_lock(&hs->lock);
	if (hs->gen == gen && now_ms() - hs->resolved_ms >= HUB_RETRY_GAP_MS) {
		struct source **old;

		hs->resolved_ms = now_ms();
		if (resolve(hs->url, hs->path, &location, &mem, &size, etag,
			    sizeof(etag), &e) != 0) {
			pthread_mutex_unlock(&hs->lock);
			return r;
		}
		free(mem);	/* it was a redirect before: keep it one */
		if (!location || size != hs->size ||
		    open_inner(hs, location, size, etag, &fresh, &e) != 0) {
			free(location);
			pthread_mutex_unlock(&hs->lock);
			return r;
		}
		free(location);
		old = realloc(hs->old, (hs->nold + 1) * sizeof(*old));
		if (!old) {
			source_close(fresh);
			pthread_mutex_unlock(&hs->lock);
			return r;
		}
		hs->old = old;
		hs->old[hs->nold++] = hs->inner;
		hs->inner = fresh;
		hs->gen++;
	}
	in = hs->inner;
	pthread_mutex_unlock(&hs->lock);
	return source_pread(in, buf, len, off);
}

static void
hub_close(struct source *s)
{
	struct hub_src *hs = s->priv;
	size_t i;

	if (!hs)
		return;
	for (i = 0; i < hs->nold; i++)
		source_close(hs->old[i]);
	source_close(hs->inner);
	free(hs->old);
	free(hs->mem);
	free(hs->url);
	free(hs->path);
	pthread_mutex_destroy(&hs->lock);
	free(hs);
}

static const struct source_ops hub_ops = {
	.pread = hub_pread,
	.close = hub_close,
};

int
hub_src_open(const char *url, const char *path, struct source **out,
	     struct err *e)
{
	struct hub_src *hs = calloc(1, sizeof(*hs));
	struct source *s = calloc(1, sizeof(*s));
	char *location = NULL;

	*out = NULL;
	if (!hs || !s || !(hs->url = strdup(url)) ||
	    !(hs->path = strdup(path)) || !(s->name = strdup(url)) ||
	    !(s->base = strdup(base_name(path)))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	pthread_mutex_init(&hs->lock, NULL);
	s->priv = hs;
	s->ops = &hub_ops;
	s->fd = -1;
	s->mode = 0444;
	s->uid = getuid();
	s->gid = getgid();
	hs->resolved_ms = now_ms();
	if (resolve(url, path, &location, &hs->mem, &hs->size, hs->etag,
		    sizeof(hs->etag), e) != 0)
		goto fail;
	if (location) {
		if (open_inner(hs, location, hs->size, hs->etag, &hs->inner,
			       e) != 0)
			goto fail;
		s->mtime = hs->inner->mtime;
	} else {
		clock_gettime(CLOCK_REALTIME, &s->mtime);
	}
	free(location);
	s->ctime = s->mtime;
	s->size = hs->size;
	*out = s;
	return 0;
fail:
	free(location);
	if (s && s->priv) {
		source_close(s);
		return -1;
	}
	if (hs) {
		free(hs->url);
		free(hs->path);
		free(hs);
	}
	if (s) {
		free(s->name);
		free(s->base);
		free(s);
	}
	return -1;
}

/* ---- parallel opening and the registry ------------------------------------ */

static struct {
	pthread_mutex_t lock;
	struct hub_file *files;
	size_t n, next;
	int hooked;
} R = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
open_one(struct hub_file *f)
{
	if (f->local)
		f->rc = source_open_local(f->local, &f->src, &f->err);
	else
		f->rc = hub_src_open(f->url, f->path, &f->src, &f->err);
}

static void *
worker(void *arg)
{
	(void)arg;
	for (;;) {
		size_t i;

		pthread_mutex_lock(&R.lock);
		i = R.next++;
		pthread_mutex_unlock(&R.lock);
		if (i >= R.n)
			return NULL;
		open_one(&R.files[i]);
	}
}

/* source_open()'s hook: hand out a registered file once; open other
 * files under the endpoint's resolve/ on demand (an index may name a
 * shard the listing did not have: the Hub then says what is missing). */
static int
hook(const char *name, struct source **out, struct err *e)
{
	size_t i;

	for (i = 0; i < R.n; i++) {
		struct hub_file *f = &R.files[i];

		if (strcmp(f->url, name) != 0)
			continue;
		if (f->src) {
			*out = f->src;
			f->src = NULL;
			return 0;
		}
		if (f->local)
			return source_open_local(f->local, out, e);
		return hub_src_open(f->url, f->path, out, e);
	}
	if (hub_cfg.endpoint && strncmp(name, hub_cfg.endpoint,
					strlen(hub_cfg.endpoint)) == 0 &&
	    strstr(name, "/resolve/")) {
		if (hub_cfg.offline) {
			err_where(e, name);
			return err_set(e, ERR_IO, "not in the local hub cache "
				       "and HF_HUB_OFFLINE is set");
		}
		return hub_src_open(name, strstr(name, "/resolve/") + 9, out,
				    e);
	}
	return 1;
}

int
hub_open_files(struct hub_file *files, size_t n, struct err *e)
{
	pthread_t th[HUB_PARALLEL];
	size_t i, nth = 0, want;

	hub_files_release();
	R.files = files;
	R.n = n;
	R.next = 0;
	if (!R.hooked) {
		source_set_open_hook(hook);
		R.hooked = 1;
	}
	/* Local files need no thread; remote ones one each, up to the cap. */
	for (i = want = 0; i < n; i++)
		want += files[i].local == NULL;
	if (want > HUB_PARALLEL)
		want = HUB_PARALLEL;
	while (nth < want && pthread_create(&th[nth], NULL, worker, NULL) == 0)
		nth++;
	worker(NULL);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		if (files[i].rc) {
			*e = files[i].err;
			return -1;
		}
	return 0;
}

void
hub_files_release(void)
{
	size_t i;

	for (i = 0; i < R.n; i++) {
		source_close(R.files[i].src);
		R.files[i].src = NULL;
	}
	R.files = NULL;
	R.n = 0;
}
