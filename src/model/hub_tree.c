/* hub_tree.c - hf:// SOURCEs as models (provider.h): the files of the
 * pinned commit under SUBDIR (source/hub/hub.h), their models placed by
 * the one tree builder (catalog_add_listing), which has the files it
 * will open opened ahead concurrently, as a local folder of the same
 * files would be.  A SUBDIR that names one file is that file, as a local
 * path is.
 */
#include "model/hub_tree.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "model/catalog.h"
#include "model/display.h"
#include "model/model.h"
#include "source/hub/hub.h"

/* The one file SUBDIR names, by its name as a local path is, whatever
 * its name says (a checkpoint, a split set's part): a catalog of it, or
 * NULL with *e. */
static struct catalog *
one_file(const struct hub_listing *l, const struct source_opener *op,
	 struct err *e)
{
	struct catalog *c = catalog_new(l->label);
	char *label = display_name(l->url[0]);
	struct model *m = NULL;
	int rc = 0;

	if (!c || !label)
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	else if (model_open_url(op, l->url[0], &m, e) ||
		 catalog_add(c, "", label, m, e))
		rc = -1;
	free(label);
	if (rc) {
		catalog_free(c);
		return NULL;
	}
	return c;
}

int
hub_tree_open(const struct source_opener *files, const char *uri,
	      const struct catalog_opts *o, struct catalog **out,
	      struct err *e)
{
	struct hub_listing l;
	struct source_opener op = { hub_listing_open, hub_listing_keep, &l,
				    files->meter, NULL };
	struct catalog_listing cl;
	struct catalog *c;
	int rc = 0;

	if (hub_list(uri, &l, e))
		return -1;
	if (l.file) {
		c = one_file(&l, &op, e);
		hub_listing_free(&l);
		if (!c)
			return err_at(e, uri);
		*out = c;
		return 0;
	}
	cl.n = l.n;
	cl.rel = l.rel;
	cl.url = l.url;
	cl.op = &op;
	cl.open_ahead = hub_listing_open_ahead;
	cl.size = l.size;
	cl.etag = NULL;	/* a pinned commit: its files do not change */
	cl.files = files;
	c = catalog_new(l.label);
	if (!c)
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	else if (catalog_add_listing(c, &cl, o, e) || catalog_finish(c, e))
		rc = -1;
	hub_listing_free(&l);
	if (rc) {
		catalog_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

int
hub_tree_model(const struct source_opener *files, const char *uri,
	       struct model **out, struct err *e)
{
	struct catalog *c = NULL;
	struct buf b = BUF_INIT;
	size_t i;

	if (hub_tree_open(files, uri, NULL, &c, e))
		return -1;
	if (c->n == 1) {
		*out = c->entries[0].model;
		c->entries[0].model = NULL;
		catalog_free(c);
		return 0;
	}
	for (i = 0; i < c->n && i < 8; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", c->entries[i].dir);
	err_set(e, ERR_USAGE, "holds %zu models (%s%s): name one, e.g. "
		"%s/%s", c->n, b.data ? b.data : "", c->n > 8 ? ", ..." : "",
		uri, c->entries[0].dir);
	buf_free(&b);
	catalog_free(c);
	return err_at(e, uri);
}
