/* hub_src.c - the files of a pinned commit as sources.
 *
 * A remote file is the shared HTTP source (source_http.c) opened on its
 * resolve URL, with the token as a header bound to the endpoint's origin.
 * The Hub answers resolve/ of a large (LFS) file with a redirect to a
 * signed CDN URL: http_fetch.c follows it (the token stays behind, an
 * https -> http redirect is refused), remembers the CDN URL until it
 * expires or the CDN refuses it (401/403/410), and then asks resolve/
 * again within the same read's bound, holding no lock readers wait on;
 * If-Match keeps the object the one opened.  The redirect is the
 * resolver: a full read of a model costs one resolve per file (plus one
 * per expiry), not one per block, and an expiry replaces one remembered
 * URL, so nothing grows with expiries.  Small files the Hub serves
 * itself (200, ranges too) are read from the endpoint directly.
 *
 * Files are opened HUB_PARALLEL at a time into the caller's table
 * (hub.c's listing, whose opener hands them to the model layer by name).
 */
#include "source/hub/hub_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/meter.h"
#include "source/http/source_http.h"
#include "source/source.h"

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The open failed on an HTTP status: one request to resolve/ says in the
 * Hub's words what is wrong (the file is gone, the token lost access). */
static int
diagnose(const char *url, const char *path, struct err *e)
{
	struct hub_resp r = { 0 };
	struct err why = { 0 };

	if (hub_request(url, 64u << 10, &r) == 0 &&
	    (r.status < 200 || r.status >= 400)) {
		hub_status_error(&r, "the repository", "the pinned commit",
				 path, &why);
		err_replace(e, why.code, "%s", why.detail);
	}
	hub_resp_free(&r);
	return -1;
}

int
hub_src_open(const char *url, const char *path, struct source **out,
	     struct err *e)
{
	struct source_http_opts o = {
		.base = base_name(path),
		.no_header_file = 1,
	};
	const char *headers[2] = { NULL, NULL };
	char *auth = NULL;
	int rc;

	*out = NULL;
	if (hub_cfg.token) {
		if (asprintf(&auth, "Authorization: Bearer %s",
			     hub_cfg.token) < 0) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			return err_at(e, url);
		}
		headers[0] = auth;
		o.headers = headers;
	}
	rc = source_open_http_opts(url, &o, out, e);
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	if (rc && strstr(e->detail, "HTTP status 4"))
		return diagnose(url, path, e);
	return rc;
}

/* ---- parallel opening and the registry ------------------------------------ */

static struct {
	pthread_mutex_t lock;
	struct hub_file *const *files;
	size_t n, next;
	struct meter *meter;
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
		open_one(R.files[i]);
		meter_step(R.meter, source_http_fetched(R.files[i]->src));
	}
}

int
hub_open_files(struct hub_file *const *files, size_t n, struct meter *meter,
	       struct err *e)
{
	pthread_t th[HUB_PARALLEL];
	size_t i, nth = 0, want;

	R.files = files;
	R.n = n;
	R.next = 0;
	R.meter = meter;
	meter_phase(meter, "files opened", n);
	/* Local files need no thread; remote ones one each, up to the cap. */
	for (i = want = 0; i < n; i++)
		want += files[i]->local == NULL;
	if (want > HUB_PARALLEL)
		want = HUB_PARALLEL;
	while (nth < want && pthread_create(&th[nth], NULL, worker, NULL) == 0)
		nth++;
	worker(NULL);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	R.files = NULL;		/* the caller's: nothing kept here */
	R.n = 0;
	R.meter = NULL;
	for (i = 0; i < n; i++)
		if (files[i]->rc) {
			*e = files[i]->err;
			return -1;
		}
	return 0;
}
