/* fake_http.c - a scripted transport for the unit tests (fake_http.h). */
#include "fake_http.h"

#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/error.h"
#include "source/http/http_client.h"

struct fake_http_seen fake_http_seen[FAKE_HTTP_MAX];
unsigned fake_http_count;
__thread const struct iovec *fake_http_body;
__thread int fake_http_body_n;
__thread uint64_t fake_http_start, fake_http_len;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void (*respond)(unsigned i, const char *url,
		       struct fake_http_answer *a);

static int
fake_get(const struct http_transport *t, const struct http_transport_request *q,
	 struct http_transport_response *r,
	 const struct http_transport_sink *sink, char *why,
	 size_t whylen)
{
	struct fake_http_answer a = { 0 };
	struct fake_http_seen *s;
	const struct curl_slist *l;
	unsigned i;
	size_t k, n;

	(void)t;
	pthread_mutex_lock(&seen_lock);
	i = fake_http_count++;
	s = &fake_http_seen[i % FAKE_HTTP_MAX];
	memset(s, 0, sizeof(*s));
	snprintf(s->url, sizeof(s->url), "%s", q->url);
	s->start = q->start;
	s->len = q->len;
	for (l = q->headers; l; l = l->next) {
		strncat(s->headers, l->data, sizeof(s->headers) -
			strlen(s->headers) - 2);
		strcat(s->headers, "\n");
	}
	if (q->sigv4) {
		snprintf(s->sigv4, sizeof(s->sigv4), "%s", q->sigv4->provider);
		snprintf(s->key, sizeof(s->key), "%s", q->sigv4->access_key);
	}
	pthread_mutex_unlock(&seen_lock);
	fake_http_body = q->body;
	fake_http_body_n = q->body_n;
	fake_http_start = q->start;
	fake_http_len = q->len;
	respond(i, q->url, &a);
	fake_http_body = NULL;
	fake_http_body_n = 0;
	if (a.delay_ms) {
		uint64_t ms = a.delay_ms;

		if (q->timeout_ms && q->timeout_ms < ms)
			ms = q->timeout_ms;
		usleep((useconds_t)(ms * 1000));
		if (ms < a.delay_ms) {
			snprintf(why, whylen, "Operation timed out after "
				 "%llu milliseconds", (unsigned long long)ms);
			return HTTP_AGAIN;
		}
	}
	memset(r, 0, sizeof(*r));
	if (a.status == 0) {
		snprintf(why, whylen, "Connection refused");
		return HTTP_AGAIN;
	}
	r->status = a.status;
	for (k = 0; k < 8 && a.headers[k]; k++) {
		char name[128];
		const char *colon = strchr(a.headers[k], ':');

		ck_assert_ptr_nonnull(colon);
		snprintf(name, sizeof(name), "%.*s",
			 (int)(colon - a.headers[k]), a.headers[k]);
		if (sink->header)
			sink->header(sink->ud, name, colon + 2);
		if (strcasecmp(name, "Location") == 0)
			snprintf(r->location, sizeof(r->location), "%s",
				 colon + 2);
		else if (strcasecmp(name, "ETag") == 0)
			snprintf(r->etag, sizeof(r->etag), "%s", colon + 2);
		else if (strcasecmp(name, "Content-Range") == 0 &&
			 sscanf(colon + 2, "bytes %" SCNu64 "-%" SCNu64 "/%"
				SCNu64, &r->r_first, &r->r_last,
				&r->r_total) == 3)
			r->have_range = r->total_known = 1;
	}
	switch (sink->head(sink->ud, r)) {
	case HTTP_SINK_STOP:
		return HTTP_STOPPED;
	case HTTP_SINK_DISCARD:
		return HTTP_OK;
	}
	n = a.body ? (a.body_len ? a.body_len : strlen(a.body)) : 0;
	if (n && sink->body(sink->ud, a.body, n) != HTTP_SINK_TAKE)
		return HTTP_STOPPED;
	return HTTP_OK;
}

static const struct http_transport fake = { .get = fake_get };

struct http_client *
fake_http_install(void (*responder)(unsigned i, const char *url,
				    struct fake_http_answer *a))
{
	struct http_options o = { 0 };
	struct err e = { 0 };
	struct http_client *c;

	o.timeout_s = 1;
	o.tries = 2;
	o.cache = -1;
	c = http_client_new(&o, &fake, &e);
	ck_assert_msg(c != NULL, "%s", e.detail);
	http_client_free(http_client_install(c));
	respond = responder;
	fake_http_count = 0;
	return c;
}
