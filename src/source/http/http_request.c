/* http_request.c - one API call over the transport, retried within the
 * read bound (see http_request.h). */
#include "source/http/http_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "source/http/http_client.h"
#include "source/http/http_conf.h"
#include "source/http/http_url.h"

#define BACKOFF_MAX_MS	2000
#define LAST_TRY_MS	200	/* a last attempt needs this much time */
#define RETRY_AFTER_MAX_MS 60000	/* as http_fetch.c's */

/* One exchange in progress, for the sink callbacks. */
struct call {
	const struct http_request *q;
	struct http_request_answer *a;
	int too_big, no_memory;
};

static void
call_header(void *ud, const char *name, const char *value)
{
	struct call *c = ud;
	struct curl_slist *tmp;
	char *line;

	if (asprintf(&line, "%s: %s", name, value) < 0) {
		c->no_memory = 1;
		return;
	}
	tmp = curl_slist_append(c->a->headers, line);
	free(line);
	if (!tmp)
		c->no_memory = 1;
	else
		c->a->headers = tmp;
}

static int
call_head(void *ud, const struct http_transport_response *r)
{
	struct call *c = ud;

	c->a->status = r->status;
	c->a->retry_after_ms = r->status == 503 || r->status == 429 ?
			       r->retry_after_ms : 0;
	return c->no_memory ? HTTP_SINK_STOP : HTTP_SINK_TAKE;
}

static int
call_body(void *ud, const char *p, size_t n)
{
	struct call *c = ud;

	if (c->a->body.len + n > c->q->body_max) {
		c->too_big = 1;
		return HTTP_SINK_STOP;
	}
	if (buf_add(&c->a->body, p, n)) {
		c->no_memory = 1;
		return HTTP_SINK_STOP;
	}
	return HTTP_SINK_TAKE;
}

static void
answer_reset(struct http_request_answer *a)
{
	buf_free(&a->body);
	curl_slist_free_all(a->headers);
	a->headers = NULL;
	a->status = 0;
	a->why[0] = '\0';
	a->retry_after_ms = 0;
}

static int
headers_go(const struct http_request *q)
{
	char mine[HTTP_URL_ORIGIN_MAX], theirs[HTTP_URL_ORIGIN_MAX];

	if (!q->headers_for)
		return 1;
	return http_url_origin(q->url, mine, sizeof(mine)) == 0 &&
	       http_url_origin(q->headers_for, theirs, sizeof(theirs)) == 0 &&
	       strcmp(mine, theirs) == 0;
}

/* One attempt: an enum http_outcome, with HTTP_AGAIN for a transient
 * status too. */
static int
attempt(const struct http_request *q, struct http_request_answer *a,
	const struct http_transport *tr, uint64_t deadline)
{
	struct call c = { .q = q, .a = a };
	struct http_transport_sink sink = {
		call_header, call_head, call_body, &c
	};
	struct http_transport_request x = {
		.url = q->url, .start = q->start, .len = q->len,
		.headers = headers_go(q) ? q->headers : NULL,
		.sigv4 = q->sigv4,
	};
	struct http_transport_response resp;
	uint64_t now = http_conf_now_ms();
	int r;

	answer_reset(a);
	/* small answers: the bound (HF_HUB_ETAG_TIMEOUT) is for the whole
	 * call, as huggingface_hub has it */
	x.timeout_ms = deadline > now ? deadline - now : 1;
	x.connect_ms = q->client->conf.timeout_s * 1000ull;
	if (x.connect_ms > x.timeout_ms)
		x.connect_ms = x.timeout_ms;
	x.stall_ms = x.connect_ms;
	r = tr->get(tr, &x, &resp, &sink, a->why, sizeof(a->why));
	if (c.no_memory) {
		snprintf(a->why, sizeof(a->why), "out of memory");
		return HTTP_FAIL;
	}
	if (c.too_big) {
		snprintf(a->why, sizeof(a->why), "an answer larger than %zu "
			 "bytes", q->body_max);
		return HTTP_FAIL;
	}
	if (r != HTTP_OK)
		return r == HTTP_STOPPED || r == HTTP_CANCELLED ||
		       r == HTTP_NOMEM ? HTTP_FAIL : r;
	return http_transport_status_transient(a->status) ? HTTP_AGAIN :
	       HTTP_OK;
}

int
http_request_get(const struct http_request *q, struct http_request_answer *a)
{
	const struct http_transport *tr = q->client->tr;
	uint64_t deadline, now, bound;
	unsigned n;
	int r;

	answer_reset(a);
	bound = http_conf_bound_ms(&q->client->conf);
	if (q->bound_ms && q->bound_ms < bound)
		bound = q->bound_ms;
	deadline = http_conf_now_ms() + bound;
	for (n = 0; ; n++) {
		uint64_t pause;

		r = attempt(q, a, tr, deadline);
		if (r != HTTP_AGAIN)
			return r;
		pause = (250ull << (n < 3 ? n : 3)) + http_conf_now_ms() % 100;
		if (pause > BACKOFF_MAX_MS)
			pause = BACKOFF_MAX_MS;
		/* a busy server says when to come back: not sooner, and not
		 * at all past the deadline (its answer is the answer) */
		if (a->retry_after_ms)
			pause = a->retry_after_ms < RETRY_AFTER_MAX_MS ?
				a->retry_after_ms : RETRY_AFTER_MAX_MS;
		now = http_conf_now_ms();
		if (now + LAST_TRY_MS >= deadline ||
		    (a->retry_after_ms && now + pause + LAST_TRY_MS > deadline))
			break;
		if (now + pause + LAST_TRY_MS > deadline)
			pause = deadline - LAST_TRY_MS - now;
		if (http_conf_nap(&q->client->conf, pause)) {
			snprintf(a->why, sizeof(a->why), "no one waits for "
				 "the answer any more");
			return a->status ? HTTP_OK : HTTP_FAIL;
		}
	}
	/* Out of time: the last transient answer is still an answer. */
	if (a->status)
		return HTTP_OK;
	if (!a->why[0])
		snprintf(a->why, sizeof(a->why), "no answer within %.1f s",
			 (double)bound / 1000);
	return HTTP_FAIL;
}

void
http_request_answer_free(struct http_request_answer *a)
{
	answer_reset(a);
}

const char *
http_request_header(const struct http_request_answer *a, const char *name)
{
	const struct curl_slist *l;
	size_t n = strlen(name);

	for (l = a->headers; l; l = l->next)
		if (strncasecmp(l->data, name, n) == 0 && l->data[n] == ':')
			return l->data + n + 2;
	return NULL;
}
