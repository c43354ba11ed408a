/* s3_req.c - the S3 requests that are not ranged reads: ListObjectsV2
 * (every page, parsed with libxml2) and the diagnosis of a refused GET
 * (S3's <Error><Code> turned into one line that says what to check).
 *
 * They go through the HTTP layer's one client (http_request.h): the
 * shared transport and its TLS settings (-o ca_file, -o insecure, their
 * STFS_HTTP_* variables), timeouts, and retries of transient failures
 * within the read bound; signed with SigV4 like the data reads of
 * source_http.c.
 */
#include "source/s3/s3_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/text.h"
#include "source/http/http_client.h"
#include "source/http/http_request.h"

#define S3_BODY_MAX	(16u << 20)	/* one listing page is ~300 KiB */

/* The headers every request carries: the payload hash SigV4 signs (of
 * the empty body) and, with a session token, the token.  NULL when out
 * of memory. */
static struct curl_slist *
s3_headers(const struct s3_conf *c)
{
	struct curl_slist *hdrs, *tmp;
	char *tok;

	hdrs = curl_slist_append(NULL, "x-amz-content-sha256: e3b0c44298fc1c1"
				 "49afbf4c8996fb92427ae41e4649b934ca495991b7"
				 "852b855");
	if (!hdrs || !c->key || !c->token)
		return hdrs;
	if (asprintf(&tok, "x-amz-security-token: %s", c->token) < 0) {
		curl_slist_free_all(hdrs);
		return NULL;
	}
	tmp = curl_slist_append(hdrs, tok);
	explicit_bzero(tok, strlen(tok));
	free(tok);
	if (!tmp)
		curl_slist_free_all(hdrs);
	return tmp;
}

static void
s3_headers_free(struct curl_slist *hdrs)
{
	struct curl_slist *l;

	for (l = hdrs; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(hdrs);
}

/* GET url (len > 0: bytes [0, len)), signed when c has a key.  0 with
 * a->status set (any status), or -1 with *e when no answer came. */
static int
s3_get(const struct s3_conf *c, const char *url, uint64_t len,
       struct http_request_answer *a, struct err *e)
{
	struct http_transport_sigv4 sig = { c->sigv4, c->key, c->secret };
	struct http_request q = {
		.url = url, .len = len, .body_max = S3_BODY_MAX,
		.sigv4 = c->key ? &sig : NULL,
	};
	int rc;

	q.client = http_client_process(e);
	if (!q.client)
		return -1;
	q.headers = s3_headers(c);
	if (!q.headers)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	rc = http_request_get(&q, a);
	s3_headers_free((struct curl_slist *)q.headers);
	if (rc != HTTP_OK)
		return err_set(e, ERR_IO, "cannot reach the S3 server: %s",
			       a->why);
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
	     struct http_request_answer *r, struct err *e)
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
	struct http_request_answer r = HTTP_REQUEST_ANSWER_INIT;
	char *url = s3_http_url(c, bucket, key);
	struct err why = { 0 };

	if (!url)
		err_set(&why, ERR_NO_MEMORY, "out of memory");
	else if (s3_get(c, url, 1, &r, &why) == 0 && r.status >= 300)
		answer_error(c, bucket, &r, &why);
	if (why.code != ERR_OK) {
		/* the diagnosis replaces the HTTP source's vaguer message */
		err_replace(e, why.code, "%s", why.detail);
		err_at(e, display);
	}
	http_request_answer_free(&r);
	free(url);
	return -1;
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
	struct http_request_answer r = HTTP_REQUEST_ANSWER_INIT;
	struct buf url = BUF_INIT;
	char *base = s3_http_url(c, bucket, NULL), *token = NULL, *enc;
	size_t cap = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!base) {
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
			enc = text_pct_encode(token, strlen(token), NULL);
			if (!enc || buf_addf(&url, "continuation-token=%s&",
					     enc)) {
				free(enc);
				err_set(e, ERR_NO_MEMORY, "out of memory");
				goto done;
			}
			free(enc);
		}
		enc = text_pct_encode(prefix, strlen(prefix), NULL);
		if (!enc || buf_addf(&url, "list-type=2&prefix=%s", enc)) {
			free(enc);
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto done;
		}
		free(enc);
		if (s3_get(c, url.data, 0, &r, e))
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
	http_request_answer_free(&r);
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
