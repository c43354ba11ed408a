/* hub_cache.c - the Hugging Face hub cache layout (huggingface_hub's
 * file_download.py):
 *
 *   HUB/models--ORG--NAME/blobs/<sha256 or git sha1>     the bytes
 *   HUB/models--ORG--NAME/snapshots/<commit>/<path>      relative symlinks
 *                                                        into ../../blobs
 *   HUB/models--ORG--NAME/refs/<branch>                  a commit hash
 *   HUB/.locks/, HUB/datasets--*, HUB/spaces--*          not models
 *
 * A repo without an organisation is models--NAME.
 */
#include "model/hub_cache.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
has_snapshots(const char *repo)
{
	char *p;
	int r;

	if (asprintf(&p, "%s/snapshots", repo) < 0)
		return 0;
	r = is_dir(p);
	free(p);
	return r;
}

int
hubcache_is_repo(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return (strncmp(base, "models--", 8) == 0 ||
		strncmp(base, "datasets--", 10) == 0 ||
		strncmp(base, "spaces--", 8) == 0) && has_snapshots(path);
}

int
hubcache_is_root(const char *path)
{
	struct dirent *d;
	int found = 0;
	DIR *dp = opendir(path);

	if (!dp)
		return 0;
	while (!found && (d = readdir(dp))) {
		char *p;

		if (strncmp(d->d_name, "models--", 8) != 0 || !d->d_name[8])
			continue;
		if (asprintf(&p, "%s/%s", path, d->d_name) < 0)
			break;
		found = has_snapshots(p);
		free(p);
	}
	closedir(dp);
	return found;
}

/* A revision name from refs/: 40 or 64 hex digits, nothing else (it
 * becomes a path component). */
static int
read_ref(const char *repo, char *rev, size_t cap)
{
	char *p;
	FILE *f;
	size_t n;

	if (asprintf(&p, "%s/refs/main", repo) < 0)
		return -1;
	f = fopen(p, "re");
	free(p);
	if (!f)
		return -1;
	n = fread(rev, 1, cap - 1, f);
	fclose(f);
	rev[n] = '\0';
	while (n && (rev[n - 1] == '\n' || rev[n - 1] == '\r' ||
		     rev[n - 1] == ' '))
		rev[--n] = '\0';
	if (n == 0 || strspn(rev, "0123456789abcdef") != n)
		return -1;
	return 0;
}

char *
hubcache_snapshot(const char *repo, struct err *e)
{
	char rev[128], *p = NULL, *only = NULL;
	struct dirent *d;
	int count = 0;
	DIR *dp;

	if (read_ref(repo, rev, sizeof(rev)) == 0) {
		if (asprintf(&p, "%s/snapshots/%s", repo, rev) < 0) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			return NULL;
		}
		if (is_dir(p))
			return p;
		free(p);
		err_set(e, ERR_USAGE, "refs/main names revision %s, which is "
			"not in snapshots/: download it again", rev);
		err_at(e, repo);
		return NULL;
	}
	/* No refs/main (downloaded at a tag or commit): the only
	 * snapshot, if there is just one. */
	if (asprintf(&p, "%s/snapshots", repo) < 0) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		return NULL;
	}
	dp = opendir(p);
	while (dp && (d = readdir(dp))) {
		char *s;

		if (d->d_name[0] == '.')
			continue;
		if (asprintf(&s, "%s/%s", p, d->d_name) < 0)
			break;
		if (is_dir(s) && ++count == 1)
			only = s;
		else
			free(s);
	}
	if (dp)
		closedir(dp);
	free(p);
	if (count == 1)
		return only;
	free(only);
	if (count)
		err_set(e, ERR_USAGE, "no refs/main and %d snapshots: name the "
			"snapshot directory to mount", count);
	else
		err_set(e, ERR_USAGE, "no refs/main and no snapshot: nothing "
			"was downloaded");
	err_at(e, repo);
	return NULL;
}

/* models--ORG--NAME: the org and the name (split at the first "--"). */
static int
repo_names(const char *dirname, char **org, char **name)
{
	const char *id = dirname + 8, *sep = strstr(id, "--");

	*org = sep ? strndup(id, (size_t)(sep - id)) : NULL;
	*name = strdup(sep ? sep + 2 : id);
	return (!sep || *org) && *name ? 0 : -1;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
hubcache_repos_free(struct hubcache_repo *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].org);
		free(v[i].name);
		free(v[i].snapshot);
	}
	free(v);
}

int
hubcache_repos(const char *path, struct hubcache_repo **out, size_t *nout,
	       struct err *e)
{
	char **names = NULL;
	struct hubcache_repo *v = NULL;
	size_t n = 0, cap = 0, i, k = 0;
	struct dirent *d;
	int rc = 0;
	DIR *dp;

	*out = NULL;
	*nout = 0;
	dp = opendir(path);
	if (!dp) {
		err_set(e, ERR_IO, "cannot open directory: %s",
			strerror(errno));
		return err_at(e, path);
	}
	while ((d = readdir(dp))) {
		if (strncmp(d->d_name, "models--", 8) != 0 || !d->d_name[8])
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) *
					    sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(d->d_name)))
			break;
		n++;
	}
	closedir(dp);
	if (d || !(v = calloc(n ? n : 1, sizeof(*v)))) {
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	/* Sorted, so that name clashes resolve the same way every time. */
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		struct err ignored = { 0 };
		char *p, *snap;

		if (asprintf(&p, "%s/%s", path, names[i]) < 0) {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			break;
		}
		/* A repo with nothing usable is left out, as one without
		 * models. */
		snap = has_snapshots(p) ? hubcache_snapshot(p, &ignored) : NULL;
		free(p);
		if (!snap)
			continue;
		v[k].snapshot = snap;
		if (repo_names(names[i], &v[k].org, &v[k].name)) {
			k++;
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			break;
		}
		k++;
	}
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc) {
		if (v)
			hubcache_repos_free(v, k);
		return -1;
	}
	*out = v;
	*nout = k;
	return 0;
}
