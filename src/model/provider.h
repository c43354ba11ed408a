/* provider.h - where a SOURCE's bytes and models come from: one line per
 * kind of source (provider.c), the only place that looks at a SOURCE's
 * scheme.
 *
 * A provider opens one file as bytes (what an index's shards need), one
 * model (model_open()) and a tree of models (catalog_open()).  The remote
 * ones that hold many files (hf://, s3://) list them and hand the listing
 * to the one tree builder (catalog_add_listing(), catalog.h), so every
 * kind of source places its models by the same rule.  Adding a source: a
 * folder of its own below source/ for the bytes and the listing, a file
 * here in model/ for its open_model/open_tree when it names more than one
 * file, and one line in the table.
 */
#ifndef STFS_PROVIDER_H
#define STFS_PROVIDER_H

#include <stdint.h>

#include "source/source.h"

struct catalog;
struct catalog_opts;
struct err;
struct model;

enum provider_flags {
	PROVIDER_REMOTE = 1,	/* reached over HTTP: the HTTP settings apply */
	PROVIDER_OWN_TOKEN = 2,	/* sends its own token: a header file would
				   also reach the hosts it redirects to */
};

struct provider {
	const char *scheme;	/* "s3://", ...; NULL: a local path */
	unsigned flags;		/* enum provider_flags */
	/* One file as bytes: 0, or -1 with *e naming it.  NULL for
	 * sources whose files are opened through their listing. */
	int (*open_file)(const char *name, struct source **out,
			 struct err *e);
	/* One file as a listing gave it, pinned to its ETag and size
	 * (struct source_opener's open_pinned).  NULL: open_file. */
	int (*open_pinned)(const char *name, const char *etag, uint64_t size,
			   struct source **out, struct err *e);
	/* What model_open() answers: one model; files opens the files it
	 * names (this line's open_file).  0 or -1 with *e. */
	int (*open_model)(const struct source_opener *files, const char *name,
			  struct model **out, struct err *e);
	/* What catalog_open() answers: every model, each at its place;
	 * o may be NULL.  0 or -1 with *e. */
	int (*open_tree)(const struct source_opener *files, const char *name,
			 const struct catalog_opts *o, struct catalog **out,
			 struct err *e);
};

/* The provider of name: the line whose scheme name starts with, else the
 * local one.  model_open() (model.h) and catalog_open() (catalog.h) are
 * defined in provider.c too: they dispatch through it. */
const struct provider *provider_for(const char *name);

#endif
