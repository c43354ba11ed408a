/* pickle_long.c - wide ints in decimal or hex (pickle_long.h). */
#include "format/torch/pickle_long.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 1000000000u	/* nine decimal digits */

/* The magnitude of the two's complement bytes p[0..n) (little-endian)
 * into mag[0..n); 1 when negative. */
static int
magnitude(const unsigned char *p, size_t n, unsigned char *mag)
{
	int neg = n && (p[n - 1] & 0x80);
	unsigned carry = 1;

	for (size_t i = 0; i < n; i++) {
		unsigned b = neg ? (unsigned)(unsigned char)~p[i] + carry : p[i];

		mag[i] = (unsigned char)b;
		carry = neg ? b >> 8 : 0;
	}
	return neg;
}

static int
add_hex(struct buf *b, const unsigned char *mag, size_t n, int neg)
{
	static const char digits[] = "0123456789abcdef";
	size_t top = n;
	char *out;
	size_t k = 0;

	while (top > 1 && mag[top - 1] == 0)
		top--;
	if (buf_reserve(b, 2 * top + 4) < 0)
		return -1;
	out = b->data + b->len;
	if (neg)
		out[k++] = '-';
	out[k++] = '0';
	out[k++] = 'x';
	for (size_t i = top; i-- > 0;) {
		if (i + 1 < top || mag[i] >> 4)
			out[k++] = digits[mag[i] >> 4];
		out[k++] = digits[mag[i] & 15];
	}
	out[k] = '\0';
	b->len += k;
	return 0;
}

/* Decimal by repeated division of 32-bit limbs by 10^9. */
static int
add_decimal(struct buf *b, const unsigned char *mag, size_t n, int neg)
{
	size_t nl = (n + 3) / 4, nc = 0;
	uint32_t *limb = calloc(nl ? nl : 1, sizeof(*limb));
	/* 8 bits make 2.41 digits at most: n / 3 chunks of nine hold them */
	uint32_t *chunk = calloc(n / 3 + 2, sizeof(*chunk));
	int rc = -1;

	if (!limb || !chunk)
		goto out;
	for (size_t i = 0; i < n; i++)
		limb[i / 4] |= (uint32_t)mag[i] << (8 * (i % 4));
	while (nl && limb[nl - 1] == 0)
		nl--;
	do {
		uint64_t rem = 0;

		for (size_t i = nl; i-- > 0;) {
			uint64_t cur = rem << 32 | limb[i];

			limb[i] = (uint32_t)(cur / CHUNK);
			rem = cur % CHUNK;
		}
		chunk[nc++] = (uint32_t)rem;
		while (nl && limb[nl - 1] == 0)
			nl--;
	} while (nl);
	if (buf_addf(b, "%s%u", neg ? "-" : "", chunk[nc - 1]) < 0)
		goto out;
	for (size_t i = nc - 1; i-- > 0;)
		if (buf_addf(b, "%09u", chunk[i]) < 0)
			goto out;
	rc = 0;
out:
	free(limb);
	free(chunk);
	return rc;
}

int
pickle_long_text(const struct pickle_value *v, struct buf *b)
{
	size_t n = v->str.len;
	unsigned char *mag = malloc(n ? n : 1);
	int neg, rc;

	if (!mag)
		return -1;
	neg = magnitude((const unsigned char *)v->str.p, n, mag);
	if (n <= PICKLE_LONG_DECIMAL_BYTES)
		rc = add_decimal(b, mag, n, neg) < 0 ? -1 : 1;
	else
		rc = add_hex(b, mag, n, neg);
	free(mag);
	return rc;
}
