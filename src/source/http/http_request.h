/* http_request.h - one API call: a GET whose answer the caller judges.
 *
 * The Hub's API and resolve/ and S3's ListObjectsV2 and error diagnosis
 * are not ranged reads of one object (http_fetch.c): the caller wants the
 * status, a few headers and a small body.  They go through the same
 * transport (http_transport.h: one libcurl owner, one TLS policy, the
 * fake transport in unit tests) and the same policy as the reads:
 * transient failures (no answer, 5xx, 408, 429) are retried with backoff
 * (or after what a 503 or 429 asks for in Retry-After, 60 s at most; one
 * that asks for more than the bound leaves ends the retries at once)
 * within the client's read bound (http_conf_bound_ms()), each attempt
 * under its connect/stall timeout, headers go only to the origin they are meant
 * for, and redirects are never followed (a 3xx is an answer like any).
 */
#ifndef STFS_HTTP_REQUEST_H
#define STFS_HTTP_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "source/http/http_transport.h"

struct curl_slist;
struct http_client;

struct http_request {
	const struct http_client *client;	/* its transport, settings */
	const char *url;
	/* "Name: value" lines, sent only when url is on the origin of
	 * headers_for (NULL: they are meant for url itself). */
	const struct curl_slist *headers;
	const char *headers_for;
	const struct http_transport_sigv4 *sigv4;	/* NULL: unsigned */
	uint64_t start, len;		/* len 0: no Range */
	size_t body_max;		/* a longer body fails the request */
	unsigned bound_ms;		/* 0: the read bound; else the shorter
					   of the two */
};

struct http_request_answer {
	long status;
	struct buf body;
	struct curl_slist *headers;	/* the answer's, "Name: value" */
	char why[256];			/* no answer: why not */
	uint64_t retry_after_ms;	/* its Retry-After, 0: none */
};

#define HTTP_REQUEST_ANSWER_INIT { 0, BUF_INIT, NULL, "", 0 }

/* GET q->url, retried while transient, until the read bound is used up.
 * HTTP_OK when an answer came (any status, maybe the last transient one:
 * a->status), HTTP_FAIL when none did (a->why says why).  a is reset
 * first; free it with http_request_answer_free(). */
int http_request_get(const struct http_request *q,
		     struct http_request_answer *a);
void http_request_answer_free(struct http_request_answer *a);

/* The value of the answer's header name (any case), or NULL. */
const char *http_request_header(const struct http_request_answer *a,
				const char *name);

#endif
