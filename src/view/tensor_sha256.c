/* tensor_sha256.c - SHA-256 of a tensor's bytes (see tensor_sha256.h). */
#include "view/tensor_sha256.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdlib.h>

#include "source/source.h"

#define CHUNK (4u << 20)

int
tensor_sha256(struct source *src, uint64_t off, uint64_t len,
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
		int rc = source_pread(src, buf, n, off + done);

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
