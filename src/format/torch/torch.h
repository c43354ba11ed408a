/* torch.h - PyTorch checkpoints (.bin, .pt, .pth): container.h's
 * interface for torch.save's zip format, read without running its pickle.
 *
 * The zip (torch_zip.h) holds the pickle and one entry per storage; the
 * pickle is read by pickle.h, which calls nothing, and its value tree
 * becomes the table (torch_tree.h).  Refused, each in one line saying
 * what to do: the legacy format (torch.save before 1.6, or with
 * _use_new_zipfile_serialization=False: a bare pickle followed by raw
 * storages), compressed entries, a checkpoint written big-endian.
 */
#ifndef STFS_TORCH_H
#define STFS_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "format/table.h"

struct err;

/* A zip (its first local header), or the legacy format's magic number
 * pickle. */
int torch_claims(const unsigned char *head, size_t n, uint64_t size);

/* What torch_open() returns for a zip that holds no data.pkl: container.h's
 * CONTAINER_NOT_MINE (this header cannot include container.h, which
 * includes it). */
#define TORCH_NOT_MINE (-2)

/* The table of the checkpoint in r.  0, -1 with *e (named after
 * r->name), or TORCH_NOT_MINE. */
int torch_open(const struct reader *r, struct header **out, struct err *e);

#endif
