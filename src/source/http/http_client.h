/* http_client.h - one HTTP client: everything the remote sources of a
 * process share, in one object instead of process-wide singletons.
 *
 * A client owns its settings (http_conf.h: a copy made from the front
 * end's options, the environment and the defaults), its transport (the
 * libcurl one, or a unit test's fake), the block cache (http_cache.h),
 * the prefetcher with its queue, worker threads and pace
 * (http_prefetch.h), the disk cache (http_disk.h), the spool of
 * blocks on their way to it (http_spool.h) and, when one is set, the
 * shared cache (http_tier.h).  A source is opened with a
 * client (struct source_http_opts) and keeps it; the modules below are
 * handed what they need of it (a pointer to the settings, the cache, the
 * transport), never a process-wide copy.
 *
 * The sources a front end opens by name (model/provider.c: http://,
 * hf://, s3:// and what the Hub and S3 list) use the process's client:
 * the one http_options_set() makes, else one made from the environment
 * at the first open.  Unit tests make their own.
 */
#ifndef STFS_HTTP_CLIENT_H
#define STFS_HTTP_CLIENT_H

#include "source/http/http_conf.h"
#include "source/http/http_options.h"
#include "source/http/http_transport.h"

struct err;
struct http_tier_backend;

struct http_client {
	struct http_conf conf;		/* fixed once made */
	const struct http_transport *tr;	/* curl, or the one given */
	struct http_transport curl;
	struct http_cache *cache;
	struct http_prefetch *prefetch;
	struct http_disk *disk;
	struct http_spool *spool;
	struct http_tier *tier;		/* NULL: no shared cache */
};

/* A client with the settings of o (NULL: the environment's and the
 * defaults) over transport tr (NULL: libcurl); NULL with *e (a malformed
 * setting or header file, no libcurl, no memory). */
struct http_client *http_client_new(const struct http_options *o,
				    const struct http_transport *tr,
				    struct err *e);

/* Stop its threads and free it; every source opened with it is closed. */
void http_client_free(struct http_client *c);

/* From now on every transfer of c ends within CANCEL_POLL_MS
 * (base/cancel.h), whatever its server does, and every read fails: for a
 * daemon that goes away (unmount, SIGTERM), whose sources then close at
 * once instead of waiting for a server that trickles. */
void http_client_stop(struct http_client *c);

/* http_client_stop() of the process's client, when there is one. */
void http_client_stop_process(void);

/* The process's client (made from the environment at the first call
 * when none was set); NULL with *e. */
struct http_client *http_client_process(struct err *e);

/* Make c the process's client; returns the one before (NULL: none),
 * for the caller to free once none of its sources is open. */
struct http_client *http_client_install(struct http_client *c);

/* Make the object store behind backend b (taken, also on failure) c's
 * shared cache (http_tier.h), its blocks signed with the key in the file
 * key_path; before any source is opened with c.  0, or -1 with *e (the
 * key file). */
int http_client_set_tier(struct http_client *c,
			 const struct http_tier_backend *b,
			 const char *key_path, struct err *e);

/* The most requests the client keeps in flight (http_connections, else
 * HTTP_MAX_CONNECTIONS): how many files it is worth opening at once. */
unsigned http_client_connections(const struct http_client *c);

#endif
