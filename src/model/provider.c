/* provider.c - the table of sources (provider.h), and the two entry points
 * that dispatch through it: model_open() and catalog_open().
 */
#include "model/provider.h"

#include <malloc.h>
#include <string.h>

#include "base/error.h"
#include "model/catalog.h"
#include "model/model.h"
#include "model/ollama_store.h"
#include "model/ollama_tree.h"
#ifdef STFS_HAVE_HTTP
#include "model/hub_tree.h"
#include "source/hub/hub.h"
#endif
#ifdef STFS_HAVE_S3
#include "model/s3_tree.h"
#include "source/s3/s3.h"
#endif

static const struct provider providers[] = {
#ifdef STFS_HAVE_HTTP
	{ "hf://", PROVIDER_REMOTE | PROVIDER_OWN_TOKEN, hub_open_file, NULL,
	  hub_tree_model, hub_tree_open },
#endif
#ifdef STFS_HAVE_S3
	{ "s3://", PROVIDER_REMOTE, source_open_s3, s3_open_pinned,
	  s3_tree_model, s3_tree_open },
#else
	{ "s3://", PROVIDER_REMOTE, source_open_s3, NULL, model_open_url,
	  catalog_open_url },
#endif
	{ "http://", PROVIDER_REMOTE, source_open_http, NULL, model_open_url,
	  catalog_open_url },
	{ "https://", PROVIDER_REMOTE, source_open_http, NULL, model_open_url,
	  catalog_open_url },
	{ OLLAMA_SCHEME, 0, source_open_local, NULL, ollama_open_model,
	  ollama_open_tree },
	{ NULL, 0, source_open_local, NULL, model_open_path,
	  catalog_open_path },
};

const struct provider *
provider_for(const char *name)
{
	const struct provider *p;

	for (p = providers; p->scheme; p++)
		if (strncmp(name, p->scheme, strlen(p->scheme)) == 0)
			return p;
	return p;
}

/* struct source_opener: a file of the provider arg. */
static int
open_file(void *arg, const char *name, struct source **out, struct err *e)
{
	const struct provider *p = arg;

	if (!p->open_file) {
		err_set(e, ERR_USAGE, "names a whole repository, not a file");
		return err_at(e, name);
	}
	return p->open_file(name, out, e);
}

/* struct source_opener's open_pinned: an object of the provider arg as
 * its listing gave it. */
static int
open_pinned(void *arg, const char *name, const char *etag, uint64_t size,
	    struct source **out, struct err *e)
{
	const struct provider *p = arg;

	if (!p->open_pinned)
		return open_file(arg, name, out, e);
	return p->open_pinned(name, etag, size, out, e);
}

int
model_open(const char *source, struct meter *meter, struct model **out,
	   struct err *e)
{
	const struct provider *p = provider_for(source);
	struct source_opener files = { open_file, NULL, (void *)p, meter,
				       open_pinned };

	*out = NULL;
	return p->open_model(&files, source, out, e);
}

int
catalog_open(const char *source, const struct catalog_opts *o,
	     struct catalog **out, struct err *e)
{
	const struct provider *p = provider_for(source);
	struct source_opener files = { open_file, NULL, (void *)p,
				       o ? o->meter : NULL, open_pinned };

	int rc;

	*out = NULL;
	rc = p->open_tree(&files, source, o, out, e);
	/* Opening freed more than it keeps (indexes' texts, the buffers of
	 * the threads that opened shards), but between what it keeps: the
	 * allocator holds those pages until asked.  A DeepSeek-V3-sized
	 * mount's daemon: 44 MB resident without this, 22 MB with it. */
	malloc_trim(0);
	return rc;
}
