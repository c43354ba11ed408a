/* buf.c - growable byte buffer and JSON string escaping. */
#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return -1;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n))
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(b, (size_t)n))
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

size_t
buf_put_u64(char *dst, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (dst)
		memcpy(dst, tmp + i, sizeof(tmp) - i);
	return sizeof(tmp) - i;
}

int
buf_add_u64(struct buf *b, uint64_t v)
{
	char tmp[20];

	return buf_add(b, tmp, buf_put_u64(tmp, v));
}

/* n bytes of s at dst + at, when there is a dst; at + n. */
static size_t
put(char *dst, size_t at, const char *s, size_t n)
{
	if (dst && n)
		memcpy(dst + at, s, n);
	return at + n;
}

size_t
buf_put_json_string(char *dst, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0, at;

	at = put(dst, 0, "\"", 1);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];

		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		/* Copy the clean run before this byte in one go. */
		at = put(dst, at, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': at = put(dst, at, "\\\"", 2); break;
		case '\\': at = put(dst, at, "\\\\", 2); break;
		case '\n': at = put(dst, at, "\\n", 2); break;
		case '\t': at = put(dst, at, "\\t", 2); break;
		case '\r': at = put(dst, at, "\\r", 2); break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			at = put(dst, at, esc, 6);
		}
	}
	at = put(dst, at, s + run, len - run);
	return put(dst, at, "\"", 1);
}

int
buf_add_json_string(struct buf *b, const char *s, size_t len)
{
	/* The exact length first: a reserve for the worst case (every byte
	 * \u00XX) would ask six times the memory of a long string. */
	if (len > (SIZE_MAX - 3) / 6 ||
	    buf_reserve(b, buf_put_json_string(NULL, s, len)))
		return -1;
	b->len += buf_put_json_string(b->data + b->len, s, len);
	b->data[b->len] = '\0';
	return 0;
}

char *
buf_steal(struct buf *b)
{
	char *p = b->data;

	if (!p)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
