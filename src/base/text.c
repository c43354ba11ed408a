/* text.c - see text.h. */
#include "base/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int
text_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int
text_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

char *
text_pct_encode(const char *s, size_t n, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out, *o;
	size_t i;

	if (n > (((size_t)-1) - 1) / 3)
		return NULL;
	out = malloc(3 * n + 1);
	if (!out)
		return NULL;
	for (o = out, i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (unreserved(c) || (c && keep && strchr(keep, c))) {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

char *
text_pct_decode(const char *s, size_t n, const char *refuse, size_t *outlen)
{
	char *out = malloc(n + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int hi = i + 2 < n ? text_hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? text_hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0)
				goto bad;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0 || (refuse && strchr(refuse, c)))
			goto bad;
		*o++ = (char)c;
	}
	*o = '\0';
	if (outlen)
		*outlen = (size_t)(o - out);
	return out;
bad:
	free(out);
	return NULL;
}

/* The rules of Rust's core::str::from_utf8, including how many bytes it
 * reports as the invalid sequence. */
static int
utf8_seq(const unsigned char *p, size_t n, size_t i, unsigned *bad_len)
{
	unsigned char c = p[i], lo = 0x80, hi = 0xBF;
	unsigned need;

	if (c >= 0xC2 && c <= 0xDF) {
		need = 1;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		if (c == 0xE0)
			lo = 0xA0;	/* no overlongs */
		else if (c == 0xED)
			hi = 0x9F;	/* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		if (c == 0xF0)
			lo = 0x90;	/* no overlongs */
		else if (c == 0xF4)
			hi = 0x8F;	/* nothing above U+10FFFF */
	} else {
		*bad_len = 1;
		return -1;
	}
	for (unsigned k = 1; k <= need; k++) {
		unsigned char b;

		if (i + k >= n) {
			*bad_len = 0;
			return -1;
		}
		b = p[i + k];
		if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) {
			*bad_len = k;
			return -1;
		}
	}
	return (int)need + 1;
}

int
text_utf8_check(const char *buf, size_t len, size_t *bad_index,
		unsigned *bad_len)
{
	const unsigned char *p = (const unsigned char *)buf;
	size_t i = 0;

	while (i < len) {
		int w;

		/* ASCII fast path, eight bytes at a time */
		while (len - i >= 8) {
			uint64_t v;

			memcpy(&v, p + i, 8);
			if (v & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		while (i < len && p[i] < 0x80)
			i++;
		if (i >= len)
			break;
		w = utf8_seq(p, len, i, bad_len);
		if (w < 0) {
			*bad_index = i;
			return -1;
		}
		i += (size_t)w;
	}
	return 0;
}

size_t
text_time_iso(char *out, size_t n, const struct timespec *t)
{
	struct tm tm;
	char zone[8];
	time_t sec = t->tv_sec;
	int k;

	if (!localtime_r(&sec, &tm) ||
	    strftime(zone, sizeof(zone), "%z", &tm) == 0)
		zone[0] = '\0';
	k = snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03ld%s",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, t->tv_nsec / 1000000, zone);
	if (k < 0 || (size_t)k >= n) {
		if (n)
			out[0] = '\0';
		return 0;
	}
	return (size_t)k;
}
