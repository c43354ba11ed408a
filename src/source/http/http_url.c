/* http_url.c - URL handling for the HTTP source with libcurl's CURLU. */
#include "source/http/http_url.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/text.h"

static CURLU *
parse(const char *url)
{
	CURLU *u = curl_url();

	if (u && curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		u = NULL;
	}
	return u;
}

char *
http_url_redact(const char *url)
{
	CURLU *u = parse(url);
	char *s = NULL, *out;

	if (u && curl_url_set(u, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_QUERY, NULL, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
		out = strdup(s);
		curl_free(s);
	} else {
		/* Not a URL curl accepts (a later request will fail and
		 * say so): show what is before any query, and no user
		 * info, conservatively. */
		const char *host = strstr(url, "://");
		const char *at;
		size_t n = strcspn(url, "?#");

		host = host ? host + 3 : url;
		at = memchr(host, '@', n - (size_t)(host - url));
		if (at && asprintf(&out, "%.*s%.*s", (int)(host - url), url,
				   (int)(n - (size_t)(at + 1 - url)),
				   at + 1) < 0)
			out = NULL;
		else if (!at)
			out = strndup(url, n);
	}
	curl_url_cleanup(u);
	return out;
}

char *
http_url_base(const char *url)
{
	CURLU *u = parse(url);
	char *path = NULL, *out = NULL;
	const char *start, *end;

	if (!u || curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		return strdup("remote.safetensors");
	}
	end = path + strlen(path);
	start = end;
	while (start > path && start[-1] != '/')
		start--;
	if (start == end)
		out = strdup("remote.safetensors");
	else if (!(out = text_pct_decode(start, (size_t)(end - start), "/",
					 NULL)))
		out = strndup(start, (size_t)(end - start));
	curl_free(path);
	curl_url_cleanup(u);
	return out;
}

int
http_url_origin(const char *url, char *out, size_t cap)
{
	CURLU *u = parse(url);
	char *scheme = NULL, *host = NULL, *port = NULL, *p;
	int rc = -1;

	if (u && curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK) {
		for (p = scheme; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		for (p = host; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if ((size_t)snprintf(out, cap, "%s://%s:%s", scheme, host,
				     port) < cap)
			rc = 0;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

char *
http_url_resolve(const char *base, const char *location)
{
	CURLU *u = parse(base);
	char *s = NULL, *out = NULL;

	if (u && curl_url_set(u, CURLUPART_URL, location, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
		out = strdup(s);
		curl_free(s);
	}
	curl_url_cleanup(u);
	return out;
}

int
http_url_is_https(const char *url)
{
	return strncasecmp(url, "https://", 8) == 0;
}

/* The value of a query parameter (not decoded), or NULL. */
static const char *
query_param(const char *q, const char *name, size_t *len)
{
	size_t n = strlen(name);

	while (q && *q) {
		if (strncasecmp(q, name, n) == 0 && q[n] == '=') {
			*len = strcspn(q + n + 1, "&");
			return q + n + 1;
		}
		q = strchr(q, '&');
		if (q)
			q++;
	}
	return NULL;
}

time_t
http_url_expiry(const char *url)
{
	CURLU *u = parse(url);
	char *q = NULL;
	const char *d, *x;
	size_t dl, xl;
	time_t t = 0;

	if (!u || curl_url_get(u, CURLUPART_QUERY, &q, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		return 0;
	}
	d = query_param(q, "X-Amz-Date", &dl);
	x = query_param(q, "X-Amz-Expires", &xl);
	if (d && x && dl == 16) {
		struct tm tm = { 0 };

		if (sscanf(d, "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon,
			   &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			   &tm.tm_sec) == 6) {
			tm.tm_year -= 1900;
			tm.tm_mon -= 1;
			t = timegm(&tm) + (time_t)strtol(x, NULL, 10);
		}
	} else if ((x = query_param(q, "Expires", &xl)) != NULL) {
		t = (time_t)strtoll(x, NULL, 10);
	}
	curl_free(q);
	curl_url_cleanup(u);
	return t > 0 ? t : 0;
}
