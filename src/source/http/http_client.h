/* http_client.h - one HTTP client: everything the remote sources of a
 * process share, in one object instead of process-wide singletons.
 *
 * A client owns the block cache (http_cache.h), the prefetcher with its
 * queue, worker threads and pace (http_prefetch.h) and the spool of
 * blocks on their way to the disk cache (http_spool.h).  A source is
 * opened with a client (struct source_http_opts) and keeps it; the
 * modules below are handed what they need of it.  The sources a front
 * end opens by name (model/provider.c: http://, hf://, s3://) use the
 * process's client, made once by http_client_process(); unit tests make
 * their own.
 */
#ifndef STFS_HTTP_CLIENT_H
#define STFS_HTTP_CLIENT_H

struct err;

struct http_client {
	struct http_cache *cache;
	struct http_prefetch *prefetch;
	struct http_spool *spool;
};

/* A client with the settings of http_conf.h; NULL with *e. */
struct http_client *http_client_new(struct err *e);

/* Stop its threads and free it; every source opened with it is closed. */
void http_client_free(struct http_client *c);

/* The process's client, made at the first call; NULL with *e. */
struct http_client *http_client_process(struct err *e);

#endif
