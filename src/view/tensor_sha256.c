/* tensor_sha256.c - SHA-256 of a tensor's bytes (see tensor_sha256.h). */
#include "view/tensor_sha256.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdlib.h>

#include "source/source.h"

#define CHUNK (4u << 20)

struct src_at {
	struct source *src;
	uint64_t off;
};

static int
read_source(void *arg, uint64_t off, size_t len, void *dst)
{
	const struct src_at *s = arg;

	return source_pread(s->src, dst, len, s->off + off);
}

int
tensor_sha256(struct source *src, uint64_t off, uint64_t len,
	     char hex[TENSOR_SHA256_HEX_LEN + 1])
{
	struct src_at s = { src, off };

	return tensor_sha256_read(read_source, &s, len, hex);
}

int
tensor_sha256_read(int (*read)(void *arg, uint64_t off, size_t len,
			       void *dst), void *arg, uint64_t len,
		   char hex[TENSOR_SHA256_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	uint8_t digest[SHA256_DIGEST_SIZE], *buf;
	struct sha256_ctx ctx;
	uint64_t done = 0;
	int i;

	buf = malloc(len < CHUNK ? (len ? len : 1) : CHUNK);
	if (!buf)
		return -ENOMEM;
	sha256_init(&ctx);
	while (done < len) {
		size_t n = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
		int rc = read(arg, done, n, buf);

		if (rc) {
			free(buf);
			return rc;
		}
		sha256_update(&ctx, n, buf);
		done += n;
	}
	free(buf);
	sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
	for (i = 0; i < SHA256_DIGEST_SIZE; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[TENSOR_SHA256_HEX_LEN] = '\0';
	return 0;
}
