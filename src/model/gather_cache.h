/* gather_cache.h - the gathered bytes of strided views (a transposed
 * PyTorch tensor, model/tensor_render.h), computed in tiles and kept
 * while they are read.
 *
 * A read of a strided view's file asks for a window of its elements in C
 * order; a transpose's window is a band of a few rows whose elements lie
 * all over the storage, so that gathering each window alone costs a read
 * per stored row of a few bytes (a 4096 x 4096 float32 transpose read in
 * 128 KiB windows: 4096 reads of 32 bytes each).  The cache gathers a
 * tile of GATHER_CACHE_TILE bytes of the file at once (4096 reads of
 * 4 KiB for the same tensor) and keeps it while it is read, so that a
 * sequential reader (cat, np.fromfile, a .npy view, sha256) gathers each
 * tile once.
 *
 * Memory is bounded for the whole process: one cache of GATHER_CACHE_N
 * tiles (32 MiB) for every model of the mount.  A tile every byte of
 * which has been served is dropped at once (the kernel's page cache
 * keeps the file; the tile's work is done); the least recently used one
 * is replaced, unless it is in use (being read, or found in the last few
 * reads: readers of more files than there are tiles must not each regather
 * a tile per window).  A read that finds no tile to gather in gathers its
 * own window alone, as tensor_render_read() does: slower, the same bytes.
 * An allocation that fails fails the read (-ENOMEM), never gives other
 * bytes.  One lock, held only to find, insert and drop tiles; a tile is
 * gathered outside it, by one reader, the others waiting for it (the
 * kernel's read-ahead asks for neighbouring windows at once).
 */
#ifndef STFS_GATHER_CACHE_H
#define STFS_GATHER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "model/tensor_render.h"

struct tensor;

#define GATHER_CACHE_TILE ((size_t)16 << 20)
#define GATHER_CACHE_N 2

/* Bytes [off, off + len) of strided tensor t's file (its size bytes, its
 * elements gathered in C order; off + len within them) into dst, read
 * (read, arg: its stored bytes, tensor_render.h) through the cache.
 * owner: what t belongs to (its model), whose tiles gather_cache_drop()
 * drops.  0, or -errno (a read of the storage, -ENOMEM). */
int gather_cache_read(const void *owner, const struct tensor *t,
		      uint64_t size, uint64_t off, size_t len, void *dst,
		      tensor_render_read_fn read, void *arg);

/* Drop the tiles of owner's tensors (its model is being freed; none of
 * them is being read). */
void gather_cache_drop(const void *owner);

#endif
