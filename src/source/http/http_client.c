/* http_client.c - one HTTP client (see http_client.h). */
#include "source/http/http_client.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/error.h"
#include "source/http/http_cache.h"
#include "source/http/http_disk.h"
#include "source/http/http_prefetch.h"
#include "source/http/http_spool.h"
#include "source/http/http_tier.h"

struct http_client *
http_client_new(const struct http_options *o, const struct http_transport *tr,
		struct err *e)
{
	struct http_client *c = calloc(1, sizeof(*c));

	if (!c) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		return NULL;
	}
	if (http_conf_init(&c->conf, o, e))
		goto fail;
	if (!tr && http_curl_transport(&c->curl, &c->conf)) {
		err_set(e, ERR_IO, "cannot initialize libcurl");
		goto fail;
	}
	c->tr = tr ? tr : &c->curl;
	if (!(c->cache = http_cache_new(c->conf.cache_bytes)) ||
	    !(c->prefetch = http_prefetch_new(&c->conf, c->cache)) ||
	    !(c->disk = http_disk_new(&c->conf)) ||
	    !(c->spool = http_spool_new(c->cache))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	return c;
fail:
	http_client_free(c);
	return NULL;
}

void
http_client_free(struct http_client *c)
{
	if (!c)
		return;
	http_prefetch_free(c->prefetch);
	http_tier_free(c->tier);	/* puts what is queued */
	http_spool_free(c->spool);	/* writes what is queued */
	http_disk_free(c->disk);
	http_cache_free(c->cache);
	http_conf_fini(&c->conf);
	free(c);
}

void
http_client_stop(struct http_client *c)
{
	/* the one field of the settings that changes (http_conf.h) */
	__atomic_store_n(&c->conf.stopping, 1, __ATOMIC_RELEASE);
}

int
http_client_set_tier(struct http_client *c, const struct http_tier_backend *b,
		     const char *key_path, struct err *e)
{
	struct http_tier *t = http_tier_new(&c->conf, c->cache, b, key_path,
					    e);

	if (!t)
		return -1;
	http_tier_free(c->tier);
	c->tier = t;
	return 0;
}

unsigned
http_client_connections(const struct http_client *c)
{
	return c->conf.max_workers ? c->conf.max_workers :
	       HTTP_MAX_CONNECTIONS;
}

/* The one client of the sources opened by name (http_client.h). */
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http_client *process_client;

struct http_client *
http_client_process(struct err *e)
{
	struct http_client *c;

	pthread_mutex_lock(&process_lock);
	if (!process_client)
		process_client = http_client_new(NULL, NULL, e);
	c = process_client;
	pthread_mutex_unlock(&process_lock);
	return c;
}

void
http_client_stop_process(void)
{
	pthread_mutex_lock(&process_lock);
	if (process_client)
		http_client_stop(process_client);
	pthread_mutex_unlock(&process_lock);
}

struct http_client *
http_client_install(struct http_client *c)
{
	struct http_client *old;

	pthread_mutex_lock(&process_lock);
	old = process_client;
	process_client = c;
	pthread_mutex_unlock(&process_lock);
	return old;
}

int
http_options_set(const struct http_options *o, struct err *e)
{
	struct http_client *c = http_client_new(o, NULL, e);

	if (!c)
		return -1;
	http_client_free(http_client_install(c));
	return 0;
}
