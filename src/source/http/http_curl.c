/* http_curl.c - the libcurl transport: one GET (or PUT), no redirects
 * followed.
 *
 * libcurl easy handles may not be used by two threads at once and sharing
 * the connection cache between threads is a known libcurl bug (KNOWN_BUGS
 * "A shared connection cache is not thread-safe"), so each thread keeps
 * its own easy handle and multi handle, and with them its own keep-alive
 * connection; DNS and TLS sessions are shared through a CURLSH.
 *
 * The multi handle is there for the deadlines: an exchange fails when no
 * byte of the answer came for the stall limit, however long the transfer
 * takes as a whole.  libcurl's own low-speed limit averages the speed over
 * seconds and, like its progress callback, looks only about once a second
 * while nothing arrives; the loop here polls until the moment the answer
 * would be late instead.  It also ends a transfer slower than the floor
 * (fewer than min_rate bytes a second over min_rate_ms: a server that
 * trickles 1 byte/s never stalls), and, within CANCEL_POLL_MS, one that no
 * one wants any more (http_conf_cancelled(): the client stops, the reader
 * went away), whatever the server does.
 */
#include "source/http/http_transport.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "base/cancel.h"
#include "source/http/http_conf.h"

#define CONNECT_POLL_MS	100	/* until the request is out */

/* libcurl's global state: initialized once per process, the same for
 * every client (it holds no setting of ours). */
static struct {
	pthread_once_t once;
	int failed;
	CURLSH *share;
	pthread_mutex_t share_lock[CURL_LOCK_DATA_LAST];
	pthread_key_t handle_key;
} K = {
	.once = PTHREAD_ONCE_INIT,
};

static void
share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *u)
{
	(void)h;
	(void)access;
	(void)u;
	pthread_mutex_lock(&K.share_lock[data]);
}

static void
share_unlock(CURL *h, curl_lock_data data, void *u)
{
	(void)h;
	(void)u;
	pthread_mutex_unlock(&K.share_lock[data]);
}

/* One thread's handles (its connection lives in the multi handle), and
 * the TLS policy they were made with. */
struct handles {
	CURL *easy;
	CURLM *multi;
	int insecure;
	char *ca_file;
};

static void
handles_free(void *p)
{
	struct handles *t = p;

	if (!t)
		return;
	curl_multi_cleanup(t->multi);
	curl_easy_cleanup(t->easy);
	free(t->ca_file);
	free(t);
}

static void
curl_init(void)
{
	int i;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    pthread_key_create(&K.handle_key, handles_free) != 0) {
		K.failed = 1;
		return;
	}
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&K.share_lock[i], NULL);
	K.share = curl_share_init();
	if (K.share) {
		curl_share_setopt(K.share, CURLSHOPT_LOCKFUNC, share_lock);
		curl_share_setopt(K.share, CURLSHOPT_UNLOCKFUNC, share_unlock);
		curl_share_setopt(K.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
		curl_share_setopt(K.share, CURLSHOPT_SHARE,
				  CURL_LOCK_DATA_SSL_SESSION);
	}
}

/* Made with the TLS policy of conf? */
static int
same_policy(const struct handles *t, const struct http_conf *conf)
{
	if (t->insecure != conf->insecure)
		return 0;
	return t->ca_file && conf->ca_file ?
	       strcmp(t->ca_file, conf->ca_file) == 0 :
	       t->ca_file == conf->ca_file;
}

/* This thread's handles, the easy one with the options that never
 * change: the one TLS policy of stfs (conf: ca_file, insecure) among
 * them; made anew when a client with another policy uses the thread.
 * Proxies come from the environment (http_proxy, https_proxy,
 * no_proxy), as libcurl reads them. */
static struct handles *
thread_handles(const struct http_conf *conf)
{
	struct handles *t = pthread_getspecific(K.handle_key);
	CURL *h;

	if (t && same_policy(t, conf))
		return t;
	handles_free(t);
	pthread_setspecific(K.handle_key, NULL);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->easy = curl_easy_init();
	t->multi = curl_multi_init();
	t->insecure = conf->insecure;
	t->ca_file = conf->ca_file ? strdup(conf->ca_file) : NULL;
	if (!t->easy || !t->multi || (conf->ca_file && !t->ca_file) ||
	    pthread_setspecific(K.handle_key, t) != 0) {
		handles_free(t);
		return NULL;
	}
	h = t->easy;
	if (K.share)
		curl_easy_setopt(h, CURLOPT_SHARE, K.share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/* Redirects are followed by http_fetch.c, which keeps headers
	 * with their origin and refuses https -> http. */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "stfs/" STFS_VERSION);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L << 10);
	if (conf->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (conf->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, conf->ca_file);
	return t;
}

struct xchg {
	struct http_transport_response *r;
	const struct http_transport_sink *sink;
	int headed;		/* sink->head() called */
	int mode;		/* its answer */
	uint64_t last_ms;	/* the last byte came then (0: none yet) */
	size_t header_bytes;	/* of the answer so far */
	int header_too_big;	/* over HTTP_HEADER_MAX: refused */
	int stalled;		/* no byte for the stall limit */
	uint64_t bytes;		/* of the answer so far, headers too */
	uint64_t floor_ms;	/* the floor's window started then */
	uint64_t floor_bytes;	/* ... with this many bytes in */
	int slow;		/* under the floor over a window */
	int cancelled;		/* http_conf_cancelled() */
	const struct iovec *up;	/* a PUT's body: what is left of it */
	int up_n;
	size_t up_off;		/* sent of up[0] */
};

static void
copy_value(char *dst, size_t cap, const char *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static int
parse_u64(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s++ - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

/* "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/(star)" or "bytes (star)/TOTAL". */
static void
parse_content_range(struct http_transport_response *r, const char *v)
{
	const char *p = v;

	if (strncasecmp(p, "bytes", 5) != 0)
		return;
	p += 5;
	while (*p == ' ')
		p++;
	if (*p == '*') {
		p++;
	} else {
		if (parse_u64(&p, &r->r_first) || *p++ != '-' ||
		    parse_u64(&p, &r->r_last) || r->r_last < r->r_first)
			return;
		r->have_range = 1;
	}
	if (*p++ != '/')
		return;
	if (*p == '*')
		return;
	if (parse_u64(&p, &r->r_total) == 0)
		r->total_known = 1;
}

static void
status_line(struct http_transport_response *r, const char *p, size_t n)
{
	const char *sp = memchr(p, ' ', n);
	size_t k;

	memset(r, 0, sizeof(*r));
	if (!sp)
		return;
	/* "HTTP/1.1 206 Partial Content", "HTTP/2 206" */
	for (k = (size_t)(sp - p) + 1; k < n && p[k] >= '0' && p[k] <= '9'; k++)
		r->status = r->status * 10 + (p[k] - '0');
}

/* Retry-After: delta-seconds or an HTTP date, in ms from now (a day at
 * most: callers bound it further); 0 when malformed or past. */
static uint64_t
retry_after_ms(const char *v)
{
	const uint64_t day = 86400;
	uint64_t s;
	const char *p = v;
	time_t t, now;

	if (parse_u64(&p, &s) == 0 && *p == '\0')
		return (s < day ? s : day) * 1000;
	t = curl_getdate(v, NULL);
	now = time(NULL);
	if (t == (time_t)-1 || t <= now)
		return 0;
	return ((uint64_t)(t - now) < day ? (uint64_t)(t - now) : day) * 1000;
}

static size_t
header_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xchg *x = ud;
	struct http_transport_response *r = x->r;
	size_t n = size * nmemb;
	char line[HTTP_LOCATION_MAX + 64];
	char *colon, *v, *end;

	x->last_ms = http_conf_now_ms();
	x->header_bytes += n;
	x->bytes += n;
	if (x->header_bytes > HTTP_HEADER_MAX) {
		x->header_too_big = 1;
		return 0;	/* abort: CURLE_WRITE_ERROR */
	}
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		status_line(r, p, n);
		return n;
	}
	if (n >= sizeof(line))
		return n;	/* nothing we read is that long */
	memcpy(line, p, n);
	line[n] = '\0';
	colon = strchr(line, ':');
	if (!colon)
		return n;
	*colon = '\0';
	v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	end = v + strlen(v);
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
			   end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	if (x->sink->header)
		x->sink->header(x->sink->ud, line, v);
	if (strcasecmp(line, "Content-Range") == 0) {
		parse_content_range(r, v);
	} else if (strcasecmp(line, "Content-Length") == 0) {
		const char *q = v;

		r->have_clen = parse_u64(&q, &r->clen) == 0 && *q == '\0';
	} else if (strcasecmp(line, "ETag") == 0) {
		copy_value(r->etag, sizeof(r->etag), v, (size_t)(end - v));
	} else if (strcasecmp(line, "Last-Modified") == 0) {
		copy_value(r->lastmod, sizeof(r->lastmod), v,
			   (size_t)(end - v));
	} else if (strcasecmp(line, "Location") == 0) {
		copy_value(r->location, sizeof(r->location), v,
			   (size_t)(end - v));
	} else if (strcasecmp(line, "Content-Encoding") == 0) {
		copy_value(r->coding, sizeof(r->coding), v, (size_t)(end - v));
	} else if (strcasecmp(line, "Retry-After") == 0) {
		r->retry_after_ms = retry_after_ms(v);
	}
	return n;
}

static size_t
write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xchg *x = ud;
	size_t n = size * nmemb;

	x->last_ms = http_conf_now_ms();
	x->bytes += n;
	if (!x->headed) {
		x->headed = 1;
		x->mode = x->sink->head(x->sink->ud, x->r);
	}
	if (x->mode == HTTP_SINK_DISCARD)
		return n;
	if (x->mode != HTTP_SINK_TAKE ||
	    x->sink->body(x->sink->ud, p, n) != HTTP_SINK_TAKE) {
		x->mode = HTTP_SINK_STOP;
		return 0;	/* abort: CURLE_WRITE_ERROR */
	}
	return n;
}

/* A PUT's body, piece after piece; a piece going out is progress. */
static size_t
read_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xchg *x = ud;
	size_t n = size * nmemb, k = 0;

	x->last_ms = http_conf_now_ms();
	while (k < n && x->up_n > 0) {
		size_t left = x->up->iov_len - x->up_off, c = n - k < left ?
			      n - k : left;

		memcpy(p + k, (const char *)x->up->iov_base + x->up_off, c);
		k += c;
		x->up_off += c;
		if (x->up_off == x->up->iov_len) {
			x->up++;
			x->up_n--;
			x->up_off = 0;
		}
	}
	return k;
}

/* Transient failures are retried (http_fetch.c, http_request.c).  A name
 * that does not resolve is not among them: offline, or a typo, it does
 * not come back within a read's bound, and retrying it cost 30 s to say
 * so (issue 38.3). */
static int
curl_transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
	case CURLE_QUIC_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* The request has gone out (connected, TLS done, sent). */
static int
request_out(CURL *h)
{
	curl_off_t t = 0;

	return curl_easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &t) ==
	       CURLE_OK && t > 0;
}

/* Under the floor over the window that ends now (then a new one
 * starts), from the request's going out on. */
static int
under_floor(struct xchg *x, const struct http_transport_request *q,
	    uint64_t now)
{
	if (!q->min_rate || !q->min_rate_ms || !x->floor_ms ||
	    now - x->floor_ms < q->min_rate_ms)
		return 0;
	if (x->bytes - x->floor_bytes < q->min_rate * q->min_rate_ms / 1000)
		return 1;
	x->floor_ms = now;
	x->floor_bytes = x->bytes;
	return 0;
}

/* curl_easy_perform(), with a stall limit measured from the request's
 * going out and from every byte of the answer, the floor, and an end for
 * what no one wants any more (see the top). */
static CURLcode
perform(struct handles *t, struct xchg *x,
	const struct http_transport_request *q, const struct http_conf *conf)
{
	uint64_t stall_ms = q->stall_ms;
	CURLcode rc = CURLE_OK;
	CURLMsg *msg;
	int running = 1, left;

	if (curl_multi_add_handle(t->multi, t->easy) != CURLM_OK)
		return CURLE_FAILED_INIT;
	while (running) {
		uint64_t now, wait = CONNECT_POLL_MS;

		if (curl_multi_perform(t->multi, &running) != CURLM_OK) {
			rc = CURLE_FAILED_INIT;
			break;
		}
		if (!running)
			break;
		if (http_conf_cancelled(conf)) {
			x->cancelled = 1;
			break;
		}
		now = http_conf_now_ms();
		if (!x->floor_ms && (x->last_ms || request_out(t->easy))) {
			x->floor_ms = now;
			x->floor_bytes = x->bytes;
		}
		if (!x->last_ms && stall_ms && request_out(t->easy))
			x->last_ms = now;
		if (x->last_ms && stall_ms) {
			if (now - x->last_ms >= stall_ms) {
				x->stalled = 1;
				break;
			}
			wait = x->last_ms + stall_ms - now;
		}
		if (under_floor(x, q, now)) {
			x->slow = 1;
			break;
		}
		/* libcurl's own timers (connect, whole exchange) shorten it;
		 * cancellation is asked for at least this often */
		if (wait > CANCEL_POLL_MS)
			wait = CANCEL_POLL_MS;
		curl_multi_poll(t->multi, NULL, 0, (int)wait, NULL);
	}
	while ((msg = curl_multi_info_read(t->multi, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			rc = msg->data.result;
	/* a transfer cut off here leaves with its connection */
	curl_multi_remove_handle(t->multi, t->easy);
	return rc;
}

/* Why a name did not resolve, in one line that says DNS. */
static void
dns_failure(char *why, size_t whylen, const char *url, int proxy)
{
	CURLU *u = curl_url();
	char *host = NULL;

	if (proxy)
		snprintf(why, whylen, "DNS: the proxy's host name does not "
			 "resolve (not retried): check http_proxy, "
			 "https_proxy and the network");
	else if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		 curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		snprintf(why, whylen, "DNS: cannot resolve the host name %.100s "
			 "(not retried): check the name and the network",
			 host);
	else
		snprintf(why, whylen, "DNS: cannot resolve the host name (not "
			 "retried): check the name and the network");
	curl_free(host);
	curl_url_cleanup(u);
}

static int
curl_get(const struct http_transport *tr,
	 const struct http_transport_request *q,
	 struct http_transport_response *r,
	 const struct http_transport_sink *sink, char *why,
	 size_t whylen)
{
	struct xchg x = { .r = r, .sink = sink, .up = q->body,
			  .up_n = q->body ? q->body_n : 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	struct handles *t;
	char range[64];
	CURL *h;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	t = thread_handles(tr->priv);
	if (!t) {
		snprintf(why, whylen, "out of memory for a libcurl handle");
		return HTTP_NOMEM;
	}
	h = t->easy;
	snprintf(range, sizeof(range), "%llu-%llu",
		 (unsigned long long)q->start,
		 (unsigned long long)(q->start + q->len - 1));
	curl_easy_setopt(h, CURLOPT_URL, q->url);
	curl_easy_setopt(h, CURLOPT_RANGE, q->len ? range : NULL);
	if (q->body) {
		curl_off_t total = 0;
		int i;

		for (i = 0; i < q->body_n; i++)
			total += (curl_off_t)q->body[i].iov_len;
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
		curl_easy_setopt(h, CURLOPT_READDATA, &x);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, total);
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);	/* not a PUT */
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, q->headers);
	if (q->sigv4) {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, q->sigv4->provider);
		curl_easy_setopt(h, CURLOPT_USERNAME, q->sigv4->access_key);
		curl_easy_setopt(h, CURLOPT_PASSWORD, q->sigv4->secret_key);
	} else {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, NULL);
		curl_easy_setopt(h, CURLOPT_USERNAME, NULL);
		curl_easy_setopt(h, CURLOPT_PASSWORD, NULL);
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)q->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)q->connect_ms);
	rc = perform(t, &x, q, tr->priv);
	/* Do not leave pointers to this stack frame in the handle. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, NULL);
	if (x.cancelled) {
		snprintf(why, whylen, "no one waits for the answer any more");
		return HTTP_CANCELLED;
	}
	curl_easy_setopt(h, CURLOPT_READDATA, NULL);
	if (x.mode == HTTP_SINK_STOP)
		return HTTP_STOPPED;
	if (x.slow) {
		snprintf(why, whylen, "the answer came at fewer than %llu "
			 "bytes/s over %.0f s (http_min_rate)",
			 (unsigned long long)q->min_rate,
			 (double)q->min_rate_ms / 1000);
		return HTTP_AGAIN;
	}
	if (x.stalled) {
		snprintf(why, whylen, "no byte of the answer for %.1f s",
			 (double)q->stall_ms / 1000);
		return HTTP_AGAIN;
	}
	if (x.header_too_big) {
		snprintf(why, whylen, "the answer's headers are larger than "
			 "%u KiB (a server fault)", HTTP_HEADER_MAX >> 10);
		return HTTP_FAIL;
	}
	if (rc == CURLE_OUT_OF_MEMORY && r->status && !x.headed) {
		/* libcurl 7.x says so of a header line over its own limit
		 * (CURL_MAX_HTTP_HEADER), before it reaches header_cb */
		snprintf(why, whylen, "a header line of the answer is larger "
			 "than libcurl takes (%u KiB; a server fault)",
			 CURL_MAX_HTTP_HEADER >> 10);
		return HTTP_FAIL;
	}
	if (rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY) {
		dns_failure(why, whylen, q->url, rc == CURLE_COULDNT_RESOLVE_PROXY);
		return HTTP_FAIL;
	}
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", errbuf[0] ? errbuf :
			 curl_easy_strerror(rc));
		if (rc == CURLE_OUT_OF_MEMORY)
			return HTTP_NOMEM;
		return curl_transient(rc) ? HTTP_AGAIN : HTTP_FAIL;
	}
	if (!x.headed) {
		/* no body: the sink still judges the headers */
		x.headed = 1;
		if (sink->head(sink->ud, r) == HTTP_SINK_STOP)
			return HTTP_STOPPED;
	}
	return HTTP_OK;
}

int
http_curl_transport(struct http_transport *t, const struct http_conf *conf)
{
	pthread_once(&K.once, curl_init);
	if (K.failed)
		return -1;
	t->get = curl_get;
	t->priv = conf;
	return 0;
}
