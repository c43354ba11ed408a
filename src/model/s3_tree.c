/* s3_tree.c - s3:// SOURCEs as models (provider.h): one object is a model
 * file or an index; a prefix or a bucket is listed (source/s3/s3.h), and
 * its models placed by the one tree builder (catalog_add_listing), which
 * has the objects it will open opened ahead concurrently, as a local
 * folder of the same files would be.
 */
#include "model/s3_tree.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "model/catalog.h"
#include "model/model.h"
#include "source/s3/s3.h"

/* The tree of a prefix: 0 with *out, 1 when url names one object, -1. */
static int
prefix_tree(const struct source_opener *files, const char *url,
	    const struct catalog_opts *o, struct catalog **out, struct err *e)
{
	struct s3_prefix l;
	struct source_opener op = { s3_prefix_open, s3_prefix_keep, &l,
				    files->meter, NULL };
	struct catalog_listing cl;
	struct catalog *c;
	int rc = s3_prefix_list(url, &l, e);

	if (rc)
		return rc;
	cl.n = l.n;
	cl.rel = l.rel;
	cl.url = l.url;
	cl.op = &op;
	cl.open_ahead = s3_prefix_open_ahead;
	cl.size = l.size;
	cl.etag = l.etag;
	cl.files = files;
	c = catalog_new(url);
	if (!c)
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	else if (catalog_add_listing(c, &cl, o, e) || catalog_finish(c, e))
		rc = -1;
	s3_prefix_free(&l);
	if (rc) {
		catalog_free(c);
		return err_at(e, url);
	}
	*out = c;
	return 0;
}

int
s3_tree_open(const struct source_opener *files, const char *url,
	     const struct catalog_opts *o, struct catalog **out,
	     struct err *e)
{
	int rc = prefix_tree(files, url, o, out, e);

	return rc == 1 ? catalog_open_url(files, url, o, out, e) : rc;
}

int
s3_tree_model(const struct source_opener *files, const char *url,
	      struct model **out, struct err *e)
{
	struct catalog *c = NULL;
	struct buf b = BUF_INIT;
	char *arg;
	size_t i;
	int rc = prefix_tree(files, url, NULL, &c, e);

	if (rc == 1)
		return model_open_url(files, url, out, e);
	if (rc)
		return -1;
	if (c->n > 1) {
		for (i = 0; i < c->n && i < 4; i++)
			buf_addf(&b, "%s %s", i ? "," : "",
				 c->entries[i].label);
		err_set(e, ERR_USAGE, "%zu models under this prefix (%s%s); "
			"name one of them", c->n, b.data ? b.data : "",
			c->n > 4 ? ", ..." : "");
		buf_free(&b);
		catalog_free(c);
		return err_at(e, url);
	}
	/* the model of a prefix is known by the prefix */
	if (!(arg = strdup(url))) {
		catalog_free(c);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	*out = c->entries[0].model;
	c->entries[0].model = NULL;
	free((*out)->arg);
	(*out)->arg = arg;
	catalog_free(c);
	return 0;
}
