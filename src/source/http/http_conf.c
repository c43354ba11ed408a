/* http_conf.c - settings of the HTTP(S) sources: defaults, environment,
 * the front end's options, the header file, messages and clocks. */
#include "source/http/http_conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/cancel.h"
#include "base/error.h"

#define HTTP_HEADER_FILE_MAX	(64u << 10)

void
http_conf_log(const struct http_conf *c, int prio, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->log)
		c->log(prio, msg);
	else
		syslog(prio, "%s",
		       msg);	/* never stderr: may be a daemon */
}

void
http_conf_warn(const struct http_conf *c, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->log)
		c->log(HTTP_LOG_WARNING, msg);
	else
		fprintf(stderr, "%s\n", msg);
}

uint64_t
http_conf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct timespec
timespec_of(uint64_t ms)
{
	return (struct timespec){ (time_t)(ms / 1000),
				  (long)(ms % 1000) * 1000000 };
}

void
http_conf_sleep_ms(uint64_t ms)
{
	struct timespec ts = timespec_of(ms);

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int
http_conf_cancelled(const struct http_conf *c)
{
	return __atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE) ||
	       cancel_requested();
}

int
http_conf_nap(const struct http_conf *c, uint64_t ms)
{
	uint64_t until = http_conf_now_ms() + ms, now;

	while (!http_conf_cancelled(c)) {
		now = http_conf_now_ms();
		if (now >= until)
			return 0;
		http_conf_sleep_ms(until - now < CANCEL_POLL_MS ?
				   until - now : CANCEL_POLL_MS);
	}
	return 1;
}

uint64_t
http_conf_min_rate_ms(const struct http_conf *c)
{
	return (uint64_t)HTTP_MIN_RATE_STALLS * c->timeout_s * 1000;
}

void
http_conf_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
}

void
http_conf_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock,
			  uint64_t until_ms)
{
	struct timespec ts = timespec_of(until_ms);

	pthread_cond_timedwait(cond, lock, &ts);
}

uint64_t
http_conf_bound_ms(const struct http_conf *c)
{
	return (uint64_t)c->tries * c->timeout_s * 1000;
}

int
http_conf_parse_bool(const char *s)
{
	static const char *const yes[] = { "1", "on", "yes", "true" };
	static const char *const no[] = { "0", "off", "no", "false" };
	size_t i;

	for (i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return 1;
		if (strcasecmp(s, no[i]) == 0)
			return 0;
	}
	return -1;
}

int
http_conf_env_bool(const char *name, int dflt, struct err *e)
{
	const char *v = getenv(name);
	int b;

	if (!v || !*v)
		return dflt;
	b = http_conf_parse_bool(v);
	if (b < 0)
		return err_set(e, ERR_USAGE, "%s=%.64s: not a boolean "
			       "(1/on/yes/true or 0/off/no/false)", name, v);
	return b;
}

/* A boolean variable of this layer: unset or empty -> dflt; a malformed
 * one is recorded in *e (the first one wins) and taken as dflt. */
static int
env_bool(const char *name, int dflt, struct err *e)
{
	int b = http_conf_env_bool(name, dflt, e);

	return b < 0 ? dflt : b;
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

int
http_conf_parse_size(const char *s, uint64_t *out)
{
	unsigned long long n;
	char *end;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'B' || *end == 'b') && shift)
		end++;
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

/* $XDG_CACHE_HOME/stfs, else ~/.cache/stfs. */
static char *
default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *d = NULL;

	if (x && *x == '/') {
		if (asprintf(&d, "%s/stfs", x) < 0)
			d = NULL;
	} else if (home && *home) {
		if (asprintf(&d, "%s/.cache/stfs", home) < 0)
			d = NULL;
	}
	return d;
}

/* The defaults, overridden by the environment; a malformed boolean is
 * recorded in *e. */
static void
from_env(struct http_conf *c, struct err *e)
{
	const char *ca = getenv("STFS_HTTP_CA_FILE");
	const char *dd = getenv("STFS_CACHE_DIR");
	const char *dm = getenv("STFS_CACHE_MAX");
	const char *mt = getenv("STFS_HTTP_MAX_THROUGHPUT");
	const char *mr = getenv("STFS_HTTP_MIN_RATE");

	c->insecure = env_bool("STFS_HTTP_INSECURE", 0, e);
	c->no_validator = env_bool("STFS_HTTP_NO_VALIDATOR", 0, e);
	if (ca && *ca)
		c->ca_file = strdup(ca);
	/* 0: the default, which depends on the disk cache (below) */
	c->cache_bytes = (uint64_t)env_uint("STFS_HTTP_CACHE_MB", 0) << 20;
	c->timeout_s = env_uint("STFS_HTTP_TIMEOUT", HTTP_DEFAULT_TIMEOUT_S);
	/* the tries of -o http_tries, under its name; the old variable
	 * counted retries (one fewer), so a value of it is not taken
	 * silently for the other meaning */
	c->tries = env_uint("STFS_HTTP_TRIES", HTTP_DEFAULT_TRIES);
	if (c->tries < 1 || c->tries > 100) {
		err_set(e, ERR_USAGE, "STFS_HTTP_TRIES=%.64s: a whole number "
			"from 1 to 100", getenv("STFS_HTTP_TRIES"));
		c->tries = HTTP_DEFAULT_TRIES;
	}
	if (getenv("STFS_HTTP_RETRIES"))
		err_set(e, ERR_USAGE, "STFS_HTTP_RETRIES is now STFS_HTTP_TRIES, "
			"which counts tries as -o http_tries does (retries + "
			"1): set that one and unset STFS_HTTP_RETRIES");
	c->ra_max = (uint64_t)env_uint("STFS_HTTP_READAHEAD_MB",
				       HTTP_DEFAULT_READAHEAD_MB) << 20;
	c->max_workers = env_uint("STFS_HTTP_CONNECTIONS", 0);
	if (c->timeout_s == 0)
		c->timeout_s = HTTP_DEFAULT_TIMEOUT_S;
	c->disk_on = env_bool("STFS_CACHE", 1, e);
	c->disk_dir = dd && *dd ? strdup(dd) : default_cache_dir();
	if (!dm || http_conf_parse_size(dm, &c->disk_max) != 0)
		c->disk_max = HTTP_CONF_DISK_MAX;
	if (!mt || http_conf_parse_size(mt, &c->max_bps) != 0)
		c->max_bps = 0;
	if (!mr || http_conf_parse_size(mr, &c->min_rate) != 0)
		c->min_rate = HTTP_DEFAULT_MIN_RATE;
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

/* One line of the header file as a header, or NULL (no memory). */
static char *
header_line(char *line)
{
	char *hdr;

	if (strchr(line, ':'))
		return strdup(line);
	if (asprintf(&hdr, "Authorization: Bearer %s", line) < 0)
		return NULL;
	return hdr;
}

/* Split text into header lines; *list grows. */
static int
parse_header_text(const char *path, char *text, struct curl_slist **list,
		  struct err *e)
{
	char *line, *next;
	unsigned lineno = 0;

	for (line = text; line && *line; line = next) {
		struct curl_slist *tmp;
		char *end, *colon, *hdr;

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
		if (strchr(line, '\r'))
			return err_set(e, ERR_USAGE, "header file %s, line %u: "
				       "stray carriage return", path, lineno);
		colon = strchr(line, ':');
		if (colon && !valid_header_name(line, (size_t)(colon - line)))
			return err_set(e, ERR_USAGE, "header file %s, line %u: "
				       "not \"Name: value\"", path, lineno);
		hdr = header_line(line);
		tmp = hdr ? curl_slist_append(*list, hdr) : NULL;
		if (hdr) {
			explicit_bzero(hdr, strlen(hdr));
			free(hdr);
		}
		if (!tmp)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		*list = tmp;
	}
	return 0;
}

int
http_conf_load_header_file(const struct http_conf *c, const char *path,
			   struct curl_slist **out, struct err *e)
{
	struct curl_slist *list = NULL;
	struct stat st;
	char *text;
	size_t n;
	FILE *f;
	int rc = 0;

	f = fopen(path, "re");
	if (!f)
		return err_set(e, ERR_USAGE,
			       "cannot read the header file %s: %s",
			       path, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
		http_conf_warn(c, "warning: the header file %s is readable by "
			       "group or others (mode %04o); chmod 600 it",
			       path, (unsigned)(st.st_mode & 07777));
	text = calloc(1, HTTP_HEADER_FILE_MAX + 1);
	if (!text) {
		fclose(f);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	n = fread(text, 1, HTTP_HEADER_FILE_MAX + 1, f);
	if (ferror(f) || n > HTTP_HEADER_FILE_MAX)
		rc = err_set(e, ERR_USAGE, "header file %s: %s", path,
			     ferror(f) ? "read error" : "larger than 64 KiB");
	else if (memchr(text, '\0', n))
		rc = err_set(e, ERR_USAGE, "header file %s holds a NUL byte",
			     path);
	else
		rc = parse_header_text(path, text, &list, e);
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

/* What o says over the environment's. */
static int
from_options(struct http_conf *c, const struct http_options *o, struct err *e)
{
	int rc = 0;

	if (o->ca_file) {
		free(c->ca_file);
		c->ca_file = strdup(o->ca_file);
		if (!c->ca_file)
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (o->insecure)
		c->insecure = 1;
	if (o->no_validator)
		c->no_validator = 1;
	if (o->cache_mb)
		c->cache_bytes = (uint64_t)o->cache_mb << 20;
	if (o->timeout_s)
		c->timeout_s = o->timeout_s;
	if (o->tries)
		c->tries = o->tries;
	if (o->readahead_mb)
		c->ra_max = (uint64_t)o->readahead_mb << 20;
	if (o->connections)
		c->max_workers = o->connections;
	if (o->cache)
		c->disk_on = o->cache > 0;
	if (o->cache_dir) {
		char cwd[4096];

		free(c->disk_dir);
		/* absolute: the daemon changes to / once mounted */
		if (o->cache_dir[0] != '/' && getcwd(cwd, sizeof(cwd))) {
			if (asprintf(&c->disk_dir, "%s/%s", cwd,
				     o->cache_dir) < 0)
				c->disk_dir = NULL;
		} else {
			c->disk_dir = strdup(o->cache_dir);
		}
		if (!c->disk_dir)
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (o->cache_max && http_conf_parse_size(o->cache_max, &c->disk_max))
		rc = err_set(e, ERR_USAGE, "cache_max=%s: not a size (e.g. "
			     "10G, 512M)", o->cache_max);
	if (o->max_throughput && http_conf_parse_size(o->max_throughput,
						      &c->max_bps))
		rc = err_set(e, ERR_USAGE, "max_throughput=%s: not a rate in "
			     "bytes per second (e.g. 200M, 1G)",
			     o->max_throughput);
	if (o->min_rate && http_conf_parse_size(o->min_rate, &c->min_rate))
		rc = err_set(e, ERR_USAGE, "http_min_rate=%s: not a rate in "
			     "bytes per second (e.g. 1K, 0 for none)",
			     o->min_rate);
	return rc;
}

int
http_conf_init(struct http_conf *c, const struct http_options *o,
	       struct err *e)
{
	static const struct http_options none;
	struct err env = { 0 };
	const char *hf;

	memset(c, 0, sizeof(*c));
	if (!o)
		o = &none;
	c->log = o->log;	/* before the header file's warning */
	from_env(c, &env);
	if (env.code != ERR_OK)
		return err_set(e, env.code, "%s", env.detail);
	if (from_options(c, o, e))
		return -1;
	if (!c->cache_bytes)
		c->cache_bytes = (uint64_t)(c->disk_on ?
					    HTTP_DEFAULT_CACHE_MB_DISK :
					    HTTP_DEFAULT_CACHE_MB) << 20;
	if (c->cache_bytes < 8 * (uint64_t)HTTP_BLOCK_BYTES)
		c->cache_bytes = 8 * (uint64_t)HTTP_BLOCK_BYTES;
	hf = o->header_file;
	if (!hf && getenv("STFS_HTTP_HEADER_FILE") &&
	    *getenv("STFS_HTTP_HEADER_FILE"))
		hf = getenv("STFS_HTTP_HEADER_FILE");
	if (hf && http_conf_load_header_file(c, hf, &c->headers, e))
		return -1;
	return 0;
}

void
http_conf_fini(struct http_conf *c)
{
	curl_slist_free_all(c->headers);
	free(c->ca_file);
	free(c->disk_dir);
	memset(c, 0, sizeof(*c));
}
