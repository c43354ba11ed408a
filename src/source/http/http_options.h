/* http_options.h - the settings of HTTP(S) sources that front ends set:
 * defaults, log priorities, struct http_options and http_options_set()
 * (implemented by http_client.c).  Its own header so that http_conf.c,
 * below source_http.c, does not include source_http.h.
 */
#ifndef STFS_HTTP_OPTIONS_H
#define STFS_HTTP_OPTIONS_H

#include <stdint.h>

struct err;

#define HTTP_HEAD_BYTES		(64u << 10)	/* the speculative first GET */
#define HTTP_BLOCK_BYTES	(1u << 20)	/* cache granularity */
#define HTTP_DEFAULT_CACHE_MB	512u	/* the block cache without ... */
#define HTTP_DEFAULT_CACHE_MB_DISK 64u	/* ... and with the disk cache */
#define HTTP_DEFAULT_TIMEOUT_S	10u	/* connect / stall, per attempt */
#define HTTP_DEFAULT_TRIES	3	/* the read bound is tries x timeout */
#define HTTP_DEFAULT_READAHEAD_MB 256u	/* read-ahead window cap */
#define HTTP_MAX_CONNECTIONS	64u	/* requests in flight, at most */
#define HTTP_DEFAULT_MIN_RATE	1024u	/* bytes/s: a transfer slower than
					   this over HTTP_MIN_RATE_STALLS x
					   http_timeout is a stall */
#define HTTP_MIN_RATE_STALLS	6u	/* 60 s at the default timeout */

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
	 * NULL: $STFS_HTTP_HEADER_FILE, if set.  The file is read once, when
	 * the client is made (http_options_set(), or the first open); its
	 * contents never appear in messages. */
	const char *header_file;
	const char *ca_file;	/* CA bundle (PEM); NULL: $STFS_HTTP_CA_FILE
				   or the system store */
	int insecure;		/* 1: do not verify TLS certificates or host
				   names (also $STFS_HTTP_INSECURE=1) */
	int no_validator;	/* 1: open a server that sends neither ETag
				   nor Last-Modified, whose changes cannot
				   be seen (also $STFS_HTTP_NO_VALIDATOR=1) */
	unsigned cache_mb;	/* block cache size; 0: default (with the
				   disk cache on, what read-ahead on its way
				   needs; the rest waits on the disk) */
	unsigned timeout_s;	/* connect timeout, and the longest an
				   attempt waits for a byte of the answer;
				   0: default */
	unsigned tries;		/* a read fails once no progress came for
				   tries x timeout_s, or after tries answers
				   in a row that broke off early; 0: default */
	unsigned readahead_mb;	/* largest read-ahead window; 0: default */
	unsigned connections;	/* most requests in flight; 0: as many as
				   raise the throughput (http_pace.h), up
				   to HTTP_MAX_CONNECTIONS */
	const char *max_throughput;	/* a cap, "200M" (bytes/s, K M G
					   powers of 1024); NULL: none */
	/* The slowest a transfer may be: fewer bytes than this many a
	 * second over HTTP_MIN_RATE_STALLS x timeout_s is a stall, as a
	 * transfer that stopped is ("1K"; "0": none; NULL:
	 * $STFS_HTTP_MIN_RATE, else HTTP_DEFAULT_MIN_RATE). */
	const char *min_rate;
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

/* Make the process's client (http_client.h) with these options: every
 * later source_open_http() (hf://, s3:// too) uses it.  Call it once,
 * before the first open.  0, or -1 with *e (ERR_USAGE: a malformed
 * setting, an unreadable or malformed header file).  Fields left 0/NULL
 * fall back to the environment, then to the defaults. */
int http_options_set(const struct http_options *o, struct err *e);

#endif
