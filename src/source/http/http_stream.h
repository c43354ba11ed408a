/* http_stream.h - the read streams the prefetcher follows in a source.
 *
 * A read that starts where another ended (give or take reordering: the
 * kernel's read-ahead and several FUSE threads deliver a sequential
 * reader's requests a little out of order) continues its stream; a stream
 * proven sequential gets a read-ahead window that doubles with every read.
 * A view's hint starts a stream of its own where a reader will go next.
 * Pure bookkeeping: the caller holds the lock that guards the array and
 * passes the clock.
 */
#ifndef STFS_HTTP_STREAM_H
#define STFS_HTTP_STREAM_H

#include <stdint.h>

#define HTTP_STREAMS	8	/* tracked read streams per source */

struct http_stream {
	int live;
	uint64_t next;		/* end of the last read */
	uint64_t window;	/* read-ahead bytes wanted past next */
	uint64_t ra_end;	/* read-ahead queued up to here */
	uint64_t kept;		/* read-ahead parked on the disk brought
				   back to memory up to here */
	uint64_t used;		/* http_conf_now_ms() of its last read or
				   hint (which slot a new stream takes) */
	uint64_t read_at;	/* ... of its last read (0: hinted only) */
};

/* A read of [off, end) at now, in the HTTP_STREAMS streams s: the stream
 * it continues, moved on (missed: a block it had queued was not in the
 * cache, so its read-ahead starts again from end; the caller grows its
 * window), or NULL after starting a new stream in the least recently used
 * slot (no read-ahead until it proves sequential). */
struct http_stream *http_stream_read(struct http_stream *s, uint64_t off,
				     uint64_t end, uint64_t now, int missed);

/* The stream whose read-ahead reaches, or nearly reaches, off (a hint of
 * the bytes at off); else a new one in the least recently used slot,
 * starting at off. */
struct http_stream *http_stream_hinted(struct http_stream *s, uint64_t off,
				       uint64_t now);

/* A read continued st: its window doubles, up to cap (what the cache
 * allows it). */
void http_stream_grow(struct http_stream *st, uint64_t cap);

/* Where st's read-ahead should reach now, in an object of size bytes
 * (a block boundary, or size), or 0 when what is queued is enough: it is
 * topped up by an eighth of the window at least. */
uint64_t http_stream_target(const struct http_stream *st, uint64_t size);

/* A reader continued st within the last second (streams only hinted
 * belong to a reader counted where it reads now). */
int http_stream_reading(const struct http_stream *st, uint64_t now);

#endif
