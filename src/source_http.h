/* source_http.h - the HTTP(S) range-request source and its knobs.
 *
 * source_open_http() (declared in source.h) opens a remote object with one
 * speculative ranged GET of its first 64 KiB; later reads go through a
 * process-wide block cache filled by ranged GETs.  Front ends may call
 * http_set_options() once, before the first open; without it the
 * environment (STFS_HTTP_*) and the defaults below apply.
 *
 * The parts: http_conf.c (settings, header file), http_url.c (CURLU),
 * http_transport.h + http_curl.c (one GET), http_fetch.c (checks,
 * retries, redirects, validators), http_cache.c (blocks), http_prefetch.c
 * (reads, read-ahead, workers), source_http.c (the source).
 */
#ifndef STFS_SOURCE_HTTP_H
#define STFS_SOURCE_HTTP_H

#include <stdint.h>
#include <time.h>

struct err;
struct source;

#define HTTP_HEAD_BYTES		(64u << 10)	/* the speculative first GET */
#define HTTP_BLOCK_BYTES	(1u << 20)	/* cache granularity */
#define HTTP_DEFAULT_CACHE_MB	256u
#define HTTP_DEFAULT_TIMEOUT_S	10u	/* connect / stall, per attempt */
#define HTTP_DEFAULT_TRIES	3	/* attempts per request */
#define HTTP_DEFAULT_READAHEAD_MB 64u	/* read-ahead window cap */
#define HTTP_DEFAULT_CONNECTIONS 8u	/* read-ahead worker threads */

/* Priorities passed to the log callback: the syslog values, which are
 * also fuse_log()'s FUSE_LOG_* values. */
#define HTTP_LOG_ERR		3
#define HTTP_LOG_WARNING	4
#define HTTP_LOG_NOTICE		5
#define HTTP_LOG_INFO		6

struct http_options {
	/* A file of request headers, one "Name: value" per line (blank lines
	 * and lines starting with '#' are skipped); a line without a colon
	 * is taken as a bare token and sent as "Authorization: Bearer LINE".
	 * NULL: $STFS_HTTP_HEADER_FILE, if set.  The file is read once, by
	 * http_set_options() (or the first open); its contents never appear
	 * in messages. */
	const char *header_file;
	const char *ca_file;	/* CA bundle (PEM); NULL: $STFS_HTTP_CA_FILE
				   or the system store */
	int insecure;		/* 1: do not verify TLS certificates or host
				   names (also $STFS_HTTP_INSECURE=1) */
	unsigned cache_mb;	/* block cache size; 0: default */
	unsigned timeout_s;	/* connect timeout and stall timeout of one
				   attempt; 0: default */
	unsigned tries;		/* attempts per request (transient failures
				   are retried); 0: default */
	unsigned readahead_mb;	/* largest read-ahead window; 0: default */
	unsigned connections;	/* read-ahead workers; 0: default */
	/* Where messages go (object changed, server unreachable or back);
	 * msg has no newline.  NULL: syslog(3).  The daemon passes a wrapper
	 * around fuse_log(), so that they follow its other messages. */
	void (*log)(int prio, const char *msg);
	/* The disk cache: cache 1 on, -1 off, 0 the default (on, unless
	 * $STFS_CACHE=off); cache_dir NULL: $STFS_CACHE_DIR, else
	 * $XDG_CACHE_HOME/stfs or ~/.cache/stfs; cache_max a size such as
	 * "10G" (NULL: $STFS_CACHE_MAX, else 10 GiB). */
	int cache;
	const char *cache_dir;
	const char *cache_max;
};

/* Set the options for every later source_open_http().  0, or -1 with *e
 * (ERR_USAGE: unreadable or malformed header file).  Fields left 0/NULL
 * fall back to the environment, then to the defaults. */
int http_set_options(const struct http_options *o, struct err *e);

/* The longest a single read waits for a server that does not answer,
 * in seconds: tries * timeout_s, backoff included. */
unsigned http_read_bound_s(void);

/* How a remote object is opened (hf://, s3:// and plain URLs alike).
 * Zero-initialized fields mean "not given". */
struct http_src_opts {
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
};

int source_open_http_opts(const char *url, const struct http_src_opts *o,
			  struct source **out, struct err *e);

/* After a header that claims more bytes than the source has: 1 when the
 * server serves bytes past the size its Content-Range gave (its fault,
 * not the file's), else 0. */
int source_http_size_wrong(struct source *s);

/* The counters of a remote source as a JSON object (new reference):
 * requests by kind (header, data, list, resolve), bytes fetched, block
 * cache hits and misses, retries, failed attempts by cause, the largest
 * read-ahead window, whether it turned stale.  NULL for other sources.
 * For MNT/.stfs/stats.json; the same figures are logged at close. */
struct json_t;
struct json_t *source_http_stats(struct source *s);

/* 0 while the remote object is the one opened, -ESTALE once a response
 * showed it changed (412, another ETag or size). */
int source_http_verify(struct source *s);

#endif
