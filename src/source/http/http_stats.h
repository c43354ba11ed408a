/* http_stats.h - counters of one remote source (atomic, relaxed). */
#ifndef STFS_HTTP_STATS_H
#define STFS_HTTP_STATS_H

#include <stdint.h>

enum {
	HTTP_STATS_REQ_HEADER,	/* the open request (first 64 KiB, size,
				   ETag), metadata past it */
	HTTP_STATS_REQ_DATA,	/* ranged GETs of blocks */
	HTTP_STATS_REQ_LIST,	/* listings (s3://, hf://) */
	HTTP_STATS_REQ_RESOLVE,	/* requests answered with a redirect */
	HTTP_STATS_REQ_KINDS
};

enum {
	HTTP_STATS_ERR_NET,	/* refused, reset, timeout, TLS */
	HTTP_STATS_ERR_STATUS,	/* an HTTP status that is not an answer */
	HTTP_STATS_ERR_CHANGED,	/* the object changed (412, ETag, size) */
	HTTP_STATS_ERR_PROTOCOL,	/* a malformed answer (wrong range,
							       ...) */
	HTTP_STATS_ERR_KINDS
};

struct http_stats {
	uint64_t requests[HTTP_STATS_REQ_KINDS];
	uint64_t bytes;		/* body bytes received */
	uint64_t hits;		/* blocks found in the memory cache */
	uint64_t misses;	/* blocks that had to be fetched */
	uint64_t disk_hits;	/* blocks found in the disk cache */
	uint64_t disk_misses;	/* blocks looked for there, not found */
	uint64_t disk_puts;	/* blocks sent there */
	uint64_t origin_blocks;	/* blocks fetched from the origin */
	uint64_t retries;	/* attempts after the first */
	uint64_t errors[HTTP_STATS_ERR_KINDS];	/* failed attempts, by cause */
	uint64_t ra_window;	/* largest read-ahead window, bytes */
};

static inline void
http_stats_add(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

static inline uint64_t
http_stats_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static inline void
http_stats_max(uint64_t *c, uint64_t v)
{
	uint64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);

	while (v > old && !__atomic_compare_exchange_n(c, &old, v, 1,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

#endif
