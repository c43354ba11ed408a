/* hub_tree.c - hf:// SOURCEs as models (provider.h): the files of the
 * pinned commit under SUBDIR (source/hub/hub.h, opened ahead
 * concurrently), their models placed by the one tree builder
 * (catalog_add_listing), as a local folder of the same files would be.
 */
#include "model/hub_tree.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "model/catalog.h"
#include "model/model.h"
#include "source/hub/hub.h"

int
hub_tree_open(const struct source_opener *files, const char *uri,
	      const struct catalog_opts *o, struct catalog **out,
	      struct err *e)
{
	struct hub_listing l;
	struct source_opener op = { hub_listing_open, hub_listing_keep, &l };
	struct catalog_listing cl;
	struct catalog *c;
	int rc = 0;

	(void)files;	/* the listing opens them */
	if (hub_list(uri, &l, e))
		return -1;
	cl.n = l.n;
	cl.rel = l.rel;
	cl.url = l.url;
	cl.op = &op;
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
