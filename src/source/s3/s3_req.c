/* s3_req.c - the S3 requests that are not ranged reads: ListObjectsV2
 * (every page, parsed with libxml2) and the diagnosis of a refused GET
 * (S3's <Error><Code> turned into one line that says what to check).
 *
 * Each call uses an easy handle of its own (listing happens at mount,
 * before any reader), signed with CURLOPT_AWS_SIGV4 like the data reads
 * of source_http.c.  Transient failures (connect errors, 5xx, 429) are
 * retried three times with a short backoff; everything is bounded by the
 * HTTP source's per-request timeout.
 */
#include "source/s3/s3_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "base/buf.h"
#include "base/error.h"
#include "source/http/source_http.h"

#define S3_BODY_MAX	(16u << 20)	/* one listing page is ~300 KiB */
#define S3_TRIES	3

struct s3_resp {
	struct buf body;
	long status;
	int too_big;
};

static size_t
body_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct s3_resp *r = ud;
	size_t n = size * nmemb;

	if (r->body.len + n > S3_BODY_MAX) {
		r->too_big = 1;
		return 0;
	}
	return buf_add(&r->body, p, n) ? 0 : n;
}

/* GET url (optionally "Range: bytes=range"), signed when c has a key.
 * 0 with r->status set (any status), or -1 with *e on transport errors. */
static int
s3_get(CURL *h, const struct s3_conf *c, const char *url, const char *range,
       struct s3_resp *r, struct err *e)
{
	struct curl_slist *hdrs = NULL, *tmp;
	char errbuf[CURL_ERROR_SIZE], *tok = NULL;
	unsigned attempt;
	long bound = (long)http_read_bound_s() * 1000L;
	CURLcode rc = CURLE_OK;

	hdrs = curl_slist_append(NULL, "x-amz-content-sha256: e3b0c44298fc1c1"
				 "49afbf4c8996fb92427ae41e4649b934ca495991b7"
				 "852b855");
	if (hdrs && c->key && c->token) {
		if (asprintf(&tok, "x-amz-security-token: %s", c->token) < 0)
			tok = NULL;
		tmp = tok ? curl_slist_append(hdrs, tok) : NULL;
		if (tok)
			explicit_bzero(tok, strlen(tok));
		free(tok);
		if (!tmp) {
			curl_slist_free_all(hdrs);
			hdrs = NULL;
		} else {
			hdrs = tmp;
		}
	}
	if (!hdrs)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_RANGE, range);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "stfs/" STFS_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, bound > 0 ? bound : 30000L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (getenv("STFS_HTTP_CA_FILE") && *getenv("STFS_HTTP_CA_FILE"))
		curl_easy_setopt(h, CURLOPT_CAINFO,
				 getenv("STFS_HTTP_CA_FILE"));
	if (c->key) {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
		curl_easy_setopt(h, CURLOPT_USERNAME, c->key);
		curl_easy_setopt(h, CURLOPT_PASSWORD, c->secret);
	}
	for (attempt = 0; attempt < S3_TRIES; attempt++) {
		buf_free(&r->body);
		r->status = 0;
		r->too_big = 0;
		errbuf[0] = '\0';
		rc = curl_easy_perform(h);
		if (rc == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
		if (rc == CURLE_OK && r->status < 500 && r->status != 429)
			break;
		if (rc == CURLE_WRITE_ERROR || rc == CURLE_OUT_OF_MEMORY ||
		    rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL)
			break;
		if (attempt + 1 < S3_TRIES)
			usleep(200000u << attempt);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	if (r->too_big)
		return err_set(e, ERR_IO, "the server's answer is larger than "
			       "16 MiB");
	if (rc != CURLE_OK)
		return err_set(e, ERR_IO, "cannot reach the S3 server: %s",
			       errbuf[0] ? errbuf : curl_easy_strerror(rc));
	return 0;
}

static const char *
hint(const char *code)
{
	static const struct { const char *code, *what; } H[] = {
		{ "SignatureDoesNotMatch", "the signature does not match: "
		  "check the secret access key (and the region)" },
		{ "InvalidAccessKeyId", "the server does not know this access "
		  "key ID: check the key ID and the endpoint" },
		{ "AccessDenied", "access denied: check that these "
		  "credentials may read the bucket (or that it is public, for "
		  "-o s3_anonymous)" },
		{ "AllAccessDisabled", "access to the bucket is disabled" },
		{ "NoSuchBucket", "no such bucket: check its name, the "
		  "endpoint and the region" },
		{ "NoSuchKey", "no such key: check the path after the bucket" },
		{ "InvalidToken", "the session token is invalid: check "
		  "AWS_SESSION_TOKEN / aws_session_token" },
		{ "ExpiredToken", "the session token has expired: get new "
		  "credentials" },
		{ "TokenRefreshRequired", "the session token has expired: get "
		  "new credentials" },
		{ "RequestTimeTooSkewed", "the clock of this machine is off by "
		  "more than 15 minutes: fix it" },
		{ "AuthorizationHeaderMalformed", "the region is wrong: check "
		  "AWS_REGION or the profile's region" },
		{ "PermanentRedirect", "the bucket is in another region: set "
		  "AWS_REGION" },
	};
	size_t i;

	for (i = 0; code && i < sizeof(H) / sizeof(H[0]); i++)
		if (!strcmp(code, H[i].code))
			return H[i].what;
	return NULL;
}

int
s3_error(const struct s3_conf *c, const char *bucket, long status,
	 const char *code, struct err *e)
{
	const char *h = hint(code);

	if (!code && status == 404)
		h = "not found (HTTP 404): check the bucket and the key";
	else if (!code && status == 403)
		h = "refused (HTTP 403): check the credentials";
	if (h)
		return err_set(e, ERR_IO, "bucket %s: %s%s%s (credentials: "
			       "%s)", bucket, code ? code : "", code ? ": " :
			       "", h, c->origin);
	return err_set(e, ERR_IO, "bucket %s: S3 error %s (HTTP %ld) "
		       "(credentials: %s)", bucket, code ? code : "unknown",
		       status, c->origin);
}

/* The text of the first element named name among node's children. */
static char *
child_text(xmlNode *node, const char *name)
{
	xmlNode *n;

	for (n = node ? node->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE &&
		    !strcmp((const char *)n->name, name))
			return (char *)xmlNodeGetContent(n);
	return NULL;
}

static xmlDoc *
parse_xml(const struct buf *b)
{
	if (b->len == 0 || b->len > S3_BODY_MAX)
		return NULL;
	return xmlReadMemory(b->data, (int)b->len, "s3.xml", NULL,
			     XML_PARSE_NONET | XML_PARSE_NOERROR |
			     XML_PARSE_NOWARNING);
}

/* Error answer: S3's Code (or the bare status) into *e. */
static int
answer_error(const struct s3_conf *c, const char *bucket,
	     struct s3_resp *r, struct err *e)
{
	xmlDoc *doc = parse_xml(&r->body);
	xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
	char *code = NULL;

	if (root && !strcmp((const char *)root->name, "Error"))
		code = child_text(root, "Code");
	s3_error(c, bucket, r->status, code, e);
	xmlFree(code);
	xmlFreeDoc(doc);
	return -1;
}

int
s3_diagnose(const struct s3_conf *c, const char *bucket, const char *key,
	    const char *display, struct err *e)
{
	struct s3_resp r = { .body = BUF_INIT };
	char *url = s3_http_url(c, bucket, key);
	CURL *h = curl_easy_init();
	struct err tmp = {0};

	if (!url || !h) {
		err_set(&tmp, ERR_NO_MEMORY, "out of memory");
	} else if (s3_get(h, c, url, "0-0", &r, &tmp) == 0) {
		if (r.status >= 300)
			answer_error(c, bucket, &r, &tmp);
	}
	if (tmp.code != ERR_OK) {
		/* the diagnosis replaces the HTTP source's vaguer message */
		memset(e, 0, sizeof(*e));
		err_where(e, display);
		err_set(e, tmp.code, "%s", tmp.detail);
	}
	buf_free(&r.body);
	free(url);
	if (h)
		curl_easy_cleanup(h);
	return -1;
}

static void
enc_query(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || strchr("-._~", ch)) {
			buf_add(b, s, 1);
		} else {
			char t[3] = { '%', hex[ch >> 4], hex[ch & 15] };

			buf_add(b, t, 3);
		}
	}
}

static int
add_object(struct s3_listing *l, size_t *cap, xmlNode *n)
{
	char *key = child_text(n, "Key"), *size = child_text(n, "Size");
	char *etag = child_text(n, "ETag");
	struct s3_object *o;
	int rc = -1;

	if (!key || !size)
		goto out;
	if (l->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;

		o = realloc(l->objs, nc * sizeof(*o));
		if (!o)
			goto out;
		l->objs = o;
		*cap = nc;
	}
	o = &l->objs[l->n];
	o->key = strdup(key);
	o->size = strtoull(size, NULL, 10);
	o->etag = etag ? strdup(etag) : NULL;
	if (!o->key) {
		free(o->etag);
		goto out;
	}
	l->n++;
	rc = 0;
out:
	xmlFree(key);
	xmlFree(size);
	xmlFree(etag);
	return rc;
}

int
s3_list(const struct s3_conf *c, const char *bucket, const char *prefix,
	struct s3_listing *out, struct err *e)
{
	struct s3_resp r = { .body = BUF_INIT };
	struct buf url = BUF_INIT;
	char *base = s3_http_url(c, bucket, NULL), *token = NULL;
	CURL *h = curl_easy_init();
	size_t cap = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!base || !h) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto done;
	}
	/* Pages until IsTruncated is false; bounded by the key count (a
	 * server that repeats a token would loop: stop at 1,000,000 pages). */
	for (out->requests = 0; out->requests < 1000000; ) {
		xmlDoc *doc;
		xmlNode *root, *n;
		char *trunc;

		buf_free(&url);
		/* query parameters sorted and encoded: the canonical form
		 * SigV4 signs */
		buf_adds(&url, base);
		buf_adds(&url, "?");
		if (token) {
			buf_adds(&url, "continuation-token=");
			enc_query(&url, token);
			buf_adds(&url, "&");
		}
		buf_adds(&url, "list-type=2&prefix=");
		enc_query(&url, prefix);
		if (buf_add(&url, "", 1)) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto done;
		}
		if (s3_get(h, c, url.data, NULL, &r, e))
			goto done;
		out->requests++;
		if (r.status != 200) {
			answer_error(c, bucket, &r, e);
			goto done;
		}
		doc = parse_xml(&r.body);
		root = doc ? xmlDocGetRootElement(doc) : NULL;
		if (!root || strcmp((const char *)root->name,
				    "ListBucketResult")) {
			xmlFreeDoc(doc);
			err_set(e, ERR_IO, "bucket %s: the answer to "
				"ListObjectsV2 is not a ListBucketResult",
				bucket);
			goto done;
		}
		for (n = root->children; n; n = n->next)
			if (n->type == XML_ELEMENT_NODE &&
			    !strcmp((const char *)n->name, "Contents") &&
			    add_object(out, &cap, n)) {
				xmlFreeDoc(doc);
				err_set(e, ERR_NO_MEMORY, "out of memory");
				goto done;
			}
		trunc = child_text(root, "IsTruncated");
		free(token);
		token = NULL;
		if (trunc && !strcmp(trunc, "true")) {
			char *t = child_text(root, "NextContinuationToken");

			token = t ? strdup(t) : NULL;
			xmlFree(t);
			if (!token) {
				xmlFree(trunc);
				xmlFreeDoc(doc);
				err_set(e, ERR_IO, "bucket %s: a truncated "
					"listing without a continuation "
					"token", bucket);
				goto done;
			}
		}
		xmlFree(trunc);
		xmlFreeDoc(doc);
		if (!token)
			break;
	}
	rc = 0;
done:
	if (rc)
		s3_listing_free(out);
	free(token);
	free(base);
	buf_free(&url);
	buf_free(&r.body);
	if (h)
		curl_easy_cleanup(h);
	return rc;
}

void
s3_listing_free(struct s3_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->objs[i].key);
		free(l->objs[i].etag);
	}
	free(l->objs);
	memset(l, 0, sizeof(*l));
}
