/* fuzz_names.c - libFuzzer target for the tensor-name -> file-name
 * encoding (names.h): what a hostile header controls on the file system.
 *
 * Each input is used twice:
 *   1. as a tensor name (when it is valid UTF-8, as the header parser
 *      guarantees): its encoding must be a safe, bounded file name (no '/',
 *      no NUL, no control byte, not hidden, not a sidecar or a reserved
 *      __*__ name, valid UTF-8, at most NAMES_MAX bytes), and must decode
 *      back to the name unless it was cut and hashed (rule 6);
 *   2. as a file name a user might look up: when names_decode() accepts
 *      it, encoding the result must give the same bytes back (decoding is
 *      the exact inverse, so two names never share a file).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/names.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_names: %s:%d: invariant failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* Strict UTF-8 (no overlongs, no surrogates, at most U+10FFFF), as
 * serde_json and our header parser accept it. */
static int
utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i <= k)
			return 0;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

static void
check_encoding(const char *name, size_t len)
{
	char out[NAMES_MAX + 1], hex[17];
	char *back;
	size_t n, blen, i;
	int hashed;

	memset(out, 0x55, sizeof(out));
	n = names_encode(name, len, out);
	CHECK(n >= 1 && n <= NAMES_MAX);
	CHECK(out[n] == '\0');
	CHECK(strlen(out) == n);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)out[i];

		CHECK(c != '/' && c >= 0x20 && c != 0x7f);
	}
	CHECK(out[0] != '.');
	CHECK(!(n >= 5 && memcmp(out + n - 5, ".json", 5) == 0));
	CHECK(!(n >= 2 && out[0] == '_' && out[1] == '_' &&
		out[n - 2] == '_' && out[n - 1] == '_'));
	CHECK(utf8_valid((const unsigned char *)out, n));
	CHECK(names_is_identity(name, len) ==
	      (n == len && memcmp(out, name, len) == 0));

	hashed = n >= 18 && memcmp(out + n - 18, "%~", 2) == 0;
	back = malloc(n + 1);
	CHECK(back != NULL);
	if (hashed) {
		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)names_fnv1a(name, len));
		CHECK(memcmp(out + n - 16, hex, 16) == 0);
		CHECK(names_decode(out, n, back, &blen) == -1);
	} else {
		CHECK(memmem(out, n, "%~", 2) == NULL);
		CHECK(names_decode(out, n, back, &blen) == 0);
		CHECK(blen == len && memcmp(back, name, len) == 0);
	}
	free(back);
}

static void
check_decoding(const char *enc, size_t len)
{
	char out[NAMES_MAX + 1];
	char *name;
	size_t nlen, n;

	name = malloc(len + 1);
	CHECK(name != NULL);
	if (names_decode(enc, len, name, &nlen) == 0) {
		CHECK(nlen <= len);
		n = names_encode(name, nlen, out);
		CHECK(n == len && memcmp(out, enc, len) == 0);
	}
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy: the target must not read past the bytes given */
	char *p = malloc(size ? size : 1);

	CHECK(p != NULL);
	memcpy(p, data, size);
	if (utf8_valid(data, size))
		check_encoding(p, size);
	check_decoding(p, size);
	free(p);
	return 0;
}
