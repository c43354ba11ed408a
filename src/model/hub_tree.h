/* hub_tree.h - hf:// SOURCEs as models: the provider table's functions
 * (provider.h) for hf:// (hub_tree.c).  files is unused: the files come
 * from the repository's listing.
 */
#ifndef STFS_HUB_TREE_H
#define STFS_HUB_TREE_H

struct catalog;
struct catalog_opts;
struct err;
struct model;
struct source_opener;

/* Every model of the repository (at SUBDIR), placed as a local folder of
 * the same files would be.  0 or -1 with *e. */
int hub_tree_open(const struct source_opener *files, const char *uri,
		  const struct catalog_opts *o, struct catalog **out,
		  struct err *e);

/* Its one model; fails, naming the folders to choose from, when there are
 * several. */
int hub_tree_model(const struct source_opener *files, const char *uri,
		   struct model **out, struct err *e);

#endif
