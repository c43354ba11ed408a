/* source_http.c - a read-only source over HTTP(S) range requests (libcurl).
 *
 * Open costs one request: a speculative GET of the first 64 KiB, which
 * gives the object's size (Content-Range), its validators (ETag,
 * Last-Modified) and, for almost every safetensors file, the whole header,
 * so header_read()'s two preads are served from memory.
 *
 * Everything else goes through one process-wide cache of 1 MiB blocks
 * (LRU, bounded).  A read takes the blocks it needs; the missing ones are
 * fetched with one ranged GET per run of neighbouring blocks.  Each source
 * keeps a few read streams; a read that continues a stream doubles the
 * stream's read-ahead window (1 MiB up to a cap, as mountpoint-s3 does) and
 * queues the blocks ahead of it for a small pool of worker threads, which
 * fetch them in parallel, 8 MiB per request.  A block can be read as soon
 * as its last byte has arrived, before the rest of its request.
 *
 * Every ranged GET carries If-Range with the validator seen at open, and
 * every response is checked (status 206, the exact range asked for, the
 * same total size and ETag).  Anything else means the object changed: the
 * source turns stale and every later read fails with EIO, so bytes of two
 * versions are never mixed.
 *
 * Transient failures (connect errors, timeouts, resets, 5xx, 408, 429) are
 * retried with exponential backoff within a per-read deadline of
 * tries * timeout_s seconds; then the read fails with EIO.  For 1 s after
 * a failure, reads that need the network fail at once (the kernel follows
 * a failed read-ahead with a second read); after that nothing is
 * remembered, so reads work again when the server comes back.
 *
 * Threads: libcurl easy handles may not be used by two threads at once and
 * sharing the connection cache between threads is a known libcurl bug
 * (KNOWN_BUGS "A shared connection cache is not thread-safe"), so each
 * thread keeps its own easy handle, and with it its own keep-alive
 * connection; DNS and TLS sessions are shared through a CURLSH.  Worker
 * threads start on the first read-ahead, i.e. after the daemon has forked.
 */
#include "source.h"
#include "source_http.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "error.h"

#define HTTP_STREAMS		8	/* tracked read streams per source */
#define HTTP_SEQ_BACK		(1u << 20)	/* reordering a stream tolerates */
#define HTTP_SEQ_GAP		(2u << 20)	/* forward skip still "sequential" */
#define HTTP_REQ_BLOCKS		8	/* read-ahead request: 8 MiB */
#define HTTP_SPLIT_BLOCKS	32	/* demand runs above 32 MiB go parallel */
#define HTTP_BUCKETS		4096
#define HTTP_HOLD_MS		1000	/* fail fast this long after a failure */
#define HTTP_HUGE		(2u << 20)	/* transparent huge page size */
#define HTTP_VALIDATOR_MAX	256
#define HTTP_HEADER_FILE_MAX	(64u << 10)

/* ---- configuration --------------------------------------------------- */

static struct {
	pthread_once_t once;
	int init_failed;
	pthread_mutex_t lock;		/* options and header loading */
	int headers_loaded;
	struct curl_slist *headers;	/* user headers (may hold a token) */
	char *ca_file;
	int insecure;
	uint64_t cache_bytes;
	unsigned timeout_s;
	unsigned tries;
	uint64_t ra_max;
	unsigned max_workers;
	void (*log)(int prio, const char *msg);
	CURLSH *share;
	pthread_mutex_t share_lock[CURL_LOCK_DATA_LAST];
	pthread_key_t handle_key;
} cfg = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- the block cache -------------------------------------------------- */

enum { BLK_LOADING, BLK_READY, BLK_FAILED };
enum { JOB_QUEUED, JOB_RUNNING };

struct http_src;
struct http_job;

struct http_block {
	struct http_src *hs;
	uint64_t idx;
	char *data;
	size_t len;
	int state;
	unsigned refs;			/* readers copying out of it */
	int hashed;
	struct http_job *job;		/* while LOADING */
	struct http_block *hnext;
	struct http_block *lprev, *lnext;	/* LRU: READY and hashed */
};

struct http_job {
	struct http_src *hs;
	int state;
	struct http_job *qprev, *qnext;
	unsigned n;
	struct http_block *blocks[];	/* consecutive */
};

struct http_stream {
	int live;
	uint64_t next;		/* end of the last read */
	uint64_t window;	/* read-ahead bytes wanted past next */
	uint64_t ra_end;	/* read-ahead queued up to here */
	uint64_t used;		/* now_ms() of its last read */
};

struct http_src {
	char *url;
	char *display;		/* URL without user info and query: messages */
	uint64_t size;
	char *head;		/* bytes [0, head_len) from the open request */
	size_t head_len;
	char etag[HTTP_VALIDATOR_MAX];
	char lastmod[HTTP_VALIDATOR_MAX];
	struct curl_slist *hdrs;	/* user headers + If-Range */
	/* AWS SigV4 (s3:// sources): CURLOPT_AWS_SIGV4 provider and
	 * "key:secret" for CURLOPT_USERPWD; NULL: unsigned */
	char *sigv4;
	char *userpwd;
	int if_match;		/* data GETs carry If-Match, not If-Range */
	int stale;		/* atomic: object changed, every read fails */
	int failing;		/* atomic: last transfer failed (for logs) */
	uint64_t hold_until;	/* atomic: now_ms() before which fetches fail
				   at once (the kernel retries a failed
				   read-ahead with a second read: one wait
				   for a dead server, not two) */
	/* protected by C.lock */
	unsigned running;	/* jobs being transferred */
	struct http_stream streams[HTTP_STREAMS];
	struct http_src *prev, *next;	/* C.srcs */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* a block or job finished */
	pthread_cond_t work;		/* the queue has jobs */
	struct http_block *buckets[HTTP_BUCKETS];
	struct http_block *lru_head, *lru_tail;
	uint64_t bytes;			/* block data allocated */
	struct http_job *q_head, *q_tail;
	unsigned nworkers, idle;
	pid_t pid;			/* the process the workers belong to */
	/* Full blocks live in one arena of cache size, mapped at the first
	 * block and asked for transparent huge pages: a fresh 1 MiB malloc
	 * costs 256 page faults, a fifth of the time of a cold read. */
	char *arena;
	size_t arena_bytes;
	unsigned *free_slot;		/* stack of free arena slots */
	unsigned nfree;
	int arena_tried;
	struct http_src *srcs;		/* open sources (for their streams) */
} C = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- small helpers ----------------------------------------------------- */

static void
http_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
http_log(int prio, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cfg.log)
		cfg.log(prio, msg);
	else
		syslog(prio, "%s", msg);	/* never stderr: may be a daemon */
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t
bound_ms(void)
{
	return (uint64_t)cfg.tries * cfg.timeout_s * 1000;
}

static void http_init(void);

unsigned
http_read_bound_s(void)
{
	pthread_once(&cfg.once, http_init);
	return cfg.tries * cfg.timeout_s;
}

static void
sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int
env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static unsigned
env_uint(const char *name, unsigned dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return dflt;
	n = strtoul(v, &end, 10);
	return *end || n > 1000000 ? dflt : (unsigned)n;
}

/* The URL as it may appear in messages: no user:password@, no query or
 * fragment (presigned URLs carry credentials there). */
static char *
redact_url(const char *url)
{
	const char *scheme_end = strstr(url, "://");
	const char *host = scheme_end ? scheme_end + 3 : url;
	const char *path = host + strcspn(host, "/?#");
	const char *at = memchr(host, '@', (size_t)(path - host));
	size_t tail = strcspn(path, "?#");
	char *out;

	if (asprintf(&out, "%.*s%.*s%.*s", (int)(host - url), url,
		     (int)(path - (at ? at + 1 : host)), at ? at + 1 : host,
		     (int)tail, path) < 0)
		return NULL;
	return out;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Last path component of the URL, percent-decoded when that yields a
 * plain file name. */
static char *
url_base(const char *url)
{
	const char *scheme_end = strstr(url, "://");
	const char *host = scheme_end ? scheme_end + 3 : url;
	const char *path = host + strcspn(host, "/?#");
	const char *end = path + strcspn(path, "?#");
	const char *start = end;
	char *out, *o;
	const char *p;

	while (start > path && start[-1] != '/')
		start--;
	if (start == end)
		return strdup("remote.safetensors");
	out = malloc((size_t)(end - start) + 1);
	if (!out)
		return NULL;
	for (p = start, o = out; p < end; p++) {
		int hi, lo;

		if (*p == '%' && end - p >= 3 && (hi = hexval(p[1])) >= 0 &&
		    (lo = hexval(p[2])) >= 0) {
			int c = hi * 16 + lo;

			if (c == 0 || c == '/')
				goto raw;
			*o++ = (char)c;
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
raw:
	memcpy(out, start, (size_t)(end - start));
	out[end - start] = '\0';
	return out;
}

/* ---- options, headers, libcurl setup ----------------------------------- */

static void
share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *u)
{
	(void)h;
	(void)access;
	(void)u;
	pthread_mutex_lock(&cfg.share_lock[data]);
}

static void
share_unlock(CURL *h, curl_lock_data data, void *u)
{
	(void)h;
	(void)u;
	pthread_mutex_unlock(&cfg.share_lock[data]);
}

static void
handle_free(void *h)
{
	curl_easy_cleanup(h);
}

static void
http_init(void)
{
	pthread_condattr_t ca;
	int i;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    pthread_key_create(&cfg.handle_key, handle_free) != 0) {
		cfg.init_failed = 1;
		return;
	}
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&cfg.share_lock[i], NULL);
	cfg.share = curl_share_init();
	if (cfg.share) {
		curl_share_setopt(cfg.share, CURLSHOPT_LOCKFUNC, share_lock);
		curl_share_setopt(cfg.share, CURLSHOPT_UNLOCKFUNC, share_unlock);
		curl_share_setopt(cfg.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
		curl_share_setopt(cfg.share, CURLSHOPT_SHARE,
				  CURL_LOCK_DATA_SSL_SESSION);
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&C.changed, &ca);
	pthread_cond_init(&C.work, &ca);
	pthread_condattr_destroy(&ca);

	cfg.insecure = env_flag("STFS_HTTP_INSECURE");
	if (getenv("STFS_HTTP_CA_FILE") && *getenv("STFS_HTTP_CA_FILE"))
		cfg.ca_file = strdup(getenv("STFS_HTTP_CA_FILE"));
	cfg.cache_bytes = (uint64_t)env_uint("STFS_HTTP_CACHE_MB",
					     HTTP_DEFAULT_CACHE_MB) << 20;
	cfg.timeout_s = env_uint("STFS_HTTP_TIMEOUT", HTTP_DEFAULT_TIMEOUT_S);
	/* STFS_HTTP_RETRIES counts the extra attempts (0: try once). */
	cfg.tries = env_uint("STFS_HTTP_RETRIES", HTTP_DEFAULT_TRIES - 1) + 1;
	cfg.ra_max = (uint64_t)env_uint("STFS_HTTP_READAHEAD_MB",
					HTTP_DEFAULT_READAHEAD_MB) << 20;
	cfg.max_workers = env_uint("STFS_HTTP_CONNECTIONS",
				   HTTP_DEFAULT_CONNECTIONS);
	if (cfg.timeout_s == 0)
		cfg.timeout_s = HTTP_DEFAULT_TIMEOUT_S;
	if (cfg.cache_bytes < 8 * (uint64_t)HTTP_BLOCK_BYTES)
		cfg.cache_bytes = 8 * (uint64_t)HTTP_BLOCK_BYTES;
}

static int
http_ready(struct err *e)
{
	pthread_once(&cfg.once, http_init);
	if (cfg.init_failed)
		return err_set(e, ERR_IO, "cannot initialize libcurl");
	return 0;
}

static int
valid_header_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("!#$%&'*+-.^_`|~", s[i]) &&
		    !((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

/* Read the header file into a curl_slist.  Messages name the file and the
 * line number, never its contents. */
static int
load_header_file(const char *path, struct curl_slist **out, struct err *e)
{
	struct curl_slist *list = NULL, *tmp;
	char *text, *line, *next;
	unsigned lineno = 0;
	size_t n;
	FILE *f;
	int rc = 0;

	f = fopen(path, "re");
	if (!f)
		return err_set(e, ERR_USAGE, "cannot read the header file %s: %s",
			       path, strerror(errno));
	text = calloc(1, HTTP_HEADER_FILE_MAX + 1);
	if (!text) {
		fclose(f);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	n = fread(text, 1, HTTP_HEADER_FILE_MAX + 1, f);
	if (ferror(f) || n > HTTP_HEADER_FILE_MAX) {
		rc = err_set(e, ERR_USAGE, "header file %s: %s", path,
			     ferror(f) ? "read error" : "larger than 64 KiB");
		goto out;
	}
	text[n] = '\0';
	if (memchr(text, '\0', n)) {
		rc = err_set(e, ERR_USAGE, "header file %s holds a NUL byte",
			     path);
		goto out;
	}
	for (line = text; line && *line; line = next) {
		char *end, *colon, *hdr = NULL;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		end = line + strlen(line);
		while (end > line && (end[-1] == '\r' || end[-1] == ' ' ||
				      end[-1] == '\t'))
			*--end = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '\0' || *line == '#')
			continue;
		if (strchr(line, '\r')) {
			rc = err_set(e, ERR_USAGE, "header file %s, line %u: "
				     "stray carriage return", path, lineno);
			goto out;
		}
		colon = strchr(line, ':');
		if (colon) {
			if (!valid_header_name(line, (size_t)(colon - line))) {
				rc = err_set(e, ERR_USAGE, "header file %s, "
					     "line %u: not \"Name: value\"",
					     path, lineno);
				goto out;
			}
			hdr = strdup(line);
		} else if (asprintf(&hdr, "Authorization: Bearer %s", line) < 0) {
			hdr = NULL;
		}
		tmp = hdr ? curl_slist_append(list, hdr) : NULL;
		if (hdr) {
			explicit_bzero(hdr, strlen(hdr));
			free(hdr);
		}
		if (!tmp) {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		list = tmp;
	}
out:
	explicit_bzero(text, HTTP_HEADER_FILE_MAX + 1);
	free(text);
	fclose(f);
	if (rc) {
		curl_slist_free_all(list);
		return rc;
	}
	*out = list;
	return 0;
}

int
http_set_options(const struct http_options *o, struct err *e)
{
	struct curl_slist *list = NULL;
	const char *hf;
	int rc = 0;

	if (http_ready(e))
		return -1;
	hf = o->header_file;
	if (!hf && getenv("STFS_HTTP_HEADER_FILE") &&
	    *getenv("STFS_HTTP_HEADER_FILE"))
		hf = getenv("STFS_HTTP_HEADER_FILE");
	if (hf && load_header_file(hf, &list, e))
		return -1;
	pthread_mutex_lock(&cfg.lock);
	curl_slist_free_all(cfg.headers);
	cfg.headers = list;
	cfg.headers_loaded = 1;
	if (o->ca_file) {
		free(cfg.ca_file);
		cfg.ca_file = strdup(o->ca_file);
		if (!cfg.ca_file)
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (o->insecure)
		cfg.insecure = 1;
	if (o->cache_mb)
		cfg.cache_bytes = (uint64_t)o->cache_mb << 20;
	if (cfg.cache_bytes < 8 * (uint64_t)HTTP_BLOCK_BYTES)
		cfg.cache_bytes = 8 * (uint64_t)HTTP_BLOCK_BYTES;
	if (o->timeout_s)
		cfg.timeout_s = o->timeout_s;
	if (o->tries)
		cfg.tries = o->tries;
	if (o->readahead_mb)
		cfg.ra_max = (uint64_t)o->readahead_mb << 20;
	if (o->connections)
		cfg.max_workers = o->connections;
	if (o->log)
		cfg.log = o->log;
	pthread_mutex_unlock(&cfg.lock);
	return rc;
}

/* Headers from $STFS_HTTP_HEADER_FILE when no one called
 * http_set_options(). */
static int
ensure_headers(struct err *e)
{
	const char *hf = getenv("STFS_HTTP_HEADER_FILE");
	struct curl_slist *list = NULL;
	int rc = 0;

	pthread_mutex_lock(&cfg.lock);
	if (!cfg.headers_loaded) {
		if (hf && *hf)
			rc = load_header_file(hf, &list, e);
		if (rc == 0) {
			cfg.headers = list;
			cfg.headers_loaded = 1;
		}
	}
	pthread_mutex_unlock(&cfg.lock);
	return rc;
}

/* This thread's easy handle, with the options that never change. */
static CURL *
thread_handle(void)
{
	CURL *h = pthread_getspecific(cfg.handle_key);

	if (h)
		return h;
	h = curl_easy_init();
	if (!h)
		return NULL;
	if (pthread_setspecific(cfg.handle_key, h) != 0) {
		curl_easy_cleanup(h);
		return NULL;
	}
	if (cfg.share)
		curl_easy_setopt(h, CURLOPT_SHARE, cfg.share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "stfs/" STFS_VERSION);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L << 10);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)cfg.timeout_s);
	if (cfg.insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cfg.ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg.ca_file);
	return h;
}

/* ---- one transfer ------------------------------------------------------ */

enum {
	XF_OK,
	XF_RETRY,	/* transient: try again */
	XF_FAIL,	/* this read fails, later ones may work */
	XF_CHANGED,	/* the object is not the one opened */
};

struct http_xfer {
	struct http_src *hs;
	int probe;			/* the open request */
	uint64_t start, len;		/* range asked for */
	char *buf;			/* probe: destination, len bytes */
	struct http_block **blocks;	/* data: destination blocks */
	uint64_t first_idx;		/* blocks[0]->idx */
	unsigned nblocks, done;		/* blocks filled (they are READY) */
	uint64_t got;
	/* the response being received (reset at every status line) */
	long status;
	int have_range, total_known;
	uint64_t r_first, r_last, r_total;
	int have_clen;
	uint64_t clen;
	char etag[HTTP_VALIDATOR_MAX];
	char lastmod[HTTP_VALIDATOR_MAX];
	int vetted, verdict;
	char why[200];
	char errbuf[CURL_ERROR_SIZE];
};

static void
copy_value(char *dst, size_t cap, const char *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static int
parse_u64(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s++ - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

/* "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/(star)" or "bytes (star)/TOTAL". */
static void
parse_content_range(struct http_xfer *x, const char *v)
{
	const char *p = v;

	if (strncasecmp(p, "bytes", 5) != 0)
		return;
	p += 5;
	while (*p == ' ')
		p++;
	if (*p == '*') {
		p++;
	} else {
		if (parse_u64(&p, &x->r_first) || *p++ != '-' ||
		    parse_u64(&p, &x->r_last) || x->r_last < x->r_first)
			return;
		x->have_range = 1;
	}
	if (*p++ != '/')
		return;
	if (*p == '*')
		return;
	if (parse_u64(&p, &x->r_total) == 0)
		x->total_known = 1;
}

static size_t
header_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct http_xfer *x = ud;
	size_t n = size * nmemb, k;
	char line[HTTP_VALIDATOR_MAX + 64];
	char *colon, *v, *end;

	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		/* A new response (the first, or one after a redirect). */
		x->status = 0;
		x->have_range = x->total_known = x->have_clen = 0;
		x->etag[0] = x->lastmod[0] = '\0';
		const char *sp = memchr(p, ' ', n);

		if (sp) {
			/* "HTTP/1.1 206 Partial Content", "HTTP/2 206" */
			for (k = (size_t)(sp - p) + 1; k < n && p[k] >= '0' &&
			     p[k] <= '9'; k++)
				x->status = x->status * 10 + (p[k] - '0');
		}
		return n;
	}
	if (n >= sizeof(line))
		return n;	/* nothing we read is that long */
	memcpy(line, p, n);
	line[n] = '\0';
	colon = strchr(line, ':');
	if (!colon)
		return n;
	*colon = '\0';
	v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	end = v + strlen(v);
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
			   end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	if (strcasecmp(line, "Content-Range") == 0) {
		parse_content_range(x, v);
	} else if (strcasecmp(line, "Content-Length") == 0) {
		const char *q = v;

		x->have_clen = parse_u64(&q, &x->clen) == 0 && *q == '\0';
	} else if (strcasecmp(line, "ETag") == 0) {
		copy_value(x->etag, sizeof(x->etag), v, (size_t)(end - v));
	} else if (strcasecmp(line, "Last-Modified") == 0) {
		copy_value(x->lastmod, sizeof(x->lastmod), v, (size_t)(end - v));
	}
	return n;
}

static int
verdict(struct http_xfer *x, int v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
verdict(struct http_xfer *x, int v, const char *fmt, ...)
{
	va_list ap;

	x->verdict = v;
	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	return v;
}

static int
status_transient(long status)
{
	return status >= 500 || status == 408 || status == 429;
}

/* Judge the final response from its status line and headers. */
static int
vet(struct http_xfer *x)
{
	struct http_src *hs = x->hs;

	x->vetted = 1;
	if (status_transient(x->status))
		return verdict(x, XF_RETRY, "HTTP status %ld", x->status);
	if (x->probe) {
		if (x->status == 206) {
			if (!x->have_range || !x->total_known ||
			    x->r_first != 0 || x->r_last >= x->r_total ||
			    x->r_last >= x->len)
				return verdict(x, XF_FAIL, "bad Content-Range "
					       "in the answer to a range "
					       "request");
			return verdict(x, XF_OK, "ok");
		}
		if (x->status == 200)
			return verdict(x, XF_OK, "ok");
		if (x->status == 416 && x->total_known && x->r_total == 0)
			return verdict(x, XF_OK, "empty");
		if (x->status == 412)
			return verdict(x, XF_CHANGED, "the object changed "
				       "since it was listed (HTTP 412)");
		return verdict(x, XF_FAIL, "HTTP status %ld", x->status);
	}
	if (x->status == 412)
		return verdict(x, XF_CHANGED, "HTTP status 412 to a range "
			       "request with If-Match");
	if (x->status == 200 || x->status == 416)
		return verdict(x, XF_CHANGED, "HTTP status %ld to a range "
			       "request with If-Range", x->status);
	if (x->status != 206)
		return verdict(x, XF_FAIL, "HTTP status %ld", x->status);
	if (!x->total_known || x->r_total != hs->size)
		return verdict(x, XF_CHANGED, "the size is not %llu any more",
			       (unsigned long long)hs->size);
	if (hs->etag[0] && x->etag[0] && strcmp(hs->etag, x->etag) != 0)
		return verdict(x, XF_CHANGED, "the ETag changed");
	if (!hs->etag[0] && hs->lastmod[0] && x->lastmod[0] &&
	    strcmp(hs->lastmod, x->lastmod) != 0)
		return verdict(x, XF_CHANGED, "Last-Modified changed");
	if (!x->have_range || x->r_first != x->start ||
	    x->r_last != x->start + x->len - 1)
		return verdict(x, XF_FAIL, "the server sent another range "
			       "than the one asked for");
	return verdict(x, XF_OK, "ok");
}

static void block_ready(struct http_xfer *x, struct http_block *b);

static size_t
write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct http_xfer *x = ud;
	size_t n = size * nmemb;

	if (!x->vetted && vet(x) != XF_OK)
		return 0;	/* abort: CURLE_WRITE_ERROR */
	if (x->verdict != XF_OK)
		return 0;
	if (n > x->len - x->got) {
		if (x->probe && x->status == 200)
			verdict(x, XF_FAIL, "the server ignores Range requests "
				"(it answered 200 with the whole object)");
		else
			verdict(x, XF_FAIL, "the server sent more bytes than "
				"asked for");
		return 0;
	}
	if (x->probe) {
		memcpy(x->buf + x->got, p, n);
	} else {
		size_t left = n;

		while (left) {
			uint64_t pos = x->start + x->got;
			uint64_t bi = pos / HTTP_BLOCK_BYTES - x->first_idx;
			size_t bo = (size_t)(pos % HTTP_BLOCK_BYTES);
			struct http_block *b = x->blocks[bi];
			size_t k = b->len - bo < left ? b->len - bo : left;

			memcpy(b->data + bo, p, k);
			p += k;
			left -= k;
			x->got += k;
			if (bo + k == b->len)
				block_ready(x, b);
		}
		return n;
	}
	x->got += n;
	return n;
}

static int
curl_transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
	case CURLE_QUIC_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* One attempt within the deadline.  XF_*. */
static int
perform_once(CURL *h, struct http_xfer *x, const char *url,
	     struct curl_slist *hdrs, uint64_t deadline)
{
	uint64_t now = now_ms(), left;
	char range[64];
	CURLcode rc;

	if (now >= deadline)
		return verdict(x, XF_FAIL, "no answer within %u s",
			       http_read_bound_s());
	left = deadline - now;
	if (x->blocks) {
		/* A retry asks only for the blocks not filled yet: the
		 * others are READY and may be being read. */
		struct http_block *f;

		if (x->done == x->nblocks)
			return verdict(x, XF_OK, "ok");	/* all arrived */
		f = x->blocks[x->done];

		x->start = f->idx * HTTP_BLOCK_BYTES;
		x->len = (x->blocks[x->nblocks - 1]->idx - f->idx) *
			 HTTP_BLOCK_BYTES + x->blocks[x->nblocks - 1]->len;
	}
	x->got = 0;
	x->vetted = 0;
	x->verdict = XF_OK;
	x->status = 0;
	x->errbuf[0] = '\0';
	snprintf(range, sizeof(range), "%llu-%llu",
		 (unsigned long long)x->start,
		 (unsigned long long)(x->start + x->len - 1));
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_RANGE, range);
	/* The handle is this thread's, shared by all sources: set or clear
	 * the signing on every request. */
	if (x->hs && x->hs->sigv4) {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, x->hs->sigv4);
		curl_easy_setopt(h, CURLOPT_USERPWD, x->hs->userpwd);
	} else {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, NULL);
		curl_easy_setopt(h, CURLOPT_USERPWD, NULL);
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(left < cfg.timeout_s * 1000ull ?
				left : cfg.timeout_s * 1000ull));
	rc = curl_easy_perform(h);
	/* Do not leave pointers to this stack frame in the handle. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	if (x->vetted && x->verdict != XF_OK)
		return x->verdict;
	if (rc != CURLE_OK)
		return verdict(x, curl_transient(rc) ? XF_RETRY : XF_FAIL,
			       "%s", x->errbuf[0] ? x->errbuf :
			       curl_easy_strerror(rc));
	if (!x->vetted && vet(x) != XF_OK)
		return x->verdict;
	if (x->probe) {
		if (x->status == 206 && x->got != x->r_last + 1)
			return verdict(x, XF_RETRY, "short body");
		if (x->status == 200 && x->have_clen && x->clen != x->got)
			return verdict(x, XF_RETRY, "short body");
		return XF_OK;
	}
	if (x->got != x->len)
		return verdict(x, XF_RETRY, "short body (%llu of %llu bytes)",
			       (unsigned long long)x->got,
			       (unsigned long long)x->len);
	return XF_OK;
}

/* Attempts with exponential backoff until success, a permanent failure,
 * the retry budget or the deadline. */
static int
perform(struct http_xfer *x, const char *url, struct curl_slist *hdrs,
	uint64_t deadline)
{
	CURL *h = thread_handle();
	unsigned attempt;
	int r = XF_FAIL;

	if (!h)
		return verdict(x, XF_FAIL, "cannot create a libcurl handle");
	for (attempt = 0; ; attempt++) {
		uint64_t pause;

		r = perform_once(h, x, url, hdrs, deadline);
		if (r != XF_RETRY)
			break;
		if (attempt + 1 >= cfg.tries) {
			r = XF_FAIL;
			break;
		}
		pause = (250ull << (attempt < 8 ? attempt : 8)) + now_ms() % 100;
		if (now_ms() + pause >= deadline) {
			r = XF_FAIL;
			break;
		}
		sleep_ms(pause);
	}
	return r;
}

static void
note_result(struct http_src *hs, struct http_xfer *x, int r)
{
	if (r == XF_OK) {
		if (__atomic_exchange_n(&hs->failing, 0, __ATOMIC_RELAXED))
			http_log(HTTP_LOG_NOTICE, "%s: the server answers "
				 "again", hs->display);
		return;
	}
	if (r == XF_CHANGED) {
		if (!__atomic_exchange_n(&hs->stale, 1, __ATOMIC_RELAXED))
			http_log(HTTP_LOG_ERR, "%s: the remote object changed "
				 "since it was opened (%s); every read now "
				 "fails with EIO", hs->display, x->why);
		return;
	}
	__atomic_store_n(&hs->hold_until, now_ms() + HTTP_HOLD_MS,
			 __ATOMIC_RELAXED);
	if (!__atomic_exchange_n(&hs->failing, 1, __ATOMIC_RELAXED))
		http_log(HTTP_LOG_ERR, "%s: GET bytes %llu-%llu failed: %s; "
			 "reads fail with EIO until the server answers",
			 hs->display, (unsigned long long)x->start,
			 (unsigned long long)(x->start + x->len - 1), x->why);
}

/* ---- cache bookkeeping (C.lock held) ------------------------------------ */

static size_t
bucket_of(const struct http_src *hs, uint64_t idx)
{
	uint64_t k = (uint64_t)(uintptr_t)hs * 0x9e3779b97f4a7c15ull ^
		     idx * 0xc2b2ae3d27d4eb4full;

	return (size_t)((k ^ (k >> 29)) % HTTP_BUCKETS);
}

static struct http_block *
lookup(const struct http_src *hs, uint64_t idx)
{
	struct http_block *b;

	for (b = C.buckets[bucket_of(hs, idx)]; b; b = b->hnext)
		if (b->hs == hs && b->idx == idx)
			return b;
	return NULL;
}

static void
unhash(struct http_block *b)
{
	struct http_block **pp = &C.buckets[bucket_of(b->hs, b->idx)];

	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	b->hashed = 0;
}

static void
lru_unlink(struct http_block *b)
{
	if (b->lprev)
		b->lprev->lnext = b->lnext;
	else
		C.lru_head = b->lnext;
	if (b->lnext)
		b->lnext->lprev = b->lprev;
	else
		C.lru_tail = b->lprev;
	b->lprev = b->lnext = NULL;
}

static void
lru_push(struct http_block *b)
{
	b->lprev = NULL;
	b->lnext = C.lru_head;
	if (C.lru_head)
		C.lru_head->lprev = b;
	C.lru_head = b;
	if (!C.lru_tail)
		C.lru_tail = b;
}

static void
arena_init(void)
{
	size_t n = (size_t)(cfg.cache_bytes / HTTP_BLOCK_BYTES), i;
	size_t map = n * HTTP_BLOCK_BYTES + HTTP_HUGE;
	char *p;

	C.arena_tried = 1;
	C.free_slot = malloc(n * sizeof(*C.free_slot));
	if (!C.free_slot)
		return;
	p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(C.free_slot);
		C.free_slot = NULL;
		return;
	}
	/* Align to a huge page; the slack at both ends stays unused. */
	C.arena = (char *)(((uintptr_t)p + HTTP_HUGE - 1) &
			   ~(uintptr_t)(HTTP_HUGE - 1));
	C.arena_bytes = n * HTTP_BLOCK_BYTES;
	madvise(C.arena, C.arena_bytes, MADV_HUGEPAGE);
	for (i = 0; i < n; i++)
		C.free_slot[i] = (unsigned)(n - 1 - i);	/* slot 0 first */
	C.nfree = (unsigned)n;
}

static int
in_arena(const char *p)
{
	return C.arena && p >= C.arena && p < C.arena + C.arena_bytes;
}

static char *
data_alloc(size_t len)
{
	if (!C.arena_tried)
		arena_init();
	if (len == HTTP_BLOCK_BYTES && C.nfree)
		return C.arena + (size_t)C.free_slot[--C.nfree] *
				 HTTP_BLOCK_BYTES;
	return malloc(len);	/* short last blocks, demand over the limit */
}

static void
block_free(struct http_block *b)
{
	C.bytes -= b->len;
	if (in_arena(b->data))
		C.free_slot[C.nfree++] = (unsigned)((size_t)(b->data - C.arena) /
						    HTTP_BLOCK_BYTES);
	else
		free(b->data);
	free(b);
}

/* Drop unused READY blocks, oldest first, until need more bytes fit. */
static void
evict(uint64_t need)
{
	struct http_block *b = C.lru_tail, *prev;

	while (b && C.bytes + need > cfg.cache_bytes) {
		prev = b->lprev;
		/* b->job: its transfer still points at it */
		if (b->refs == 0 && !b->job) {
			lru_unlink(b);
			unhash(b);
			block_free(b);
		}
		b = prev;
	}
}

static size_t
block_len(const struct http_src *hs, uint64_t idx)
{
	uint64_t start = idx * HTTP_BLOCK_BYTES;
	uint64_t left = hs->size - start;

	return left < HTTP_BLOCK_BYTES ? (size_t)left : HTTP_BLOCK_BYTES;
}

/* A new LOADING block in the table.  Read-ahead (must_fit) gives up when
 * the cache is full of blocks in use; demand reads go over the limit. */
static struct http_block *
block_new(struct http_src *hs, uint64_t idx, int must_fit)
{
	size_t len = block_len(hs, idx);
	struct http_block *b;
	size_t k;

	evict(len);
	if (must_fit && C.bytes + len > cfg.cache_bytes)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->data = data_alloc(len);
	if (!b->data) {
		free(b);
		return NULL;
	}
	b->hs = hs;
	b->idx = idx;
	b->len = len;
	b->state = BLK_LOADING;
	k = bucket_of(hs, idx);
	b->hnext = C.buckets[k];
	C.buckets[k] = b;
	b->hashed = 1;
	C.bytes += len;
	return b;
}

static struct http_job *
job_new(struct http_src *hs, struct http_block **blocks, unsigned n)
{
	struct http_job *j = calloc(1, sizeof(*j) + n * sizeof(j->blocks[0]));
	unsigned i;

	if (!j)
		return NULL;
	j->hs = hs;
	j->n = n;
	j->state = JOB_QUEUED;
	for (i = 0; i < n; i++) {
		j->blocks[i] = blocks[i];
		blocks[i]->job = j;
	}
	return j;
}

static void
q_push(struct http_job *j, int front)
{
	if (front) {
		j->qprev = NULL;
		j->qnext = C.q_head;
		if (C.q_head)
			C.q_head->qprev = j;
		else
			C.q_tail = j;
		C.q_head = j;
	} else {
		j->qnext = NULL;
		j->qprev = C.q_tail;
		if (C.q_tail)
			C.q_tail->qnext = j;
		else
			C.q_head = j;
		C.q_tail = j;
	}
}

static void
q_remove(struct http_job *j)
{
	if (j->qprev)
		j->qprev->qnext = j->qnext;
	else
		C.q_head = j->qnext;
	if (j->qnext)
		j->qnext->qprev = j->qprev;
	else
		C.q_tail = j->qprev;
	j->qprev = j->qnext = NULL;
}

/* Settle a job's blocks, wake the waiters, free the job. */
static void
job_finish_locked(struct http_job *j, int ok)
{
	unsigned i;

	for (i = 0; i < j->n; i++) {
		struct http_block *b = j->blocks[i];

		b->job = NULL;
		if (b->state == BLK_READY) {
			continue;	/* filled while the transfer went on */
		} else if (ok) {
			b->state = BLK_READY;
			lru_push(b);
		} else {
			b->state = BLK_FAILED;
			unhash(b);
			if (b->refs == 0)
				block_free(b);
		}
	}
	if (j->state == JOB_RUNNING)
		j->hs->running--;
	pthread_cond_broadcast(&C.changed);
	free(j);
}

/* A block of a running transfer is complete: readers may take it now
 * rather than wait for the rest of the request.  Its bytes come from a
 * response already vetted (status, range, validators). */
static void
block_ready(struct http_xfer *x, struct http_block *b)
{
	pthread_mutex_lock(&C.lock);
	b->state = BLK_READY;
	lru_push(b);
	pthread_cond_broadcast(&C.changed);
	pthread_mutex_unlock(&C.lock);
	x->done++;
}

/* Transfer a RUNNING job's range (C.lock not held), then settle it. */
static void
job_run(struct http_job *j, uint64_t deadline)
{
	struct http_src *hs = j->hs;
	struct http_xfer *x;
	int r = XF_FAIL;

	x = calloc(1, sizeof(*x));
	if (x && !__atomic_load_n(&hs->stale, __ATOMIC_RELAXED)) {
		x->hs = hs;
		x->blocks = j->blocks;
		x->nblocks = j->n;
		x->first_idx = j->blocks[0]->idx;
		r = perform(x, hs->url, hs->hdrs, deadline);
		note_result(hs, x, r);
	}
	free(x);
	pthread_mutex_lock(&C.lock);
	job_finish_locked(j, r == XF_OK);
	pthread_mutex_unlock(&C.lock);
}

static void *
worker_main(void *arg)
{
	struct http_job *j;

	(void)arg;
	pthread_mutex_lock(&C.lock);
	for (;;) {
		while (!C.q_head) {
			C.idle++;
			pthread_cond_wait(&C.work, &C.lock);
			C.idle--;
		}
		j = C.q_head;
		q_remove(j);
		j->state = JOB_RUNNING;
		j->hs->running++;
		pthread_mutex_unlock(&C.lock);
		job_run(j, now_ms() + bound_ms());
		pthread_mutex_lock(&C.lock);
	}
	return NULL;
}

/* Wake idle workers, or start new ones, for njobs new jobs. */
static void
kick_workers(unsigned njobs)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;

	if (C.pid != getpid()) {
		/* A fork left the workers behind in the parent. */
		C.pid = getpid();
		C.nworkers = C.idle = 0;
	}
	if (C.idle) {
		pthread_cond_broadcast(&C.work);
		njobs = njobs > C.idle ? njobs - C.idle : 0;
	}
	if (njobs == 0 || C.nworkers >= cfg.max_workers)
		return;
	/* Workers take no signals: they belong to the FUSE threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (njobs-- && C.nworkers < cfg.max_workers) {
		if (pthread_create(&t, &attr, worker_main, NULL) != 0)
			break;	/* readers fetch their own blocks anyway */
		C.nworkers++;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Queue read-ahead jobs for the missing blocks of [from, to); returns where
 * it stopped (to, or earlier when the cache is full). */
static uint64_t
queue_range(struct http_src *hs, uint64_t from, uint64_t to,
	    unsigned *njobs)
{
	struct http_block *run[HTTP_REQ_BLOCKS];
	unsigned nrun = 0;
	uint64_t idx, last = (to - 1) / HTTP_BLOCK_BYTES;
	uint64_t reached = from;

	for (idx = from / HTTP_BLOCK_BYTES; idx <= last; idx++) {
		struct http_block *b = lookup(hs, idx);
		int flush = 0;

		if (b) {
			flush = 1;
		} else {
			b = block_new(hs, idx, 1);
			if (!b)
				break;
			run[nrun++] = b;
			flush = nrun == HTTP_REQ_BLOCKS;
		}
		if (idx == last)
			flush = 1;
		if (flush && nrun) {
			struct http_job *j = job_new(hs, run, nrun);

			if (!j) {
				while (nrun) {
					struct http_block *d = run[--nrun];

					unhash(d);
					block_free(d);
				}
				break;
			}
			q_push(j, 0);
			(*njobs)++;
			nrun = 0;
		}
		reached = (idx + 1) * HTTP_BLOCK_BYTES;
	}
	if (nrun) {
		/* stopped early with a partial run: queue what we have */
		struct http_job *j = job_new(hs, run, nrun);

		if (j) {
			q_push(j, 0);
			(*njobs)++;
		} else {
			while (nrun) {
				struct http_block *d = run[--nrun];

				unhash(d);
				block_free(d);
			}
		}
	}
	return reached < to ? reached : to;
}

/* Streams that read sequentially within the last second, in every open
 * source: together they share half of the cache for read-ahead, so that
 * one stream's read-ahead does not evict another's before it is read. */
static unsigned
active_streams(uint64_t now)
{
	struct http_src *hs;
	unsigned n = 0;
	int i;

	for (hs = C.srcs; hs; hs = hs->next)
		for (i = 0; i < HTTP_STREAMS; i++) {
			struct http_stream *s = &hs->streams[i];

			if (s->live && s->window > HTTP_BLOCK_BYTES &&
			    s->used + 1000 > now)
				n++;
		}
	return n ? n : 1;
}

/* Follow the streams of hs; a read continuing one grows its window and
 * tops up the read-ahead. */
static void
readahead(struct http_src *hs, uint64_t off, uint64_t end, uint64_t now,
	  unsigned *njobs)
{
	struct http_stream *st = NULL, *victim = &hs->streams[0];
	uint64_t target, cap;
	int i;

	for (i = 0; i < HTTP_STREAMS; i++) {
		struct http_stream *s = &hs->streams[i];

		if (s->live && off + HTTP_SEQ_BACK >= s->next &&
		    off <= s->next + HTTP_SEQ_GAP) {
			st = s;
			break;
		}
		if (!s->live || (victim->live && s->used < victim->used))
			victim = s;
	}
	if (!st) {
		/* A new stream: no read-ahead until it proves sequential. */
		victim->live = 1;
		victim->next = end;
		victim->window = HTTP_BLOCK_BYTES;
		victim->ra_end = end;
		victim->used = now;
		return;
	}
	st->used = now;
	if (end > st->next)
		st->next = end;
	if (st->ra_end < st->next)
		st->ra_end = st->next;
	st->window *= 2;
	if (st->ra_end >= hs->size || cfg.ra_max == 0 ||
	    st->ra_end - st->next >= st->window / 2)
		goto clamp;
	cap = cfg.cache_bytes / 2 / active_streams(now);
	if (cap > cfg.cache_bytes / 4)
		cap = cfg.cache_bytes / 4;
	if (cap > cfg.ra_max)
		cap = cfg.ra_max;
	if (cap < 2 * (uint64_t)HTTP_BLOCK_BYTES)
		cap = 2 * (uint64_t)HTTP_BLOCK_BYTES;
	if (st->window > cap)
		st->window = cap;
	target = st->next + st->window;
	target = (target + HTTP_BLOCK_BYTES - 1) / HTTP_BLOCK_BYTES *
		 HTTP_BLOCK_BYTES;
	if (target > hs->size)
		target = hs->size;
	if (target > st->ra_end)
		st->ra_end = queue_range(hs, st->ra_end, target, njobs);
	return;
clamp:
	if (st->window > cfg.ra_max)
		st->window = cfg.ra_max > HTTP_BLOCK_BYTES ? cfg.ra_max :
			     HTTP_BLOCK_BYTES;
}

/* ---- the source ops ---------------------------------------------------- */

static int
http_pread(struct source *s, void *buf, size_t len, uint64_t off)
{
	struct http_src *hs = s->priv;
	uint64_t b0, b1, n, i, end = off + len, now, deadline;
	struct http_block **blks, *run[HTTP_SPLIT_BLOCKS];
	struct http_job *mine = NULL;
	unsigned nrun = 0, njobs = 0, split;
	int rc = 0, hold;

	if (len == 0)
		return 0;
	if (off > hs->size || len > hs->size - off)
		return -EIO;
	if (__atomic_load_n(&hs->stale, __ATOMIC_RELAXED))
		return -EIO;
	if (end <= hs->head_len) {
		memcpy(buf, hs->head + off, len);
		return 0;
	}
	now = now_ms();
	deadline = now + bound_ms();
	hold = now < __atomic_load_n(&hs->hold_until, __ATOMIC_RELAXED);
	b0 = off / HTTP_BLOCK_BYTES;
	b1 = (end - 1) / HTTP_BLOCK_BYTES;
	n = b1 - b0 + 1;
	blks = calloc((size_t)n, sizeof(*blks));
	if (!blks)
		return -ENOMEM;
	/* Runs of missing blocks become one request each, split for
	 * parallelism only when large (a header read stays one request). */
	split = n > HTTP_SPLIT_BLOCKS ? HTTP_REQ_BLOCKS : HTTP_SPLIT_BLOCKS;

	pthread_mutex_lock(&C.lock);
	for (i = 0; i < n && rc == 0; i++) {
		struct http_block *b = lookup(hs, b0 + i);
		int fresh = 0;

		if (!b && hold) {
			rc = -EIO;	/* the server just failed us */
		} else if (!b) {
			b = block_new(hs, b0 + i, 0);
			if (!b) {
				rc = -ENOMEM;
			} else {
				fresh = 1;
				run[nrun++] = b;
			}
		}
		if (b) {
			b->refs++;
			blks[i] = b;
		}
		if (nrun && (!fresh || nrun == split || i == n - 1)) {
			struct http_job *j = job_new(hs, run, nrun);

			if (!j) {
				/* leave them LOADING-less: fail them */
				unsigned k;

				for (k = 0; k < nrun; k++) {
					run[k]->state = BLK_FAILED;
					unhash(run[k]);
				}
				rc = -ENOMEM;
			} else if (!mine) {
				mine = j;	/* this thread fetches it */
				j->state = JOB_RUNNING;
				hs->running++;
			} else {
				q_push(j, 1);	/* ahead of read-ahead */
				njobs++;
			}
			nrun = 0;
		}
	}
	if (rc == 0)
		readahead(hs, off, end, now, &njobs);
	if (njobs)
		kick_workers(njobs);
	pthread_mutex_unlock(&C.lock);

	if (mine)
		job_run(mine, deadline);

	pthread_mutex_lock(&C.lock);
	while (rc == 0) {
		struct http_job *steal = NULL;
		int loading = 0;

		for (i = 0; i < n; i++) {
			struct http_block *b = blks[i];

			if (!b || b->state != BLK_LOADING)
				continue;
			loading = 1;
			if (b->job && b->job->state == JOB_QUEUED) {
				steal = b->job;
				break;
			}
		}
		if (steal) {
			/* Queued behind other work: fetch it ourselves. */
			q_remove(steal);
			steal->state = JOB_RUNNING;
			hs->running++;
			pthread_mutex_unlock(&C.lock);
			job_run(steal, deadline);
			pthread_mutex_lock(&C.lock);
			continue;
		}
		if (!loading)
			break;
		{
			/* Someone else is fetching it; it has its own deadline,
			 * this one bounds our wait whatever happens. */
			uint64_t until = deadline + 1000;
			struct timespec ts = {
				(time_t)(until / 1000),
				(long)(until % 1000) * 1000000
			};

			if (pthread_cond_timedwait(&C.changed, &C.lock, &ts) ==
			    ETIMEDOUT && now_ms() >= until) {
				rc = -EIO;
				break;
			}
		}
	}
	for (i = 0; i < n && rc == 0; i++)
		if (!blks[i] || blks[i]->state != BLK_READY)
			rc = -EIO;
	pthread_mutex_unlock(&C.lock);

	/* READY blocks are immutable and our references keep them. */
	if (rc == 0) {
		for (i = 0; i < n; i++) {
			struct http_block *b = blks[i];
			uint64_t bstart = b->idx * HTTP_BLOCK_BYTES;
			uint64_t from = off > bstart ? off : bstart;
			uint64_t to = end < bstart + b->len ? end :
				      bstart + b->len;

			memcpy((char *)buf + (from - off), b->data +
			       (from - bstart), (size_t)(to - from));
		}
	}

	/* LRU: a block read from becomes the most recent. */
	pthread_mutex_lock(&C.lock);
	for (i = 0; i < n; i++) {
		struct http_block *b = blks[i];

		if (!b)
			continue;
		if (rc == 0 && b->hashed && b->state == BLK_READY) {
			lru_unlink(b);
			lru_push(b);
		}
		if (--b->refs == 0 && !b->hashed)
			block_free(b);
	}
	pthread_mutex_unlock(&C.lock);
	free(blks);
	if (rc == 0 && __atomic_load_n(&hs->stale, __ATOMIC_RELAXED))
		rc = -EIO;	/* never hand out bytes once a change is seen */
	return rc;
}

static void
http_src_free(struct http_src *hs)
{
	if (!hs)
		return;
	curl_slist_free_all(hs->hdrs);
	if (hs->userpwd)
		explicit_bzero(hs->userpwd, strlen(hs->userpwd));
	free(hs->userpwd);
	free(hs->sigv4);
	free(hs->url);
	free(hs->display);
	free(hs->head);
	free(hs);
}

static void
http_close(struct source *s)
{
	struct http_src *hs = s->priv;
	struct http_job *j, *next;
	size_t k;

	if (!hs)
		return;
	pthread_mutex_lock(&C.lock);
	if (hs->prev)
		hs->prev->next = hs->next;
	else if (C.srcs == hs)
		C.srcs = hs->next;
	if (hs->next)
		hs->next->prev = hs->prev;
	for (j = C.q_head; j; j = next) {
		next = j->qnext;
		if (j->hs == hs) {
			q_remove(j);
			job_finish_locked(j, 0);
		}
	}
	while (hs->running)
		pthread_cond_wait(&C.changed, &C.lock);
	for (k = 0; k < HTTP_BUCKETS; k++) {
		struct http_block **pp = &C.buckets[k];

		while (*pp) {
			struct http_block *b = *pp;

			if (b->hs != hs) {
				pp = &b->hnext;
				continue;
			}
			*pp = b->hnext;
			if (b->state == BLK_READY)
				lru_unlink(b);
			block_free(b);
		}
	}
	pthread_mutex_unlock(&C.lock);
	http_src_free(hs);
	s->priv = NULL;
}

static const struct source_ops http_ops = {
	.pread = http_pread,
	.close = http_close,
};

/* ---- open ---------------------------------------------------------------- */

/* The request headers of data reads: the user's, plus If-Range with the
 * validator seen at open (a strong ETag, else Last-Modified). */
static int
build_headers(struct http_src *hs, struct curl_slist *extra)
{
	struct curl_slist *l, *tmp = NULL;
	char line[HTTP_VALIDATOR_MAX + 16];

	for (l = extra; l; l = l->next) {
		tmp = curl_slist_append(hs->hdrs, l->data);
		if (!tmp)
			return -1;
		hs->hdrs = tmp;
	}
	line[0] = '\0';
	if (hs->if_match && hs->etag[0])
		snprintf(line, sizeof(line), "If-Match: %s", hs->etag);
	else if (hs->etag[0] && strncmp(hs->etag, "W/", 2) != 0)
		snprintf(line, sizeof(line), "If-Range: %s", hs->etag);
	else if (hs->lastmod[0])
		snprintf(line, sizeof(line), "If-Range: %s", hs->lastmod);
	if (line[0]) {
		tmp = curl_slist_append(hs->hdrs, line);
		if (!tmp)
			return -1;
		hs->hdrs = tmp;
	}
	/* libcurl adds nothing else; "Accept:" stays its default, and no
	 * Accept-Encoding is sent, so ranges count bytes of the object. */
	return 0;
}

int
source_open_http(const char *url, struct source **out, struct err *e)
{
	return source_open_http_opts(url, NULL, out, e);
}

/* The headers of the open request: the user's for plain URLs; for signed
 * sources only the signing headers, plus If-Match when the ETag is known
 * (from a listing).  NULL and *fail set when out of memory. */
static struct curl_slist *
source_headers(const struct http_src_opts *o, int with_etag, int *fail)
{
	struct curl_slist *l = NULL, *tmp;
	char line[HTTP_VALIDATOR_MAX + 32];
	unsigned i;

	*fail = 0;
	for (i = 0; o && i < 3; i++) {
		line[0] = '\0';
		if (i == 0 && o->aws_sigv4)
			/* S3 wants the payload hash signed: an empty body */
			snprintf(line, sizeof(line), "x-amz-content-sha256: "
				 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b"
				 "934ca495991b7852b855");
		else if (i == 1 && o->aws_sigv4 && o->aws_token)
			snprintf(line, sizeof(line), "x-amz-security-token: %s",
				 o->aws_token);
		else if (i == 2 && with_etag && o->etag && o->etag[0])
			snprintf(line, sizeof(line), "If-Match: %s", o->etag);
		if (!line[0])
			continue;
		tmp = curl_slist_append(l, line);
		explicit_bzero(line, sizeof(line));
		if (!tmp) {
			curl_slist_free_all(l);
			*fail = 1;
			return NULL;
		}
		l = tmp;
	}
	return l;
}

int
source_open_http_opts(const char *url, const struct http_src_opts *o,
		      struct source **out, struct err *e)
{
	struct http_src *hs = NULL;
	struct http_xfer *x = NULL;
	struct source *s = NULL;
	struct curl_slist *own = NULL, *probe_own = NULL, *probe_hdrs;
	int r, oom = 0;

	*out = NULL;
	if (http_ready(e) || ensure_headers(e))
		goto fail_where;
	hs = calloc(1, sizeof(*hs));
	x = calloc(1, sizeof(*x));
	s = calloc(1, sizeof(*s));
	if (!hs || !x || !s || !(hs->url = strdup(url)) ||
	    !(hs->display = (o && o->display) ? strdup(o->display) :
	      redact_url(url)) ||
	    !(hs->head = malloc(HTTP_HEAD_BYTES)) ||
	    !(s->name = strdup(o && o->display ? o->display : url)) ||
	    !(s->base = url_base(url))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	err_where(e, hs->display);
	if (o && o->aws_sigv4) {
		if (!(hs->sigv4 = strdup(o->aws_sigv4)) ||
		    asprintf(&hs->userpwd, "%s:%s", o->aws_key ? o->aws_key :
			     "", o->aws_secret ? o->aws_secret : "") < 0) {
			hs->userpwd = NULL;
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto fail;
		}
		hs->if_match = 1;
	}
	if (o && o->if_match)
		hs->if_match = 1;
	own = source_headers(o, 0, &oom);
	if (!oom)
		probe_own = source_headers(o, 1, &oom);
	if (oom) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	probe_hdrs = (o && o->aws_sigv4) ? probe_own : cfg.headers;

	x->hs = hs;
	x->probe = 1;
	x->start = 0;
	x->len = HTTP_HEAD_BYTES;
	x->buf = hs->head;
	/* cfg.headers is fixed once opens begin (see source_http.h). */
	r = perform(x, url, probe_hdrs, now_ms() + bound_ms());
	if (r != XF_OK) {
		err_set(e, ERR_IO, "cannot fetch: %s", x->why);
		goto fail;
	}
	if (x->status == 206) {
		hs->size = x->r_total;
		hs->head_len = (size_t)x->got;
	} else if (x->status == 200) {
		hs->size = x->got;	/* the whole object fit */
		hs->head_len = (size_t)x->got;
	} else {
		hs->size = 0;		/* 416 "bytes * /0": empty */
		hs->head_len = 0;
	}
	memcpy(hs->etag, x->etag, sizeof(hs->etag));
	memcpy(hs->lastmod, x->lastmod, sizeof(hs->lastmod));
	if (build_headers(hs, (o && o->aws_sigv4) ? own : cfg.headers)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}

	s->ops = &http_ops;
	s->fd = -1;
	s->size = hs->size;
	s->mode = 0444;
	s->uid = getuid();
	s->gid = getgid();
	if (hs->lastmod[0]) {
		time_t t = curl_getdate(hs->lastmod, NULL);

		if (t != (time_t)-1)
			s->mtime.tv_sec = t;
	}
	if (s->mtime.tv_sec == 0)
		clock_gettime(CLOCK_REALTIME, &s->mtime);
	s->ctime = s->mtime;
	s->priv = hs;
	pthread_mutex_lock(&C.lock);
	hs->next = C.srcs;
	if (C.srcs)
		C.srcs->prev = hs;
	C.srcs = hs;
	pthread_mutex_unlock(&C.lock);
	free(x);
	curl_slist_free_all(own);
	curl_slist_free_all(probe_own);
	*out = s;
	return 0;

fail_where:
	hs = NULL;
	{
		char *d = redact_url(url);

		err_where(e, d ? d : url);
		free(d);
	}
fail:
	curl_slist_free_all(own);
	curl_slist_free_all(probe_own);
	http_src_free(hs);
	free(x);
	if (s) {
		free(s->name);
		free(s->base);
		free(s);
	}
	return -1;
}
