/* http_transport.h - one HTTP exchange, behind a small interface.
 *
 * A transport sends one GET (with a Range, the headers it is given and,
 * when asked, an AWS SigV4 signature) and hands the response to a sink:
 * first its status line and headers, then its body.  It follows no
 * redirects and retries nothing: http_fetch.c decides about those, so
 * that headers stay with their origin and a fake transport in the unit
 * tests sees every request.
 */
#ifndef STFS_HTTP_TRANSPORT_H
#define STFS_HTTP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct curl_slist;

#define HTTP_VALIDATOR_MAX	256
#define HTTP_LOCATION_MAX	8192

/* What one response said (reset for every exchange). */
struct htr_resp {
	long status;
	int have_range, total_known;	/* Content-Range */
	uint64_t r_first, r_last, r_total;
	int have_clen;			/* Content-Length */
	uint64_t clen;
	char etag[HTTP_VALIDATOR_MAX];
	char lastmod[HTTP_VALIDATOR_MAX];
	char location[HTTP_LOCATION_MAX];	/* as sent, maybe relative */
};

enum {
	HTR_TAKE,	/* head(): deliver the body */
	HTR_DISCARD,	/* head(): read and drop the body (a redirect's) */
	HTR_STOP,	/* head() or body(): abort the exchange */
};

struct htr_sink {
	/* Once, when the headers are in (before any body byte). */
	int (*head)(void *ud, const struct htr_resp *r);
	/* Body bytes in order; HTR_TAKE to go on, HTR_STOP to abort. */
	int (*body)(void *ud, const char *p, size_t n);
	void *ud;
};

/* AWS Signature V4 for requests to the source's own origin. */
struct http_sigv4 {
	const char *provider;	/* "aws:amz:REGION:s3" (CURLOPT_AWS_SIGV4) */
	const char *access_key;
	const char *secret_key;
};

struct htr_req {
	const char *url;
	uint64_t start, len;		/* Range: bytes=start-(start+len-1) */
	const struct curl_slist *headers;	/* sent as given */
	const struct http_sigv4 *sigv4;	/* NULL: unsigned */
	uint64_t timeout_ms;		/* the whole exchange */
	uint64_t connect_ms;		/* connecting; also the stall limit */
};

enum {
	HTR_DONE,	/* a whole response was received (or discarded) */
	HTR_ABORTED,	/* the sink stopped it */
	HTR_NET,	/* transient: refused, reset, timeout, stall, ... */
	HTR_FAIL,	/* permanent: TLS verification, bad URL, ... */
};

struct http_transport {
	/* One exchange; why gets a message for HTR_NET and HTR_FAIL.
	 * Called by several threads at once. */
	int (*get)(const struct http_transport *t, const struct htr_req *q,
		   struct htr_resp *r, const struct htr_sink *sink,
		   char *why, size_t whylen);
	void *priv;
};

/* libcurl: one easy handle (and keep-alive connection) per thread, DNS
 * and TLS sessions shared.  NULL when libcurl cannot be initialized. */
const struct http_transport *htr_curl(void);

/* The transport new sources use (default: htr_curl()); tests set a fake
 * one before opening. */
const struct http_transport *htr_current(void);
void htr_set(const struct http_transport *t);

#endif
