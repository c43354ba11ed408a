/* s3_tree.h - s3:// SOURCEs as models: the provider table's functions
 * (provider.h) for s3:// (s3_tree.c).  files opens an object by its
 * s3:// URL (one object, and an index's shards).
 */
#ifndef STFS_S3_TREE_H
#define STFS_S3_TREE_H

struct catalog;
struct catalog_opts;
struct err;
struct model;
struct source_opener;

/* An object: one model at the root; a prefix or a bucket: every model
 * below it, placed as a local folder of the same files would be.  0 or
 * -1 with *e. */
int s3_tree_open(const struct source_opener *files, const char *url,
		 const struct catalog_opts *o, struct catalog **out,
		 struct err *e);

/* The one model of an object or a prefix; fails, naming some, when a
 * prefix holds several. */
int s3_tree_model(const struct source_opener *files, const char *url,
		  struct model **out, struct err *e);

#endif
