/* s3_tier.c - the shared cache in an S3-compatible bucket (issue 41): the
 * backend of the HTTP client's second tier (source/http/http_tier.h),
 * which knows blocks, keys and MACs, and nothing of S3.
 *
 * One object per block below s3://BUCKET/PREFIX/, read with a GET and
 * written with a PUT, both signed with SigV4 (the payload's SHA-256 in
 * x-amz-content-sha256, as S3 wants it) through the client's transport:
 * its TLS settings and proxies apply.  Credentials, region and endpoint
 * are found as for s3:// sources (s3_conf.c), or apart from them: a
 * profile of its own, an endpoint and a region of its own.
 */
#include "source/s3/s3.h"
#include "source/s3/s3_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <nettle/sha2.h>

#include "base/buf.h"
#include "base/error.h"
#include "source/http/http_client.h"
#include "source/http/http_conf.h"
#include "source/http/http_tier.h"

#define ERR_BODY_MAX	4096	/* of an error answer, for its code */
#define PUT_STALL_MS	5000	/* a PUT that stalls this long fails */
#define PUT_TIMEOUT_MS	30000	/* a PUT, at most */

struct s3_tier {
	struct s3_conf conf;		/* its own */
	const struct http_client *client;	/* transport, timeouts */
	char *bucket, *prefix;		/* prefix "" or ending in '/' */
	char *name;			/* s3://BUCKET/PREFIX */
	struct http_transport_sigv4 sig;
};

static void
tier_free(void *priv)
{
	struct s3_tier *t = priv;

	if (!t)
		return;
	s3_conf_free(&t->conf);
	free(t->bucket);
	free(t->prefix);
	free(t->name);
	free(t);
}

static void
tier_headers_free(struct curl_slist *l)
{
	struct curl_slist *p;

	for (p = l; p; p = p->next)
		explicit_bzero(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

/* The request's headers: the payload's hash (hex, NULL: of nothing),
 * the session token, a PUT's type.  (Not "Expect:" to keep libcurl's
 * "Expect: 100-continue" from a PUT: libcurl signs the empty header it
 * then does not send.)  NULL when out of memory. */
static struct curl_slist *
tier_headers(const struct s3_tier *t, const char *payload_hex)
{
	static const char empty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e"
				    "4649b934ca495991b7852b855";
	const char *lines[3] = { NULL, NULL, NULL };
	struct curl_slist *l = NULL, *tmp;
	char *sha = NULL, *tok = NULL;
	int i, k = 0, ok = 1;

	if (asprintf(&sha, "x-amz-content-sha256: %s", payload_hex ?
		     payload_hex : empty) < 0)
		return NULL;
	lines[k++] = sha;
	if (payload_hex) {
		lines[k++] = "Content-Type: application/octet-stream";
	}
	if (t->conf.key && t->conf.token) {
		if (asprintf(&tok, "x-amz-security-token: %s",
			     t->conf.token) < 0)
			tok = NULL;
		ok = tok != NULL;
		lines[k++] = tok;
	}
	for (i = 0; ok && i < k; i++) {
		if (!(tmp = curl_slist_append(l, lines[i])))
			ok = 0;
		else
			l = tmp;
	}
	free(sha);
	if (tok) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
	if (!ok) {
		tier_headers_free(l);
		return NULL;
	}
	return l;
}

/* One exchange, for its callbacks: the answer's status and, when it is
 * not the object, the start of its body (S3's error code). */
struct call {
	const struct http_transport_sink *to;	/* the object's bytes */
	long status;
	int taken;				/* to->head() said TAKE */
	struct buf err;
};

static int
call_head(void *ud, const struct http_transport_response *r)
{
	struct call *c = ud;

	c->status = r->status;
	if (r->status == 200 && c->to) {
		int m = c->to->head(c->to->ud, r);

		c->taken = m == HTTP_SINK_TAKE;
		return m;
	}
	return HTTP_SINK_TAKE;
}

static int
call_body(void *ud, const char *p, size_t n)
{
	struct call *c = ud;

	if (c->taken)
		return c->to->body(c->to->ud, p, n);
	if (c->err.len + n <= ERR_BODY_MAX && buf_add(&c->err, p, n))
		return HTTP_SINK_STOP;
	return HTTP_SINK_TAKE;
}

/* S3's <Code> of an error answer, into code ("" none). */
static void
error_code(const struct buf *b, char *code, size_t n)
{
	const char *s, *end;

	code[0] = '\0';
	if (!b->data || !b->len)
		return;
	s = memmem(b->data, b->len, "<Code>", 6);
	if (!s)
		return;
	s += 6;
	end = memmem(s, b->len - (size_t)(s - b->data), "</Code>", 7);
	if (end && (size_t)(end - s) < n)
		snprintf(code, n, "%.*s", (int)(end - s), s);
}

static void
status_why(const struct call *c, char *why, size_t whylen)
{
	char code[64];

	error_code(&c->err, code, sizeof(code));
	snprintf(why, whylen, "%s%sHTTP %ld", code, code[0] ? ", " : "",
		 c->status);
}

/* One request to the object key: 0 with c->status, or the transport's
 * enum http_outcome (why says why). */
static int
exchange(const struct s3_tier *t, const char *key, struct call *c,
	 const struct iovec *body, int n, const char *payload_hex,
	 uint64_t stall_ms, uint64_t timeout_ms, char *why, size_t whylen)
{
	struct http_transport_sink sink = { NULL, call_head, call_body, c };
	struct http_transport_request q = {
		.sigv4 = t->conf.key ? &t->sig : NULL,
		.connect_ms = stall_ms, .stall_ms = stall_ms,
		.timeout_ms = timeout_ms, .body = body, .body_n = n,
	};
	struct http_transport_response resp;
	const struct http_transport *tr = t->client->tr;
	char *full = NULL, *url = NULL;
	struct curl_slist *hdrs;
	int r = HTTP_FAIL;

	if (asprintf(&full, "%s%s", t->prefix, key) < 0)
		full = NULL;
	hdrs = tier_headers(t, payload_hex);
	if (full && hdrs && (url = s3_http_url(&t->conf, t->bucket, full))) {
		q.url = url;
		q.headers = hdrs;
		r = tr->get(tr, &q, &resp, &sink, why, whylen);
	} else {
		snprintf(why, whylen, "out of memory");
	}
	tier_headers_free(hdrs);
	free(url);
	free(full);
	return r;
}

static int
tier_get(void *priv, const char *key, const struct http_transport_sink *sink,
	 uint64_t timeout_ms, char *why, size_t whylen)
{
	struct s3_tier *t = priv;
	struct call c = { .to = sink, .err = BUF_INIT };
	char code[64];
	int r, found;

	r = exchange(t, key, &c, NULL, 0, NULL, timeout_ms, timeout_ms, why,
		     whylen);
	if (r == HTTP_STOPPED && c.taken) {
		buf_free(&c.err);
		return HTTP_TIER_FOUND;	/* the sink refused the object */
	}
	if (r != HTTP_OK) {
		buf_free(&c.err);
		if (r == HTTP_STOPPED)
			snprintf(why, whylen, "out of memory");
		return HTTP_TIER_FAILED;
	}
	error_code(&c.err, code, sizeof(code));
	/* a missing key is a miss; a missing bucket is no shared cache */
	if (c.status == 404 && strcmp(code, "NoSuchBucket") != 0) {
		buf_free(&c.err);
		return HTTP_TIER_ABSENT;
	}
	found = c.status == 200;
	if (!found)
		status_why(&c, why, whylen);
	if (c.status == 403 && (!code[0] || !strcmp(code, "AccessDenied")))
		snprintf(why + strlen(why), whylen - strlen(why), ": the "
			 "credentials may not read the bucket, or lack "
			 "s3:ListBucket (without it S3 answers 403 for a "
			 "block it does not have)");
	buf_free(&c.err);
	return found ? HTTP_TIER_FOUND : HTTP_TIER_FAILED;
}

static int
tier_put(void *priv, const char *key, const struct iovec *iov, int n,
	 char *why, size_t whylen)
{
	struct s3_tier *t = priv;
	struct call c = { .err = BUF_INIT };
	uint8_t d[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	struct sha256_ctx h;
	int i, r, res;

	sha256_init(&h);
	for (i = 0; i < n; i++)
		sha256_update(&h, iov[i].iov_len,
			      (const uint8_t *)iov[i].iov_base);
	sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	r = exchange(t, key, &c, iov, n, hex, PUT_STALL_MS, PUT_TIMEOUT_MS,
		     why, whylen);
	if (r != HTTP_OK) {
		buf_free(&c.err);
		return HTTP_TIER_PUT_FAILED;
	}
	if (c.status >= 200 && c.status < 300) {
		res = HTTP_TIER_PUT_OK;	/* S3: 200; a WebDAV store: 201 */
	} else {
		/* a 4xx (AccessDenied: read-only; QuotaExceeded) or 507
		 * (full) refuses the block; other 5xx are trouble */
		status_why(&c, why, whylen);
		res = c.status < 500 || c.status == 507 ?
		      HTTP_TIER_PUT_REFUSED : HTTP_TIER_PUT_FAILED;
	}
	buf_free(&c.err);
	return res;
}

static const char *
opt_or_env(const char *v, const char *name)
{
	const char *e;

	if (v && *v)
		return v;
	e = getenv(name);
	return e && *e ? e : NULL;
}

/* s3://BUCKET[/PREFIX] into t's bucket, prefix and name. */
static int
tier_place(struct s3_tier *t, const char *url, struct err *e)
{
	char *key = NULL;
	size_t n;

	if (strncmp(url, "s3://", 5) != 0) {
		err_set(e, ERR_USAGE, "the shared cache must be an "
			"s3://BUCKET/PREFIX (any S3-compatible store)");
		return err_at(e, url);
	}
	if (s3_split_url(url, &t->bucket, &key, e))
		return err_at(e, url);
	n = strlen(key);
	while (n && key[n - 1] == '/')
		key[--n] = '\0';
	if ((n && asprintf(&t->prefix, "%s/", key) < 0) ||
	    (!n && !(t->prefix = strdup(""))) ||
	    asprintf(&t->name, "s3://%s%s%s", t->bucket, n ? "/" : "",
		     key) < 0) {
		t->name = NULL;
		free(key);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	free(key);
	return 0;
}

int
s3_tier_setup(const struct s3_tier_options *o, struct err *e)
{
	static const struct s3_tier_options none;
	struct http_tier_backend be = {
		tier_get, tier_put, tier_free, NULL, NULL
	};
	struct s3_conf_apart apart;
	struct http_client *c;
	struct s3_tier *t;
	const char *url;

	if (!o)
		o = &none;
	url = opt_or_env(o->url, "STFS_SHARED_CACHE");
	if (!url)
		return 0;
	apart.profile = opt_or_env(o->profile, "STFS_SHARED_CACHE_PROFILE");
	apart.endpoint = opt_or_env(o->endpoint,
				    "STFS_SHARED_CACHE_ENDPOINT");
	apart.region = opt_or_env(o->region, "STFS_SHARED_CACHE_REGION");
	if (!(c = http_client_process(e)))
		return -1;
	if (!(t = calloc(1, sizeof(*t))))
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	if (tier_place(t, url, e) || s3_conf_load_apart(&t->conf, &apart, e)) {
		tier_free(t);
		return -1;
	}
	t->client = c;
	t->sig.provider = t->conf.sigv4;
	t->sig.access_key = t->conf.key;
	t->sig.secret_key = t->conf.secret;
	be.priv = t;
	be.name = t->name;
	return http_client_set_tier(c, &be, opt_or_env(o->key_file,
				    "STFS_SHARED_CACHE_KEY"), e);
}
