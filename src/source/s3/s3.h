/* s3.h - s3://BUCKET/KEY, s3://BUCKET/PREFIX/ and s3://BUCKET/ sources.
 *
 * An object is read through the HTTP range-request source, signed with AWS
 * Signature Version 4 (libcurl's CURLOPT_AWS_SIGV4) and pinned to the ETag
 * seen when it was opened (If-Match on every data request).  A prefix or a
 * bucket is listed with ListObjectsV2; the model layer places its models
 * by the local directory rules (model/s3_tree.c).  Credentials, region and endpoint come from the places the AWS
 * CLI reads them, in its order (s3_conf.c).
 */
#ifndef STFS_S3_H
#define STFS_S3_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct source;

struct s3_options {
	int anonymous;		/* 1: send no signature (public buckets) */
};

/* Set the options before the first open (front ends; -o s3_anonymous).
 * Without it: signed when credentials are found, anonymous otherwise. */
void s3_set_options(const struct s3_options *o);

/* Open one object, s3://BUCKET/KEY (%XX in KEY are decoded).  0 or -1
 * with *e: a refused request names the bucket, S3's error code and what
 * to check. */
int source_open_s3(const char *url, struct source **out, struct err *e);

/* Open one object as a listing gave it, pinned to its ETag and size: no
 * open request, and a replaced object fails its reads (EIO).  etag NULL:
 * as source_open_s3(). */
int s3_open_pinned(const char *url, const char *etag, uint64_t size,
		   struct source **out, struct err *e);

/* What a prefix (s3://BUCKET/PREFIX/, s3://BUCKET/, or a key whose name
 * is no model file's (format/naming.h) nor a .json, as `aws s3 ls` reads
 * it) holds: every object below it (the model layer picks the models,
 * naming_listed, and shows the rest in MNT/.files/), in key order, names
 * starting with '.' and folder markers (keys ending in '/') left out. */
struct s3_prefix {
	size_t n;
	const char **rel;	/* key below the prefix */
	const char **url;	/* s3://BUCKET/KEY: the name to open it by */
	const char **etag;	/* its ETag as listed (NULL: none) */
	uint64_t *size;		/* its size as listed */
	struct s3_prefix_priv *priv;
};

/* List source.  0 with *out filled; 1 when source names one object
 * (nothing listed: open it as a file or an index); -1 with *e (also when
 * the prefix holds no model object, configs aside: ERR_USAGE). */
int s3_prefix_list(const char *source, struct s3_prefix *out, struct err *e);

/* Open the n listed objects url names, all at once (up to the HTTP
 * layer's most requests in flight), each pinned to its listed ETag: a
 * source_opener then hands them out (a failure is kept and repeated
 * then), each counted on meter (may be NULL; base/meter.h).  arg is the
 * struct s3_prefix (the shape of catalog_listing's open_ahead); returns
 * 0. */
struct meter;
int s3_prefix_open_ahead(void *arg, const char *const *url, size_t n,
			 struct meter *meter, struct err *e);

/* A struct source_opener's open and keep, arg the struct s3_prefix: an
 * object opened ahead is handed out once (or its failure repeated);
 * others are opened now, pinned to their listed ETag when listed. */
int s3_prefix_open(void *arg, const char *url, struct source **out,
		   struct err *e);
void s3_prefix_keep(void *arg, const char *url, struct source *s);

/* Close what nobody took; forget the listing. */
void s3_prefix_free(struct s3_prefix *l);

/* The shared cache of a fleet (issue 41; source/http/http_tier.h says
 * what it does) in an S3-compatible bucket.  A field left NULL comes from
 * the environment variable named beside it. */
struct s3_tier_options {
	const char *url;	/* s3://BUCKET[/PREFIX]: STFS_SHARED_CACHE */
	const char *key_file;	/* the fleet's key: STFS_SHARED_CACHE_KEY */
	/* Credentials, region and endpoint: of this profile (in the AWS
	 * files), else as s3:// sources find theirs
	 * (STFS_SHARED_CACHE_PROFILE); an endpoint and a region before any
	 * other (STFS_SHARED_CACHE_ENDPOINT, STFS_SHARED_CACHE_REGION). */
	const char *profile;
	const char *endpoint;
	const char *region;
};

/* Make it the shared cache of the process's HTTP client, before the first
 * remote source opens.  0 (also when neither o nor the environment names
 * one), or -1 with *e (a malformed URL, the key file, a profile). */
int s3_tier_setup(const struct s3_tier_options *o, struct err *e);

#endif
