/* source_http.h - the HTTP(S) range-request source and its knobs.
 *
 * source_open_http() (declared in source.h) opens a remote object with one
 * speculative ranged GET of its first 64 KiB; later reads go through the
 * block cache of its client (http_client.h), filled by ranged GETs.  Front
 * ends may call http_options_set() once, before the first open, to make
 * the process's client; without it the environment (STFS_HTTP_*) and the
 * defaults (http_options.h) apply.
 *
 * The parts: http_options.h (what front ends set), http_client.c (the
 * client: settings and shared state), http_conf.c (settings, header
 * file), http_url.c (CURLU),
 * http_transport.h + http_curl.c (one GET), http_fetch.c (checks,
 * retries, redirects, validators), http_cache.c (blocks), http_fill.c
 * (blocks from the disk cache or a GET), http_read.c (reads),
 * http_prefetch.c (read-ahead, workers), source_http.c (the source).
 */
#ifndef STFS_SOURCE_HTTP_H
#define STFS_SOURCE_HTTP_H

#include <stdint.h>
#include <time.h>

#include "source/http/http_options.h"

struct err;
struct http_client;
struct source;

/* How a remote object is opened (hf://, s3:// and plain URLs alike).
 * Zero-initialized fields mean "not given". */
struct source_http_opts {
	/* Whose cache, read-ahead and settings it uses (http_client.h);
	 * NULL: the process's client. */
	struct http_client *client;
	/* Shown in messages, fsname and summaries instead of the URL
	 * (which is shown without user info and query otherwise). */
	const char *display;
	/* File name for sidecars' "source"; NULL: the URL's last part. */
	const char *base;
	/* "Name: value" lines sent only to the URL's origin (scheme, host,
	 * port), never across a redirect to another one (NULL-terminated;
	 * e.g. "Authorization: Bearer hf_..."). */
	const char *const *headers;
	/* 1: do not add the header file's lines (they belong to another
	 * kind of source). */
	int no_header_file;
	/* AWS Signature V4 on every request to the URL's origin, with
	 * libcurl's CURLOPT_AWS_SIGV4 provider string ("aws:amz:REGION:s3");
	 * NULL: unsigned.  Signed requests carry x-amz-content-sha256 (of
	 * the empty body) and, with a session token, x-amz-security-token;
	 * the user's header file is not sent to signed sources, and data
	 * GETs carry If-Match. */
	const char *aws_sigv4;
	const char *aws_key;
	const char *aws_secret;
	const char *aws_token;	/* session token or NULL */
	int if_match;		/* If-Match even with a weak ETag */
	/* The ETag a listing gave: the open request carries If-Match (412:
	 * changed since it was listed).  With size_known as well, no open
	 * request is sent at all.  Every ranged GET carries If-Match with
	 * the ETag (the one the data server answers with); 412 or another
	 * ETag fail reads with EIO. */
	const char *etag;
	int size_known;
	uint64_t size;
	time_t mtime;		/* 0: Last-Modified, else now */
	/* 1: an X-Linked-Etag of a sha256 in the answers to the open
	 * request (the Hub's resolve/ of an LFS file) names the bytes in
	 * the shared cache (http_tier.h), whatever repository holds them;
	 * else the display name (or the URL without user info and query)
	 * and the validators do. */
	int linked_etag;
};

int source_open_http_opts(const char *url, const struct source_http_opts *o,
			  struct source **out, struct err *e);

/* After a header that claims more bytes than the source has: 1 when the
 * server serves bytes past the size its Content-Range gave (its fault,
 * not the file's), else 0. */
int source_http_size_wrong(struct source *s);

/* The counters of a remote source as a JSON object (new reference):
 * requests by kind (header, data, list, resolve), bytes fetched, block
 * cache hits and misses, retries, failed attempts by cause, the largest
 * read-ahead window, whether it turned stale, its last error (the last
 * read that failed, or the change seen, with its time; null before any),
 * per tier (memory, disk, shared, origin) what it served, and the
 * memory of the blocks of its client (all its sources: now, at most so
 * far, the limit).
 * NULL for other sources.
 * For MNT/.stfs/stats.json; the same figures are logged at close. */
struct json_t;
struct json_t *source_http_stats(struct source *s);

/* Body bytes a remote source has received so far (0 for other sources):
 * what opening it cost, for a progress line (base/meter.h). */
uint64_t source_http_fetched(struct source *s);

/* 0 while the remote object is the one opened, -ESTALE once a response
 * showed it changed (412, another ETag or size). */
int source_http_verify(struct source *s);

/* Every transfer of the remote sources a front end opened by name (the
 * process's client, http_client.h) ends now (within CANCEL_POLL_MS),
 * whatever its server does, and their reads fail: for a daemon going
 * away, before it closes them. */
void source_http_stop(void);

#endif
