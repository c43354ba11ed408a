/* http_tier.h - the shared cache: a second tier of blocks that many
 * machines share (issue 41), between the disk cache and the origin.
 *
 * A fleet of 32 nodes mounting one model asks the origin (the Hub, an S3
 * bucket, a web server) for the same bytes 32 times.  With a shared cache,
 * a block the disk cache does not have is asked of the shared cache first;
 * one fetched from the origin is put there, off the transfers (as the
 * spool writes to the disk), so that the next node finds it.  The shared
 * cache is an object store reached through a backend (struct
 * http_tier_backend: get and put one object) that a layer above this one
 * implements (s3/s3_tier.c) and installs into the client
 * (http_client_set_tier()): this layer knows nothing of S3.
 *
 * What a block is called: its source's identity (what makes the bytes
 * unique, without secrets: an LFS file's sha256, else the URL without
 * user info and query, or s3://BUCKET/KEY, with its ETag or, failing a
 * strong one and a query, its Last-Modified, and its size), the block size
 * and its index.  The object's key is
 *
 *   stfs1/KEYID/HH/HASH/BLOCKSIZE.INDEX
 *
 * below the backend's prefix, HASH the first 128 bits of the SHA-256 of
 * the identity (HH its first byte: keys spread over S3's partitions),
 * KEYID a fingerprint of the fleet's key (two fleets with other keys do
 * not overwrite each other's blocks).  Two versions of an object have two
 * identities, so they never share a block; the same LFS file in two
 * repositories has one, so they do.
 *
 * What a block holds: a header, then the block's bytes.
 *
 *   stfs shared block 1\n
 *   source: IDENTITY\n
 *   block: BLOCKSIZE INDEX LENGTH\n
 *   mac: HEX\n
 *
 * HEX is the HMAC-SHA256, with the fleet's key, of the header up to the
 * mac line and the bytes.  Every block read is checked against what the
 * reader asked for (identity, index, length) and its MAC: a damaged
 * block, one cut short or one of another source (or fleet) is refused,
 * counted, fetched from the origin and put again.  The key is the trust:
 * whoever can write the bucket but does not hold it can make nodes fetch
 * from the origin, never serve other bytes.
 *
 * An optimisation, never a dependency.  A block the shared cache has
 * not brought by a deadline (twice what the origin takes for one, at
 * least HTTP_TIER_WAIT_MIN_MS) comes from the origin.  A shared cache that
 * does not answer or refuses (403, 5xx) is passed over for a while
 * (HTTP_TIER_PAUSE_MIN_MS, doubling to HTTP_TIER_PAUSE_MAX_MS) with one
 * log line, and reads go to the origin; so is one that misses the
 * deadline HTTP_TIER_LATE_RUN times in a row (a busy moment costs a few
 * blocks from the origin, not the shared cache for a while).  One that
 * refuses blocks (read-only, full) is not written to for as long, and
 * reads go on.  Puts never delay a reader: when HTTP_TIER_PUT_MAX_BYTES
 * are waiting, a block is not put (counted).
 */
#ifndef STFS_HTTP_TIER_H
#define STFS_HTTP_TIER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "source/http/http_transport.h"

#define HTTP_TIER_KEY_MIN	16	/* bytes of the fleet's key, at least */
#define HTTP_TIER_KEY_MAX	1024
#define HTTP_TIER_WAIT_MIN_MS	2000	/* a block's deadline, at least */
#define HTTP_TIER_LATE_RUN	3	/* deadlines missed in a row: passed
					   over */
#define HTTP_TIER_PAUSE_MIN_MS	5000	/* passed over after a failure */
#define HTTP_TIER_PAUSE_MAX_MS	300000	/* ... doubling up to this */
#define HTTP_TIER_PUT_MAX_BYTES	(64u << 20)	/* blocks waiting to be put */
#define HTTP_TIER_PUT_THREADS	8

struct err;
struct http_cache;
struct http_cache_block;
struct http_conf;
struct http_tier;
struct http_tier_src;

/* What a backend's get() found. */
enum http_tier_found {
	HTTP_TIER_FOUND,	/* an answer with the object: its body went
				   to the sink (or the sink stopped it) */
	HTTP_TIER_ABSENT,	/* no such object */
	HTTP_TIER_FAILED,	/* no answer, a refusal, too late: why */
};

/* What a backend's put() met. */
enum http_tier_put_result {
	HTTP_TIER_PUT_OK,
	HTTP_TIER_PUT_REFUSED,	/* the store answered no (read-only, full,
				   403): reads may go on */
	HTTP_TIER_PUT_FAILED,	/* no answer: the store is unreachable */
};

/* The object store, as a layer above implements it. */
struct http_tier_backend {
	/* GET the object key (below the backend's prefix), the whole
	 * exchange within timeout_ms.  The answer's body goes to sink only
	 * when it is the object (head() first); an absent one is
	 * HTTP_TIER_ABSENT; anything else HTTP_TIER_FAILED with why (one
	 * line, no secret).  Called by several threads at once. */
	int (*get)(void *priv, const char *key,
		   const struct http_transport_sink *sink, uint64_t timeout_ms,
		   char *why, size_t whylen);
	/* PUT iov[0..n) as the object key: an enum http_tier_put_result,
	 * with why. */
	int (*put)(void *priv, const char *key, const struct iovec *iov,
		   int n, char *why, size_t whylen);
	void (*free)(void *priv);
	void *priv;
	const char *name;	/* for messages: "s3://BUCKET/PREFIX" (the
				   backend's, until free) */
};

/* A tier over backend b (taken: freed with the tier, also on failure),
 * blocks signed with the key in the file key_path (read now: its bytes,
 * trailing white space left out, HTTP_TIER_KEY_MIN to HTTP_TIER_KEY_MAX
 * of them), conf's messages (conf stays the caller's), blocks
 * referenced in cache while they wait to be put.  NULL with *e. */
struct http_tier *http_tier_new(const struct http_conf *conf,
				struct http_cache *cache,
				const struct http_tier_backend *b,
				const char *key_path, struct err *e);

/* Put what is waiting (each within its deadline), stop the threads,
 * free. */
void http_tier_free(struct http_tier *t);

/* The counters of one source's blocks in the tier (atomic, relaxed). */
enum {
	HTTP_TIER_REJECT_CORRUPT,	/* damaged, or signed with another key */
	HTTP_TIER_REJECT_TRUNCATED,	/* fewer bytes than the block has */
	HTTP_TIER_REJECT_FOREIGN,	/* another source's or index's block */
	HTTP_TIER_REJECT_KINDS
};

struct http_tier_stats {
	uint64_t requests;	/* GETs sent */
	uint64_t bytes;		/* their body bytes received */
	uint64_t hits;		/* blocks served from the tier */
	uint64_t misses;	/* asked for and absent */
	uint64_t rejected[HTTP_TIER_REJECT_KINDS];	/* and fetched from
							   the origin */
	uint64_t failed;	/* GETs without an answer */
	uint64_t late;		/* GETs without one by the deadline */
	uint64_t passed;	/* blocks not asked for: the tier was passed
				   over, or a block before was absent */
	uint64_t puts;		/* blocks put */
	uint64_t put_bytes;
	uint64_t put_failed;	/* refused or unanswered */
	uint64_t put_dropped;	/* not put: too many waiting, or the tier
				   passed over */
	uint64_t put_pending;	/* waiting or being put now */
};

/* One source's place in the tier: identity names its bytes (see the top;
 * no line break in it), size its length.  origin_ms: what a request
 * to the origin took so far (the open's), from which the first deadline
 * comes.  NULL when t is NULL, identity unusable, or no memory. */
struct http_tier_src *http_tier_src_open(struct http_tier *t,
					 const char *identity, uint64_t size,
					 uint64_t origin_ms);

/* Wait (5 s at most) until its blocks waiting to be put are put, then
 * free.  Once the client stops (http_client_stop(): the mount ends, and no
 * transfer is waited for), what still waits is not put. */
void http_tier_src_close(struct http_tier_src *s);

const struct http_tier_stats *http_tier_src_stats(
	const struct http_tier_src *s);

/* What http_tier_get() did with a block. */
enum http_tier_got {
	HTTP_TIER_HIT,		/* b holds the block, checked */
	HTTP_TIER_MISS,		/* absent: the blocks after it probably
				   are too */
	HTTP_TIER_REJECTED,	/* present but refused (counted) */
	HTTP_TIER_PASSED,	/* not asked: the tier is passed over, or
				   it failed now */
};

/* Block b (LOADING: its memory is the caller's) from the tier, within
 * the deadline: an enum http_tier_got.  On anything but HTTP_TIER_HIT,
 * b's bytes are undefined.  *fed_ms (atomic) is stamped with
 * http_conf_now_ms() whenever the tier answers, as a transfer from the
 * origin stamps it (http_fill.h): a reader waiting for b sees it move. */
int http_tier_get(struct http_tier_src *s, struct http_cache_block *b,
		  uint64_t *fed_ms);

/* b, complete, came from the origin: put it, soon and off this thread
 * (b is referenced until then), or not at all when too many are waiting
 * or the tier is passed over for puts. */
void http_tier_put(struct http_tier_src *s, struct http_cache_block *b);

/* What the origin took for a run of n blocks: the request went out at
 * t0, its first byte came at first and its last at t1
 * (http_conf_now_ms()); a block's deadline is learnt from it. */
void http_tier_origin_took(struct http_tier_src *s, uint64_t t0,
			   uint64_t first, uint64_t t1, unsigned n);

/* The object key of block idx of a source of this identity (for tests
 * and tools): "stfs1/KEYID/HH/HASH/BLOCKSIZE.INDEX" into out (n bytes).
 * 0, or -1 when it does not fit. */
int http_tier_key(const struct http_tier *t, const char *identity,
		  uint64_t idx, char *out, size_t n);

#endif
