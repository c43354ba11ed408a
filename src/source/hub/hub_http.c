/* hub_http.c - requests to the Hub's endpoint (the API and resolve/),
 * its error messages and its URLs.
 *
 * Requests go through the HTTP layer's one client (http_request.c: the
 * shared transport, TLS settings, timeouts within the read bound,
 * retries) and never follow a redirect: the caller decides where to go
 * next, so the token in "Authorization: Bearer" reaches the endpoint's
 * origin (scheme, host, port) and nothing else.
 */
#include "source/hub/hub_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/error.h"
#include "base/text.h"
#include "source/http/http_client.h"
#include "source/http/http_request.h"

static void
copy_header(char *dst, size_t cap, const struct http_request_answer *a,
	    const char *name)
{
	const char *v = http_request_header(a, name);

	snprintf(dst, cap, "%s", v ? v : "");
}

/* The Hub's error headers of an answer into r. */
static void
read_headers(struct hub_resp *r, const struct http_request_answer *a)
{
	copy_header(r->error_code, sizeof(r->error_code), a, "X-Error-Code");
	copy_header(r->error_msg, sizeof(r->error_msg), a, "X-Error-Message");
}

int
hub_request(const char *url, size_t body_max, struct hub_resp *r)
{
	struct http_request_answer a = HTTP_REQUEST_ANSWER_INIT;
	struct curl_slist *hdrs = NULL;
	struct http_request q = {
		.url = url, .headers_for = hub_cfg.origin,
		.body_max = body_max, .bound_ms = hub_cfg.api_ms,
	};
	struct err e = { 0 };
	char *auth = NULL;
	int rc;

	hub_resp_free(r);
	memset(r, 0, sizeof(*r));
	q.client = http_client_process(&e);
	if (!q.client) {
		snprintf(r->why, sizeof(r->why), "%.200s", e.detail);
		return -1;
	}
	if (hub_cfg.token) {
		if (asprintf(&auth, "Authorization: Bearer %s",
			     hub_cfg.token) < 0 ||
		    !(hdrs = curl_slist_append(NULL, auth))) {
			free(auth);
			snprintf(r->why, sizeof(r->why), "out of memory");
			return -1;
		}
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	q.headers = hdrs;
	rc = http_request_get(&q, &a);
	if (hdrs) {
		explicit_bzero(hdrs->data, strlen(hdrs->data));
		curl_slist_free_all(hdrs);
	}
	if (rc != HTTP_OK) {
		snprintf(r->why, sizeof(r->why), "%s", a.why);
		http_request_answer_free(&a);
		return -1;
	}
	r->status = a.status;
	r->body = a.body;
	a.body = (struct buf)BUF_INIT;
	read_headers(r, &a);
	http_request_answer_free(&a);
	return 0;
}

void
hub_resp_free(struct hub_resp *r)
{
	buf_free(&r->body);
}

/* ---- messages --------------------------------------------------------- */

static const char *
token_hint(void)
{
	return "give a token with access to it: HF_TOKEN=hf_... in the "
	       "environment, or the file $HF_TOKEN_PATH or $HF_HOME/token "
	       "(`huggingface-cli login` writes it)";
}

int
hub_status_error(const struct hub_resp *r, const char *repo, const char *rev,
		 const char *file, struct err *e)
{
	const char *code = r->error_code, *msg = r->error_msg;

	if (r->status == 0)
		return err_set(e, ERR_IO, "cannot reach the Hub at %s: %s",
			       hub_cfg.endpoint, r->why);
	if (strcmp(code, "GatedRepo") == 0)
		return err_set(e, ERR_IO, "repository %s is gated (HTTP %ld%s"
			       "%s): accept its conditions on the Hub, then %s"
			       "%s%s", repo, r->status, *msg ? ": " : "", msg,
			       hub_cfg.token ? "use a token of that account ("
			       "the one in " : token_hint(),
			       hub_cfg.token ? hub_cfg.token_from : "",
			       hub_cfg.token ? " is not)" : "");
	if (r->status == 401 && hub_cfg.token)
		return err_set(e, ERR_IO, "the Hub refused the token from %s "
			       "for %s (HTTP 401%s%s): the repository does not "
			       "exist or the token is wrong or has no access",
			       hub_cfg.token_from, repo, *msg ? ": " : "", msg);
	if ((r->status == 401 || r->status == 403) && !hub_cfg.token)
		return err_set(e, ERR_IO, "repository %s not found or private "
			       "(HTTP %ld%s%s, no token given): %s", repo,
			       r->status, *msg ? ": " : "", msg, token_hint());
	if (r->status == 403)
		return err_set(e, ERR_IO, "access to %s denied (HTTP 403%s%s) "
			       "with the token from %s", repo,
			       *msg ? ": " : "", msg, hub_cfg.token_from);
	if (r->status == 404 && strcmp(code, "RevisionNotFound") == 0)
		return err_set(e, ERR_IO, "revision `%s` not found in %s (a "
			       "branch, tag or commit sha is expected)", rev,
			       repo);
	if (r->status == 404 && strcmp(code, "EntryNotFound") == 0)
		return err_set(e, ERR_IO, "file `%s` not found in %s at %s",
			       file ? file : "?", repo, rev);
	if (r->status == 404 && strcmp(code, "RepoNotFound") == 0)
		return err_set(e, ERR_IO, "repository %s not found on %s%s",
			       repo, hub_cfg.endpoint, hub_cfg.token ? "" :
			       " (if it is private, give a token: HF_TOKEN=...)");
	if (r->status == 404)
		return err_set(e, ERR_IO, "%s%s%s not found on %s (HTTP 404%s%s)",
			       file ? "file " : "repository ",
			       file ? file : repo, file ? "" : "",
			       hub_cfg.endpoint, *msg ? ": " : "", msg);
	return err_set(e, ERR_IO, "the Hub answered HTTP %ld for %s%s%s%s%s",
		       r->status, repo, file ? " file " : "", file ? file : "",
		       *msg ? ": " : "", msg);
}

/* ---- URLs ----------------------------------------------------------------- */

char *
hub_escape(const char *s, int keep_slash)
{
	return text_pct_encode(s, strlen(s), keep_slash ? "/" : NULL);
}

char *
hub_resolve_url(const char *repo, const char *sha, const char *path)
{
	char *p = hub_escape(path, 1), *url = NULL;

	if (p && asprintf(&url, "%s/%s/resolve/%s/%s", hub_cfg.endpoint, repo,
			  sha, p) < 0)
		url = NULL;
	free(p);
	return url;
}
