/* reader.h - what a container format reads from: a fixed-size run of
 * bytes and a name for messages.
 *
 * The format layer knows no files, URLs or caches: the layers above hand
 * it a reader (source/source.h's source_reader() wraps a source; a test
 * or a fuzzer wraps memory).  Nothing here allocates.  A format reads
 * its metadata through a reader (headers, directories, pickles: what it
 * parses into a table), never the tensor data it serves: a remote source
 * fetches such reads exactly, outside its block cache
 * (source_pread_meta()).
 */
#ifndef STFS_READER_H
#define STFS_READER_H

#include <stddef.h>
#include <stdint.h>

struct reader {
	/* Read exactly len bytes at off into buf: 0, or -errno (a short
	 * read is an error, never a partial result). */
	int (*pread)(void *ctx, void *buf, size_t len, uint64_t off);
	void *ctx;
	uint64_t size;		/* bytes in all */
	const char *name;	/* path or URL: errors are named after it */
};

static inline int
reader_pread(const struct reader *r, void *buf, size_t len, uint64_t off)
{
	return r->pread(r->ctx, buf, len, off);
}

#endif
