/* http_fetch.h - ranged GETs of one remote object, with everything that
 * makes them trustworthy: response checks, retries with backoff while they
 * make progress or the server may come back, redirects followed by hand
 * (headers stay with their origin, no https -> http), the redirect target
 * cached until it expires or is refused, validators (If-Match) so that two
 * versions never mix.
 */
#ifndef STFS_HTTP_FETCH_H
#define STFS_HTTP_FETCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "source/http/http_stats.h"
#include "source/http/http_transport.h"
#include "source/http/http_url.h"

struct curl_slist;
struct http_conf;

#define HTTP_FETCH_HOLDS	16
/* An attempt that brought this much (or the rest) made progress: a server
 * that cuts every answer short after that costs at most 16 requests per
 * MiB; one that cuts them shorter fails the read after a few. */
#define HTTP_FETCH_PROGRESS	(64u << 10)

struct http_fetch_object {
	const struct http_conf *conf;	/* the client's settings */
	const struct http_transport *tr;
	char *url;			/* as given: may hold secrets */
	char *display;			/* for messages */
	char origin[HTTP_URL_ORIGIN_MAX];
	struct curl_slist *hdrs_origin;	/* user headers + validators */
	struct curl_slist *hdrs_other;	/* validators only */
	struct http_transport_sigv4 sig; /* provider NULL: unsigned */
	int if_match;			/* If-Match even with a weak ETag */
	uint64_t size;
	char etag[HTTP_VALIDATOR_MAX];
	char lastmod[HTTP_VALIDATOR_MAX];
	int stale;		/* atomic: object changed, every read fails */
	int failing;		/* atomic: a read failed and no request has
				   succeeded since (one log line each) */
	uint64_t trouble_until;	/* atomic: after a read failed, new requests
				   get a short deadline until then */
	unsigned long attempts_failed;	/* atomic: all GETs' together */
	pthread_mutex_t lock;	/* target, holds */
	char *target;		/* where the URL redirects to, or NULL */
	time_t target_until;	/* realtime: resolve again after this */
	struct {		/* ranges that just failed: fail at once */
		uint64_t start, end, until_ms;
	} hold[HTTP_FETCH_HOLDS];
	unsigned next_hold;
	/* What the last failure a reader saw said, and when (realtime):
	 * .stfs/stats.json shows it (http_fetch_last_error()). */
	char last_error[256];
	struct timespec last_error_at;
	struct http_stats stats;
};

/* One ranged GET in progress. */
struct http_fetch_range {
	int probe;		/* the open request: any answer may size it */
	int kind;		/* HTTP_STATS_REQ_*, for the counters */
	int resume;		/* a retry asks only for the bytes that did
				   not arrive (start and len move past
				   them); else for everything again */
	uint64_t start, len;	/* asked for */
	/* Body bytes at start + got (got grows after the call). */
	void (*data)(struct http_fetch_range *g, const char *p, size_t n);
	void *ud;
	uint64_t got;
	int cut;		/* the last attempt's answer was good but
				   ended short */
	int oom;		/* it failed for want of memory here: not the
				   server's fault (nothing held) */
	struct http_transport_response resp;	/* the answer that was taken */
	int verdict;
	char why[200];
	/* The open request (probe): an X-Linked-Etag seen on the way, as
	 * the Hub's resolve/ names an LFS file's sha256 ("" none). */
	char linked[HTTP_VALIDATOR_MAX];
};

/* How long a GET goes on (http_fetch_get()). */
struct http_fetch_budget {
	/* Give up once no attempt has made progress (HTTP_FETCH_PROGRESS)
	 * by then (http_conf_now_ms() clock); each one that did moves it to
	 * now + the read bound.  A slow answer whose bytes keep coming is
	 * never cut: only a stall is (http_transport_request). */
	uint64_t quiet_until;
	/* At most this many attempts in a row without progress (0: as many
	 * as quiet_until allows).  Answers that were good but cut short
	 * count against the tries setting in any case: such a server is up,
	 * and waiting for it to change helps nothing. */
	unsigned tries;
	/* A reader waits for these bytes: a failure holds the range, makes
	 * the next reads quick, and is logged (once, until a success).  A
	 * failed read-ahead does none of it: a reader asks again itself. */
	int demand;
};

/* 0, or -1 (no memory).  conf (timeouts, tries, messages) and tr (the
 * exchanges) stay the caller's; url and display are copied; headers are
 * the lines to send to url's origin only (copied). */
int http_fetch_init(struct http_fetch_object *o, const struct http_conf *conf,
		    const struct http_transport *tr, const char *url,
		    const char *display, const struct curl_slist *headers,
		    const struct http_transport_sigv4 *sig,
		    const char *session_token);
void http_fetch_fini(struct http_fetch_object *o);

/* Set the validators (after the probe, or known in advance) and build
 * the data request headers: If-Match with a strong ETag, else If-Range
 * with Last-Modified.  0 or -1 (no memory). */
int http_fetch_validators(struct http_fetch_object *o, const char *etag,
			  const char *lastmod);

/* The GET, retried within budget b: HTTP_OK, HTTP_FAIL or HTTP_CHANGED
 * (enum http_outcome); g->why says what went wrong.  Updates stale,
 * failing and the holds, and logs.  HTTP_CANCELLED (within
 * CANCEL_POLL_MS of http_conf_cancelled()) touches none of them: no
 * fault of the server's. */
int http_fetch_get(struct http_fetch_object *o, struct http_fetch_range *g,
		   const struct http_fetch_budget *b);

/* A budget that starts now: the read bound of conf of quiet, tries
 * attempts in a row without progress at most (0: no count), demand as
 * above. */
struct http_fetch_budget http_fetch_budget_now(const struct http_conf *conf,
					       unsigned tries, int demand);

/* 1 when the server sends bytes at offset size, i.e. the total its
 * Content-Range gave is wrong (one request, no retries); 0 otherwise. */
int http_fetch_serves_past(struct http_fetch_object *o);

/* The last failure a reader saw (a read that failed with EIO, the object
 * changed) into msg (n bytes), its time into *at: 1, or 0 when none. */
int http_fetch_last_error(struct http_fetch_object *o, char *msg, size_t n,
			  struct timespec *at);

/* 1 when [start, end) overlaps a range a read failed on within the last
 * second: the kernel retries a failed read at once, and that retry
 * should not wait for a dead server again. */
int http_fetch_held(struct http_fetch_object *o, uint64_t start, uint64_t end);

#endif
