/* http_conf.h - settings of the HTTP(S) sources, the header file, logging.
 *
 * A client's settings (http_client.h): the defaults, overridden by the
 * environment (STFS_HTTP_*, STFS_CACHE*), overridden by the front end's
 * struct http_options.  Made once with the client and fixed from then on;
 * the modules below are handed a pointer to them (or the values they
 * need), never a process-wide copy.  One field changes: stopping, once,
 * when the client stops (http_client_stop()); every wait of the client
 * asks http_conf_cancelled() at least every CANCEL_POLL_MS (base/cancel.h).
 */
#ifndef STFS_HTTP_CONF_H
#define STFS_HTTP_CONF_H

#include <pthread.h>
#include <stdint.h>

#include "source/http/http_options.h"

#define HTTP_CONF_DISK_MAX	(10ull << 30)	/* cache_max by default */

struct curl_slist;
struct err;

struct http_conf {
	struct curl_slist *headers;	/* header file lines (may hold a token) */
	char *ca_file;
	int insecure;
	int no_validator;		/* accept objects without validators */
	uint64_t cache_bytes;
	unsigned timeout_s;
	unsigned tries;
	uint64_t ra_max;
	unsigned max_workers;		/* 0: found by http_pace */
	uint64_t max_bps;		/* 0: no throughput cap */
	uint64_t min_rate;		/* bytes/s; 0: no floor */
	void (*log)(int prio, const char *msg);
	int disk_on;			/* the disk cache (http_disk.c) */
	char *disk_dir;
	uint64_t disk_max;
	int stopping;			/* atomic: http_client_stop() */
};

/* The defaults, then the environment, then o (NULL: none; fields left
 * 0/NULL do not override), and the header file (o's, else
 * $STFS_HTTP_HEADER_FILE).  0, or -1 with *e (ERR_USAGE: a malformed
 * setting, such as STFS_HTTP_INSECURE=maybe or cache_max=lots, named; an
 * unreadable or malformed header file); free with http_conf_fini() in
 * either case. */
int http_conf_init(struct http_conf *c, const struct http_options *o,
		   struct err *e);
void http_conf_fini(struct http_conf *c);

/* Parse a header file into a list of "Name: value" lines: blank and '#'
 * lines skipped, a line without a colon is "Authorization: Bearer LINE".
 * Messages name the file and line, never the contents.  A file readable
 * by group or others draws a warning (http_conf_warn(), as ssh does for
 * keys). */
int http_conf_load_header_file(const struct http_conf *c, const char *path,
			       struct curl_slist **out, struct err *e);

/* A message of the sources (object changed, server gone and back) to the
 * log callback of c, else syslog(3). */
void http_conf_log(const struct http_conf *c, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A warning the user should see at once (not a daemon's message): to the
 * log callback when a front end gave one, else to stderr as it is.  The
 * library never names the program: the front end's callback does. */
void http_conf_warn(const struct http_conf *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The one parser of boolean settings (environment and options):
 * 1/on/yes/true -> 1, 0/off/no/false -> 0 (any case), else -1. */
int http_conf_parse_bool(const char *s);

/* The boolean environment variable name: dflt when unset or empty, else
 * 0 or 1; -1 with *e (ERR_USAGE, "NAME=VALUE: not a boolean (...)") for
 * a value http_conf_parse_bool() does not know. */
int http_conf_env_bool(const char *name, int dflt, struct err *e);

/* "10G", "512M", "1048576": bytes (K, M, G, T are powers of 1024).
 * 0, or -1 when malformed. */
int http_conf_parse_size(const char *s, uint64_t *out);

uint64_t http_conf_now_ms(void);
void http_conf_sleep_ms(uint64_t ms);

/* 1 when a wait of c's should end now: the client stops, or whoever the
 * calling thread works for went away (base/cancel.h). */
int http_conf_cancelled(const struct http_conf *c);

/* Sleep ms, ending early when http_conf_cancelled(): 0, or 1 then. */
int http_conf_nap(const struct http_conf *c, uint64_t ms);

/* The stall floor's window, in ms (HTTP_MIN_RATE_STALLS x timeout). */
uint64_t http_conf_min_rate_ms(const struct http_conf *c);

/* A condition variable on the clock of http_conf_now_ms(), so that its
 * deadlines do not jump with the wall clock. */
void http_conf_cond_init(pthread_cond_t *cond);
/* Wait on cond (made by http_conf_cond_init()) until until_ms at most. */
void http_conf_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock,
			       uint64_t until_ms);

/* How long one read may wait for the network, in ms (tries * timeout). */
uint64_t http_conf_bound_ms(const struct http_conf *c);

#endif
