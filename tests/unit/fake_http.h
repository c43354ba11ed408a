/* fake_http.h - a scripted transport for the unit tests of the Hub and
 * S3 clients: every request is recorded, every answer comes from the
 * test's responder.  Installed as the transport of the process's client
 * (http_client.h), which the Hub and S3 use. */
#ifndef STFS_FAKE_HTTP_H
#define STFS_FAKE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_HTTP_MAX	64

/* One answer: status (0: no answer, a transient network error),
 * "Name: value" headers (NULL-terminated), a body. */
struct fake_http_answer {
	long status;
	const char *headers[8];
	const char *body;
	size_t body_len;	/* 0: strlen(body) */
	unsigned delay_ms;	/* the answer comes this late (a request's
				   timeout_ms ends it first, as libcurl's) */
};

/* One request as the transport saw it (request i in slot i % MAX). */
struct fake_http_seen {
	char url[1024];
	uint64_t start, len;
	char headers[1024];	/* the request's header lines, "\n"-joined */
	char sigv4[128];	/* provider, "" when unsigned */
	char key[64];
};

extern struct fake_http_seen fake_http_seen[FAKE_HTTP_MAX];
extern unsigned fake_http_count;

/* While a responder runs, on its thread: the request's body when it is
 * a PUT (NULL: a GET).  Requests may come from several threads at once
 * (the prefetcher's, the shared cache's): a responder that keeps state
 * locks it. */
#include <sys/uio.h>
extern __thread const struct iovec *fake_http_body;
extern __thread int fake_http_body_n;
/* ... and its range (len 0: none). */
extern __thread uint64_t fake_http_start, fake_http_len;

/* A new process's client over the fake with responder(i, url), i
 * counting from 0, a 1 s timeout and 2 tries (a 2 s read bound), no disk
 * cache; the one before is freed.  Returns the client. */
struct http_client;
struct http_client *fake_http_install(void (*responder)(unsigned i,
							const char *url,
							struct fake_http_answer
							*a));

#endif
