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
 * Files are opened all at once (up to the HTTP layer's most requests in
 * flight) into the caller's table (hub.c's listing, whose opener hands
 * them to the model layer by name).
 */
#include "source/hub/hub_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/meter.h"
#include "base/parallel.h"
#include "source/http/http_client.h"
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
		.linked_etag = 1,	/* an LFS file's sha256: shared blocks */
	};
	const char *headers[2] = { NULL, NULL };
	char *auth = NULL;
	int rc;

	*out = NULL;
	o.client = http_client_process(e);
	if (!o.client)
		return err_at(e, url);
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

/* ---- opening ahead ---------------------------------------------------------- */

struct batch {
	struct hub_file *const *files;
	struct meter *meter;
};

static void
open_one(void *arg, size_t i)
{
	const struct batch *b = arg;
	struct hub_file *f = b->files[i];

	if (f->local)
		f->rc = source_open_local(f->local, &f->src, &f->err);
	else
		f->rc = hub_src_open(f->url, f->path, &f->src, &f->err);
	meter_step(b->meter, source_http_fetched(f->src));
}

int
hub_open_files(struct hub_file *const *files, size_t n, struct meter *meter,
	       struct err *e)
{
	struct batch b = { files, meter };
	struct http_client *client = NULL;
	size_t i, remote = 0;
	unsigned cap;

	/* An open costs round trips (resolve/, the header's GET), not
	 * bandwidth: every remote file at once, up to the most requests the
	 * HTTP layer keeps in flight, so that a mount waits about as long
	 * for 160 shards as for one.  Local files need no thread. */
	for (i = 0; i < n; i++)
		remote += files[i]->local == NULL;
	if (remote && !(client = http_client_process(e)))
		return -1;
	cap = client ? http_client_connections(client) : 1;
	meter_phase(meter, "files opened", n);
	parallel_run(n, remote < cap ? (unsigned)remote : cap, open_one, &b);
	for (i = 0; i < n; i++)
		if (files[i]->rc && !files[i]->optional) {
			*e = files[i]->err;
			return -1;
		}
	return 0;
}
