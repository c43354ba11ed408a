/* catalog_int.h - between catalog.c (naming, placing, opening),
 * catalog_scan.c (local directory trees), catalog_listing.c (flat
 * listings of remote sources).  Not for other modules.
 */
#ifndef STFS_CATALOG_INT_H
#define STFS_CATALOG_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "base/nametab.h"

struct err;

/* A directory of the source that holds models, or below which some are. */
struct cnode {
	char *path;		/* on disk; NULL for a made-up level (hub ORG) */
	char **models;		/* file names in path: the models and indexes
				   it shows (naming_shown), no shard an index
				   names */
	size_t nmodels, capm;
	struct ckid {
		char *name;	/* the directory's own name (hub: ORG, NAME) */
		struct cnode *node;
	} *kids;
	size_t nkids, capk;
};

#define CATALOG_MAX_DEPTH 64

/* One discovery's state. */
struct cscan {
	struct err *e;
	size_t found, max;	/* models so far; most allowed (0: any) */
	char **shards;		/* paths an index names */
	size_t nshards, capshards;
	struct nametab shard_tab;	/* path -> its index in shards */
	struct { dev_t dev; ino_t ino; } up[CATALOG_MAX_DEPTH + 1];
	int depth;		/* directories on the way down (loops) */
};

/* "a/b" ("b" when a is empty); NULL without memory. */
char *cnode_join(const char *a, const char *b);
struct cnode *cnode_new(const char *path);
void cnode_free(struct cnode *n);
int cnode_add_model(struct cnode *n, const char *file);
int cnode_add_kid(struct cnode *n, const char *name, struct cnode *kid);
/* The kid called name, or NULL. */
struct cnode *cnode_kid(struct cnode *n, const char *name);

/* Discover the models under path: *out is NULL when there are none.
 * 0 or -1 with s->e set. */
int cscan_dir(struct cscan *s, const char *path, struct cnode **out);
/* The paths indexes name: add (path taken, also on failure; 0 or -1
 * without memory), ask; free them all. */
int cscan_shard_add(struct cscan *s, char *path);
int cscan_shard_has(const struct cscan *s, const char *path);
/* Note the files an index's text names (its weight_map's values), each
 * joined to prefix ("" or a folder ending in '/'): by a scanner, not a
 * DOM (DeepSeek-V3's index maps 92k tensors onto 163 files).  A text
 * that is no index notes nothing: opening it says what is wrong.  0, or
 * -1 without memory. */
int cscan_note_index(struct cscan *s, const char *prefix, const char *text,
		     size_t len);
void cscan_free(struct cscan *s);

/* How the tree builder opens a model it placed: path is the node's path
 * joined with the model's file name; *label (malloc'd) is what the
 * model's __summary__.json "source" says.  0 or -1 with *e. */
struct catalog;
struct model;
struct catalog_opener {
	int (*open)(void *arg, const char *path, struct model **m,
		    char **label, struct err *e);
	void *arg;
};

/* The one placing rule (catalog.h): add node n's models to c under
 * prefix, opening each through op.  root_arg: SOURCE as typed, when n is
 * SOURCE itself (its model keeps it as "source"). */
int catalog_place(struct catalog *c, const struct cnode *n,
		  const char *prefix, const char *root_arg,
		  const struct catalog_opener *op, struct err *e);

#endif
