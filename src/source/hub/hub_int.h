/* hub_int.h - what the hub_*.c files share; not for other modules. */
#ifndef STFS_HUB_INT_H
#define STFS_HUB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

struct err;
struct source;

#define HUB_SHA_LEN	40
#define HUB_JSON_MAX	(64u << 20)	/* API answers */

/* The conventions huggingface_hub follows (constants.py), read once. */
struct hub_cfg {
	char *endpoint;		/* HF_ENDPOINT without a trailing '/' */
	char *origin;		/* scheme://host[:port] of the endpoint */
	char *token;		/* NULL: anonymous */
	char token_from[320];	/* "HF_TOKEN", the file, ...: messages */
	char *cache;		/* HF_HUB_CACHE */
	int offline;		/* HF_HUB_OFFLINE */
	unsigned api_ms;	/* HF_HUB_ETAG_TIMEOUT: how long an API call
				   may take before the local cache is used */
};
extern struct hub_cfg hub_cfg;

/* One answer of the endpoint (redirects are not followed). */
struct hub_resp {
	long status;			/* 0: no answer (transport error) */
	struct buf body;
	char error_code[64];		/* X-Error-Code */
	char error_msg[256];		/* X-Error-Message */
	char why[256];			/* transport error, for messages */
};

/* GET url through the HTTP layer's client (http_request.h: its TLS
 * settings, timeouts, retries within the read bound), with the token
 * when url is on the endpoint's origin; no redirect is followed.  The
 * body is kept up to body_max bytes (more: no answer).  0 when an answer
 * came (any status), -1 when none did (r->status 0, r->why says why). */
int hub_request(const char *url, size_t body_max, struct hub_resp *r);
void hub_resp_free(struct hub_resp *r);

/* Turn a non-2xx answer into a one-line error for what (e.g. "revision
 * `main` of org/name"): 401/403 say how to give a token, 404 says which of
 * repo, revision or file the Hub did not find.  Returns -1. */
int hub_status_error(const struct hub_resp *r, const char *repo,
		     const char *rev, const char *file, struct err *e);

/* The URL of repo's file at sha: {endpoint}/{repo}/resolve/{sha}/{path},
 * path percent-encoded except '/'. */
char *hub_resolve_url(const char *repo, const char *sha, const char *path);

/* Percent-encode s for a URL path (keep: unreserved and, if keep_slash,
 * '/'). */
char *hub_escape(const char *s, int keep_slash);

/* ---- hub_src.c ------------------------------------------------------- */

/* A file of the pinned commit, to be opened.  local: its path in the hub
 * cache snapshot (opened locally); else resolved through url. */
struct hub_file {
	char *path;		/* repo path */
	char *url;		/* resolve URL: the name it is opened by */
	char *local;		/* snapshot path, or NULL */
	struct source *src;	/* after hub_open_files(), until taken */
	int optional;		/* a config beside models (naming_config):
				   its failure is no failure of the mount */
	int rc;
	struct err err;
};

/* Open every file into files[i]->src (the caller's: nothing is kept
 * here), all at once up to the HTTP layer's most requests in flight
 * (HTTP_MAX_CONNECTIONS, or http_connections), each counted on meter
 * (may be NULL).  0, or -1 with *e from the first failure of a file that
 * is not optional, in list order (an optional one keeps its rc and
 * err). */
struct meter;
int hub_open_files(struct hub_file *const *files, size_t n,
		   struct meter *meter, struct err *e);

/* Open one remote file: the HTTP source on its resolve URL (also used on
 * demand for files not pre-opened). */
int hub_src_open(const char *url, const char *path, struct source **out,
		 struct err *e);

#endif
