/* catalog_int.h - between catalog.c (directory trees, naming, opening)
 * and catalog_hub.c (the Hugging Face hub cache layout).  Not for other
 * modules.
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
	char **models;		/* file names in path: *.safetensors files not
				   named by an index, *.safetensors.index.json */
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

struct cnode *cnode_new(const char *path);
void cnode_free(struct cnode *n);
int cnode_add_model(struct cnode *n, const char *file);
int cnode_add_kid(struct cnode *n, const char *name, struct cnode *kid);
/* The kid called name, or NULL. */
struct cnode *cnode_kid(struct cnode *n, const char *name);

/* Discover the models under path: *out is NULL when there are none.
 * 0 or -1 with s->e set. */
int cscan_dir(struct cscan *s, const char *path, struct cnode **out);

/* catalog_hub.c: 1 when path holds at least one models--* repo. */
int hubcache_is_root(const char *path);
/* 1 when path is a repo directory (models--*, datasets--*, spaces--*
 * holding snapshots/). */
int hubcache_is_repo(const char *path);
/* The snapshot directory refs/main names (else the only one), malloc'd;
 * NULL with *e set (ERR_USAGE) when there is none to choose. */
char *hubcache_snapshot(const char *repo, struct err *e);
/* A hub root: a made-up node with ORG/NAME kids. */
int hubcache_scan_root(struct cscan *s, const char *path, struct cnode **out);

#endif
