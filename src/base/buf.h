/* buf.h - a growable byte buffer and JSON string escaping. */
#ifndef STFS_BUF_H
#define STFS_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;	/* always NUL-terminated after a successful add */
	size_t len;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0 }

/* All return 0, or -1 on allocation failure (buffer left valid). */
int buf_reserve(struct buf *b, size_t extra);
int buf_add(struct buf *b, const void *p, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_add_u64(struct buf *b, uint64_t v);

/* Append s[0..len) as a JSON string literal with quotes.  Input is
 * UTF-8 (validated by the header parser); '"', '\\' and bytes < 0x20
 * (including NUL) and 0x7f are escaped, everything else is copied. */
int buf_add_json_string(struct buf *b, const char *s, size_t len);

/* The same two into memory the caller sized (no NUL added), for a
 * writer that counts before it writes: the bytes go to dst, or nowhere
 * when dst is NULL; the number of bytes either way (20 at most for a
 * u64). */
size_t buf_put_u64(char *dst, uint64_t v);
size_t buf_put_json_string(char *dst, const char *s, size_t len);

/* Hand the bytes over to the caller (who frees them); b becomes empty. */
char *buf_steal(struct buf *b);
void buf_free(struct buf *b);

#endif
