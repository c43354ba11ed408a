/* http_url.h - what the HTTP source needs to know about URLs, through
 * libcurl's URL API (CURLU). */
#ifndef STFS_HTTP_URL_H
#define STFS_HTTP_URL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HTTP_URL_ORIGIN_MAX 300

/* The URL as it may be shown (messages, fsname, summaries): no
 * user:password@, no query, no fragment (presigned URLs carry
 * credentials in the query).  Malloc'd; NULL only without memory. */
char *http_url_redact(const char *url);

/* Last path component, percent-decoded when that yields a plain file
 * name; "remote.safetensors" for an empty one.  Malloc'd. */
char *http_url_base(const char *url);

/* "scheme://host:port" (lower case, default port made explicit): the
 * origin headers and credentials are bound to.  0, or -1 when the URL
 * does not parse. */
int http_url_origin(const char *url, char *out, size_t cap);

/* The absolute URL a Location header names, relative to base.  Malloc'd;
 * NULL when it does not parse. */
char *http_url_resolve(const char *base, const char *location);

/* 1 for https:// URLs. */
int http_url_is_https(const char *url);

/* When a presigned URL stops working, from its query (X-Amz-Date plus
 * X-Amz-Expires, or an Expires epoch); 0 when it does not say. */
time_t http_url_expiry(const char *url);

#endif
