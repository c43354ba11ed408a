/* hub_http.c - requests to the Hub's endpoint: the API and resolve/.
 *
 * Each request uses an easy handle of its own (they run in several threads
 * at once) and never follows a redirect: the caller decides where to go
 * next, so the token in "Authorization: Bearer" reaches the endpoint's
 * origin (scheme, host, port) and nothing else.
 */
#include "source/hub/hub_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "base/error.h"

#define HUB_TRIES	3
#define HUB_CONNECT_S	10L
#define HUB_STALL_S	20L
#define HUB_TOTAL_S	120L

struct hub_xfer {
	struct hub_resp *r;
	size_t body_max;
	int too_big;
};

static void
copy_trimmed(char *dst, size_t cap, const char *v, size_t n)
{
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	while (n && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static int
header_is(const char *p, size_t n, const char *name, const char **val,
	  size_t *vlen)
{
	size_t k = strlen(name);

	if (n <= k || p[k] != ':' || strncasecmp(p, name, k) != 0)
		return 0;
	*val = p + k + 1;
	*vlen = n - k - 1;
	return 1;
}

static size_t
header_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct hub_xfer *x = ud;
	struct hub_resp *r = x->r;
	size_t n = size * nmemb, vlen;
	const char *v;
	char tmp[64];

	if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* a new response (after 100 Continue): forget the last */
		r->commit[0] = r->etag[0] = '\0';
		r->error_code[0] = r->error_msg[0] = '\0';
		r->have_size = 0;
		return n;
	}
	if (header_is(p, n, "X-Repo-Commit", &v, &vlen)) {
		copy_trimmed(r->commit, sizeof(r->commit), v, vlen);
	} else if (header_is(p, n, "X-Linked-Etag", &v, &vlen)) {
		copy_trimmed(r->etag, sizeof(r->etag), v, vlen);
	} else if (header_is(p, n, "ETag", &v, &vlen)) {
		if (!r->etag[0])
			copy_trimmed(r->etag, sizeof(r->etag), v, vlen);
	} else if (header_is(p, n, "X-Linked-Size", &v, &vlen)) {
		copy_trimmed(tmp, sizeof(tmp), v, vlen);
		r->size = strtoull(tmp, NULL, 10);
		r->have_size = 2;
	} else if (header_is(p, n, "Content-Length", &v, &vlen)) {
		if (r->have_size != 2) {
			copy_trimmed(tmp, sizeof(tmp), v, vlen);
			r->size = strtoull(tmp, NULL, 10);
			r->have_size = 1;
		}
	} else if (header_is(p, n, "X-Error-Code", &v, &vlen)) {
		copy_trimmed(r->error_code, sizeof(r->error_code), v, vlen);
	} else if (header_is(p, n, "X-Error-Message", &v, &vlen)) {
		copy_trimmed(r->error_msg, sizeof(r->error_msg), v, vlen);
	}
	return n;
}

static size_t
body_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct hub_xfer *x = ud;
	size_t n = size * nmemb;

	if (x->r->body.len + n > x->body_max) {
		x->too_big = 1;
		return 0;		/* abort the transfer */
	}
	if (buf_add(&x->r->body, p, n))
		return 0;
	return n;
}

/* 1 when url is on the endpoint's origin: the only place for the token. */
static int
same_origin(const char *url)
{
	size_t n = strlen(hub_cfg.origin);

	return strncmp(url, hub_cfg.origin, n) == 0 &&
	       (url[n] == '/' || url[n] == '\0' || url[n] == '?');
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static int
transient(CURLcode rc, long status)
{
	if (rc == CURLE_OK)
		return status >= 500 || status == 429 || status == 408;
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT ||
	       rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
	       rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE ||
	       rc == CURLE_COULDNT_RESOLVE_HOST;
}

static int
request_once(CURL *h, const char *url, size_t body_max, struct hub_resp *r)
{
	struct curl_slist *hdrs = NULL, *tmp;
	struct hub_xfer x = { r, body_max, 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	char *auth = NULL;
	CURLcode rc;
	char *loc = NULL;

	buf_free(&r->body);
	free(r->location);
	r->location = NULL;
	r->status = 0;
	r->why[0] = '\0';
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "stfs/" STFS_VERSION);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, HUB_CONNECT_S);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, HUB_STALL_S);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, HUB_TOTAL_S);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	if (hub_cfg.insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (hub_cfg.ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, hub_cfg.ca_file);
	if (hub_cfg.token && same_origin(url)) {
		if (asprintf(&auth, "Authorization: Bearer %s",
			     hub_cfg.token) < 0) {
			snprintf(r->why, sizeof(r->why), "out of memory");
			return -1;
		}
		tmp = curl_slist_append(hdrs, auth);
		if (tmp)
			hdrs = tmp;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdrs);
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	if (rc != CURLE_OK) {
		if (x.too_big)
			snprintf(r->why, sizeof(r->why), "answer larger than "
				 "%zu bytes", body_max);
		else
			snprintf(r->why, sizeof(r->why), "%s",
				 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		r->status = transient(rc, 0) ? -1 : 0;
		return -1;
	}
	if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK &&
	    loc && !(r->location = strdup(loc))) {
		snprintf(r->why, sizeof(r->why), "out of memory");
		return -1;
	}
	return 0;
}

int
hub_request(const char *url, size_t body_max, struct hub_resp *r)
{
	CURL *h = curl_easy_init();
	long wait = 500;
	int i, rc = -1;

	if (!h) {
		snprintf(r->why, sizeof(r->why), "cannot start libcurl");
		return -1;
	}
	for (i = 0; i < HUB_TRIES; i++) {
		if (i)
			sleep_ms(wait), wait *= 2;
		rc = request_once(h, url, body_max, r);
		if (rc == 0 && !transient(CURLE_OK, r->status))
			break;
		if (rc != 0 && r->status != -1)
			break;		/* not worth a retry */
	}
	if (rc != 0)
		r->status = 0;
	curl_easy_cleanup(h);
	return rc;
}

void
hub_resp_free(struct hub_resp *r)
{
	buf_free(&r->body);
	free(r->location);
	r->location = NULL;
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
	if (r->status == 401 || r->status == 403)
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
	struct buf b = BUF_INIT;
	const unsigned char *p;
	int bad = buf_adds(&b, "");

	for (p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) ||
		    (keep_slash && *p == '/'))
			bad |= buf_add(&b, p, 1);
		else
			bad |= buf_addf(&b, "%%%02X", *p);
	}
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
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
