/* source_http.h - knobs of the HTTP(S) range-request source.
 *
 * source_open_http() (declared in source.h) opens a remote object with one
 * speculative ranged GET of its first 64 KiB; later reads go through a
 * process-wide block cache filled by ranged GETs.  Front ends may call
 * http_set_options() once, before the first open; without it the
 * environment (STFS_HTTP_*) and the defaults below apply.
 */
#ifndef STFS_SOURCE_HTTP_H
#define STFS_SOURCE_HTTP_H

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
};

/* Set the options for every later source_open_http().  0, or -1 with *e
 * (ERR_USAGE: unreadable or malformed header file).  Fields left 0/NULL
 * fall back to the environment, then to the defaults. */
int http_set_options(const struct http_options *o, struct err *e);

/* Per-source options of source_open_http_opts() (s3:// sources). */
struct http_src_opts {
	const char *display;	/* name in messages and in s->name (no
				   secrets); NULL: the redacted URL */
	/* AWS Signature V4 on every request, with libcurl's
	 * CURLOPT_AWS_SIGV4 provider string ("aws:amz:REGION:s3"); NULL:
	 * unsigned.  The user's header file is not sent to signed sources.
	 * Data GETs then carry If-Match with the ETag seen at open. */
	const char *aws_sigv4;
	const char *aws_key;
	const char *aws_secret;
	const char *aws_token;	/* session token or NULL */
	const char *etag;	/* ETag from a listing: the open request
				   carries If-Match (412: changed) */
	int if_match;		/* unsigned sources: If-Match, not If-Range */
};

/* source_open_http() with per-source options (NULL: the same). */
int source_open_http_opts(const char *url, const struct http_src_opts *o,
			  struct source **out, struct err *e);

/* The longest a single read waits for a server that does not answer,
 * in seconds: tries * timeout_s, backoff included. */
unsigned http_read_bound_s(void);

#endif
