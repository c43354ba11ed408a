/* http_prefetch.h - reads through the block cache, read-ahead, workers.
 *
 * A read takes the blocks it needs; the missing ones are fetched with one
 * request per run of neighbouring blocks, the first by the reading thread
 * itself.  Each source keeps a few read streams; a read that continues a
 * stream doubles the stream's read-ahead window (1 MiB up to a cap) and
 * queues the blocks ahead of it for a small pool of worker threads, which
 * fetch them in parallel, 8 MiB per request.  A block can be read as soon
 * as its last byte has arrived, before the rest of its request.  Worker
 * threads start on the first read-ahead, i.e. after the daemon has forked.
 *
 * How blocks are fetched is the owner's business (struct hpf_ops): the
 * HTTP source plugs in its ranged GETs, the unit tests a fake.
 */
#ifndef STFS_HTTP_PREFETCH_H
#define STFS_HTTP_PREFETCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "source/http/http_cache.h"
#include "source/http/http_stats.h"

#define HPF_STREAMS	8	/* tracked read streams per source */

struct hpf_src;

struct hpf_ops {
	/* Fill n consecutive LOADING blocks before deadline (without the
	 * cache lock), calling hpf_block_done() on each as it completes.
	 * 0, or -1 when the request failed. */
	int (*fetch)(struct hpf_src *ps, struct hblock **blocks, unsigned n,
		     uint64_t deadline);
	/* 1 when bytes [start, end) just failed: fail at once. */
	int (*held)(struct hpf_src *ps, uint64_t start, uint64_t end);
};

struct hpf_stream {
	int live;
	uint64_t next;		/* end of the last read */
	uint64_t window;	/* read-ahead bytes wanted past next */
	uint64_t ra_end;	/* read-ahead queued up to here */
	uint64_t used;		/* hconf_now_ms() of its last read */
};

struct hpf_src {
	const struct hpf_ops *ops;
	uint64_t size;
	struct http_stats *stats;	/* hits, misses, ra_window */
	/* under the cache lock */
	unsigned running;		/* jobs being transferred */
	struct hpf_stream streams[HPF_STREAMS];
	TAILQ_ENTRY(hpf_src) link;
};

/* Start serving ps (ops, size, stats set). */
void hpf_add(struct hpf_src *ps);

/* Stop: cancel its queued jobs, wait for running ones, free its blocks. */
void hpf_remove(struct hpf_src *ps);

/* Read exactly len bytes at off (within size).  0 or -errno (EIO when
 * the bytes could not be fetched within the bound). */
int hpf_read(struct hpf_src *ps, void *buf, size_t len, uint64_t off);

/* Stop the worker threads and wait for them (tests under valgrind: a
 * thread still running at exit looks like a leak).  New read-ahead
 * starts them again. */
void hpf_shutdown(void);

/* For ops->fetch: block b holds all its bytes now. */
void hpf_block_done(struct hblock *b);

#endif
