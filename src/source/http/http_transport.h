/* http_transport.h - one HTTP exchange, behind a small interface.
 *
 * A transport sends one GET (with a Range or for the whole object, the
 * headers it is given and, when asked, an AWS SigV4 signature), or a PUT
 * of the bytes it is given (the shared cache's blocks, http_tier.h), and
 * hands
 * the response to a sink: first every header line, then the status line
 * and the headers it knows, then its body.  It follows no redirects and
 * retries nothing: http_fetch.c (ranged reads) and http_request.c (API
 * calls and listings of the Hub and S3) decide about those, so that
 * headers stay with their origin and a fake transport in the unit tests
 * sees every request.  The libcurl transport (http_curl.c) is the only
 * owner of libcurl easy handles in stfs; it applies the one TLS policy
 * (ca_file, insecure), the proxies of the environment and the timeouts.
 *
 * How a transfer ended is said one way in the whole HTTP layer: an
 * enum http_outcome (below), from the transport up to the filling of
 * blocks (http_fill.h).  An HTTP status is never an outcome: a 404 is an answer
 * (HTTP_OK) with status 404; callers judge statuses.  Only at the source
 * interface (a read, source.h) does a failure become an errno (-EIO).
 */
#ifndef STFS_HTTP_TRANSPORT_H
#define STFS_HTTP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct curl_slist;

#define HTTP_VALIDATOR_MAX	256
#define HTTP_LOCATION_MAX	8192
/* The most header bytes an answer may have: S3, the Hub and CDNs send a
 * few KiB; more is a server fault, refused rather than buffered. */
#define HTTP_HEADER_MAX		(64u << 10)

/* What one response said (reset for every exchange). */
struct http_transport_response {
	long status;
	int have_range, total_known;	/* Content-Range */
	uint64_t r_first, r_last, r_total;
	int have_clen;			/* Content-Length */
	uint64_t clen;
	char etag[HTTP_VALIDATOR_MAX];
	char lastmod[HTTP_VALIDATOR_MAX];
	char location[HTTP_LOCATION_MAX];	/* as sent, maybe relative */
	char coding[32];		/* Content-Encoding ("" none) */
	uint64_t retry_after_ms;	/* Retry-After (seconds, or a date
					   from now); 0: none */
};

/* How a transfer ended, everywhere in src/source/http/. */
enum http_outcome {
	HTTP_OK,	/* a whole answer came (whatever its status); for
			   http_fetch: the bytes asked for are in */
	HTTP_AGAIN,	/* transient: refused, reset, timeout, stall, or
			   a status worth a retry (5xx, 408, 429) */
	HTTP_FAIL,	/* permanent for this request: TLS verification,
			   a name that does not resolve (DNS), bad URL, a
			   refused redirect, a wrong answer */
	HTTP_CHANGED,	/* http_fetch: the object is not the one opened */
	HTTP_STOPPED,	/* the sink stopped the exchange */
	HTTP_CANCELLED,	/* no one wants it any more: the client stops, or
			   the reader went away (http_conf_cancelled());
			   no fault of the server's */
	HTTP_NOMEM,	/* the transport: no memory for the exchange (this
			   process's failure, not the server's; callers
			   above it see HTTP_FAIL) */
};

/* Statuses that say "try again later". */
static inline int
http_transport_status_transient(long status)
{
	return status >= 500 || status == 408 || status == 429;
}

/* What a sink's head() and body() answer. */
enum {
	HTTP_SINK_TAKE,		/* deliver (more of) the body */
	HTTP_SINK_DISCARD,	/* head(): read and drop the body */
	HTTP_SINK_STOP,		/* abort the exchange */
};

struct http_transport_sink {
	/* Optional: every header line of the final answer, name and value
	 * trimmed, before head() (Hub and S3 read their own headers). */
	void (*header)(void *ud, const char *name, const char *value);
	/* Once, when the headers are in (before any body byte). */
	int (*head)(void *ud, const struct http_transport_response *r);
	/* Body bytes in order; HTTP_SINK_TAKE to go on, _STOP to abort. */
	int (*body)(void *ud, const char *p, size_t n);
	void *ud;
};

/* AWS Signature V4 for requests to the source's own origin. */
struct http_transport_sigv4 {
	const char *provider;	/* "aws:amz:REGION:s3" (CURLOPT_AWS_SIGV4) */
	const char *access_key;
	const char *secret_key;
};

/* The deadlines of one exchange measure stalls, not transfers: a slow
 * answer whose bytes keep coming runs to its end (issue 29.1). */
struct http_transport_request {
	const char *url;
	uint64_t start, len;		/* Range: bytes=start-(start+len-1);
					   len 0: no Range, the whole body */
	const struct curl_slist *headers;	/* sent as given */
	const struct http_transport_sigv4 *sigv4;	/* NULL: unsigned */
	uint64_t connect_ms;		/* connecting, TLS handshake included */
	uint64_t stall_ms;		/* once the request is out: no byte of
					   the answer (the first one too) for
					   this long fails the exchange */
	uint64_t timeout_ms;		/* the whole exchange; 0: no limit */
	/* A floor: fewer than min_rate bytes a second over any min_rate_ms
	 * once the request is out fails it as a stall does (a server that
	 * trickles); 0: none. */
	uint64_t min_rate, min_rate_ms;
	/* A PUT of body[0..body_n) (Content-Length their total) instead of
	 * a GET; NULL: a GET. */
	const struct iovec *body;
	int body_n;
};

struct http_transport {
	/* One exchange: HTTP_OK (a whole answer, received or discarded),
	 * HTTP_STOPPED (the sink stopped it), HTTP_AGAIN or HTTP_FAIL (no
	 * answer; why says why), HTTP_CANCELLED (ended within
	 * CANCEL_POLL_MS of http_conf_cancelled() of the settings it was
	 * made with).  Called by several threads at once. */
	int (*get)(const struct http_transport *t,
		   const struct http_transport_request *q,
		   struct http_transport_response *r,
		   const struct http_transport_sink *sink,
		   char *why, size_t whylen);
	const void *priv;	/* the transport's own (libcurl: the settings) */
};

/* libcurl, with the TLS policy of conf (ca_file, insecure; conf stays
 * the caller's), into *t: one easy handle (and keep-alive connection)
 * per thread, DNS and TLS sessions shared.  0, or -1 when libcurl cannot
 * be initialized.  A client (http_client.h) makes one, unless a test
 * gives it a fake. */
struct http_conf;
int http_curl_transport(struct http_transport *t,
			const struct http_conf *conf);

#endif
