/* s3.c - s3:// SOURCEs: one object, or a prefix / bucket of models.
 *
 * s3://BUCKET/KEY names one object: a .safetensors file or an index
 * (*.json); its shards are s3:// URLs next to it (shards.c joins them), so
 * every object, the index's shards included, is opened here.  Each object
 * becomes an HTTP range-request source (source_http.c) signed with SigV4
 * and pinned to one ETag: every data GET carries If-Match, a 412 or another
 * ETag turns the source stale (EIO), so a mount never mixes two versions.
 *
 * s3://BUCKET/PREFIX/ and s3://BUCKET/ are listed (ListObjectsV2, all
 * pages) and follow the directory rules: every *.safetensors.index.json is
 * a model, every .safetensors file that no index of its directory names is
 * a model of its own, shards never appear alone; the ETags of the listing
 * are the ones every later request insists on.  The objects of the chosen
 * model are then opened concurrently (one thread per object, at most
 * S3_OPENERS at a time), so a mount costs one round trip of headers, not
 * one per shard.
 */
#include "source/s3/s3.h"
#include "source/s3/s3_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "model/catalog.h"
#include "base/error.h"
#include "format/safetensors/header.h"
#include "model/model.h"
#include "model/shards.h"
#include "source/source.h"
#include "source/http/source_http.h"

#define S3_OPENERS	16
#define S3_INDEX_MAX	(64u << 20)

static struct s3_options opts;

void
s3_set_options(const struct s3_options *o)
{
	opts = *o;
}

static int
anonymous(void)
{
	const char *v = getenv("STFS_S3_ANONYMOUS");

	return opts.anonymous || (v && !strcmp(v, "1"));
}

int
s3_is_url(const char *name)
{
	return strncmp(name, "s3://", 5) == 0;
}

static int
hexv(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* s3://BUCKET[/KEY] -> bucket, key ("" when absent; %XX decoded). */
static int
parse_url(const char *url, char **bucket, char **key, struct err *e)
{
	const char *b = url + 5, *slash = strchr(b, '/'), *p;
	size_t bl = slash ? (size_t)(slash - b) : strlen(b);
	char *k, *o;

	*bucket = *key = NULL;
	err_where(e, url);
	if (bl == 0 || bl > 255)
		return err_set(e, ERR_USAGE, "no bucket name: write "
			       "s3://BUCKET/KEY, s3://BUCKET/PREFIX/ or "
			       "s3://BUCKET/");
	for (p = b; p < b + bl; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(".-_", *p)))
			return err_set(e, ERR_USAGE, "the bucket name may hold "
				       "only letters, digits, '.', '-' and "
				       "'_'");
	k = strdup(slash ? slash + 1 : "");
	*bucket = strndup(b, bl);
	if (!k || !*bucket) {
		free(k);
		free(*bucket);
		*bucket = NULL;
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	for (p = k, o = k; *p; p++) {
		int hi, lo;

		if (*p == '%' && (hi = hexv(p[1])) >= 0 &&
		    (lo = hexv(p[2])) >= 0 && (hi | lo)) {
			*o++ = (char)(hi * 16 + lo);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	*key = k;
	return 0;
}

/* s3://BUCKET/KEY with the bytes of KEY that are not unreserved or '/'
 * %XX-encoded: the form shards.c builds for shard names next to an
 * index, so both name an object the same way. */
static char *
obj_url(const char *bucket, const char *key)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = BUF_INIT;
	const unsigned char *p;
	int bad = buf_addf(&b, "s3://%s/", bucket);

	for (p = (const unsigned char *)key; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			bad |= buf_add(&b, p, 1);
		} else {
			char t[3] = { '%', hex[*p >> 4], hex[*p & 15] };

			bad |= buf_add(&b, t, 3);
		}
	}
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

/* A key that names neither a .safetensors file nor a .json index is a
 * prefix, as for `aws s3 ls`: s3://B/models/llama means models/llama/.
 * -1 when out of memory. */
static int
as_prefix(char **key)
{
	size_t n = strlen(*key);
	char *k;

	if (!n || (*key)[n - 1] == '/' || s3_key_is_model(*key) ||
	    (n >= 5 && !strcmp(*key + n - 5, ".json")))
		return 0;
	k = realloc(*key, n + 2);
	if (!k)
		return -1;
	k[n] = '/';
	k[n + 1] = '\0';
	*key = k;
	return 0;
}

/* ---- objects opened ahead (concurrently), taken by source_open_s3 ----- */

struct s3_pre {
	char *url;		/* the s3:// URL shards.c will ask for */
	char *etag;		/* from the listing; NULL: unknown */
	struct source *src;	/* opened ahead, or NULL */
	struct err err;
	struct s3_pre *next;
};

static pthread_mutex_t pre_lock = PTHREAD_MUTEX_INITIALIZER;
static struct s3_pre *pre_head;

static struct s3_pre *
pre_find_locked(const char *url)
{
	struct s3_pre *p;

	for (p = pre_head; p; p = p->next)
		if (!strcmp(p->url, url))
			return p;
	return NULL;
}

static int
open_object(const char *url, const char *etag, struct source **out,
	    struct err *e)
{
	const struct s3_conf *c = s3_conf_get(anonymous(), e);
	struct source_http_opts ho = {0};
	char *bucket = NULL, *key = NULL, *http = NULL;
	int rc = -1;

	*out = NULL;
	if (!c)
		return -1;
	if (parse_url(url, &bucket, &key, e))
		return -1;
	if (!*key || key[strlen(key) - 1] == '/') {
		err_set(e, ERR_USAGE, "names a prefix, not an object");
		goto out;
	}
	http = s3_http_url(c, bucket, key);
	if (!http) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	ho.display = url;
	ho.etag = etag;
	ho.if_match = 1;
	if (c->key) {
		ho.aws_sigv4 = c->sigv4;
		ho.aws_key = c->key;
		ho.aws_secret = c->secret;
		ho.aws_token = c->token;
	}
	rc = source_open_http_opts(http, &ho, out, e);
	if (rc && e->code == ERR_IO)
		s3_diagnose(c, bucket, key, url, e);
out:
	free(bucket);
	free(key);
	free(http);
	return rc;
}

int
source_open_s3(const char *url, struct source **out, struct err *e)
{
	struct s3_pre *p;
	char *etag = NULL;
	int rc;

	pthread_mutex_lock(&pre_lock);
	p = pre_find_locked(url);
	if (p && p->src) {
		*out = p->src;	/* handed over once */
		p->src = NULL;
		pthread_mutex_unlock(&pre_lock);
		return 0;
	}
	if (p && p->err.code != ERR_OK) {
		*e = p->err;
		pthread_mutex_unlock(&pre_lock);
		return -1;
	}
	if (p && p->etag)
		etag = strdup(p->etag);
	pthread_mutex_unlock(&pre_lock);
	rc = open_object(url, etag, out, e);
	free(etag);
	return rc;
}

static void *
opener(void *arg)
{
	struct s3_pre *p = arg;
	struct source *s = NULL;
	struct err e = {0};

	if (open_object(p->url, p->etag, &s, &e) == 0) {
		/* a header_read of a remote source is served from the 64 KiB
		 * of the open request for almost every file */
		pthread_mutex_lock(&pre_lock);
		p->src = s;
		pthread_mutex_unlock(&pre_lock);
	} else {
		pthread_mutex_lock(&pre_lock);
		p->err = e;
		pthread_mutex_unlock(&pre_lock);
	}
	return NULL;
}

/* Remember url (with its listed ETag) and open the ones marked to open
 * ahead, S3_OPENERS at a time. */
static int
pre_add(const char *url, const char *etag, struct s3_pre **out)
{
	struct s3_pre *p = calloc(1, sizeof(*p));

	if (!p || !(p->url = strdup(url)) ||
	    (etag && !(p->etag = strdup(etag)))) {
		if (p)
			free(p->url);
		free(p);
		return -1;
	}
	pthread_mutex_lock(&pre_lock);
	p->next = pre_head;
	pre_head = p;
	pthread_mutex_unlock(&pre_lock);
	if (out)
		*out = p;
	return 0;
}

/* Give an open source back for the next source_open_s3(url). */
static void
pre_keep(const char *url, struct source *s)
{
	struct s3_pre *p;

	pthread_mutex_lock(&pre_lock);
	p = pre_find_locked(url);
	if (p && !p->src) {
		p->src = s;
		s = NULL;
	}
	pthread_mutex_unlock(&pre_lock);
	if (s)
		source_close(s);
}

static void
pre_open_all(struct s3_pre **v, size_t n)
{
	pthread_t th[S3_OPENERS];
	size_t i, j;

	for (i = 0; i < n; i += S3_OPENERS) {
		size_t k = n - i < S3_OPENERS ? n - i : S3_OPENERS;
		int started[S3_OPENERS] = {0};

		for (j = 0; j < k; j++)
			started[j] = pthread_create(&th[j], NULL, opener,
						    v[i + j]) == 0;
		for (j = 0; j < k; j++) {
			if (started[j])
				pthread_join(th[j], NULL);
			else
				opener(v[i + j]);
		}
	}
}

/* Close what was opened ahead and not taken (a failed model open). */
static void
pre_drop_unused(void)
{
	struct s3_pre *p;

	pthread_mutex_lock(&pre_lock);
	for (p = pre_head; p; p = p->next) {
		if (p->src) {
			source_close(p->src);
			p->src = NULL;
		}
	}
	pthread_mutex_unlock(&pre_lock);
}

/* ---- discovery -------------------------------------------------------- */

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int
s3_key_is_model(const char *key)
{
	const char *base = strrchr(key, '/');

	base = base ? base + 1 : key;
	if (base[0] == '.')
		return 0;
	return ends_with(base, ".safetensors.index.json") ? 2 :
	       ends_with(base, ".safetensors") ? 1 : 0;
}

/* The shard names an index at key lists (read through an s3 source). */
static int
index_shards(const char *url, json_t **out, struct err *e)
{
	struct source *s = NULL;
	char *text = NULL;
	json_error_t je;
	json_t *root, *wm;

	*out = NULL;
	if (source_open_s3(url, &s, e))
		return -1;
	if (s->size > S3_INDEX_MAX) {
		source_close(s);
		return err_set(e, ERR_INVALID_INDEX, "the index is larger "
			       "than 64 MiB");
	}
	text = malloc(s->size + 1);
	if (!text || source_pread(s, text, s->size, 0)) {
		free(text);
		source_close(s);
		err_where(e, url);
		return err_set(e, ERR_IO, "cannot read the index");
	}
	root = json_loadb(text, s->size, 0, &je);
	free(text);
	pre_keep(url, s);	/* shards.c reads it again: no second GET */
	wm = root ? json_object_get(root, "weight_map") : NULL;
	if (!json_is_object(wm)) {
		json_decref(root);
		err_where(e, url);
		return err_set(e, ERR_INVALID_INDEX, "no weight_map object");
	}
	*out = json_incref(wm);
	json_decref(root);
	return 0;
}

struct s3_model {
	const struct s3_object *obj;	/* the file or the index */
	int is_index;
};

/* Is key (a .safetensors object) named by an index in its directory? */
static int
named_by_index(const char *key, const struct s3_object *const *idx,
	       json_t *const *maps, size_t nidx)
{
	const char *slash = strrchr(key, '/');
	size_t dl = slash ? (size_t)(slash - key) + 1 : 0;
	size_t i;

	for (i = 0; i < nidx; i++) {
		const char *ik = idx[i]->key, *is = strrchr(ik, '/');
		size_t il = is ? (size_t)(is - ik) + 1 : 0;
		const char *k;
		json_t *v;

		/* shard names are relative to the index's directory and may
		 * hold '/' themselves */
		if (il > strlen(key) || strncmp(ik, key, il) != 0)
			continue;
		(void)dl;
		json_object_foreach(maps[i], k, v) {
			if (json_is_string(v) &&
			    !strcmp(json_string_value(v), key + il))
				return 1;
		}
	}
	return 0;
}

static int
discover(const char *source, const char *bucket, const char *prefix,
	 struct s3_listing *l, struct s3_model **models, size_t *nmodels,
	 struct err *e)
{
	const struct s3_object **idx = NULL;
	json_t **maps = NULL;
	size_t i, nidx = 0, n = 0;
	int rc = -1;

	*models = calloc(l->n ? l->n : 1, sizeof(**models));
	idx = calloc(l->n ? l->n : 1, sizeof(*idx));
	maps = calloc(l->n ? l->n : 1, sizeof(*maps));
	if (!*models || !idx || !maps) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < l->n; i++) {
		char *url;

		if (s3_key_is_model(l->objs[i].key) != 2)
			continue;
		if (!(url = obj_url(bucket, l->objs[i].key)) ||
		    pre_add(url, l->objs[i].etag, NULL)) {
			free(url);
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		rc = index_shards(url, &maps[nidx], e);
		free(url);
		if (rc)
			goto out;
		rc = -1;
		idx[nidx++] = &l->objs[i];
		(*models)[n].obj = &l->objs[i];
		(*models)[n++].is_index = 1;
	}
	for (i = 0; i < l->n; i++) {
		if (s3_key_is_model(l->objs[i].key) != 1 ||
		    named_by_index(l->objs[i].key, idx, maps, nidx))
			continue;
		(*models)[n++].obj = &l->objs[i];
	}
	if (n == 0) {
		err_where(e, source);
		err_set(e, ERR_USAGE, "no .safetensors object and no "
			"*.safetensors.index.json under this prefix (%zu keys "
			"listed); check the prefix", l->n);
		goto out;
	}
	(void)prefix;
	*nmodels = n;
	rc = 0;
out:
	for (i = 0; maps && i < nidx; i++)
		json_decref(maps[i]);
	free(maps);
	free(idx);
	if (rc) {
		free(*models);
		*models = NULL;
	}
	return rc;
}

/* Open the model at an object URL, opening its objects ahead: the index's
 * shards (listed, so their ETags are known) concurrently. */
static int
open_model_at(const char *url, const char *bucket, const struct s3_listing *l,
	      struct model **out, struct err *e)
{
	struct s3_pre **v = NULL;
	size_t n = 0, i;
	const char *slash = strrchr(url, '/');
	size_t dl = (size_t)(slash - url) + 1;
	int rc;

	if (l && ends_with(url, ".json")) {
		/* every listed .safetensors in the index's directory (and
		 * below) is likely a shard: open them all at once */
		v = calloc(l->n ? l->n : 1, sizeof(*v));
		for (i = 0; v && i < l->n; i++) {
			char *u;
			struct s3_pre *p;

			if (s3_key_is_model(l->objs[i].key) != 1)
				continue;
			if (!(u = obj_url(bucket, l->objs[i].key)))
				continue;
			if (strncmp(u, url, dl) == 0 &&
			    pre_add(u, l->objs[i].etag, &p) == 0)
				v[n++] = p;
			free(u);
		}
		pre_open_all(v, n);
	}
	if (ends_with(url, ".json"))
		rc = shards_open_index(NULL, url, out, e);
	else {
		struct source *src = NULL;
		struct header *h = NULL;

		rc = source_open_s3(url, &src, e);
		if (rc == 0 && (rc = header_read(src, &h, e)) != 0)
			source_close(src);
		if (rc == 0)
			rc = model_from_single(url, src, h, out, e);
	}
	free(v);
	return rc;
}

int
s3_model_open(const char *source, struct model **out, struct err *e)
{
	const struct s3_conf *c;
	struct s3_listing l = {0};
	struct s3_model *models = NULL;
	size_t nmodels = 0, i;
	char *bucket = NULL, *key = NULL, *url = NULL;
	int rc = -1;

	*out = NULL;
	if (parse_url(source, &bucket, &key, e))
		return -1;
	err_reset_where(e);
	if (as_prefix(&key)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (*key && key[strlen(key) - 1] != '/') {
		/* one object */
		rc = open_model_at(source, bucket, NULL, out, e);
		pre_drop_unused();
		goto out;
	}
	if (!(c = s3_conf_get(anonymous(), e)))
		goto out;
	if (s3_list(c, bucket, key, &l, e)) {
		err_where(e, source);
		goto out;
	}
	if (discover(source, bucket, key, &l, &models, &nmodels, e))
		goto out;
	if (nmodels > 1) {
		struct buf b = BUF_INIT;

		for (i = 0; i < nmodels && i < 4; i++)
			buf_addf(&b, "%s s3://%s/%s", i ? "," : "", bucket,
				 models[i].obj->key);
		err_where(e, source);
		err_set(e, ERR_USAGE, "%zu models under this prefix (%s%s); "
			"name one of them", nmodels, b.data ? b.data : "",
			nmodels > 4 ? ", ..." : "");
		buf_free(&b);
		goto out;
	}
	if (!(url = obj_url(bucket, models[0].obj->key))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (!models[0].is_index)
		pre_add(url, models[0].obj->etag, NULL);
	rc = open_model_at(url, bucket, &l, out, e);
	pre_drop_unused();
	if (rc == 0) {
		free((*out)->arg);
		(*out)->arg = strdup(source);
	}
out:
	free(models);
	s3_listing_free(&l);
	free(bucket);
	free(key);
	free(url);
	return rc;
}

/* ---- a tree of models: the catalog ------------------------------------ */

struct s3_named {
	char *name;		/* escaped path component */
	const char *rel;	/* model: its key relative to the prefix */
	char *sub;		/* kid: its prefix relative to the prefix */
};

static void
named_free(struct s3_named *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].sub);
	}
	free(v);
}

static char *
escaped_part(const char *s, size_t n)
{
	char *raw = strndup(s, n), *out = malloc(3 * n + 2);

	if (!raw || !out || catalog_escape(raw, out, 3 * n + 2)) {
		free(raw);
		free(out);
		return NULL;
	}
	free(raw);
	return out;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The catalog's rules for the models whose keys (relative to the prefix,
 * sorted) start with `at`: exactly one model there and no directory below
 * holding models: that model is `dir` itself; otherwise one subdirectory
 * per model (its file name without .safetensors / .safetensors.index.json;
 * the whole file name when that is taken) and per directory below.
 * Appends (dir, rel) pairs to *out. */
static int
tree_place(const char **rels, size_t n, const char *at, const char *dir,
	   struct s3_named **out, size_t *nout, struct err *e)
{
	size_t al = strlen(at), i, nd = 0, nk = 0, cap = n + 1;
	struct s3_named *v = calloc(cap, sizeof(*v));
	int rc = -1;

	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < n; i++) {
		const char *r = rels[i], *slash;

		if (strncmp(r, at, al) != 0)
			continue;
		slash = strchr(r + al, '/');
		if (!slash) {
			v[nd + nk].rel = r;
			nd++;
		} else if (!nk || !v[nd + nk - 1].sub ||
			   strncmp(v[nd + nk - 1].sub, r,
				   (size_t)(slash - r) + 1) != 0 ||
			   strlen(v[nd + nk - 1].sub) !=
			   (size_t)(slash - r) + 1) {
			if (!(v[nd + nk].sub = strndup(r, (size_t)(slash - r) +
						       1)))
				goto oom;
			v[nd + nk].name = escaped_part(r + al, (size_t)(slash -
							   r - (ptrdiff_t)al));
			if (!v[nd + nk].name)
				goto oom;
			nk++;
		}
	}
	if (nd == 1 && nk == 0) {
		struct s3_named *o = realloc(*out, (*nout + 1) * sizeof(**out));

		if (!o)
			goto oom;
		*out = o;
		for (i = 0; !v[i].rel; i++)
			;
		o[*nout].rel = v[i].rel;
		o[*nout].sub = NULL;
		if (!(o[*nout].name = strdup(dir)))
			goto oom;
		(*nout)++;
		rc = 0;
		goto done;
	}
	/* names: models by stem; a stem equal to a sibling's name takes the
	 * whole file name */
	for (i = 0; i < nd + nk; i++) {
		const char *base;
		size_t bl;

		if (!v[i].rel)
			continue;
		base = v[i].rel + al;
		bl = strlen(base);
		bl -= s3_key_is_model(base) == 2 ?
		      strlen(".safetensors.index.json") : strlen(".safetensors");
		if (!(v[i].name = escaped_part(base, bl)))
			goto oom;
	}
	for (i = 0; i < nd + nk; i++) {
		size_t j;

		for (j = 0; v[i].rel && j < nd + nk; j++) {
			if (j == i || strcmp(v[i].name, v[j].name))
				continue;
			free(v[i].name);
			v[i].name = escaped_part(v[i].rel + al,
						 strlen(v[i].rel + al));
			if (!v[i].name)
				goto oom;
			break;
		}
	}
	for (i = 0; i < nd + nk; i++) {
		char *sub;

		if (asprintf(&sub, "%s%s%s", dir, *dir ? "/" : "",
			     v[i].name) < 0)
			goto oom;
		if (v[i].rel) {
			struct s3_named *o = realloc(*out, (*nout + 1) *
						     sizeof(**out));

			if (!o) {
				free(sub);
				goto oom;
			}
			*out = o;
			o[*nout].rel = v[i].rel;
			o[*nout].sub = NULL;
			o[*nout].name = sub;
			(*nout)++;
		} else {
			rc = tree_place(rels, n, v[i].sub, sub, out, nout, e);
			free(sub);
			if (rc)
				goto done;
			rc = -1;
		}
	}
	rc = 0;
	goto done;
oom:
	err_set(e, ERR_NO_MEMORY, "out of memory");
done:
	named_free(v, nd + nk);
	return rc;
}

int
s3_catalog_open(const char *source, struct catalog **out, struct err *e)
{
	const struct s3_conf *c;
	struct s3_listing l = {0};
	struct s3_model *models = NULL;
	struct s3_named *placed = NULL;
	struct s3_pre **pre = NULL;
	const char **rels = NULL;
	struct catalog *cat = NULL;
	size_t nmodels = 0, nplaced = 0, npre = 0, i, pl;
	char *bucket = NULL, *key = NULL;
	int rc = -1;

	*out = NULL;
	if (parse_url(source, &bucket, &key, e))
		return -1;
	err_reset_where(e);
	if (!(cat = catalog_new(source))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (as_prefix(&key)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (*key && key[strlen(key) - 1] != '/') {
		struct model *m = NULL;

		if (s3_model_open(source, &m, e) ||
		    catalog_add(cat, "", source, m, e))
			goto out;
		rc = 0;
		goto out;
	}
	if (!(c = s3_conf_get(anonymous(), e)))
		goto out;
	if (s3_list(c, bucket, key, &l, e)) {
		err_where(e, source);
		goto out;
	}
	if (discover(source, bucket, key, &l, &models, &nmodels, e))
		goto out;
	pl = strlen(key);
	rels = calloc(nmodels, sizeof(*rels));
	pre = calloc(l.n ? l.n : 1, sizeof(*pre));
	if (!rels || !pre) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < nmodels; i++)
		rels[i] = models[i].obj->key + pl;
	qsort(rels, nmodels, sizeof(*rels), cmp_str);
	if (tree_place(rels, nmodels, "", "", &placed, &nplaced, e))
		goto out;
	/* every model's objects at once: the headers of the whole tree cost
	 * about one round trip */
	for (i = 0; i < l.n; i++) {
		char *u;

		if (s3_key_is_model(l.objs[i].key) != 1)
			continue;
		if (!(u = obj_url(bucket, l.objs[i].key)) ||
		    pre_add(u, l.objs[i].etag, &pre[npre])) {
			free(u);
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		free(u);
		npre++;
	}
	pre_open_all(pre, npre);
	for (i = 0; i < nplaced; i++) {
		struct model *m = NULL;
		/* rel points pl bytes into its listed key */
		char *u = obj_url(bucket, placed[i].rel - pl);

		if (!u) {
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		rc = open_model_at(u, bucket, NULL, &m, e);
		if (rc == 0)
			rc = catalog_add(cat, placed[i].name, u, m, e);
		free(u);
		if (rc)
			goto out;
		rc = -1;
	}
	rc = 0;
out:
	pre_drop_unused();
	if (rc == 0)
		rc = catalog_finish(cat, e);
	if (rc == 0) {
		err_reset_where(e);
		*out = cat;
	} else {
		catalog_free(cat);
	}
	named_free(placed, nplaced);
	free(pre);
	free(rels);
	free(models);
	s3_listing_free(&l);
	free(bucket);
	free(key);
	return rc;
}
