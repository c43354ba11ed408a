/* text.c - see text.h. */
#include "base/text.h"

#include <stdlib.h>
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
