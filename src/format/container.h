/* container.h - tensor containers: the one interface every file format
 * (safetensors today) offers the layers above, and the table of formats.
 *
 * A container is read into a table (struct header, table.h): the
 * tensors' names, dtypes, shapes and byte ranges, plus the file's
 * metadata.  Everything above the format layer works on that table and
 * the byte ranges only, so a new format does not touch the model, the
 * views or the mount.
 *
 * What a second format provides (one folder, src/format/NAME/, one line
 * in container.c's table, and its file names in naming.c's):
 *
 *   claims(head, n, size)  1 when the first bytes say the file is this
 *          format (a magic number: "GGUF", a zip's "PK\3\4" holding
 *          data.pkl), else 0.  head holds min(size, CONTAINER_HEAD)
 *          bytes.  No I/O.
 *   open(reader, &table, e)  read the container through the reader and
 *          build the table; 0, or -1 with *e (the reference reader's error
 *          names where the format has one, ERR_IO for failed reads,
 *          ERR_NO_MEMORY).  Reads what the index needs, never tensor data.
 *          The table is freed with container_free(): tensors, meta and h
 *          itself with free(), priv with free_priv.
 *
 * The first line of the table, safetensors, has no magic number (its
 * claims() only sees a length prefix that fits and a '{'): it also reads
 * every file no other format claims (but one whose name says another
 * format: naming.h), so an unknown file gets the reference reader's
 * error, and sniff.c then puts in front what the file really is (a Git
 * LFS pointer, an HTML page, a zip, ...).  A format that joins the table
 * takes its line out of sniff.c's list of foreign files.
 *
 * Types safetensors lacks: a tensor's bytes are [data_start + begin,
 * data_start + end), always, and the layers above take its size from that
 * range (model_tensor_nbytes), never from numel * bits / 8, which holds
 * for the dtypes of safetensors only.  GGUF's quantized blocks (Q4_K: 256
 * elements in 144 bytes) are added as dtypes of their own in dtype.h, with
 * their block (elements, bytes) beside bits, and a byte range that is not
 * numel * bits / 8; nothing in struct tensor changes.  The views that
 * decode elements (.npy, .txt, stats) must then refuse a dtype they
 * cannot decode; the raw bytes are served as they are.  A format
 * whose tensors lie anywhere in the file (a zip's members) sets data_start
 * to 0 and gives absolute ranges; metadata that is not text (GGUF's typed
 * values) is written out as text, JSON for arrays.
 */
#ifndef STFS_CONTAINER_H
#define STFS_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "format/table.h"

struct err;

/* What open() returns for a file its format claimed on its first bytes
 * but finds is not its own after all (a zip that is no PyTorch
 * checkpoint), having recorded nothing in *e: the file is then read by
 * the table's first line, as an unclaimed one. */
#define CONTAINER_NOT_MINE (-2)

/* Bytes of a file's start that every format's claims() sees (enough for
 * the magic number of PyTorch's legacy format behind a FRAME). */
#define CONTAINER_HEAD 32

struct container_format {
	const char *name;	/* "safetensors" */
	int (*claims)(const unsigned char *head, size_t n, uint64_t size);
	int (*open)(const struct reader *r, struct header **out,
		    struct err *e);
};

/* The format of a file whose first min(size, CONTAINER_HEAD) bytes are
 * head and whose path or URL is name (NULL: none): the first one that
 * claims it, else the one name says reads it (naming.h: a .gguf file with
 * a damaged magic number gets GGUF's error, "magic is ..., not GGUF",
 * not the safetensors reference's about a length prefix), else the first
 * of the table. */
const struct container_format *container_format(const unsigned char *head,
						 size_t n, uint64_t size,
						 const char *name);

/* Read r's table with the format its first bytes name, its sizes checked
 * (tensor_size.h).  0 with *out set, or -1 with *e named after r->name; a
 * file no format accepts has what it is in front of the detail
 * (sniff.h). */
int container_open(const struct reader *r, struct header **out,
		   struct err *e);

void container_free(struct header *h);

#endif
