/* http_fetch.c - trustworthy ranged GETs of one remote object.
 *
 * Every response is checked: status 206, the exact range asked for, the
 * same total size and validators.  A data request carries If-Match with
 * the strong ETag seen at open (If-Range with Last-Modified without one);
 * 412, 200, another size or ETag, or an answer without the validator the
 * object had, mean the object changed: the object turns stale and every
 * later read fails, so bytes of two versions never mix (nor reach the
 * disk cache: the answer is judged before its first byte is taken).
 *
 * Deadlines measure stalls, not transfers: an attempt fails when the
 * connection is not made, or no byte comes, within http_timeout (the
 * transport watches that), never because the transfer as a whole takes
 * long.  Transient failures (connect errors, stalls, resets, 5xx, 408,
 * 429) are retried with exponential backoff (at most 2 s apart), or after
 * the time a 503 or 429 asks for in Retry-After (60 s at most, and only
 * within the read's bound: one that asks for longer fails the read at
 * once); a retry asks only for the bytes that did not come.  A name that
 * does not resolve is not retried (http_curl.c).  Every request asks for
 * the stored bytes (Accept-Encoding: identity), and an answer in any
 * content coding (Content-Encoding: gzip) is refused: its bytes are not
 * the object's, whatever their number.  A GET gives up when no
 * attempt made progress for the read bound (http_tries x http_timeout:
 * a server restart shorter than that costs only latency), after
 * http_tries answers in a row that were cut short before bringing
 * anything worth it (a server that is up but broken), or, for read-ahead
 * no one waits for, after a few attempts.
 *
 * Redirects are followed here, not by libcurl: the user's headers, tokens
 * and SigV4 signatures go only to the origin (scheme, host, port) of the
 * URL they were given for, and an https:// URL never follows a redirect to
 * plain http://.  The final location is remembered, so that a file costs
 * one resolve per mount rather than one per block, until it expires (the
 * presigned URL's own expiry, else an hour) or answers 401/403/410; then
 * the URL is resolved again and the request retried at once.
 */
#include "source/http/http_fetch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "source/http/http_conf.h"

#define HOLD_MS		1000	/* a failed read's range fails at once this
				   long */
#define TROUBLE_MS	2000	/* after a failed read, other ranges ... */
#define QUICK_MS	500	/* ... get this long, not a whole bound */
#define MAX_HOPS	10
#define BACKOFF_MAX_MS	2000
#define LAST_TRY_MS	200	/* a last attempt needs this much time */
#define RETRY_AFTER_MAX_MS 60000	/* the longest Retry-After honoured */
#define TARGET_TTL_S	3600	/* a target without a stated expiry */
#define TARGET_MARGIN_S	30

static int
append(struct curl_slist **l, const char *line)
{
	struct curl_slist *tmp = curl_slist_append(*l, line);

	if (!tmp)
		return -1;
	*l = tmp;
	return 0;
}

int
http_fetch_init(struct http_fetch_object *o, const struct http_conf *conf,
		const struct http_transport *tr, const char *url,
		const char *display, const struct curl_slist *headers,
		const struct http_transport_sigv4 *sig,
		const char *session_token)
{
	const struct curl_slist *l;

	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->lock, NULL);
	o->conf = conf;
	o->tr = tr;
	o->url = strdup(url);
	o->display = display ? strdup(display) : http_url_redact(url);
	if (!o->url || !o->display)
		return -1;
	if (http_url_origin(url, o->origin, sizeof(o->origin)))
		o->origin[0] = '\0';	/* curl will say what is wrong */
	/* the stored bytes, which ranges count (no content coding) */
	if (append(&o->hdrs_origin, "Accept-Encoding: identity") ||
	    append(&o->hdrs_other, "Accept-Encoding: identity"))
		return -1;
	for (l = headers; l; l = l->next)
		if (append(&o->hdrs_origin, l->data))
			return -1;
	if (sig && sig->provider) {
		o->sig.provider = strdup(sig->provider);
		o->sig.access_key = strdup(sig->access_key ? sig->access_key : "");
		o->sig.secret_key = strdup(sig->secret_key ? sig->secret_key : "");
		if (!o->sig.provider || !o->sig.access_key ||
		    !o->sig.secret_key)
			return -1;
	}
	if (session_token && *session_token) {
		char *line;
		int bad;

		if (asprintf(&line, "x-amz-security-token: %s",
			     session_token) < 0)
			return -1;
		bad = append(&o->hdrs_origin, line);
		explicit_bzero(line, strlen(line));
		free(line);
		if (bad)
			return -1;
	}
	return 0;
}

static void
free_secret(const char *s)
{
	if (s) {
		explicit_bzero((char *)s, strlen(s));
		free((char *)s);
	}
}

void
http_fetch_fini(struct http_fetch_object *o)
{
	curl_slist_free_all(o->hdrs_origin);
	curl_slist_free_all(o->hdrs_other);
	free(o->url);
	free(o->display);
	free(o->target);
	free((char *)o->sig.provider);
	free_secret(o->sig.access_key);
	free_secret(o->sig.secret_key);
	pthread_mutex_destroy(&o->lock);
}

int
http_fetch_validators(struct http_fetch_object *o, const char *etag,
		      const char *lastmod)
{
	char line[HTTP_VALIDATOR_MAX + 16];

	snprintf(o->etag, sizeof(o->etag), "%s", etag ? etag : "");
	snprintf(o->lastmod, sizeof(o->lastmod), "%s", lastmod ? lastmod : "");
	line[0] = '\0';
	/* If-Match compares strongly: a weak ETag would always fail (unless
	 * the caller knows better: S3). */
	if (o->etag[0] && (o->if_match || strncmp(o->etag, "W/", 2) != 0))
		snprintf(line, sizeof(line), "If-Match: %s", o->etag);
	else if (o->lastmod[0])
		snprintf(line, sizeof(line), "If-Range: %s", o->lastmod);
	if (line[0] && (append(&o->hdrs_origin, line) ||
			append(&o->hdrs_other, line)))
		return -1;
	return 0;
}

static int
verdict(struct http_fetch_range *g, int v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
verdict(struct http_fetch_range *g, int v, const char *fmt, ...)
{
	va_list ap;

	g->verdict = v;
	va_start(ap, fmt);
	vsnprintf(g->why, sizeof(g->why), fmt, ap);
	va_end(ap);
	return v;
}

static int
is_redirect(const struct http_transport_response *r)
{
	return (r->status == 301 || r->status == 302 || r->status == 303 ||
		r->status == 307 || r->status == 308) && r->location[0];
}

static int
vet_probe(struct http_fetch_range *g, const struct http_transport_response *r)
{
	if (r->status == 206) {
		if (!r->have_range || !r->total_known || r->r_first != 0 ||
		    r->r_last >= r->r_total || r->r_last >= g->len)
			return verdict(g, HTTP_FAIL, "bad Content-Range in the "
				       "answer to a range request (a server "
				       "fault)");
		if (r->have_clen && r->clen != r->r_last + 1)
			return verdict(g, HTTP_FAIL, "Content-Length %llu does "
				       "not match Content-Range (a server "
				       "fault)", (unsigned long long)r->clen);
		return verdict(g, HTTP_OK, "ok");
	}
	if (r->status == 200)
		return verdict(g, HTTP_OK, "ok");
	if (r->status == 416 && r->total_known && r->r_total == 0)
		return verdict(g, HTTP_OK, "empty");
	if (r->status == 412)
		return verdict(g, HTTP_CHANGED, "the object changed since it "
			       "was listed (HTTP 412)");
	return verdict(g, HTTP_FAIL, "HTTP status %ld", r->status);
}

/* Judge a final response from its status line and headers. */
static int
vet(struct http_fetch_object *o, struct http_fetch_range *g,
    const struct http_transport_response *r)
{
	if (http_transport_status_transient(r->status))
		return verdict(g, HTTP_AGAIN, "HTTP status %ld", r->status);
	/* Asked for identity: compressed bytes are not the object's, even
	 * when as many as the range asked for. */
	if ((r->status == 200 || r->status == 206) && r->coding[0] &&
	    strcasecmp(r->coding, "identity") != 0)
		return verdict(g, HTTP_FAIL, "the server sent the bytes with "
			       "Content-Encoding: %.31s where stfs asks for "
			       "the stored bytes (identity): a server fault, "
			       "nothing of it is used", r->coding);
	if (g->probe)
		return vet_probe(g, r);
	if (r->status == 412)
		return verdict(g, HTTP_CHANGED, "HTTP status 412 to If-Match: "
			       "the ETag changed");
	if (r->status == 200 || r->status == 416)
		return verdict(g, HTTP_CHANGED, "HTTP status %ld to a range "
			       "request", r->status);
	if (r->status != 206)
		return verdict(g, HTTP_FAIL, "HTTP status %ld", r->status);
	if (!r->total_known || r->r_total != o->size)
		return verdict(g, HTTP_CHANGED, "the size is not %llu any more",
			       (unsigned long long)o->size);
	/* An answer without the validator is no proof of the version:
	 * taken as a change, as another value is. */
	if (o->etag[0] && !r->etag[0])
		return verdict(g, HTTP_CHANGED, "an answer without the ETag "
			       "%s", o->etag);
	if (o->etag[0] && strcmp(o->etag, r->etag) != 0)
		return verdict(g, HTTP_CHANGED, "the ETag changed");
	if (!o->etag[0] && o->lastmod[0] && !r->lastmod[0])
		return verdict(g, HTTP_CHANGED, "an answer without the "
			       "Last-Modified %s", o->lastmod);
	if (!o->etag[0] && o->lastmod[0] &&
	    strcmp(o->lastmod, r->lastmod) != 0)
		return verdict(g, HTTP_CHANGED, "Last-Modified changed");
	if (!r->have_range || r->r_first != g->start ||
	    r->r_last != g->start + g->len - 1)
		return verdict(g, HTTP_FAIL, "the server sent another range "
			       "than the one asked for");
	return verdict(g, HTTP_OK, "ok");
}

/* State of one exchange, for the sink callbacks. */
struct hop {
	struct http_fetch_object *o;
	struct http_fetch_range *g;
	int refusable;		/* a cached target: 401/403/410 re-resolve */
	int taken;		/* the body is g's */
};

static void
sink_header(void *ud, const char *name, const char *value)
{
	struct hop *h = ud;

	if (h->g->probe && strcasecmp(name, "X-Linked-Etag") == 0)
		snprintf(h->g->linked, sizeof(h->g->linked), "%s", value);
}

static int
sink_head(void *ud, const struct http_transport_response *r)
{
	struct hop *h = ud;

	if (is_redirect(r))
		return HTTP_SINK_DISCARD;
	if (h->refusable && (r->status == 401 || r->status == 403 ||
			     r->status == 410))
		return HTTP_SINK_DISCARD;
	h->taken = 1;
	h->g->resp = *r;
	return vet(h->o, h->g, r) == HTTP_OK ? HTTP_SINK_TAKE : HTTP_SINK_STOP;
}

static int
sink_body(void *ud, const char *p, size_t n)
{
	struct hop *h = ud;
	struct http_fetch_range *g = h->g;

	if (n > g->len - g->got) {
		if (g->probe && h->g->resp.status == 200)
			verdict(g, HTTP_FAIL,
				"the server ignores Range requests "
				"(it answered 200 with the whole object)");
		else
			verdict(g, HTTP_FAIL, "the server sent more bytes than "
				"asked for");
		return HTTP_SINK_STOP;
	}
	http_stats_add(&h->o->stats.bytes, n);
	g->data(g, p, n);
	g->got += n;
	return HTTP_SINK_TAKE;
}

/* The URL to ask now: the cached target while it is good. */
static char *
start_url(struct http_fetch_object *o, int *cached)
{
	char *u = NULL;

	pthread_mutex_lock(&o->lock);
	*cached = 0;
	if (o->target && time(NULL) < o->target_until) {
		u = strdup(o->target);
		*cached = u != NULL;
	}
	pthread_mutex_unlock(&o->lock);
	return u ? u : strdup(o->url);
}

static void
set_target(struct http_fetch_object *o, const char *url)
{
	time_t exp = http_url_expiry(url), now = time(NULL);
	char *copy = url ? strdup(url) : NULL;

	pthread_mutex_lock(&o->lock);
	free(o->target);
	o->target = copy;
	/* Resolve again a little before the stated expiry: by the margin,
	 * or half the remaining life of a short-lived URL. */
	if (exp && exp - now < 2 * TARGET_MARGIN_S)
		o->target_until = now + (exp - now) / 2;
	else
		o->target_until = exp ? exp - TARGET_MARGIN_S :
			now + TARGET_TTL_S;
	pthread_mutex_unlock(&o->lock);
}

static int
same_origin(const struct http_fetch_object *o, const char *url)
{
	char origin[HTTP_URL_ORIGIN_MAX];

	return o->origin[0] &&
	       http_url_origin(url, origin, sizeof(origin)) == 0 &&
	       strcmp(origin, o->origin) == 0;
}

/* One attempt: the request and the redirects it leads to (an
 * enum http_outcome).  hard: a deadline for all of it (0: none, only the
 * transport's connect and stall limits). */
static int
attempt(struct http_fetch_object *o, struct http_fetch_range *g,
	uint64_t hard)
{
	struct hop h = { .o = o, .g = g };
	int cached, hops, redirected = 0, refused = 0, r = HTTP_FAIL;
	char *url = start_url(o, &cached);

	h.refusable = cached;
	for (hops = 0; url && hops <= MAX_HOPS; hops++) {
		int home = same_origin(o, url);
		struct http_transport_request q = {
			.url = url, .start = g->start, .len = g->len,
			.headers = home ? o->hdrs_origin : o->hdrs_other,
			.sigv4 = home && o->sig.provider ? &o->sig : NULL,
		};
		struct http_transport_sink sink = {
			sink_header, sink_head, sink_body, &h
		};
		struct http_transport_response resp;
		uint64_t now = http_conf_now_ms();
		int tr;
		char *next;

		if (hard && now >= hard) {
			r = verdict(g, HTTP_AGAIN, "no answer within %.1f s",
				    (double)QUICK_MS / 1000);
			break;
		}
		q.connect_ms = q.stall_ms = o->conf->timeout_s * 1000ull;
		q.timeout_ms = hard ? hard - now : 0;
		q.min_rate = o->conf->min_rate;
		q.min_rate_ms = http_conf_min_rate_ms(o->conf);
		if (hard && q.connect_ms > q.timeout_ms)
			q.connect_ms = q.stall_ms = q.timeout_ms;
		g->got = 0;
		g->cut = 0;
		g->verdict = HTTP_OK;
		memset(&g->resp, 0, sizeof(g->resp));	/* this answer's */
		h.taken = 0;
		tr = o->tr->get(o->tr, &q, &resp, &sink, g->why,
				sizeof(g->why));
		if (tr == HTTP_CANCELLED) {
			r = g->verdict = HTTP_CANCELLED;
			break;
		}
		if (tr == HTTP_AGAIN) {
			http_stats_add(&o->stats.errors[HTTP_STATS_ERR_NET], 1);
			if (h.taken && g->verdict == HTTP_OK)
				http_stats_add(&o->stats.requests[g->kind], 1);
			/* a good answer, cut off */
			g->cut = h.taken && g->verdict == HTTP_OK;
			if (g->cut) {
				char why[sizeof(g->why)];

				snprintf(why, sizeof(why), "%s", g->why);
				verdict(g, HTTP_AGAIN, "the answer broke off "
					"after %llu of %llu bytes (%s)",
					(unsigned long long)g->got,
					(unsigned long long)g->len, why);
			}
			r = HTTP_AGAIN;
			break;
		}
		if (tr == HTTP_NOMEM) {
			g->oom = 1;	/* not the server's: nothing held */
			r = g->verdict = HTTP_FAIL;	/* g->why is set */
			break;
		}
		if (tr == HTTP_FAIL) {
			http_stats_add(&o->stats.errors[HTTP_STATS_ERR_NET], 1);
			r = g->verdict = HTTP_FAIL;	/* g->why is set */
			break;
		}
		if (h.taken) {
			http_stats_add(&o->stats.requests[g->kind], 1);
			r = g->verdict;
			if (r == HTTP_OK && redirected)
				set_target(o, url);
			else if (r == HTTP_OK && refused)
				set_target(o, NULL);	/* no redirect now */
			break;
		}
		if (h.refusable && !is_redirect(&resp)) {
			/* The cached target refused (expired signature):
			 * resolve again, once.  The old target stays until
			 * a new one replaces it, so that concurrent requests
			 * do not all resolve. */
			http_stats_add(&o->stats.requests[g->kind], 1);
			h.refusable = 0;
			refused = 1;
			free(url);
			url = strdup(o->url);
			continue;
		}
		http_stats_add(&o->stats.requests[HTTP_STATS_REQ_RESOLVE], 1);
		next = http_url_resolve(url, resp.location);
		if (next && http_url_is_https(url) &&
		    !http_url_is_https(next)) {
			char *d = http_url_redact(next);

			r = verdict(g, HTTP_FAIL, "refusing the redirect from "
				    "https:// to %s (a downgrade to plain "
				    "http)", d ? d : "http://");
			free(d);
			free(next);
			break;
		}
		if (!next) {
			r = verdict(g, HTTP_FAIL, "a redirect to a bad URL");
			break;
		}
		free(url);
		url = next;
		redirected = 1;
		h.refusable = 0;
	}
	if (url && hops > MAX_HOPS)
		r = verdict(g, HTTP_FAIL, "more than %d redirects", MAX_HOPS);
	if (!url) {
		r = verdict(g, HTTP_FAIL, "out of memory");
		g->oom = 1;
	}
	free(url);
	if (r == HTTP_OK && !g->probe && g->got != g->len) {
		r = verdict(g, HTTP_AGAIN, "the answer broke off after %llu "
			    "of %llu bytes", (unsigned long long)g->got,
			    (unsigned long long)g->len);
		g->cut = 1;
	}
	if (r == HTTP_OK && g->probe) {
		const struct http_transport_response *p = &g->resp;

		if ((p->status == 206 && g->got != p->r_last + 1) ||
		    (p->status == 200 && p->have_clen && p->clen != g->got)) {
			r = verdict(g, HTTP_AGAIN, "short body");
			g->cut = 1;
		}
	}
	if (r == HTTP_AGAIN && g->resp.status &&
	    http_transport_status_transient(g->resp.status))
		http_stats_add(&o->stats.errors[HTTP_STATS_ERR_STATUS], 1);
	else if (r == HTTP_CHANGED)
		http_stats_add(&o->stats.errors[HTTP_STATS_ERR_CHANGED], 1);
	else if (r == HTTP_FAIL && h.taken)
		http_stats_add(&o->stats.errors[g->resp.status == 206 ?
			  HTTP_STATS_ERR_PROTOCOL : HTTP_STATS_ERR_STATUS], 1);
	return r;
}

static int
past_head(void *ud, const struct http_transport_response *r)
{
	*(long *)ud = r->status;
	return HTTP_SINK_STOP;	/* the status says it all */
}

static int
past_body(void *ud, const char *p, size_t n)
{
	(void)ud;
	(void)p;
	(void)n;
	return HTTP_SINK_STOP;
}

int
http_fetch_serves_past(struct http_fetch_object *o)
{
	long status = 0;
	int cached;
	char why[200];
	char *url = start_url(o, &cached);
	int home = url && same_origin(o, url);
	struct http_transport_request q = {
		.url = url, .start = o->size, .len = 1,
		.headers = home ? o->hdrs_origin : o->hdrs_other,
		.sigv4 = home && o->sig.provider ? &o->sig : NULL,
		.timeout_ms = o->conf->timeout_s * 1000ull,
		.connect_ms = o->conf->timeout_s * 1000ull,
	};
	struct http_transport_sink sink = {
		NULL, past_head, past_body, &status
	};
	struct http_transport_response resp;

	if (!url)
		return 0;
	o->tr->get(o->tr, &q, &resp, &sink, why, sizeof(why));
	free(url);
	return status == 206 || status == 200;
}

static void
hold(struct http_fetch_object *o, uint64_t start, uint64_t end)
{
	pthread_mutex_lock(&o->lock);
	o->hold[o->next_hold].start = start;
	o->hold[o->next_hold].end = end;
	o->hold[o->next_hold].until_ms = http_conf_now_ms() + HOLD_MS;
	o->next_hold = (o->next_hold + 1) % HTTP_FETCH_HOLDS;
	pthread_mutex_unlock(&o->lock);
}

int
http_fetch_held(struct http_fetch_object *o, uint64_t start, uint64_t end)
{
	uint64_t now = http_conf_now_ms();
	int i, held = 0;

	pthread_mutex_lock(&o->lock);
	for (i = 0; i < HTTP_FETCH_HOLDS; i++)
		if (o->hold[i].until_ms > now && start < o->hold[i].end &&
		    o->hold[i].start < end)
			held = 1;
	pthread_mutex_unlock(&o->lock);
	return held;
}

static void keep_error(struct http_fetch_object *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keep what a failure said for .stfs/stats.json. */
static void
keep_error(struct http_fetch_object *o, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&o->lock);
	clock_gettime(CLOCK_REALTIME, &o->last_error_at);
	va_start(ap, fmt);
	vsnprintf(o->last_error, sizeof(o->last_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&o->lock);
}

int
http_fetch_last_error(struct http_fetch_object *o, char *msg, size_t n,
		      struct timespec *at)
{
	int have;

	pthread_mutex_lock(&o->lock);
	have = o->last_error[0] != '\0';
	if (have) {
		snprintf(msg, n, "%s", o->last_error);
		*at = o->last_error_at;
	}
	pthread_mutex_unlock(&o->lock);
	return have;
}

static void
note_result(struct http_fetch_object *o, struct http_fetch_range *g, int r,
	    uint64_t start, uint64_t end, int demand)
{
	if (r == HTTP_OK) {
		__atomic_store_n(&o->trouble_until, 0, __ATOMIC_RELAXED);
		if (__atomic_exchange_n(&o->failing, 0, __ATOMIC_RELAXED))
			http_conf_log(o->conf, HTTP_LOG_NOTICE, "%s: the server "
				      "answers again", o->display);
		return;
	}
	if (r == HTTP_CHANGED) {
		if (__atomic_exchange_n(&o->stale, 1, __ATOMIC_RELAXED))
			return;
		keep_error(o, "the remote object changed since it was opened "
			   "(%s); every read now fails with EIO", g->why);
		http_conf_log(o->conf, HTTP_LOG_ERR, "%s: the remote object "
			      "changed since it was opened (%s); every read "
			      "now fails with EIO", o->display, g->why);
		return;
	}
	/* The open reports its own failure; read-ahead no one waited for
	 * fails no read (a reader that needs the bytes asks itself); memory
	 * this process lacked says nothing of the server. */
	if (g->probe || !demand || g->oom)
		return;
	hold(o, start, end);
	keep_error(o, "a read of bytes %llu-%llu failed with EIO: %s",
		   (unsigned long long)start, (unsigned long long)(end - 1),
		   g->why);
	__atomic_store_n(&o->trouble_until, http_conf_now_ms() + TROUBLE_MS,
			 __ATOMIC_RELAXED);
	if (!__atomic_exchange_n(&o->failing, 1, __ATOMIC_RELAXED))
		http_conf_log(o->conf, HTTP_LOG_ERR, "%s: a read of bytes "
			      "%llu-%llu fails with EIO: %s", o->display,
			      (unsigned long long)start,
			      (unsigned long long)(end - 1), g->why);
}

struct http_fetch_budget
http_fetch_budget_now(const struct http_conf *conf, unsigned tries,
		      int demand)
{
	struct http_fetch_budget b = {
		.quiet_until = http_conf_now_ms() + http_conf_bound_ms(conf),
		.tries = tries, .demand = demand,
	};

	return b;
}

/* After a failed attempt: skip what arrived when the range resumes.  1
 * when nothing is left to fetch. */
static int
resume(struct http_fetch_range *g)
{
	if (!g->resume || !g->got)
		return 0;
	g->start += g->got;
	g->len -= g->got;
	g->got = 0;
	return g->len == 0;
}

/* After a 503 or 429 with Retry-After: the pause grows to what the
 * server asks for (RETRY_AFTER_MAX_MS at most); 1 (g->why says why) when
 * that reaches past until. */
static int
busy_wait(struct http_fetch_range *g, uint64_t now, uint64_t until,
	  uint64_t *pause)
{
	uint64_t ra = g->resp.retry_after_ms;

	if (!ra || (g->resp.status != 503 && g->resp.status != 429))
		return 0;
	if (ra > RETRY_AFTER_MAX_MS)
		ra = RETRY_AFTER_MAX_MS;
	if (now + ra + LAST_TRY_MS > until) {
		verdict(g, HTTP_FAIL, "the server is busy (HTTP %ld) and asks "
			"to be asked again in %llu s (Retry-After), later than "
			"this read may wait", g->resp.status,
			(unsigned long long)(g->resp.retry_after_ms + 999) /
			1000);
		return 1;
	}
	if (*pause < ra)
		*pause = ra;
	return 0;
}

int
http_fetch_get(struct http_fetch_object *o, struct http_fetch_range *g,
	       const struct http_fetch_budget *b)
{
	uint64_t start = g->start, end = g->start + g->len;
	uint64_t now = http_conf_now_ms(), until = b->quiet_until, hard = 0;
	/* failed attempts of the object's GETs before this one, and of
	 * this one */
	unsigned long seen = __atomic_load_n(&o->attempts_failed,
					     __ATOMIC_RELAXED), mine = 0;
	unsigned fails = 0, cuts = 0;
	int r;

	g->oom = 0;
	/* The kernel follows a failed read with read-ahead of the ranges
	 * after it: against a server that just failed, those get a short
	 * try (enough for a server that is back), not a whole bound each,
	 * so that a reader waits one bound in total. */
	if (!g->probe && now < __atomic_load_n(&o->trouble_until,
					       __ATOMIC_RELAXED) &&
	    until > now + QUICK_MS)
		until = hard = now + QUICK_MS;
	for (;;) {
		uint64_t pause;
		unsigned long others;
		int progress;

		if (__atomic_load_n(&o->stale, __ATOMIC_RELAXED))
			return verdict(g, HTTP_CHANGED, "the object changed");
		if (http_conf_cancelled(o->conf))
			return verdict(g, HTTP_CANCELLED, "no one waits for "
				       "the bytes any more");
		if (now >= until) {
			/* a reader that waited for others' requests */
			r = verdict(g, HTTP_FAIL, "no byte came for %u s",
				    o->conf->tries * o->conf->timeout_s);
			break;
		}
		r = attempt(o, g, hard);
		if (r == HTTP_CANCELLED)
			return r;	/* no fault of the server's */
		if (r != HTTP_AGAIN)
			break;
		progress = g->got >= HTTP_FETCH_PROGRESS;
		if (g->cut && !progress)
			cuts++;
		mine++;
		others = __atomic_add_fetch(&o->attempts_failed, 1,
					    __ATOMIC_RELAXED) - seen - mine;
		if (resume(g)) {
			r = HTTP_OK;	/* everything arrived after all */
			break;
		}
		now = http_conf_now_ms();
		if (progress) {
			fails = cuts = 0;
			if (!hard)
				until = now + http_conf_bound_ms(o->conf);
		} else {
			fails++;
		}
		if ((b->tries && fails >= b->tries) ||
		    cuts >= o->conf->tries ||
		    now + LAST_TRY_MS >= until ||
		    /* read-ahead, and other GETs fail too: a broken
		     * server, not a hiccup; no one waits for these bytes */
		    (!b->demand && !progress && others)) {
			r = HTTP_FAIL;	/* g->why says why */
			break;
		}
		/* Retry while the server may come back, not a number of
		 * times: a restarting server costs latency, not an error. */
		pause = 0;
		if (fails) {
			pause = (250ull << (fails < 4 ? fails - 1 : 3)) +
				now % 100;
			if (pause > BACKOFF_MAX_MS)
				pause = BACKOFF_MAX_MS;
			if (now + pause + LAST_TRY_MS > until)
				pause = until - LAST_TRY_MS - now;
		}
		/* A busy server says when to come back: not sooner, and
		 * not at all when that is past the bound. */
		if (busy_wait(g, now, until, &pause)) {
			r = HTTP_FAIL;
			break;
		}
		if (pause) {
			http_conf_nap(o->conf, pause);	/* asked again above */
			now = http_conf_now_ms();
		}
		http_stats_add(&o->stats.retries, 1);
	}
	note_result(o, g, r, start, end, b->demand);
	return r;
}
