/* http_disk.h - the persistent disk cache of remote blocks.
 *
 * Under the block cache: a block fetched from the network is also written
 * to DIR/v1/KK/KEY/eN, the extent file of 16 blocks from block 16*N on
 * (the blocks, then a tag for each),
 * where KEY names the object's identity (its URL without user info and
 * query, or bucket/key, plus its ETag or commit and size); a later mount
 * of the same, unchanged object reads it from there instead of the
 * network.  Objects without a strong ETag are not cached.
 *
 * Crash-safe: a block's bytes are written before the tag that vouches for
 * them, a checksum (XXH3, 64 bits) verified on every read (a block never
 * written, torn or damaged is a miss, and written anew once fetched).
 * Several mounts may share DIR.  The total is kept under the limit by
 * evicting the least recently used extents (file mtime, touched by a hit
 * unless it was within the last minute) across all mounts.  A full or
 * failing disk turns the cache off for the client, with one warning.
 * Directories are 0700 and files 0600.
 *
 * Full blocks (page-aligned, from the cache's arena) go to and from the
 * disk around the page cache (O_DIRECT, where the file system allows it):
 * the cache's gigabytes neither cost a copy into the page cache on top of
 * the one the FUSE page cache holds nor push other files out of it.  A
 * load at 32 MB/s per connection went from 0.25-0.41 GB/s to 0.41-0.79
 * (the disk cache off: 0.42-0.77), and a second mount read from disk at
 * 1.1 GB/s where it had read the blocks from the page cache at 0.5-0.6
 * (scripts/bench-load).
 */
#ifndef STFS_HTTP_DISK_H
#define STFS_HTTP_DISK_H

#include <stddef.h>
#include <stdint.h>


struct http_conf;
struct http_disk;
struct http_disk_object;

/* A client's disk cache, with the directory, limit and switch of conf
 * (which stays the caller's); NULL without memory.  Free it after every
 * object it opened is closed. */
struct http_disk *http_disk_new(const struct http_conf *conf);
void http_disk_free(struct http_disk *dc);

/* The object's place in the cache, or NULL when the cache is off, the
 * object has no usable identity (no strong ETag) or the directory cannot
 * be made. */
struct http_disk_object *http_disk_open(struct http_disk *dc,
					const char *ident, const char *etag,
					uint64_t size);
void http_disk_close(struct http_disk_object *d);

/* Block idx (len bytes) into buf: 1 on a hit, 0 on a miss. */
int http_disk_get(struct http_disk_object *d, uint64_t idx, char *buf,
		  size_t len);

/* 1 when block idx is likely on disk: written or read by this process,
 * or tagged in its extent file (read once per extent, no checksum: a get
 * can still miss); 0 when it is not, or the cache is off (d NULL). */
int http_disk_has(struct http_disk_object *d, uint64_t idx);

/* 1 while the disk cache of d takes blocks (d not NULL, no failure). */
int http_disk_usable(const struct http_disk_object *d);

/* Keep block idx; failures only turn the cache off (with a warning). */
void http_disk_put(struct http_disk_object *d, uint64_t idx, const char *buf,
		   size_t len);

/* Evict least recently used extents until the total is under max bytes;
 * returns the total after.  Run by http_disk_put() now and then. */
uint64_t http_disk_trim(struct http_disk *dc, uint64_t max);

#endif
