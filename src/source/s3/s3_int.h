/* s3_int.h - shared by the s3 modules only: configuration (s3_conf.c),
 * requests and listing (s3_req.c), sources and discovery (s3.c). */
#ifndef STFS_S3_INT_H
#define STFS_S3_INT_H

#include <stddef.h>
#include <stdint.h>

struct err;

/* Where requests go and how they are signed, resolved once per process. */
struct s3_conf {
	char *region;		/* never NULL ("us-east-1" by default) */
	char *endpoint;		/* "scheme://host[:port]" without a trailing
				   '/', or NULL: AWS (virtual-hosted style) */
	char *key;		/* NULL: anonymous */
	char *secret;
	char *token;		/* session token or NULL */
	char *sigv4;		/* "aws:amz:REGION:s3" */
	char *origin;		/* where the credentials came from, for
				   messages: "AWS_ACCESS_KEY_ID", "profile
				   dev in /root/.aws/credentials", ... */
	char *profile;		/* the profile name used */
};

/* The process-wide configuration (loaded at the first call; thread
 * safe).  NULL with *e when a file is unreadable or a named profile does
 * not exist. */
const struct s3_conf *s3_conf_get(int anonymous, struct err *e);

/* Load a configuration from the environment and the AWS files (tests of
 * the lookup order use this directly).  0 or -1 with *e. */
int s3_conf_load(struct s3_conf *c, int anonymous, struct err *e);

/* What a configuration of its own (the shared cache's, s3_tier.c) says
 * apart from the environment; NULL fields: as s3_conf_load(). */
struct s3_conf_apart {
	/* the credentials, region and endpoint of this profile (which must
	 * exist), before the environment's AWS_ACCESS_KEY_ID, AWS_REGION and
	 * AWS_ENDPOINT_URL* (those belong to the sources) */
	const char *profile;
	const char *region;	/* before any other */
	const char *endpoint;	/* before any other */
};
int s3_conf_load_apart(struct s3_conf *c, const struct s3_conf_apart *a,
		       struct err *e);
void s3_conf_free(struct s3_conf *c);

/* The HTTP URL of an object (key == NULL: of the bucket, for listing),
 * path-style at an endpoint, virtual-hosted on AWS.  Unreserved bytes
 * and '/' stay, everything else is %XX-encoded.  NULL when out of memory. */
char *s3_http_url(const struct s3_conf *c, const char *bucket,
		  const char *key);

/* s3://BUCKET[/KEY] -> bucket, key ("" when absent; %XX decoded), both
 * the caller's to free.  0, or -1 with *e (no place named). */
int s3_split_url(const char *url, char **bucket, char **key, struct err *e);

/* One object found by a listing. */
struct s3_object {
	char *key;
	uint64_t size;
	char *etag;
};

struct s3_listing {
	size_t n;
	struct s3_object *objs;
	unsigned requests;	/* ListObjectsV2 pages fetched */
};

/* Every key under prefix ("" for the whole bucket), all pages.  0 or -1
 * with *e (S3 error code and what to check). */
int s3_list(const struct s3_conf *c, const char *bucket, const char *prefix,
	    struct s3_listing *out, struct err *e);
void s3_listing_free(struct s3_listing *l);

/* Explain why a GET of bucket/key fails: one signed request, S3's error
 * code put into *e as a one-line message.  Always returns -1. */
int s3_diagnose(const struct s3_conf *c, const char *bucket, const char *key,
		const char *display, struct err *e);

/* Turn an S3 error code (or a bare HTTP status when code is NULL) into a
 * message in *e.  Returns -1. */
int s3_error(const struct s3_conf *c, const char *bucket, long status,
	     const char *code, struct err *e);

/* 1 when a prefix's listing keeps the key: a name format/naming.h lists
 * (naming_listed) whose last component does not start with '.'. */
int s3_key_listed(const char *key);

#endif
