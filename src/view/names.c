/* names.c - tensor name -> file name encoding (rules in names.h). */
#include "view/names.h"

#include <string.h>

#include "base/text.h"

static const char hexup[] = "0123456789ABCDEF";
static const char hexlow[] = "0123456789abcdef";

uint64_t
names_fnv1a(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Rule 1: bytes that can never appear in a file name as themselves. */
static int
must_escape(unsigned char c)
{
	return c == '/' || c == '%' || c < 0x20 || c == 0x7f;
}

static int
ends_json(const char *name, size_t len)
{
	return len >= NAMES_SUFFIX_LEN &&
	       memcmp(name + len - NAMES_SUFFIX_LEN, NAMES_SUFFIX,
		      NAMES_SUFFIX_LEN) == 0;
}

static int
is_reserved(const char *name, size_t len)
{
	return len >= 2 && name[0] == '_' && name[1] == '_' &&
	       name[len - 2] == '_' && name[len - 1] == '_';
}

/* Bytes of the UTF-8 sequence starting at s[0] (1 for anything that is
 * not a well-formed lead followed by continuation bytes, so truncation
 * stays safe even on bytes the header parser would have refused). */
static size_t
utf8_unit(const unsigned char *s, size_t avail)
{
	size_t n, i;

	if (s[0] >= 0xc0 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf7)
		n = 4;
	else
		return 1;
	if (n > avail)
		n = avail;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return i;
	return n;
}

size_t
names_encode(const char *name, size_t len, char out[NAMES_MAX + 1])
{
	const unsigned char *s = (const unsigned char *)name;
	size_t o = 0, keep = 0, i = 0, dot = (size_t)-1, n;
	int reserved;
	uint64_t h;
	int k;

	if (len == 0) {
		memcpy(out, "%", 2);
		return 1;
	}
	if (ends_json(name, len))
		dot = len - NAMES_SUFFIX_LEN;
	reserved = is_reserved(name, len);

	while (i < len) {
		int esc = must_escape(s[i]) || (i == 0 && s[i] == '.') ||
			  i == dot || (i == 0 && reserved);

		n = esc ? 1 : utf8_unit(s + i, len - i);
		if (o + (esc ? 3 : n) > NAMES_MAX)
			goto hashed;
		if (esc) {
			out[o++] = '%';
			out[o++] = hexup[s[i] >> 4];
			out[o++] = hexup[s[i] & 15];
		} else {
			memcpy(out + o, s + i, n);
			o += n;
		}
		i += n;
		/* Each unit boundary is a legal cut for rule 6. */
		if (o <= NAMES_KEEP)
			keep = o;
	}
	out[o] = '\0';
	return o;

hashed:
	/* Rule 6: out[0..keep) already holds the prefix. */
	o = keep;
	out[o++] = '%';
	out[o++] = '~';
	h = names_fnv1a(name, len);
	for (k = 60; k >= 0; k -= 4)
		out[o++] = hexlow[(h >> k) & 15];
	out[o] = '\0';
	return o;
}

int
names_is_identity(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > NAMES_MAX || name[0] == '.' ||
	    ends_json(name, len) || is_reserved(name, len))
		return 0;
	for (i = 0; i < len; i++)
		if (must_escape((unsigned char)name[i]))
			return 0;
	return 1;
}

int
names_decode(const char *enc, size_t len, char *out, size_t *outlen)
{
	char check[NAMES_MAX + 1];
	size_t i, o = 0;

	if (len == 0 || len > NAMES_MAX)
		return -1;
	if (len == 1 && enc[0] == '%') {
		*outlen = 0;
		return 0;
	}
	for (i = 0; i < len; i++) {
		int hi, lo;

		if (enc[i] != '%') {
			out[o++] = enc[i];
			continue;
		}
		if (len - i < 3)
			return -1;
		/* lower-case digits decode too, but fail the check below */
		hi = text_hexval(enc[i + 1]);
		lo = text_hexval(enc[i + 2]);
		if (hi < 0 || lo < 0)
			return -1;	/* includes "%~": not reversible */
		out[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	/* Only the canonical spelling decodes: re-encoding must give enc
	 * back, which rejects "%41" for "A", a bare "." and the like. */
	if (names_encode(out, o, check) != len || memcmp(check, enc, len) != 0)
		return -1;
	*outlen = o;
	return 0;
}
