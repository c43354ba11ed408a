/* http_client.c - one HTTP client (see http_client.h). */
#include "source/http/http_client.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/error.h"
#include "source/http/http_cache.h"
#include "source/http/http_conf.h"
#include "source/http/http_prefetch.h"
#include "source/http/http_spool.h"

struct http_client *
http_client_new(struct err *e)
{
	struct http_client *c = calloc(1, sizeof(*c));

	if (c && (c->cache = http_cache_new(http_conf.cache_bytes)) &&
	    (c->prefetch = http_prefetch_new(c->cache)) &&
	    (c->spool = http_spool_new(c->cache)))
		return c;
	http_client_free(c);
	err_set(e, ERR_NO_MEMORY, "out of memory");
	return NULL;
}

void
http_client_free(struct http_client *c)
{
	if (!c)
		return;
	http_prefetch_free(c->prefetch);
	http_spool_free(c->spool);
	http_cache_free(c->cache);
	free(c);
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
		process_client = http_client_new(e);
	c = process_client;
	pthread_mutex_unlock(&process_lock);
	return c;
}
