/* hub_conf.c - the conventions huggingface_hub follows (constants.py),
 * read once per process into hub_cfg (hub_int.h): the endpoint, the
 * token and where it came from, the local hub cache, offline mode.
 */
#include "source/hub/hub_conf.h"
#include "source/hub/hub_int.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "source/source.h"
#include "source/http/http_conf.h"

#define HUB_DEFAULT_ENDPOINT	"https://huggingface.co"
#define HUB_TOKEN_MAX		4096

struct hub_cfg hub_cfg;

/* ---- the environment, as huggingface_hub reads it ----------------------- */

/* HF_HUB_ETAG_TIMEOUT: seconds an API call may take before the local hub
 * cache is used instead (huggingface_hub's default: 10).  0 with *out in
 * milliseconds, or -1 with *e. */
static int
env_api_ms(unsigned *out, struct err *e)
{
	const char *v = getenv("HF_HUB_ETAG_TIMEOUT");
	char *end;
	unsigned long s;

	*out = 10000;
	if (!v || !*v)
		return 0;
	errno = 0;
	s = strtoul(v, &end, 10);
	if (errno || *end || s < 1 || s > 3600 || *v == '-' || *v == '+') {
		err_set(e, ERR_USAGE, "`%s` is not a number of seconds from 1 "
			"to 3600", v);
		return err_at(e, "HF_HUB_ETAG_TIMEOUT");
	}
	*out = (unsigned)s * 1000;
	return 0;
}

static const char *
env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* "~/x" -> "$HOME/x" (huggingface_hub expands the user in these paths). */
static char *
expand_home(const char *p)
{
	const char *home = getenv("HOME");
	char *out;

	if (p[0] != '~' || (p[1] && p[1] != '/'))
		return strdup(p);
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : "/";
	}
	if (asprintf(&out, "%s%s", home, p + 1) < 0)
		return NULL;
	return out;
}

static char *
hf_home(void)
{
	const char *v = env_set("HF_HOME"), *xdg = env_set("XDG_CACHE_HOME");
	char *out;

	if (v)
		return expand_home(v);
	if (xdg) {
		if (asprintf(&out, "%s/huggingface", xdg) < 0)
			return NULL;
		return out;
	}
	return expand_home("~/.cache/huggingface");
}

/* A token may not carry bytes that would end the header line. */
static int
token_ok(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x21 || *t == 0x7f)
			return 0;
	return 1;
}

static char *
trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n ? strndup(s, n) : NULL;
}

static int
read_token_file(const char *path, struct err *e)
{
	char buf[HUB_TOKEN_MAX + 1];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f) {
		if (errno == ENOENT)
			return 0;	/* no token: anonymous */
		err_set(e, ERR_USAGE, "cannot read the token file: %s",
			strerror(errno));
		return err_at(e, path);
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n > HUB_TOKEN_MAX) {
		err_set(e, ERR_USAGE, "the token file is larger than "
			"%u bytes", HUB_TOKEN_MAX);
		return err_at(e, path);
	}
	hub_cfg.token = trimmed(buf, n);
	snprintf(hub_cfg.token_from, sizeof(hub_cfg.token_from), "%s", path);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

int
hub_conf_load(struct err *e)
{
	const char *ep = env_set("HF_ENDPOINT"), *v, *slash;
	char *home;

	if (hub_cfg.endpoint)
		return 0;
	/* The range source would send those headers to the CDN too. */
	if (env_set("STFS_HTTP_HEADER_FILE")) {
		err_set(e, ERR_USAGE, "does not apply to hf:// sources "
			"(its headers would reach the CDN): unset it and "
			"give the token with HF_TOKEN or in "
			"$HF_HOME/token");
		return err_at(e, "STFS_HTTP_HEADER_FILE");
	}
	hub_cfg.endpoint = strdup(ep ? ep : HUB_DEFAULT_ENDPOINT);
	home = hf_home();
	if (!hub_cfg.endpoint || !home) {
		free(home);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	while (strlen(hub_cfg.endpoint) > 8 &&
	       hub_cfg.endpoint[strlen(hub_cfg.endpoint) - 1] == '/')
		hub_cfg.endpoint[strlen(hub_cfg.endpoint) - 1] = '\0';
	if (!source_is_url(hub_cfg.endpoint)) {
		err_set(e, ERR_USAGE, "`%s` is not an http(s):// URL",
			hub_cfg.endpoint);
		return err_at(e, "HF_ENDPOINT");
	}
	slash = strchr(strstr(hub_cfg.endpoint, "://") + 3, '/');
	hub_cfg.origin = slash ? strndup(hub_cfg.endpoint,
					 (size_t)(slash - hub_cfg.endpoint))
			       : strdup(hub_cfg.endpoint);

	if ((v = env_set("HF_TOKEN")) || (v = env_set("HUGGING_FACE_HUB_TOKEN"))) {
		hub_cfg.token = trimmed(v, strlen(v));
		snprintf(hub_cfg.token_from, sizeof(hub_cfg.token_from), "%s",
			 env_set("HF_TOKEN") ? "HF_TOKEN" :
			 "HUGGING_FACE_HUB_TOKEN");
	} else if ((v = env_set("HF_TOKEN_PATH"))) {
		char *p = expand_home(v);

		if (!p || read_token_file(p, e)) {
			free(p);
			free(home);
			return p ? -1 : err_set(e, ERR_NO_MEMORY, "oom");
		}
		free(p);
	} else {
		char *p = NULL;

		if (asprintf(&p, "%s/token", home) < 0 || read_token_file(p, e)) {
			free(p);
			free(home);
			return -1;
		}
		free(p);
	}
	if (hub_cfg.token && !token_ok(hub_cfg.token)) {
		free(home);
		err_set(e, ERR_USAGE, "the Hub token holds spaces or "
			"control characters");
		return err_at(e, hub_cfg.token_from);
	}
	if ((v = env_set("HF_HUB_CACHE")) ||
	    (v = env_set("HUGGINGFACE_HUB_CACHE")))
		hub_cfg.cache = expand_home(v);
	else if (asprintf(&hub_cfg.cache, "%s/hub", home) < 0)
		hub_cfg.cache = NULL;
	free(home);
	if (!hub_cfg.origin || !hub_cfg.cache)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	hub_cfg.offline = http_conf_env_bool("HF_HUB_OFFLINE", 0, e);
	if (hub_cfg.offline < 0 || env_api_ms(&hub_cfg.api_ms, e))
		return -1;
	return 0;
}
