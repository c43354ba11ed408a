/* s3.c - s3:// objects and prefixes, as bytes and listings.
 *
 * s3://BUCKET/KEY names one object.  Each object becomes an HTTP
 * range-request source (source_http.c) signed with SigV4 and pinned to one
 * ETag: every data GET carries If-Match, a 412 or another ETag turns the
 * source stale (EIO), so a mount never mixes two versions.
 *
 * s3://BUCKET/PREFIX/ and s3://BUCKET/ are listed (ListObjectsV2, all
 * pages): the objects below the prefix, with the sizes and the ETags
 * every later request insists on (the ones whose names may be models,
 * format/naming.h, are the models'; the others MNT/.files/ shows).  The
 * ones the model layer will open are opened concurrently (all at once, up
 * to the HTTP layer's most requests in flight), so a mount costs one
 * round trip of headers, not one per object.  Which of them are models,
 * and where each goes, is the model layer's (model/s3_tree.c, catalog.h).
 */
#include "source/s3/s3.h"
#include "source/s3/s3_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/meter.h"
#include "base/nametab.h"
#include "base/parallel.h"
#include "base/text.h"
#include "format/naming.h"
#include "source/source.h"
#include "source/http/http_client.h"
#include "source/http/http_conf.h"
#include "source/http/source_http.h"

static struct s3_options opts;

void
s3_set_options(const struct s3_options *o)
{
	opts = *o;
}

/* The store's settings, unsigned when -o s3_anonymous or
 * STFS_S3_ANONYMOUS (a boolean: the one parser) says so; NULL with *e. */
static const struct s3_conf *
conf_get(struct err *e)
{
	int anon = http_conf_env_bool("STFS_S3_ANONYMOUS", 0, e);

	return anon < 0 ? NULL : s3_conf_get(opts.anonymous || anon, e);
}

int
s3_split_url(const char *url, char **bucket, char **key, struct err *e)
{
	const char *b = url + 5, *slash = strchr(b, '/'), *p;
	size_t bl = slash ? (size_t)(slash - b) : strlen(b);
	char *k, *o;

	*bucket = *key = NULL;
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

		if (*p == '%' && (hi = text_hexval(p[1])) >= 0 &&
		    (lo = text_hexval(p[2])) >= 0 && (hi | lo)) {
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

static int
parse_url(const char *url, char **bucket, char **key, struct err *e)
{
	if (s3_split_url(url, bucket, key, e))
		return err_at(e, url);
	return 0;
}

/* s3://BUCKET/KEY with the bytes of KEY that are not unreserved or '/'
 * %XX-encoded: the form shards.c builds for shard names next to an
 * index, so both name an object the same way. */
static char *
obj_url(const char *bucket, const char *key)
{
	char *enc = text_pct_encode(key, strlen(key), "/"), *out;

	if (!enc || asprintf(&out, "s3://%s/%s", bucket, enc) < 0)
		out = NULL;
	free(enc);
	return out;
}

/* A key whose name is no format's (format/naming.h: a model, an index, a
 * split set's part, a checkpoint) and no .json is a prefix, as for `aws
 * s3 ls`: s3://B/models/llama means models/llama/.  -1 when out of
 * memory. */
static int
as_prefix(char **key)
{
	size_t n = strlen(*key);
	struct naming nm;
	char *k;

	if (!n || (*key)[n - 1] == '/' ||
	    naming_of(*key, &nm) != NAMING_NONE ||
	    text_ends_with(*key, ".json"))
		return 0;
	k = realloc(*key, n + 2);
	if (!k)
		return -1;
	k[n] = '/';
	k[n + 1] = '\0';
	*key = k;
	return 0;
}

/* Open object url, pinned to etag (NULL: the one its open request
 * sees); with its size known as well no open request is sent. */
static int
open_object(const char *url, const char *etag, int size_known, uint64_t size,
	    struct source **out, struct err *e)
{
	const struct s3_conf *c = conf_get(e);
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
	ho.size_known = size_known;
	ho.size = size;
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
	return open_object(url, NULL, 0, 0, out, e);
}

int
s3_open_pinned(const char *url, const char *etag, uint64_t size,
	       struct source **out, struct err *e)
{
	return open_object(url, etag, etag != NULL, size, out, e);
}

int
s3_key_listed(const char *key)
{
	const char *base = strrchr(key, '/');

	base = base ? base + 1 : key;
	return base[0] != '.' && naming_listed(base);
}

/* ---- a prefix: its model objects, opened ahead ------------------------- */

struct s3_prefix_obj {
	char *rel;		/* key below the prefix */
	char *url;		/* s3://BUCKET/KEY as shards.c builds it */
	char *etag;		/* from the listing: every request insists */
	uint64_t size;		/* from the listing */
	struct source *src;	/* opened ahead (or given back), until taken */
	int ahead;		/* to be opened ahead */
	int tried;		/* opened ahead: err holds its failure */
	struct err err;
};

struct s3_prefix_priv {
	struct s3_prefix_obj *objs;
	size_t n;
	struct nametab byurl;	/* url -> index in objs */
	pthread_mutex_t lock;
	struct meter *meter;	/* during s3_prefix_open_ahead() */
};

static int
url_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct s3_prefix_priv *p = ctx;
	const char *u = p->objs[id].url;

	return strlen(u) == k->len && memcmp(u, k->name, k->len) == 0;
}

static struct s3_prefix_obj *
find_obj(struct s3_prefix_priv *p, const char *url)
{
	struct nametab_key k;
	long id;

	nametab_key(&k, 0, url, strlen(url));
	id = nametab_find(&p->byurl, &k);
	return id < 0 ? NULL : &p->objs[id];
}

void
s3_prefix_free(struct s3_prefix *l)
{
	struct s3_prefix_priv *p = l->priv;
	size_t i;

	if (p) {
		for (i = 0; i < p->n; i++) {
			free(p->objs[i].rel);
			free(p->objs[i].url);
			free(p->objs[i].etag);
			source_close(p->objs[i].src);
		}
		free(p->objs);
		nametab_free(&p->byurl);
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	free(l->rel);
	free(l->url);
	free(l->etag);
	free(l->size);
	memset(l, 0, sizeof(*l));
}

int
s3_prefix_list(const char *source, struct s3_prefix *out, struct err *e)
{
	const struct s3_conf *c;
	struct s3_listing l = {0};
	struct s3_prefix_priv *p = NULL;
	char *bucket = NULL, *key = NULL;
	size_t i, pl, models = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (parse_url(source, &bucket, &key, e))
		return err_at(e, source);
	if (as_prefix(&key)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (*key && key[strlen(key) - 1] != '/') {
		rc = 1;		/* one object */
		goto out;
	}
	if (!(c = conf_get(e)) ||
	    s3_list(c, bucket, key, &l, e))
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->objs = calloc(l.n ? l.n : 1, sizeof(*p->objs))) ||
	    nametab_init(&p->byurl, l.n, url_eq, p)) {
		if (p)
			free(p->objs);
		free(p);
		p = NULL;
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	pthread_mutex_init(&p->lock, NULL);
	out->priv = p;
	pl = strlen(key);
	for (i = 0; i < l.n; i++) {
		struct s3_prefix_obj *o = &p->objs[p->n];
		struct nametab_key k;

		const char *base = strrchr(l.objs[i].key, '/');

		/* every object (MNT/.files/ shows them) but '.' names and
		 * folder markers */
		base = base ? base + 1 : l.objs[i].key;
		if (strncmp(l.objs[i].key, key, pl) != 0 || !*base ||
		    *base == '.')
			continue;
		o->rel = strdup(l.objs[i].key + pl);
		o->url = obj_url(bucket, l.objs[i].key);
		o->etag = l.objs[i].etag ? strdup(l.objs[i].etag) : NULL;
		if (!o->rel || !o->url || (l.objs[i].etag && !o->etag)) {
			free(o->rel);
			free(o->url);
			free(o->etag);
			memset(o, 0, sizeof(*o));
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		nametab_key(&k, 0, o->url, strlen(o->url));
		if (nametab_put(&p->byurl, &k, (uint32_t)p->n) == -2) {
			p->n++;
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		o->size = l.objs[i].size;
		p->n++;
		models += s3_key_listed(o->rel) && !naming_config(o->rel);
	}
	if (models == 0) {
		err_set(e, ERR_USAGE, "no model object (" NAMING_WHAT ") "
			"under this prefix (%zu keys listed); check the prefix",
			l.n);
		goto out;
	}
	out->n = p->n;
	out->rel = calloc(p->n, sizeof(*out->rel));
	out->url = calloc(p->n, sizeof(*out->url));
	out->etag = calloc(p->n, sizeof(*out->etag));
	out->size = calloc(p->n, sizeof(*out->size));
	if (!out->rel || !out->url || !out->etag || !out->size) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < p->n; i++) {
		out->rel[i] = p->objs[i].rel;
		out->url[i] = p->objs[i].url;
		out->etag[i] = p->objs[i].etag;
		out->size[i] = p->objs[i].size;
	}
	rc = 0;
out:
	s3_listing_free(&l);
	free(bucket);
	free(key);
	if (rc < 0) {
		s3_prefix_free(out);
		return err_at(e, source);
	}
	return rc;
}

static void
open_ahead_one(void *arg, size_t i)
{
	struct s3_prefix_priv *p = arg;
	struct s3_prefix_obj *o = &p->objs[i];
	struct source *s = NULL;
	struct err e = {0};

	if (!o->ahead || o->tried)
		return;	/* not asked for, or opened by an earlier batch */
	/* a header_read of a remote source is served from the 64 KiB of
	 * the open request for almost every file */
	open_object(o->url, o->etag, 0, 0, &s, &e);
	pthread_mutex_lock(&p->lock);
	o->src = s;
	o->err = e;
	o->tried = 1;
	pthread_mutex_unlock(&p->lock);
	meter_step(p->meter, source_http_fetched(s));
}

int
s3_prefix_open_ahead(void *arg, const char *const *url, size_t n,
		     struct meter *meter, struct err *e)
{
	struct s3_prefix_priv *p = ((struct s3_prefix *)arg)->priv;
	struct http_client *client;
	struct s3_prefix_obj *o;
	struct err conf = {0};
	size_t i, k = 0;
	unsigned cap;

	(void)e;	/* a failure is kept for when the object is opened */
	for (i = 0; i < n; i++)
		if ((o = find_obj(p, url[i])))
			o->ahead = 1;
	for (i = 0; i < p->n; i++)	/* what will be opened */
		k += p->objs[i].ahead && !p->objs[i].tried;
	/* An open costs a round trip, not bandwidth: every object at once,
	 * up to the most requests the HTTP layer keeps in flight.  Without
	 * its settings nothing is opened ahead: the opener then opens each
	 * object when asked, and says what is wrong. */
	if (!k || !(client = http_client_process(&conf)))
		return 0;
	cap = http_client_connections(client);
	meter_phase(meter, "files opened", k);
	p->meter = meter;
	parallel_run(p->n, k < cap ? (unsigned)k : cap, open_ahead_one, p);
	p->meter = NULL;
	return 0;
}

int
s3_prefix_open(void *arg, const char *url, struct source **out,
	       struct err *e)
{
	struct s3_prefix_priv *p = ((struct s3_prefix *)arg)->priv;
	struct s3_prefix_obj *o;
	char *etag = NULL;
	int rc;

	pthread_mutex_lock(&p->lock);
	o = find_obj(p, url);
	if (o && o->src) {
		*out = o->src;	/* handed over once */
		o->src = NULL;
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	if (o && o->tried && o->err.code != ERR_OK) {
		*e = o->err;
		pthread_mutex_unlock(&p->lock);
		return -1;
	}
	if (o && o->etag && !(etag = strdup(o->etag))) {
		pthread_mutex_unlock(&p->lock);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	pthread_mutex_unlock(&p->lock);
	rc = open_object(url, etag, 0, 0, out, e);
	free(etag);
	return rc;
}

void
s3_prefix_keep(void *arg, const char *url, struct source *s)
{
	struct s3_prefix_priv *p = ((struct s3_prefix *)arg)->priv;
	struct s3_prefix_obj *o;

	pthread_mutex_lock(&p->lock);
	o = find_obj(p, url);
	if (o && !o->src) {
		o->src = s;
		s = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	source_close(s);
}
