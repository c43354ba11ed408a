/* header.h - parse and validate one safetensors header into the table of
 * table.h: safetensors' implementation of container.h.  No I/O
 * beyond header_read()'s two preads.
 *
 * Accepts exactly what the reference Rust reader (safetensors 0.8,
 * serde_json 1.0.150) accepts, except that duplicate keys (tensor names,
 * keys inside __metadata__) are refused: the format forbids them.
 */
#ifndef STFS_HEADER_H
#define STFS_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "format/table.h"

struct err;

#define HEADER_MAX_LEN 100000000ULL	/* reference MAX_HEADER_SIZE */
#define HEADER_MAX_DEPTH 127		/* nested containers incl. the root */

/* Parse and validate header bytes buf[0..n) of a file of file_size bytes
 * (file_size counts the 8-byte prefix).  0 with *out set (freed with
 * container_free()), or -1 with *e. */
int header_parse(const char *buf, size_t n, uint64_t file_size,
		 struct header **out, struct err *e);

/* container.h's claims() for safetensors: a length prefix that fits the
 * file, then '{'.  The table's first format reads unclaimed files too. */
int header_claims(const unsigned char *head, size_t n, uint64_t size);

/* container.h's open() for safetensors: read the prefix and the header
 * with two preads (never the data section) and parse them.  0 or -1 with
 * *e named after r->name (ERR_IO for read failures). */
int header_read(const struct reader *r, struct header **out, struct err *e);

#endif
