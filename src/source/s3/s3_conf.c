/* s3_conf.c - credentials, region and endpoint, where the AWS CLI looks.
 *
 * Order (the AWS CLI's):
 *   credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+
 *     AWS_SESSION_TOKEN); else profile AWS_PROFILE (default "default") in
 *     the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 *     ~/.aws/credentials: section [NAME]); else the same keys in the
 *     config file (AWS_CONFIG_FILE, else ~/.aws/config: section
 *     [profile NAME], or [default]); else none: anonymous requests.
 *   region: AWS_REGION, AWS_DEFAULT_REGION, the profile's "region",
 *     "us-east-1".
 *   endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
 *     "endpoint_url"; none: AWS itself.
 * A profile named by AWS_PROFILE that exists in neither file is an error,
 * as for the CLI.  Secrets are copied into memory only; they never reach
 * argv, messages or logs.
 */
#include "source/s3/s3_int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/text.h"

#define S3_INI_MAX	(1u << 20)

/* Values of one profile, gathered from both files. */
struct s3_prof {
	char *key, *secret, *token, *region, *endpoint;
	int found;
};

static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int
set_once(char **dst, const char *v)
{
	if (*dst)
		return 0;	/* first file, first line wins */
	*dst = strdup(v);
	return *dst ? 0 : -1;
}

/* Read section `want` of an INI file into p (missing file: nothing).
 * Indented lines (nested "s3 =" blocks) are skipped.  0, or -1 with *e. */
static int
ini_read(const char *path, const char *want, struct s3_prof *p,
	 struct err *e)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int in = 0, rc = 0;
	size_t total = 0;

	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		err_set(e, ERR_USAGE, "cannot read the AWS configuration: "
			"%s", strerror(errno));
		return err_at(e, path);
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *k, *v;

		total += strlen(line);
		if (total > S3_INI_MAX) {
			err_set(e, ERR_USAGE, "AWS configuration file larger "
				"than 1 MiB");
			rc = err_at(e, path);
			break;
		}
		if (line[0] == ' ' || line[0] == '\t')
			continue;
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');

			if (!end)
				continue;
			*end = '\0';
			in = strcmp(trim(s + 1), want) == 0;
			if (in)
				p->found = 1;
			continue;
		}
		if (!in || !(eq = strchr(s, '=')))
			continue;
		*eq = '\0';
		k = trim(s);
		v = trim(eq + 1);
		if (!*v)
			continue;
		if ((!strcmp(k, "aws_access_key_id") && set_once(&p->key, v)) ||
		    (!strcmp(k, "aws_secret_access_key") &&
		     set_once(&p->secret, v)) ||
		    (!strcmp(k, "aws_session_token") &&
		     set_once(&p->token, v)) ||
		    (!strcmp(k, "region") && set_once(&p->region, v)) ||
		    (!strcmp(k, "endpoint_url") && set_once(&p->endpoint, v))) {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			break;
		}
	}
	explicit_bzero(line, sizeof(line));
	fclose(f);
	return rc;
}

static char *
home_file(const char *env, const char *rel)
{
	const char *v = getenv(env), *home = getenv("HOME");
	char *out;

	if (v && *v)
		return strdup(v);
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : "/";
	}
	if (asprintf(&out, "%s/%s", home, rel) < 0)
		return NULL;
	return out;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void
prof_free(struct s3_prof *p)
{
	if (p->secret)
		explicit_bzero(p->secret, strlen(p->secret));
	if (p->token)
		explicit_bzero(p->token, strlen(p->token));
	free(p->key);
	free(p->secret);
	free(p->token);
	free(p->region);
	free(p->endpoint);
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The configuration: the environment's, or with a (not NULL) apart from
 * it. */
static int
conf_load(struct s3_conf *c, int anonymous, const struct s3_conf_apart *a,
	  struct err *e)
{
	struct s3_prof cred = {0}, conf = {0};
	int mine = a && a->profile;	/* the profile before the env */
	const char *profile = mine ? a->profile : env("AWS_PROFILE");
	char *cred_path = home_file("AWS_SHARED_CREDENTIALS_FILE",
				    ".aws/credentials");
	char *conf_path = home_file("AWS_CONFIG_FILE", ".aws/config");
	char *section = NULL;
	const char *v;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!cred_path || !conf_path || !(c->profile = strdup(profile ?
							      profile : "default")) ||
	    asprintf(&section, "%s%s", strcmp(c->profile, "default") ?
		     "profile " : "", c->profile) < 0) {
		section = NULL;
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (ini_read(cred_path, c->profile, &cred, e) ||
	    ini_read(conf_path, section, &conf, e))
		goto out;
	if (profile && !cred.found && !conf.found) {
		err_set(e, ERR_USAGE, "%s names profile %s, which is "
			"neither in %s nor in %s; check the name%s",
			mine ? "-o shared_cache_profile" : "AWS_PROFILE",
			profile, cred_path, conf_path, mine ? "" :
			" or unset AWS_PROFILE");
		goto out;
	}

	/* credentials */
	if (anonymous) {
		c->origin = strdup("-o s3_anonymous");
	} else if (!mine && env("AWS_ACCESS_KEY_ID") &&
		   env("AWS_SECRET_ACCESS_KEY")) {
		c->key = strdup(env("AWS_ACCESS_KEY_ID"));
		c->secret = strdup(env("AWS_SECRET_ACCESS_KEY"));
		c->token = dup_or_null(env("AWS_SESSION_TOKEN"));
		c->origin = strdup(c->token ? "AWS_ACCESS_KEY_ID, "
				   "AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN "
				   "in the environment" : "AWS_ACCESS_KEY_ID "
				   "and AWS_SECRET_ACCESS_KEY in the "
				   "environment");
	} else if (cred.key && cred.secret) {
		c->key = strdup(cred.key);
		c->secret = strdup(cred.secret);
		c->token = dup_or_null(cred.token);
		if (asprintf(&c->origin, "profile %s in %s", c->profile,
			     cred_path) < 0)
			c->origin = NULL;
	} else if (conf.key && conf.secret) {
		c->key = strdup(conf.key);
		c->secret = strdup(conf.secret);
		c->token = dup_or_null(conf.token);
		if (asprintf(&c->origin, "profile %s in %s", c->profile,
			     conf_path) < 0)
			c->origin = NULL;
	} else {
		c->origin = strdup("no credentials found (anonymous)");
	}

	/* region and endpoint: given apart, the profile given apart's, the
	 * environment's, the profile's */
	v = a && a->region ? a->region : NULL;
	if (!v && mine)
		v = conf.region ? conf.region : cred.region;
	if (!v)
		v = env("AWS_REGION");
	if (!v)
		v = env("AWS_DEFAULT_REGION");
	if (!v)
		v = conf.region ? conf.region : cred.region;
	c->region = strdup(v ? v : "us-east-1");
	v = a && a->endpoint ? a->endpoint : NULL;
	if (!v && mine)
		v = conf.endpoint ? conf.endpoint : cred.endpoint;
	if (!v)
		v = env("AWS_ENDPOINT_URL_S3");
	if (!v)
		v = env("AWS_ENDPOINT_URL");
	if (!v)
		v = conf.endpoint ? conf.endpoint : cred.endpoint;
	if (v) {
		size_t n = strlen(v);

		while (n && v[n - 1] == '/')
			n--;
		c->endpoint = strndup(v, n);
		if (c->endpoint && (strncmp(c->endpoint, "http://", 7) &&
				    strncmp(c->endpoint, "https://", 8))) {
			err_set(e, ERR_USAGE, "the S3 endpoint %s is not an "
				"http:// or https:// URL; check %s"
				"AWS_ENDPOINT_URL(_S3) or endpoint_url of "
				"profile %s", c->endpoint, a ?
				"-o shared_cache_endpoint, " : "",
				c->profile);
			goto out;
		}
	}
	if (!c->origin || !c->region || (v && !c->endpoint) ||
	    asprintf(&c->sigv4, "aws:amz:%s:s3", c->region) < 0 ||
	    (c->key && !c->secret)) {
		c->sigv4 = NULL;
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (c->key && (strchr(c->key, ':') || strpbrk(c->key, "\r\n") ||
		       strpbrk(c->secret, "\r\n") ||
		       (c->token && strpbrk(c->token, "\r\n")))) {
		err_set(e, ERR_USAGE, "the AWS credentials from %s contain a "
			"colon or a line break; check them", c->origin);
		goto out;
	}
	rc = 0;
out:
	prof_free(&cred);
	prof_free(&conf);
	free(cred_path);
	free(conf_path);
	free(section);
	if (rc) {
		s3_conf_free(c);
		err_at(e, "s3");	/* settings, not one file */
	}
	return rc;
}

int
s3_conf_load(struct s3_conf *c, int anonymous, struct err *e)
{
	return conf_load(c, anonymous, NULL, e);
}

int
s3_conf_load_apart(struct s3_conf *c, const struct s3_conf_apart *a,
		   struct err *e)
{
	static const struct s3_conf_apart none;

	return conf_load(c, 0, a ? a : &none, e);
}

void
s3_conf_free(struct s3_conf *c)
{
	if (!c)
		return;
	if (c->secret)
		explicit_bzero(c->secret, strlen(c->secret));
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->region);
	free(c->endpoint);
	free(c->key);
	free(c->secret);
	free(c->token);
	free(c->sigv4);
	free(c->origin);
	free(c->profile);
	memset(c, 0, sizeof(*c));
}

static struct {
	pthread_mutex_t lock;
	int loaded;
	struct s3_conf conf;
} G = { .lock = PTHREAD_MUTEX_INITIALIZER };

const struct s3_conf *
s3_conf_get(int anonymous, struct err *e)
{
	const struct s3_conf *r = NULL;

	pthread_mutex_lock(&G.lock);
	if (!G.loaded && s3_conf_load(&G.conf, anonymous, e) == 0)
		G.loaded = 1;
	if (G.loaded)
		r = &G.conf;
	pthread_mutex_unlock(&G.lock);
	return r;
}

char *
s3_http_url(const struct s3_conf *c, const char *bucket, const char *key)
{
	/* Virtual-hosted style needs a bucket name that is a valid host
	 * label; names with dots would break TLS: path style for those. */
	int vhost = !c->endpoint && !strchr(bucket, '.');
	char *b = vhost ? NULL : text_pct_encode(bucket, strlen(bucket), NULL);
	char *k = key ? text_pct_encode(key, strlen(key), "/") : NULL;
	char *out = NULL;
	int n;

	if ((!vhost && !b) || (key && !k))
		n = -1;
	else if (c->endpoint)
		n = asprintf(&out, "%s/%s/%s", c->endpoint, b, k ? k : "");
	else if (vhost)
		n = asprintf(&out, "https://%s.s3.%s.amazonaws.com/%s", bucket,
			     c->region, k ? k : "");
	else
		n = asprintf(&out, "https://s3.%s.amazonaws.com/%s/%s",
			     c->region, b, k ? k : "");
	free(b);
	free(k);
	return n < 0 ? NULL : out;
}
