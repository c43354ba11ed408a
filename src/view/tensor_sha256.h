/* tensor_sha256.h - SHA-256 of a byte range of a source (a tensor's bytes), read
 * in chunks; nettle computes the digest.  No FUSE. */
#ifndef STFS_TENSOR_SHA256_H
#define STFS_TENSOR_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct source;

#define TENSOR_SHA256_HEX_LEN 64

/* Lowercase hex SHA-256 of bytes [off, off + len) of src into hex (65
 * bytes with the NUL).  0, or -errno (read error, -ENOMEM). */
int tensor_sha256(struct source *src, uint64_t off, uint64_t len,
		 char hex[TENSOR_SHA256_HEX_LEN + 1]);

/* The same over len bytes read by read(arg, off, len, dst), off from 0:
 * 0 or -errno. */
int tensor_sha256_read(int (*read)(void *arg, uint64_t off, size_t len,
				   void *dst), void *arg, uint64_t len,
		       char hex[TENSOR_SHA256_HEX_LEN + 1]);

#endif
