/* pickle_long.c - wide ints in decimal or hex (pickle_long.h). */
#include "format/torch/pickle_long.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

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

struct pickle_value *
pickle_long_value(struct pickle_store *s, const unsigned char *p, size_t n,
		  struct err *e)
{
	struct pickle_value *v;
	uint64_t u = 0;
	size_t k = n;

	/* bytes that only repeat the sign do not count */
	while (k > 8 && ((p[k - 1] == 0 && p[k - 2] < 0x80) ||
			 (p[k - 1] == 0xff && p[k - 2] >= 0x80)))
		k--;
	if (k > 8)
		return pickle_store_str(s, PICKLE_LONG, p, k, e);
	for (size_t j = k; j-- > 0;)
		u = u << 8 | p[j];
	if (k && k < 8 && (u >> (k * 8 - 1)) & 1)
		u |= ~(uint64_t)0 << (k * 8);	/* sign-extend */
	v = pickle_store_new(s, PICKLE_INT, e);
	if (v)
		memcpy(&v->i, &u, sizeof(v->i));
	return v;
}

struct pickle_value *
pickle_long_decimal(struct pickle_store *s, const char *p, size_t n, int neg,
		    struct err *e)
{
	/* 10^4300 < 2^14285: 447 limbs of 32 bits, and one for the sign */
	uint32_t limb[(PICKLE_LONG_DIGITS_MAX * 10 / 3 + 31) / 32 + 2];
	unsigned char bytes[sizeof(limb)];
	size_t nl = 0, i = 0;

	if (n > PICKLE_LONG_DIGITS_MAX)
		n = PICKLE_LONG_DIGITS_MAX;	/* (the caller checks) */
	while (i < n) {
		/* the next (up to) nine digits: limb = limb * 10^k + chunk */
		uint64_t mul = 1, carry = 0;

		for (size_t j = 0; j < 9 && i < n; j++, i++) {
			mul *= 10;
			carry = carry * 10 + (uint64_t)(p[i] - '0');
		}
		for (size_t j = 0; j < nl; j++) {
			uint64_t cur = (uint64_t)limb[j] * mul + carry;

			limb[j] = (uint32_t)cur;
			carry = cur >> 32;
		}
		if (carry)
			limb[nl++] = (uint32_t)carry;
	}
	limb[nl++] = 0;		/* room for the sign bit */
	for (size_t j = 0; j < nl * 4; j++)
		bytes[j] = (unsigned char)(limb[j / 4] >> (8 * (j % 4)));
	if (neg) {		/* two's complement: invert, add one */
		unsigned carry = 1;

		for (size_t j = 0; j < nl * 4; j++) {
			unsigned b = (unsigned char)~bytes[j] + carry;

			bytes[j] = (unsigned char)b;
			carry = b >> 8;
		}
	}
	return pickle_long_value(s, bytes, nl * 4, e);
}
