/* thash.h - SHA-256 of a byte range of a source (a tensor's bytes), read
 * in chunks; nettle computes the digest.  No FUSE. */
#ifndef STFS_THASH_H
#define STFS_THASH_H

#include <stdint.h>

struct source;

#define THASH_HEX_LEN 64

/* Lowercase hex SHA-256 of bytes [off, off + len) of src into hex (65
 * bytes with the NUL).  0, or -errno (read error, -ENOMEM). */
int thash_sha256(struct source *src, uint64_t off, uint64_t len,
		 char hex[THASH_HEX_LEN + 1]);

#endif
