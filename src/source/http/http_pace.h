/* http_pace.h - how many requests the mount keeps in flight, and how
 * large each one is.
 *
 * A link is found, not configured: CDN edges and object stores cap each
 * connection (a few MB/s to ~100 MB/s) and add tens of milliseconds per
 * request, a NIC caps them all together.  The controller starts with
 * PACE_START requests in flight and doubles them while each connection
 * still delivers what one delivered alone (the connections are capped
 * each, not the link: more of them carry more).  When a doubling gives
 * each PACE_SHARE_PCT percent less, they share a full link: halfway back,
 * hold, and probe a quarter more every PACE_PROBE_MS, kept unless the
 * connections lose PACE_PROBE_PCT percent by it (as TCP Vegas reads delay
 * rather than loss).  From the hold's first sample on, whose throughput
 * is the full link's, the level is halved while all the connections
 * together lose no more than PACE_PROBE_PCT percent of it, down to
 * PACE_LEAST, and holds at the last level that kept the link as full
 * (a per-connection cap loses half at once: back to where it was, after
 * one sample).  More connections than fill a link only make each one
 * slower, and with it the block a reader waits for: the reader falls
 * behind what has arrived by about the bytes in flight (48 connections
 * sharing 125 MB/s: ~200 MiB, caught up only after the last byte came;
 * 6 of them fill it as well).  Throughput is taken from the bytes all
 * transfers received during a sample, not from the requests that ended
 * in it: those count their bytes in bursts.  After that a hold never
 * lowers the level by itself: on a loaded machine rates are noisy, and a
 * ratchet down would not come back.
 * Only samples during which work waited for a connection count: an idle
 * reader says nothing about the link.  A cap on connections
 * (-o http_connections) bounds the level; a cap on throughput
 * (-o max_throughput) is a token bucket every request draws from.
 *
 * Request sizes follow what each source's connections deliver: a request
 * should take about PACE_LAT_FACTOR times as long as its first byte, so
 * the per-request latency costs ~10 % (4 MiB on an 8 MB/s CDN connection,
 * 8-16 MiB from S3 at ~90 MB/s), and no more than the read-ahead window
 * divided among the connections allowed (2 MiB at least: 64 connections
 * at 8 MB/s keep 128 MiB in flight with 2 MiB parts, 512 with 8 MiB).
 *
 * Pure bookkeeping: the caller passes the clock and holds whatever lock
 * guards the struct (the prefetcher: its own lock).  The unit tests
 * drive it with a made-up clock.
 */
#ifndef STFS_HTTP_PACE_H
#define STFS_HTTP_PACE_H

#include <stdint.h>

#define PACE_START	32	/* requests in flight at first */
#define PACE_MAX	64	/* never more (the worker threads) */
#define PACE_LEAST	4	/* halving down stops here */
#define PACE_SHARE_PCT	30	/* a connection getting this much less
				   after a doubling shares the link */
#define PACE_PROBE_PCT	10	/* ... or this much less after a probe
				   (+25 %: a full link gives 20 % less) */
#define PACE_SAMPLE_MS	300	/* shortest sample */
#define PACE_PROBE_MS	5000	/* at a hold, try one step up this often */
#define PACE_LAT_FACTOR	10	/* request time / first-byte time */
#define PACE_PART_MIN	2u	/* request size bounds, in blocks */
#define PACE_PART_MAX	16u
#define PACE_PART_START	4u	/* before anything was measured, and the
				   least a latency estimate asks for */

/* The mount's controller. */
struct http_pace {
	unsigned limit;		/* requests in flight allowed now */
	unsigned cap;		/* -o http_connections, else PACE_MAX */
	uint64_t max_bps;	/* -o max_throughput, 0: none */
	double tokens;		/* max_throughput's bucket (bytes) */
	uint64_t t_tokens;	/* its last refill, ms */
	/* the sample being taken */
	uint64_t t0;		/* when it began (0: not begun) */
	uint64_t bytes;		/* bytes of the requests ended in it */
	uint64_t rx0;		/* the bytes-received count at its start */
	uint64_t xfer_ms;	/* its requests' time after the first byte */
	unsigned done;		/* requests completed during it */
	int starved;		/* work waited for a connection */
	/* what was learnt */
	uint64_t best_rate;	/* bytes/s one connection gets alone */
	unsigned prev_limit;	/* the level before the last step up */
	int descending;		/* halving while the link stays full */
	uint64_t desc_bps;	/* the most throughput seen while so (0:
				   the next sample measures it) */
	unsigned settle;	/* requests to end before the next sample
				   (those begun at the level before) */
	int holding;		/* connections share the link: stay */
	int probing;		/* a hold's step up, being judged */
	uint64_t hold_rate;	/* bytes/s a connection gets at the hold */
	uint64_t probe_at;	/* when a hold tries one step up */
};

/* Per source: what its connections deliver (for request sizes). */
struct http_pace_conn {
	uint64_t rate;		/* bytes/s once the first byte came (EWMA) */
	uint64_t first_ms;	/* ms to the first byte (EWMA) */
};

/* cap 0: PACE_MAX; max_bps 0: no throughput cap. */
void http_pace_init(struct http_pace *p, unsigned cap, uint64_t max_bps,
		    uint64_t now);

/* May another request start now, with running in flight?  Returns 1 and
 * takes bytes from the throughput bucket, or 0 (and notes that work
 * waited when the reason is the connection level).  *wait_ms says how
 * long a throughput cap wants the caller to wait (0: until a request
 * ends). */
int http_pace_admit(struct http_pace *p, unsigned running, uint64_t bytes,
		    uint64_t now, uint64_t *wait_ms);

/* Work waits while running requests are in flight (a request ended and
 * found more queued, or a reader waits for a block on the way): the
 * level may be what holds it back. */
void http_pace_waiting(struct http_pace *p, unsigned running);

/* A demand read started a request of its own (not admitted: a reader
 * never waits for the level), drawing bytes from the bucket. */
void http_pace_demand(struct http_pace *p, uint64_t bytes, uint64_t now);

/* A request ended having delivered bytes, xfer_ms after its first byte;
 * rx: the bytes all transfers received so far (what a sample's
 * throughput is taken from: the requests that end within it would count
 * their bytes in bursts).  A sample may end here and move the level. */
void http_pace_done(struct http_pace *p, uint64_t bytes, uint64_t xfer_ms,
		    uint64_t rx, uint64_t now);

/* A request of one source took total_ms, its first byte first_ms. */
void http_pace_conn_sample(struct http_pace_conn *c, uint64_t bytes,
			   uint64_t first_ms, uint64_t total_ms);

/* Blocks per read-ahead request for a source: what its latency wants,
 * at most window_blocks / limit (so that every allowed connection gets
 * a part of the window), within PACE_PART_MIN..PACE_PART_MAX. */
unsigned http_pace_part(const struct http_pace_conn *c, unsigned limit,
			uint64_t window_blocks, uint64_t block_bytes);

#endif
