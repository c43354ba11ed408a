/* s3.h - s3://BUCKET/KEY, s3://BUCKET/PREFIX/ and s3://BUCKET/ sources.
 *
 * An object is read through the HTTP range-request source, signed with AWS
 * Signature Version 4 (libcurl's CURLOPT_AWS_SIGV4) and pinned to the ETag
 * seen when it was opened (If-Match on every data request).  A prefix or a
 * bucket is listed with ListObjectsV2 and follows the local directory rules
 * (s3.c).  Credentials, region and endpoint come from the places the AWS
 * CLI reads them, in its order (s3_conf.c).
 */
#ifndef STFS_S3_H
#define STFS_S3_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct model;
struct source;

struct s3_options {
	int anonymous;		/* 1: send no signature (public buckets) */
};

/* Set the options before the first open (front ends; -o s3_anonymous).
 * Without it: signed when credentials are found, anonymous otherwise. */
void s3_set_options(const struct s3_options *o);

/* 1 when name starts with s3:// */
int s3_is_url(const char *name);

/* Open one object, s3://BUCKET/KEY (%XX in KEY are decoded).  0 or -1
 * with *e: a refused request names the bucket, S3's error code and what
 * to check. */
int source_open_s3(const char *url, struct source **out, struct err *e);

/* What model_open() does for s3:// SOURCEs: an object (file or index), or
 * a prefix / bucket holding exactly one model. */
int s3_model_open(const char *source, struct model **out, struct err *e);

/* What catalog_open() does for s3:// SOURCEs: an object is one model at
 * the root; a prefix or a bucket is a tree of models by the catalog's
 * rules (catalog.h), every object of every model opened at once. */
struct catalog;
int s3_catalog_open(const char *source, struct catalog **out, struct err *e);

#endif
