/* hub.c - hf://ORG/NAME[@REV][/SUBDIR]: pin a commit, list its files,
 * open them ahead.
 *
 * Requests a mount makes (online, nothing cached): one GET of
 * /api/models/ORG/NAME/revision/REV?blobs=true (the commit sha and the
 * file list with sizes),
 * then per file the model layer opens (its models, indexes and shards)
 * one GET of resolve/SHA/FILE (with the token; a redirect for large files)
 * and one ranged GET of the first 64 KiB at the signed location (the
 * header), and per config beside a model (config.json,
 * quantize_config.json: small files the Hub serves itself) one GET of
 * resolve/, all files at once.  Files in the local hub cache cost
 * nothing; HF_HUB_OFFLINE=1 costs nothing at all.
 *
 * Which files are models and where each goes is the model layer's
 * (model/hub_tree.c, the one tree builder of catalog.h): the listing here
 * holds every file under SUBDIR with its size (the models' folders'
 * files are MNT/.files/), its files handed out by resolve URL (a keyed
 * nametab, one lookup each).
 */
#include "source/hub/hub.h"
#include "source/hub/hub_conf.h"
#include "source/hub/hub_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/error.h"
#include "base/jsonmem.h"
#include "base/nametab.h"
#include "base/text.h"
#include "format/naming.h"
#include "source/source.h"
#include "source/http/http_client.h"

#define HUB_FILES_MAX		100000
#define HUB_DEPTH_MAX		16

/* ---- hf://ORG/NAME[@REV][/SUBDIR] ------------------------------------------ */

struct hub_ref {
	char *repo;		/* ORG/NAME */
	char *rev;		/* decoded; "main" by default */
	char *sub;		/* "" or a/b */
	char *cache_repo;	/* $HF_HUB_CACHE/models--ORG--NAME */
};

static int
name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 96 || (n <= 2 && strncmp(s, "..", n) == 0))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return 0;
	return 1;
}

static char *
unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && text_hexval(s[i + 1]) >= 0 && text_hexval(s[i + 2]) >= 0) {
			*o++ = (char)(text_hexval(s[i + 1]) * 16 + text_hexval(s[i + 2]));
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

static int
parse_uri(const char *uri, struct hub_ref *r, struct err *e)
{
	const char *p = uri + 5, *org_end, *name, *name_end, *rest;
	char *sub, *c;

	memset(r, 0, sizeof(*r));
	org_end = strchr(p, '/');
	if (!org_end || !name_ok(p, (size_t)(org_end - p)))
		goto bad;
	name = org_end + 1;
	name_end = name + strcspn(name, "@/");
	if (!name_ok(name, (size_t)(name_end - name)))
		goto bad;
	r->repo = strndup(p, (size_t)(name_end - p));
	rest = name_end;
	if (*rest == '@') {
		size_t n = strcspn(rest + 1, "/");

		if (n == 0)
			goto bad;
		r->rev = unescape(rest + 1, n);
		rest += 1 + n;
	} else {
		r->rev = strdup("main");
	}
	if (*rest == '/')
		rest++;
	sub = r->sub = strdup(rest);
	if (!r->repo || !r->rev || !sub)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	while (*sub && sub[strlen(sub) - 1] == '/')
		sub[strlen(sub) - 1] = '\0';
	/* no empty, "." or ".." component, no control bytes */
	for (c = sub; *c; c++)
		if ((unsigned char)*c < 0x20)
			goto bad;
	if (*sub && (strstr(sub, "//") || strcmp(sub, ".") == 0 ||
		     strcmp(sub, "..") == 0 || strncmp(sub, "../", 3) == 0 ||
		     strncmp(sub, "./", 2) == 0 || strstr(sub, "/../") ||
		     strstr(sub, "/./") ||
		     (strlen(sub) >= 3 && strcmp(sub + strlen(sub) - 3, "/..") == 0)))
		goto bad;
	if (strstr(r->rev, "..") || r->rev[0] == '/')
		goto bad;
	if (asprintf(&r->cache_repo, "%s/models--%.*s--%.*s", hub_cfg.cache,
		     (int)(org_end - p), p, (int)(name_end - name), name) < 0)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	return 0;
bad:
	err_set(e, ERR_USAGE, "not an hf:// model URI: expected "
		"hf://ORG/NAME[@REVISION][/SUBFOLDER] (ORG and NAME of "
		"letters, digits, '-', '_', '.'; a revision holding '/' "
		"written with %%2F)");
	return err_at(e, uri);
}

static void
ref_free(struct hub_ref *r)
{
	free(r->repo);
	free(r->rev);
	free(r->sub);
	free(r->cache_repo);
}

/* ---- the file list: the API, or the local cache ------------------------- */

struct names {
	char **v;
	uint64_t *size;		/* HUB_SIZE_UNKNOWN when not said */
	size_t n, cap;
};

static int
names_add(struct names *l, const char *s, size_t len, uint64_t size)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->v, cap * sizeof(*v));
		uint64_t *z;

		if (!v)
			return -1;
		l->v = v;
		z = realloc(l->size, cap * sizeof(*z));
		if (!z)
			return -1;
		l->size = z;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strndup(s, len)))
		return -1;
	l->size[l->n] = size;
	l->n++;
	return 0;
}

static void
names_free(struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->size);
	memset(l, 0, sizeof(*l));
}

static int
is_sha(const char *s)
{
	size_t i;

	for (i = 0; i < HUB_SHA_LEN; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return s[HUB_SHA_LEN] == '\0';
}

/* GET /api/models/ORG/NAME/revision/REV?blobs=true: the sha and the
 * siblings, each with its size (what huggingface_hub's model_info asks
 * with files_metadata=True). */
static int
list_online(const struct hub_ref *r, char *sha, struct names *files,
	    struct hub_resp *resp, struct err *e)
{
	unsigned long jf = jsonmem_failures();
	char *rev = hub_escape(r->rev, 0), *url = NULL;
	json_t *root = NULL, *sib, *it;
	json_error_t je;
	size_t i;
	int rc = -1;

	if (!rev || asprintf(&url, "%s/api/models/%s/revision/%s?blobs=true",
			     hub_cfg.endpoint, r->repo, rev) < 0) {
		free(rev);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	free(rev);
	if (hub_request(url, HUB_JSON_MAX, resp) != 0 || resp->status != 200) {
		if (resp->status != 0)
			hub_status_error(resp, r->repo, r->rev, NULL, e);
		free(url);
		return -1;	/* status 0: the caller may use the cache */
	}
	root = json_loadb(resp->body.data ? resp->body.data : "",
			  resp->body.len, 0, &je);
	/* a parse short of memory may fail, or drop a byte (jsonmem.h) */
	if (jsonmem_failures() != jf) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	it = root ? json_object_get(root, "sha") : NULL;
	sib = root ? json_object_get(root, "siblings") : NULL;
	if (!json_is_string(it) || !is_sha(json_string_value(it)) ||
	    !json_is_array(sib) || json_array_size(sib) > HUB_FILES_MAX) {
		err_set(e, ERR_IO, "the Hub's answer has no commit sha and file "
			"list (is HF_ENDPOINT a Hub?)");
		err_at(e, url);
		goto out;
	}
	memcpy(sha, json_string_value(it), HUB_SHA_LEN + 1);
	json_array_foreach(sib, i, it) {
		json_t *f = json_object_get(it, "rfilename");
		json_t *z = json_object_get(it, "size");
		uint64_t size = json_is_integer(z) && json_integer_value(z) >=
				0 ? (uint64_t)json_integer_value(z) :
				HUB_SIZE_UNKNOWN;

		if (json_is_string(f) && names_add(files, json_string_value(f),
						   json_string_length(f),
						   size)) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	free(url);
	return rc;
}

/* The commit REV names in the cache: REV itself when it is a cached sha,
 * else refs/REV. */
static int
cached_sha(const struct hub_ref *r, char *sha)
{
	char *p = NULL, buf[HUB_SHA_LEN + 8];
	struct stat st;
	FILE *f;
	size_t n;

	if (is_sha(r->rev)) {
		if (asprintf(&p, "%s/snapshots/%s", r->cache_repo, r->rev) < 0)
			return -1;
		n = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
		free(p);
		if (!n)
			return -1;
		memcpy(sha, r->rev, HUB_SHA_LEN + 1);
		return 0;
	}
	if (asprintf(&p, "%s/refs/%s", r->cache_repo, r->rev) < 0)
		return -1;
	f = fopen(p, "re");
	free(p);
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (!is_sha(buf))
		return -1;
	memcpy(sha, buf, HUB_SHA_LEN + 1);
	return 0;
}

/* A repo path from the Hub's answer: relative, no empty, "." or ".."
 * component, no control bytes or backslash.  Others are ignored: they
 * would reach outside the snapshot directory of the local cache. */
static int
path_ok(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/')
		return 0;
	for (; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
			return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
		if (*p == '/')
			p++;
		if (!*p && p[-1] == '/')
			return 0;
	}
	return 1;
}

/* The files of a cached snapshot, recursively (the listing keeps the ones
 * it wants, as of an online listing). */
static int
walk(const char *root, const char *rel, int depth, struct names *out)
{
	char *dir = NULL;
	struct dirent *d;
	DIR *dp;
	int rc = 0;

	if (depth > HUB_DEPTH_MAX)
		return 0;
	if (asprintf(&dir, "%s%s%s", root, *rel ? "/" : "", rel) < 0)
		return -1;
	dp = opendir(dir);
	free(dir);
	if (!dp)
		return 0;
	while (rc == 0 && (d = readdir(dp))) {
		char *child = NULL, *full = NULL;
		struct stat st;

		if (d->d_name[0] == '.')
			continue;
		if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "",
			     d->d_name) < 0 ||
		    asprintf(&full, "%s/%s", root, child) < 0) {
			free(child);
			rc = -1;
			break;
		}
		if (stat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				rc = walk(root, child, depth + 1, out);
			else if (S_ISREG(st.st_mode))
				rc = names_add(out, child, strlen(child),
					       (uint64_t)st.st_size);
		}
		free(child);
		free(full);
	}
	closedir(dp);
	return rc;
}

/* ---- picking the models ----------------------------------------------------- */

static const char *
rel_of(const char *path, const char *sub)
{
	size_t n = strlen(sub);

	if (!n)
		return path;
	if (strcmp(path, sub) == 0) {
		const char *s = strrchr(path, '/');

		return s ? s + 1 : path;
	}
	if (strncmp(path, sub, n) == 0 && path[n] == '/')
		return path + n + 1;
	return NULL;
}

/* ---- hub_open ------------------------------------------------------------------ */

static int
not_cached(const struct hub_ref *r, struct err *e)
{
	return err_set(e, ERR_IO, "%s@%s is not in the local hub cache (%s) "
		       "and HF_HUB_OFFLINE is set, so the Hub is not asked: "
		       "unset HF_HUB_OFFLINE, or download it first "
		       "(huggingface-cli download %s --revision %s)", r->repo,
		       r->rev, hub_cfg.cache, r->repo, r->rev);
}

/* The files of a listing, opened ahead (hub_open_files), handed out by
 * resolve URL. */
struct hub_listing_priv {
	struct names all;
	struct hub_file *files;
	size_t n;
	char **rel;
	uint64_t *size;
	struct nametab byurl;	/* resolve URL -> index in files */
	pthread_mutex_t lock;	/* files[].src: the model layer opens the
				   shards of an index on several threads */
};

static int
url_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct hub_listing_priv *p = ctx;
	const char *u = p->files[id].url;

	return strlen(u) == k->len && memcmp(u, k->name, k->len) == 0;
}

/* The listed file opened by url, or NULL. */
static struct hub_file *
find_file(struct hub_listing_priv *p, const char *url)
{
	struct nametab_key k;
	long id;

	if (!p->byurl.slot)
		return NULL;
	nametab_key(&k, 0, url, strlen(url));
	id = nametab_find(&p->byurl, &k);
	return id < 0 ? NULL : &p->files[id];
}

void
hub_listing_free(struct hub_listing *l)
{
	struct hub_listing_priv *p = l->priv;
	size_t i;

	if (p) {
		for (i = 0; i < p->n; i++) {
			source_close(p->files[i].src);
			free(p->files[i].url);
			free(p->files[i].local);
		}
		free(p->files);
		free(p->rel);
		free(p->size);
		if (p->byurl.slot)
			nametab_free(&p->byurl);
		names_free(&p->all);
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	free(l->url);
	free(l->label);
	memset(l, 0, sizeof(*l));
}

int
hub_listing_open(void *arg, const char *name, struct source **out,
		 struct err *e)
{
	struct hub_listing_priv *p = ((struct hub_listing *)arg)->priv;
	struct hub_file *f = find_file(p, name);

	if (f) {
		pthread_mutex_lock(&p->lock);
		*out = f->src;	/* handed over once */
		f->src = NULL;
		pthread_mutex_unlock(&p->lock);
		if (*out)
			return 0;
		if (f->rc) {	/* an optional file that failed ahead */
			*e = f->err;
			return -1;
		}
		if (f->local)
			return source_open_local(f->local, out, e);
		return hub_src_open(f->url, f->path, out, e);
	}
	/* an index may name a shard the listing did not have: the Hub then
	 * says what is missing */
	return hub_open_file(name, out, e);
}

int
hub_open_file(const char *url, struct source **out, struct err *e)
{
	size_t n = strlen(hub_cfg.endpoint);
	const char *repo, *res, *slash, *sha, *enc;
	char *path = NULL, *local = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (hub_conf_load(e))
		return err_at(e, url);
	repo = url + n + 1;
	if (strncmp(url, hub_cfg.endpoint, n) != 0 || url[n] != '/' ||
	    !(res = strstr(repo, "/resolve/")) ||
	    !(slash = memchr(repo, '/', (size_t)(res - repo))) ||
	    memchr(slash + 1, '/', (size_t)(res - slash - 1))) {
		err_set(e, ERR_USAGE, "not a file of this repository");
		return err_at(e, url);
	}
	sha = res + 9;
	enc = strchr(sha, '/');
	path = enc ? text_pct_decode(enc + 1, strlen(enc + 1), NULL, NULL) :
	       NULL;
	if (!path || !path_ok(path) || (size_t)(enc - sha) != HUB_SHA_LEN) {
		free(path);
		err_set(e, ERR_USAGE, "not a file of this repository");
		return err_at(e, url);
	}
	/* the local hub cache's copy of that commit's file */
	if (asprintf(&local, "%s/models--%.*s--%.*s/snapshots/%.*s/%s",
		     hub_cfg.cache, (int)(slash - repo), repo,
		     (int)(res - slash - 1), slash + 1, HUB_SHA_LEN, sha,
		     path) < 0) {
		free(path);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (stat(local, &st) == 0 && S_ISREG(st.st_mode))
		rc = source_open_local(local, out, e);
	else if (hub_cfg.offline)
		rc = err_set(e, ERR_IO, "not in the local hub cache and "
			     "HF_HUB_OFFLINE is set");
	else
		rc = hub_src_open(url, path, out, e);
	free(local);
	free(path);
	return rc ? err_at(e, url) : 0;
}

int
hub_listing_open_ahead(void *arg, const char *const *url, size_t n,
		       struct meter *meter, struct err *e)
{
	struct hub_listing_priv *p = ((struct hub_listing *)arg)->priv;
	struct hub_file **f = calloc(n ? n : 1, sizeof(*f));
	size_t i, k = 0;
	int rc;

	if (!f)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < n; i++)
		if ((f[k] = find_file(p, url[i])) && !f[k]->src)
			k++;
	rc = hub_open_files(f, k, meter, e);
	free(f);
	return rc;
}

void
hub_listing_keep(void *arg, const char *name, struct source *s)
{
	struct hub_listing_priv *p = ((struct hub_listing *)arg)->priv;
	struct hub_file *f = find_file(p, name);

	if (f) {
		pthread_mutex_lock(&p->lock);
		if (!f->src) {
			f->src = s;
			s = NULL;
		}
		pthread_mutex_unlock(&p->lock);
	}
	source_close(s);
}

/* The Hub did not answer: say so where the client's warnings go (the
 * front end's, else stderr), and go on from the hub cache. */
static void
warn_offline(const char *uri, const char *why)
{
	static const struct http_conf no_client;
	struct err e = { 0 };
	struct http_client *c = http_client_process(&e);

	http_conf_warn(c ? &c->conf : &no_client, "%s: no answer from %s "
		       "(%s): using the local hub cache", uri,
		       hub_cfg.endpoint, why);
}

int
hub_list(const char *uri, struct hub_listing *out, struct err *e)
{
	struct hub_ref r;
	struct hub_resp resp = { 0 };
	struct hub_listing_priv *p;
	char sha[HUB_SHA_LEN + 1], *snap = NULL;
	size_t i, n = 0, under = 0, models = 0;
	int rc = -1, offline, named;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	p = out->priv = calloc(1, sizeof(*p));
	if (!p)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	pthread_mutex_init(&p->lock, NULL);
	if (hub_conf_load(e))
		goto out;
	if (parse_uri(uri, &r, e))
		goto out;
	offline = hub_cfg.offline;
	if (!offline && list_online(&r, sha, &p->all, &resp, e) != 0) {
		/* no answer at all: the cache may still have it */
		if (resp.status != 0 || cached_sha(&r, sha) != 0) {
			if (resp.status == 0)
				hub_status_error(&resp, r.repo, r.rev, NULL, e);
			err_at(e, uri);
			goto out;
		}
		err_clear(e);
		warn_offline(uri, resp.why);
		offline = 1;
		names_free(&p->all);
	}
	if (offline && cached_sha(&r, sha) != 0) {
		not_cached(&r, e);
		err_at(e, uri);
		goto out;
	}
	if (asprintf(&snap, "%s/snapshots/%s", r.cache_repo, sha) < 0) {
		snap = NULL;
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (offline && walk(snap, "", 0, &p->all) != 0) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	p->files = calloc(p->all.n ? p->all.n : 1, sizeof(*p->files));
	p->rel = calloc(p->all.n ? p->all.n : 1, sizeof(*p->rel));
	p->size = calloc(p->all.n ? p->all.n : 1, sizeof(*p->size));
	out->url = calloc(p->all.n ? p->all.n : 1, sizeof(*out->url));
	if (!p->files || !p->rel || !p->size || !out->url) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < p->all.n; i++) {
		const char *rel = rel_of(p->all.v[i], r.sub);
		struct hub_file *f = &p->files[n];
		char *local = NULL;
		struct stat st;

		if (!path_ok(p->all.v[i]))
			continue;
		under += rel != NULL;
		/* SUBDIR naming one file: that file, whatever its name (a
		 * checkpoint, a split set's part), as a local path */
		named = rel && strcmp(p->all.v[i], r.sub) == 0;
		if (!rel)
			continue;
		out->file |= named;
		f->path = p->all.v[i];
		/* every file is listed (MNT/.files/ shows them); the model
		 * layer opens ahead only models and the configs beside them */
		f->optional = !named && (!naming_listed(f->path) ||
					 naming_config(f->path));
		models += !f->optional;
		p->size[n] = p->all.size[i];
		f->url = hub_resolve_url(r.repo, sha, f->path);
		if (asprintf(&local, "%s/%s", snap, f->path) < 0 || !f->url) {
			free(local);
			p->n = n + 1;
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		if (stat(local, &st) == 0 && S_ISREG(st.st_mode))
			f->local = local;
		else
			free(local);
		p->rel[n] = (char *)rel;
		out->url[n] = f->url;
		n++;
	}
	p->n = n;
	if (!under && *r.sub) {
		err_set(e, ERR_IO, "%s has no folder or file `%s` at %s%s",
			r.repo, r.sub, r.rev, offline ? " (in the local hub "
			"cache)" : "");
		err_at(e, uri);
		goto out;
	}
	if (models == 0) {
		err_set(e, ERR_IO, "no model (" NAMING_WHAT ") in %s%s%s "
			"at %s%s",
			r.repo, *r.sub ? "/" : "", r.sub, r.rev, offline ?
			" (in the local hub cache)" : "");
		err_at(e, uri);
		goto out;
	}
	if (nametab_init(&p->byurl, n, url_eq, p) != 0) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct nametab_key k;

		nametab_key(&k, 0, p->files[i].url, strlen(p->files[i].url));
		if (nametab_put(&p->byurl, &k, (uint32_t)i) == -2) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
	}
	if (asprintf(&out->label, "hf://%s@%s%s%s", r.repo, sha,
		     *r.sub ? "/" : "", r.sub) < 0) {
		out->label = NULL;
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	out->n = n;
	out->rel = (const char **)p->rel;
	out->size = p->size;
	rc = 0;
out:
	if (rc)
		hub_listing_free(out);
	hub_resp_free(&resp);
	free(snap);
	ref_free(&r);
	return rc;
}
