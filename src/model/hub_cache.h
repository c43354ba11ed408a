/* hub_cache.h - the Hugging Face hub cache layout on disk (hub_cache.c):
 * what catalog_scan.c needs to mount a hub cache root or a repo of it.
 * Knows the layout only: no model is opened here.
 */
#ifndef STFS_HUB_CACHE_H
#define STFS_HUB_CACHE_H

#include <stddef.h>

struct err;

/* 1 when path holds at least one models--* repo. */
int hubcache_is_root(const char *path);

/* 1 when path is a repo directory (models--*, datasets--*, spaces--*
 * holding snapshots/). */
int hubcache_is_repo(const char *path);

/* The snapshot directory refs/main names (else the only one), malloc'd;
 * NULL with *e set (ERR_USAGE) when there is none to choose. */
char *hubcache_snapshot(const char *repo, struct err *e);

/* A models--ORG--NAME repo of a hub cache root with a snapshot to mount. */
struct hubcache_repo {
	char *org;		/* NULL for models--NAME */
	char *name;
	char *snapshot;		/* its directory */
};

/* The repos of the root at path, sorted by directory name; repos without
 * a snapshot to choose are left out.  0 or -1 with *e. */
int hubcache_repos(const char *path, struct hubcache_repo **out, size_t *n,
		   struct err *e);
void hubcache_repos_free(struct hubcache_repo *v, size_t n);

#endif
