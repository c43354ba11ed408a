/* view_sha256.h - the user.safetensors.sha256 xattr's value: a tensor's
 * SHA-256, computed on the first get and kept for the mount's life
 * (memo.h: concurrent first getters wait for one computation). */
#ifndef STFS_VIEW_SHA256_H
#define STFS_VIEW_SHA256_H

struct buf;
struct view;
struct model_tensor;

/* The lowercase hex SHA-256 of tensor mt's bytes appended to out.  0 or
 * -errno (-EIO: the source could not be read, or changed). */
int view_sha256(const struct view *v, const struct model_tensor *mt,
		struct buf *out);

#endif
