/* test_http.c - the HTTP source's block cache, prefetcher and fetch
 * logic, driven by a fake transport that counts requests and injects
 * failures, hangs, redirects, refusals and changes. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "base/cancel.h"
#include "base/error.h"
#include "source/http/http_cache.h"
#include "source/http/http_client.h"
#include "source/http/http_conf.h"
#include "source/http/http_disk.h"
#include "source/http/http_prefetch.h"
#include "source/http/http_spool.h"
#include "source/http/http_transport.h"
#include "source/source.h"
#include "source/http/source_http.h"
#include "suites.h"

#define OBJ_SIZE ((20u << 20) + 12345)	/* 21 blocks, the last one short */

static struct {
	pthread_mutex_t lock;
	char *data;
	char etag[64];
	unsigned requests;	/* every exchange */
	unsigned data_reqs;	/* answered with bytes */
	unsigned resolves;	/* answered with a redirect */
	unsigned fail503;	/* answer 503 this many times */
	uint64_t retry_after_ms;	/* ... with this Retry-After */
	const char *coding;	/* data answers' Content-Encoding */
	int not_identity;	/* a request without Accept-Encoding:
				   identity */
	uint64_t refuse_until;	/* "connection refused" before (ms) */
	int hang;		/* accept, never answer */
	unsigned cdn_refuse;	/* the CDN answers 403 this many times */
	int auth_at_cdn;	/* the token reached the CDN */
	int auth_at_origin;
	int downgrade;		/* the origin redirects https -> http */
	int no_etag;		/* answers carry no validator */
	uint64_t cut;		/* data answers break off after this many
				   bytes (0: whole) */
	unsigned chunk_ms;	/* each 64 KiB of an answer takes this long */
	unsigned delay_ms;	/* every data answer takes this long */
	unsigned inflight, max_inflight;	/* data requests at once */
	uint64_t starts[64], lens[64];	/* the first data requests */
} F = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct http_client *client;	/* the test's (use_client()) */

static int
has_header(const struct curl_slist *l, const char *prefix)
{
	for (; l; l = l->next)
		if (strncasecmp(l->data, prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

static const char *
header_value(const struct curl_slist *l, const char *name)
{
	size_t n = strlen(name);

	for (; l; l = l->next)
		if (strncasecmp(l->data, name, n) == 0 && l->data[n] == ':')
			return l->data + n + 2;
	return NULL;
}

static int
fake_get(const struct http_transport *t, const struct http_transport_request *q,
	 struct http_transport_response *r,
	 const struct http_transport_sink *sink, char *why,
	 size_t whylen)
{
	int cdn = strstr(q->url, "://cdn.test/") != NULL;
	int redir = strstr(q->url, "/redir/") != NULL;
	const char *im = header_value(q->headers, "If-Match");
	uint64_t now = http_conf_now_ms(), first, last, off;
	int hang, refuse = 0, fail = 0, forbid = 0, mode;

	(void)t;
	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&F.lock);
	F.requests++;
	if (!has_header(q->headers, "Accept-Encoding: identity"))
		F.not_identity = 1;
	hang = F.hang;
	if (now < F.refuse_until)
		refuse = 1;
	else if (F.fail503) {
		F.fail503--;
		fail = 1;
	}
	if (has_header(q->headers, "Authorization:")) {
		if (cdn)
			F.auth_at_cdn = 1;
		else
			F.auth_at_origin = 1;
	}
	if (cdn && F.cdn_refuse) {
		F.cdn_refuse--;
		forbid = 1;
	}
	pthread_mutex_unlock(&F.lock);
	if (hang) {
		/* accepted, never answered: the stall limit ends it */
		uint64_t ms = q->timeout_ms && q->timeout_ms < q->stall_ms ?
			      q->timeout_ms : q->stall_ms;

		usleep((useconds_t)(ms * 1000));
		snprintf(why, whylen, "no byte of the answer");
		return HTTP_AGAIN;
	}
	if (refuse) {
		snprintf(why, whylen, "Connection refused");
		return HTTP_AGAIN;
	}
	if (fail || forbid) {
		r->status = fail ? 503 : 403;
		r->retry_after_ms = fail ? F.retry_after_ms : 0;
		return sink->head(sink->ud,
				  r) == HTTP_SINK_STOP ? HTTP_STOPPED :
		       HTTP_OK;
	}
	if (redir && !cdn) {
		r->status = 302;
		snprintf(r->location, sizeof(r->location),
			 "%s://cdn.test/blob?Expires=%lld&Signature=s3cr3t",
			 F.downgrade ? "http" : "https",
			 (long long)time(NULL) + 3600);
		pthread_mutex_lock(&F.lock);
		F.resolves++;
		pthread_mutex_unlock(&F.lock);
		return sink->head(sink->ud,
				  r) == HTTP_SINK_STOP ? HTTP_STOPPED :
		       HTTP_OK;
	}
	pthread_mutex_lock(&F.lock);
	if (im && strcmp(im, F.etag) != 0) {
		pthread_mutex_unlock(&F.lock);
		r->status = 412;
		return sink->head(sink->ud,
				  r) == HTTP_SINK_STOP ? HTTP_STOPPED :
		       HTTP_OK;
	}
	if (F.data_reqs < 64) {
		F.starts[F.data_reqs] = q->start;
		F.lens[F.data_reqs] = q->len;
	}
	F.data_reqs++;
	if (++F.inflight > F.max_inflight)
		F.max_inflight = F.inflight;
	if (!F.no_etag)
		snprintf(r->etag, sizeof(r->etag), "%s", F.etag);
	if (F.coding && q->start > 0)	/* not the open request */
		snprintf(r->coding, sizeof(r->coding), "%s", F.coding);
	pthread_mutex_unlock(&F.lock);
	if (F.delay_ms)
		usleep(F.delay_ms * 1000);
	first = q->start;
	last = q->start + q->len - 1;
	if (last >= OBJ_SIZE)
		last = OBJ_SIZE - 1;
	r->status = 206;
	r->have_range = r->total_known = 1;
	r->r_first = first;
	r->r_last = last;
	r->r_total = OBJ_SIZE;
	mode = sink->head(sink->ud, r);
	for (off = first; mode != HTTP_SINK_STOP && off <= last;
	     off += 65536) {
		size_t n = last + 1 - off < 65536 ? (size_t)(last + 1 - off) :
			   65536;

		if (F.cut && off + n > first + F.cut)
			n = (size_t)(first + F.cut - off);
		/* as libcurl does: the whole exchange, and the stall limit
		 * (which a chunk every chunk_ms never reaches) */
		if (F.chunk_ms)
			usleep(F.chunk_ms * 1000);
		/* as libcurl's loop does (http_curl.c) */
		if (client && http_conf_cancelled(&client->conf)) {
			snprintf(why, whylen, "no one waits");
			mode = -2;
			break;
		}
		if (q->timeout_ms && http_conf_now_ms() > now + q->timeout_ms) {
			snprintf(why, whylen, "Operation timed out");
			mode = -1;
			break;
		}
		if (mode == HTTP_SINK_TAKE &&
		    sink->body(sink->ud, F.data + off, n) != HTTP_SINK_TAKE)
			mode = HTTP_SINK_STOP;
		if (F.cut && off + n == first + F.cut && off + n <= last) {
			snprintf(why, whylen, "transfer closed");
			mode = -1;
			break;
		}
	}
	pthread_mutex_lock(&F.lock);
	F.inflight--;
	pthread_mutex_unlock(&F.lock);
	if (mode == -2)
		return HTTP_CANCELLED;
	if (mode < 0)
		return HTTP_AGAIN;
	return mode == HTTP_SINK_STOP ? HTTP_STOPPED : HTTP_OK;
}

static const struct http_transport fake = { .get = fake_get };

/* Each test's own client (declared above): nothing of one test is left
 * for the next when CK_FORK=no (valgrind) runs them all in one process. */

/* A new client for the test: a 3 s read bound, a cache of 64 MiB,
 * read-ahead of 8 MiB, 4 connections, the disk cache in disk_dir (NULL:
 * off). */
static void
use_client_sized(const char *disk_dir, unsigned cache_mb,
		 unsigned readahead_mb)
{
	struct http_options o = { 0 };
	struct err e = { 0 };

	o.timeout_s = 1;
	o.tries = 3;		/* bound: 3 s */
	o.cache_mb = cache_mb;
	o.readahead_mb = readahead_mb;
	o.connections = 4;
	o.cache = disk_dir ? 1 : -1;
	o.cache_dir = disk_dir;
	http_client_free(client);
	client = http_client_new(&o, &fake, &e);
	ck_assert_msg(client != NULL, "%s", e.detail);
}

static void
use_client(const char *disk_dir)
{
	use_client_sized(disk_dir, 64, 8);
}

static void
setup(void)
{
	size_t i;

	/* CK_FORK=no (valgrind) runs every test in one process */
	F.requests = F.data_reqs = F.resolves = F.fail503 = F.cdn_refuse = 0;
	F.retry_after_ms = 0;
	F.coding = NULL;
	F.not_identity = 0;
	F.refuse_until = 0;
	F.hang = F.auth_at_cdn = F.auth_at_origin = F.downgrade = 0;
	F.no_etag = 0;
	F.cut = F.chunk_ms = 0;
	F.delay_ms = F.inflight = F.max_inflight = 0;
	F.data = malloc(OBJ_SIZE);
	for (i = 0; i < OBJ_SIZE; i++)
		F.data[i] = (char)(i * 2654435761u >> 13);
	snprintf(F.etag, sizeof(F.etag), "\"v1\"");
	use_client(NULL);	/* the disk cache only where a test says */
}

static void
teardown(void)
{
	http_client_free(client);	/* its threads joined */
	client = NULL;
	free(F.data);
}

static struct source *
open_url(const char *url, const struct source_http_opts *o)
{
	struct source_http_opts with = { 0 };
	struct source *s = NULL;
	struct err e = { 0 };

	if (o)
		with = *o;
	with.client = client;
	if (source_open_http_opts(url, &with, &s, &e) != 0)
		ck_abort_msg("open %s: %s", url, e.detail);
	return s;
}

static void
read_all(struct source *s, size_t chunk)
{
	char *buf = malloc(chunk);
	uint64_t off;

	for (off = 0; off < OBJ_SIZE; off += chunk) {
		size_t n = OBJ_SIZE - off < chunk ? OBJ_SIZE - off : chunk;

		ck_assert_int_eq(source_pread(s, buf, n, off), 0);
		ck_assert_msg(memcmp(buf, F.data + off, n) == 0,
			      "bytes differ at %llu", (unsigned long long)off);
	}
	free(buf);
}

/* ---- the block cache on its own ---------------------------------------- */

/* Full blocks 0..n-1 of owner, READY and unreferenced, oldest first. */
static void
ready_blocks(struct http_cache *c, const void *owner,
	     struct http_cache_block **b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ck_assert_int_eq(http_cache_add(c, owner, (uint64_t)i,
						HTTP_BLOCK_BYTES, HTTP_CACHE_NOW,
						1, &b[i]), HTTP_CACHE_ADDED);
		http_cache_ready(c, b[i]);
		http_cache_release(c, &b[i], 1, 0);	/* the filler's */
	}
}

/* Is block idx of owner in c? */
static int
cached(struct http_cache *c, const void *owner, uint64_t idx,
       struct http_cache_block *b)
{
	struct http_cache_block *x = http_cache_pin(c, owner, idx);

	http_cache_release(c, &x, 1, 0);
	return x && x == b;
}

START_TEST(cache_lru_evicts_oldest)
{
	static int owner;
	struct http_cache *c = http_cache_new(8 * (uint64_t)HTTP_BLOCK_BYTES);
	struct http_cache_block *b[10], *x;
	int i;

	ready_blocks(c, &owner, b, 8);
	ck_assert_uint_eq(http_cache_bytes(c), 8 * (uint64_t)HTTP_BLOCK_BYTES);
	/* block 0 read (not to its end): the most recent; 1 the oldest ... */
	x = http_cache_pin(c, &owner, 0);
	http_cache_release(c, &x, 1, 1);
	/* ... but in use: 2 goes */
	ck_assert_ptr_eq(http_cache_pin(c, &owner, 1), b[1]);
	ck_assert_int_eq(http_cache_add(c, &owner, 8, HTTP_BLOCK_BYTES,
					HTTP_CACHE_NOW, 1, &b[8]),
			 HTTP_CACHE_ADDED);
	ck_assert(cached(c, &owner, 0, b[0]));
	ck_assert(cached(c, &owner, 1, b[1]));
	ck_assert_ptr_null(http_cache_pin(c, &owner, 2));
	ck_assert_int_eq(http_cache_add(c, &owner, 1, HTTP_BLOCK_BYTES,
					HTTP_CACHE_LATER, 1, &x),
			 HTTP_CACHE_PRESENT);
	/* read-ahead takes no memory at all until its bytes come, and then
	 * none of blocks in use */
	for (i = 3; i < 8; i++)
		ck_assert_ptr_eq(http_cache_pin(c, &owner, (uint64_t)i), b[i]);
	ck_assert_ptr_eq(http_cache_pin(c, &owner, 0), b[0]);
	ck_assert_int_eq(http_cache_add(c, &owner, 9, HTTP_BLOCK_BYTES,
					HTTP_CACHE_LATER, 1, &b[9]),
			 HTTP_CACHE_ADDED);
	ck_assert_ptr_null(b[9]->data);
	ck_assert_uint_eq(http_cache_bytes(c), 8 * (uint64_t)HTTP_BLOCK_BYTES);
	ck_assert_int_eq(http_cache_alloc(c, b[9], 1), -1);
	ck_assert_ptr_null(b[9]->data);
	http_cache_settle(c, &b[9], 1, 0, 1);
	/* a failed block leaves the table */
	http_cache_settle(c, &b[8], 1, 0, 1);
	ck_assert_ptr_null(http_cache_pin(c, &owner, 8));
	b[2] = b[8] = NULL;	/* freed */
	http_cache_release(c, b, 8, 0);
	http_cache_drop(c, &owner);
	ck_assert_uint_eq(http_cache_bytes(c), 0);
	http_cache_free(c);
}
END_TEST

/* A full block about to take arena memory never used takes that of a
 * block read to its end instead (one not in use), and only such a one. */
START_TEST(cache_reuses_spent_memory)
{
	static int owner;
	struct http_cache *c = http_cache_new(8 * (uint64_t)HTTP_BLOCK_BYTES);
	struct http_cache_block *b[5], *x, *in_use;
	uint64_t touched;
	char *spent;
	int i;

	ready_blocks(c, &owner, b, 3);
	x = http_cache_pin(c, &owner, 0);
	http_cache_release(c, &x, 1, HTTP_BLOCK_BYTES);	/* read to its end */
	spent = b[0]->data;
	touched = http_cache_arena_touched(c);
	ck_assert_int_eq(http_cache_add(c, &owner, 3, HTTP_BLOCK_BYTES,
					HTTP_CACHE_NOW, 1, &b[3]),
			 HTTP_CACHE_ADDED);
	ck_assert_uint_eq(http_cache_arena_touched(c), touched);
	ck_assert_ptr_eq(b[3]->data, spent);
	http_cache_settle(c, &b[3], 1, 1, 0);
	/* spent but in use, or not spent: kept */
	in_use = http_cache_pin(c, &owner, 2);
	x = http_cache_pin(c, &owner, 2);
	http_cache_release(c, &x, 1, 3 * (uint64_t)HTTP_BLOCK_BYTES);
	ck_assert_int_eq(http_cache_add(c, &owner, 4, HTTP_BLOCK_BYTES,
					HTTP_CACHE_LATER, 1, &b[4]),
			 HTTP_CACHE_ADDED);
	ck_assert_int_eq(http_cache_alloc(c, b[4], 0), 0);
	for (i = 1; i < 4; i++) {
		ck_assert(cached(c, &owner, (uint64_t)i, b[i]));
		ck_assert_ptr_ne(b[4]->data, b[i]->data);
	}
	http_cache_settle(c, &b[4], 1, 1, 0);
	http_cache_release(c, &in_use, 1, 0);
	http_cache_drop(c, &owner);
	http_cache_free(c);
}
END_TEST

/* issue 38.1: read-ahead further than memory keeps (FAR), once READY and
 * unreferenced, goes before any other block; its memory comes when its
 * bytes do, and the cache's size bounds it while blocks are unused */
START_TEST(cache_far_goes_first)
{
	static int owner;
	struct http_cache *c = http_cache_new(8 * (uint64_t)HTTP_BLOCK_BYTES);
	struct http_cache_block *b[12];
	int i;

	ready_blocks(c, &owner, b, 4);		/* 0..3, near */
	for (i = 4; i < 8; i++) {		/* 4..7, far */
		ck_assert_int_eq(http_cache_add(c, &owner, (uint64_t)i,
						HTTP_BLOCK_BYTES,
						HTTP_CACHE_FAR, 1, &b[i]),
				 HTTP_CACHE_ADDED);
		ck_assert_uint_le(http_cache_bytes(c),
				  (uint64_t)i * HTTP_BLOCK_BYTES);
		ck_assert_ptr_null(b[i]->data);
		ck_assert_int_eq(http_cache_alloc(c, b[i], 1), 0);
		http_cache_settle(c, &b[i], 1, 1, 1);
	}
	/* (a far block, unused, also gives its memory to the next block
	 * rather than let it touch arena memory never used) */
	ck_assert_uint_le(http_cache_bytes(c), 8 * (uint64_t)HTTP_BLOCK_BYTES);
	/* new bytes push the far ones out, the near ones stay */
	for (i = 8; i < 12; i++) {
		ck_assert_int_eq(http_cache_add(c, &owner, (uint64_t)i,
						HTTP_BLOCK_BYTES,
						HTTP_CACHE_LATER, 1, &b[i]),
				 HTTP_CACHE_ADDED);
		ck_assert_int_eq(http_cache_alloc(c, b[i], 1), 0);
		http_cache_settle(c, &b[i], 1, 1, 0);
	}
	for (i = 0; i < 4; i++)
		ck_assert(cached(c, &owner, (uint64_t)i, b[i]));
	for (i = 4; i < 8; i++)
		ck_assert_ptr_null(http_cache_pin(c, &owner, (uint64_t)i));
	ck_assert_uint_eq(http_cache_bytes(c), 8 * (uint64_t)HTTP_BLOCK_BYTES);
	ck_assert_uint_le(http_cache_peak(c), 8 * (uint64_t)HTTP_BLOCK_BYTES);
	ck_assert_uint_eq(http_cache_limit(c), 8 * (uint64_t)HTTP_BLOCK_BYTES);
	http_cache_drop(c, &owner);
	ck_assert_uint_eq(http_cache_bytes(c), 0);
	http_cache_free(c);
}
END_TEST

/* A read-ahead request gets the memory of all its blocks before it
 * starts, within the cache's size, or none and waits (issue 38.1). */
START_TEST(cache_reserve_whole_request)
{
	static int owner;
	const uint64_t MiB = HTTP_BLOCK_BYTES;
	struct http_cache *c = http_cache_new(8 * MiB);
	struct http_cache_block *b[10];
	int i;

	ready_blocks(c, &owner, b, 4);		/* 0..3, then read: in use */
	for (i = 0; i < 4; i++)
		ck_assert_ptr_eq(http_cache_pin(c, &owner, (uint64_t)i), b[i]);
	for (i = 4; i < 10; i++) {
		ck_assert_int_eq(http_cache_add(c, &owner, (uint64_t)i,
						HTTP_BLOCK_BYTES,
						HTTP_CACHE_LATER, 1, &b[i]),
				 HTTP_CACHE_ADDED);
		ck_assert_ptr_null(b[i]->data);
	}
	/* 4..7 fit */
	ck_assert_int_eq(http_cache_reserve(c, b + 4, 4), 0);
	for (i = 4; i < 8; i++)
		ck_assert_ptr_nonnull(b[i]->data);
	ck_assert_uint_eq(http_cache_bytes(c), 8 * MiB);
	/* 8..9 do not while 0..7 are in use: nothing taken, not even one */
	ck_assert_int_eq(http_cache_reserve(c, b + 8, 2), -1);
	ck_assert_ptr_null(b[8]->data);
	ck_assert_ptr_null(b[9]->data);
	ck_assert_uint_eq(http_cache_bytes(c), 8 * MiB);
	/* 0..3 read and let go: they make room */
	http_cache_release(c, b, 4, 0);
	ck_assert_int_eq(http_cache_reserve(c, b + 8, 2), 0);
	ck_assert_ptr_nonnull(b[8]->data);
	ck_assert_ptr_nonnull(b[9]->data);
	ck_assert_uint_eq(http_cache_bytes(c), 8 * MiB);
	ck_assert_uint_eq(http_cache_peak(c), 8 * MiB);
	http_cache_settle(c, b + 4, 6, 1, 1);
	http_cache_drop(c, &owner);
	ck_assert_uint_eq(http_cache_bytes(c), 0);
	http_cache_free(c);
}
END_TEST

/* ---- reads through the prefetcher -------------------------------------- */

START_TEST(sequential_read_coalesces)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	unsigned blocks = (OBJ_SIZE + HTTP_BLOCK_BYTES - 1) / HTTP_BLOCK_BYTES;

	ck_assert_uint_eq(F.requests, 1);	/* the open request */
	ck_assert_uint_eq(s->size, OBJ_SIZE);
	read_all(s, 128 << 10);
	/* read-ahead fetches several blocks per request */
	ck_assert_msg(F.data_reqs < blocks, "%u requests for %u blocks",
		      F.data_reqs, blocks);
	source_close(s);
}
END_TEST

START_TEST(random_reads)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char *buf = malloc(3 << 20);
	unsigned i, seed = 7;

	for (i = 0; i < 200; i++) {
		uint64_t off = rand_r(&seed) % OBJ_SIZE;
		size_t n = 1 + rand_r(&seed) % (3 << 20);

		if (n > OBJ_SIZE - off)
			n = OBJ_SIZE - off;
		ck_assert_int_eq(source_pread(s, buf, n, off), 0);
		ck_assert(memcmp(buf, F.data + off, n) == 0);
	}
	ck_assert_int_eq(source_pread(s, buf, 2, OBJ_SIZE - 1), -EIO);
	free(buf);
	source_close(s);
}
END_TEST

START_TEST(transient_errors_are_retried)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];

	F.fail503 = 2;
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 5 << 20), 0);
	ck_assert(memcmp(buf, F.data + (5 << 20), sizeof(buf)) == 0);
	ck_assert_uint_eq(F.fail503, 0);
	source_close(s);
}
END_TEST

/* issue 38.3: a 503's Retry-After is honoured, not the backoff's 0.25 s;
 * one that asks for more than the read may wait fails it at once */
START_TEST(retry_after_honoured)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];
	uint64_t t0;
	unsigned before = F.requests;

	F.fail503 = 1;
	F.retry_after_ms = 1500;	/* bound: 3 s */
	t0 = http_conf_now_ms();
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 5 << 20), 0);
	ck_assert_uint_ge(http_conf_now_ms() - t0, 1500);
	ck_assert(memcmp(buf, F.data + (5 << 20), sizeof(buf)) == 0);
	ck_assert_uint_eq(F.requests - before, 2);

	F.fail503 = 1;
	F.retry_after_ms = 10000;
	before = F.requests;
	t0 = http_conf_now_ms();
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 15 << 20), -EIO);
	ck_assert_uint_lt(http_conf_now_ms() - t0, 1000);
	ck_assert_uint_eq(F.requests - before, 1);
	source_close(s);
}
END_TEST

/* issue 38.3: every request asks for identity, and a data answer in a
 * content coding is refused before its first byte, not retried */
START_TEST(content_coding_refused)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];
	unsigned before;

	F.coding = "gzip";
	before = F.data_reqs;
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 5 << 20), -EIO);
	ck_assert_uint_eq(F.data_reqs - before, 1);
	F.coding = "identity";	/* as good as none */
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 9 << 20), 0);
	ck_assert(memcmp(buf, F.data + (9 << 20), sizeof(buf)) == 0);
	ck_assert_int_eq(F.not_identity, 0);
	source_close(s);
}
END_TEST

/* A cancel that says "gone" from gone_at (http_conf_now_ms()) on. */
static int
gone_after(void *arg)
{
	return http_conf_now_ms() >= *(uint64_t *)arg;
}

/* issue 38.2: a reader that went away (its cancel, base/cancel.h) is
 * answered EINTR within a fraction of a second, whether it fetches the
 * block itself or waits for a request of someone else's; another reader
 * of the same blocks then gets them */
START_TEST(cancelled_read_returns)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	uint64_t gone_at, t0;
	struct cancel c = { gone_after, &gone_at };
	char *buf = malloc(1 << 20);

	F.chunk_ms = 250;		/* 1 MiB in 4 s: longer than the test */
	t0 = http_conf_now_ms();
	gone_at = t0 + 300;
	cancel_set(&c);
	ck_assert_int_eq(source_pread(s, buf, 1 << 20, 5 << 20), -EINTR);
	cancel_set(NULL);
	ck_assert_uint_lt(http_conf_now_ms() - t0, 300 + 700);
	/* nothing held against the range: it reads at once when wanted */
	F.chunk_ms = 0;
	ck_assert_int_eq(source_pread(s, buf, 1 << 20, 5 << 20), 0);
	ck_assert(memcmp(buf, F.data + (5 << 20), 1 << 20) == 0);
	free(buf);
	source_close(s);
}
END_TEST

struct slow_reader {
	struct source *s;
	uint64_t off;
	int rc;
};

static void *
slow_read(void *arg)
{
	struct slow_reader *r = arg;
	char *buf = malloc(1 << 20);

	r->rc = source_pread(r->s, buf, 1 << 20, r->off);
	free(buf);
	return NULL;
}

/* issue 38.2: once the client stops (a daemon going away), its transfers
 * end within a fraction of a second whatever the server does, the reads
 * waiting for them fail, and the source closes at once */
START_TEST(stopped_client_ends_transfers)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	struct slow_reader r[2] = { { s, 2 << 20, 1 }, { s, 9 << 20, 1 } };
	pthread_t th[2];
	uint64_t t0;
	int i;

	F.chunk_ms = 1000;		/* 1 MiB in 16 s */
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, slow_read, &r[i]),
				 0);
	usleep(300 * 1000);
	t0 = http_conf_now_ms();
	http_client_stop(client);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_lt(r[i].rc, 0);
	}
	source_close(s);
	ck_assert_uint_lt(http_conf_now_ms() - t0, 1500);
}
END_TEST

/* issue 14.7: a restart shorter than the bound costs latency only */
START_TEST(refused_until_restart)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];
	unsigned before = F.requests;

	F.refuse_until = http_conf_now_ms() + 1200;	/* bound: 3 s */
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 9 << 20), 0);
	ck_assert(memcmp(buf, F.data + (9 << 20), sizeof(buf)) == 0);
	ck_assert_uint_gt(F.requests - before, 2);	/* it kept trying */
	source_close(s);
}
END_TEST

/* issue 29.1: a transfer that keeps moving is never cut, however long it
 * takes (1 MiB in 16 chunks 250 ms apart: 4 s, longer than the bound) */
START_TEST(slow_transfer_runs_to_its_end)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char *buf = malloc(1 << 20);

	client->conf.ra_max = 0;	/* the read's own request only */
	F.chunk_ms = 250;
	F.data_reqs = 0;	/* not the open request */
	ck_assert_int_eq(source_pread(s, buf, 1 << 20, 4 << 20), 0);
	ck_assert(memcmp(buf, F.data + (4 << 20), 1 << 20) == 0);
	ck_assert_uint_eq(F.data_reqs, 1);
	free(buf);
	source_close(s);
}
END_TEST

/* issue 29.1: a server that cuts answers short: a retry asks for the
 * rest, so answers of 200 KiB bring the bytes in a few requests; answers
 * of 1000 bytes fail the read after http_tries of them, not a bound's
 * worth of retries */
START_TEST(truncating_server_costs_few_requests)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char *buf = malloc(2 << 20);

	client->conf.ra_max = 0;
	F.cut = 200 << 10;
	F.data_reqs = 0;	/* not the open request */
	ck_assert_int_eq(source_pread(s, buf, 2 << 20, 3 << 20), 0);
	ck_assert(memcmp(buf, F.data + (3 << 20), 2 << 20) == 0);
	ck_assert_uint_le(F.data_reqs, 11);
	F.data_reqs = 0;
	F.cut = 1000;
	ck_assert_int_eq(source_pread(s, buf, 2 << 20, 9 << 20), -EIO);
	ck_assert_uint_le(F.data_reqs, 3);
	free(buf);
	source_close(s);
}
END_TEST

/* issue 14.6: a hung server costs one bound; the retry fails at once */
START_TEST(hung_server_one_wait)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];
	uint64_t t0;
	unsigned n;

	F.hang = 1;
	t0 = http_conf_now_ms();
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 3 << 20), -EIO);
	ck_assert_uint_lt(http_conf_now_ms() - t0, 2 * http_conf_bound_ms(&client->conf));
	n = F.requests;
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 3 << 20), -EIO);
	ck_assert_uint_eq(F.requests, n);	/* no second wait */
	F.hang = 0;
	usleep(1100 * 1000);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 3 << 20), 0);
	ck_assert(memcmp(buf, F.data + (3 << 20), sizeof(buf)) == 0);
	source_close(s);
}
END_TEST

/* issues 13.3 and 14.4: one resolve per file, the token stays home */
START_TEST(redirect_resolved_once)
{
	static const char *const hdrs[] = { "Authorization: Bearer tok", NULL };
	struct source_http_opts o = { .headers = hdrs };
	struct source *s = open_url("https://origin.test/redir/m.safetensors",
				    &o);

	char buf[4096];

	ck_assert_str_eq(s->name, "https://origin.test/redir/m.safetensors");
	ck_assert_uint_eq(F.resolves, 1);	/* the open request */
	/* the CDN refuses the signed URL: resolved again, no error */
	F.cdn_refuse = 1;
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 7 << 20), 0);
	ck_assert(memcmp(buf, F.data + (7 << 20), sizeof(buf)) == 0);
	ck_assert_uint_eq(F.cdn_refuse, 0);
	ck_assert_uint_eq(F.resolves, 2);
	/* the whole file: no further resolves */
	read_all(s, 1 << 20);
	ck_assert_uint_eq(F.resolves, 2);
	ck_assert_int_eq(F.auth_at_origin, 1);
	ck_assert_int_eq(F.auth_at_cdn, 0);
	source_close(s);
}
END_TEST

START_TEST(no_https_downgrade)
{
	struct source_http_opts o = { .client = client };
	struct source *s = NULL;
	struct err e = { 0 };

	F.downgrade = 1;
	ck_assert_int_eq(source_open_http_opts(
		"https://origin.test/redir/m.safetensors", &o, &s, &e), -1);
	ck_assert_msg(strstr(e.detail, "downgrade") != NULL, "%s", e.detail);
	ck_assert_ptr_null(strstr(e.detail, "s3cr3t"));
}
END_TEST

/* issue 16.4: If-Match on every GET; a changed ETag fails, never mixes */
START_TEST(changed_etag_fails)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];

	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 2 << 20), 0);
	ck_assert_int_eq(source_http_verify(s), 0);
	snprintf(F.etag, sizeof(F.etag), "\"v2\"");
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 15 << 20), -EIO);
	ck_assert_int_eq(source_http_verify(s), -ESTALE);
	/* even cached bytes are not handed out any more */
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 2 << 20), -EIO);
	source_close(s);
}
END_TEST

/* issue 29.3: an answer without the ETag is a change too, never taken */
START_TEST(answer_without_etag_fails)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[4096];

	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 2 << 20), 0);
	F.no_etag = 1;
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 15 << 20), -EIO);
	ck_assert_int_eq(source_http_verify(s), -ESTALE);
	source_close(s);
}
END_TEST

/* ... and a server with no validator at all is refused, unless the user
 * accepts it (-o http_no_validator) */
START_TEST(no_validator_refused)
{
	struct source_http_opts o = { .client = client };
	struct source *s = NULL;
	struct err e = { 0 };
	char buf[4096];

	F.no_etag = 1;
	ck_assert_int_eq(source_open_http_opts(
		"http://origin.test/m.safetensors", &o, &s, &e), -1);
	ck_assert_msg(strstr(e.detail, "neither ETag nor Last-Modified") &&
		      strstr(e.detail, "http_no_validator"), "%s", e.detail);
	client->conf.no_validator = 1;
	s = open_url("http://origin.test/m.safetensors", NULL);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 9 << 20), 0);
	ck_assert(memcmp(buf, F.data + (9 << 20), sizeof(buf)) == 0);
	source_close(s);
}
END_TEST

START_TEST(known_size_no_probe)
{
	struct source_http_opts o = {
		.size_known = 1, .size = OBJ_SIZE, .etag = "\"v1\"",
		.display = "hf://org/model/m.safetensors",
	};
	struct source *s = open_url("http://origin.test/m.safetensors", &o);
	char buf[100];

	ck_assert_uint_eq(F.requests, 0);
	ck_assert_str_eq(s->name, "hf://org/model/m.safetensors");
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 0), 0);
	ck_assert(memcmp(buf, F.data, sizeof(buf)) == 0);
	source_close(s);
}
END_TEST

/* issue 16.7: the counters say what happened */
START_TEST(stats_count)
{
	struct source *s = open_url("http://origin.test/redir/m.safetensors",
				    NULL);
	json_t *j;
	char buf[4096];

	client->conf.ra_max = 0;	/* no read-ahead: exact counts */
	F.fail503 = 1;
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 4 << 20), 0);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 4 << 20), 0);
	j = source_http_stats(s);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		j, "requests"), "header")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		j, "requests"), "resolve")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		j, "requests"), "data")), 2);	/* one got a 503 */
	ck_assert_int_eq(json_integer_value(json_object_get(j, "retries")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		j, "failed_attempts"), "http_status")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		j, "blocks"), "cache_misses")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		j, "blocks"), "cache_hits")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
		"bytes_fetched")), HTTP_HEAD_BYTES + HTTP_BLOCK_BYTES);
	ck_assert_str_eq(json_string_value(json_object_get(j, "source")),
			 "http://origin.test/redir/m.safetensors");
	json_decref(j);
	source_close(s);
}
END_TEST

/* ---- hints and the level of requests (issue 22) ------------------------- */

static json_int_t
stat_blocks(struct source *s, const char *what)
{
	json_t *j = source_http_stats(s);
	json_int_t v = json_integer_value(json_object_get(json_object_get(
		j, "blocks"), what));

	json_decref(j);
	return v;
}

/* Bytes a view says come next are fetched before they are read: the
 * reads find every block in the cache (READY, or LOADING by a worker). */
START_TEST(hint_fetches_ahead)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char *buf = malloc(1 << 20);
	uint64_t off;

	source_hint(s, 5 << 20, 6 << 20);
	source_hint(s, 5 << 20, 6 << 20);	/* once is enough */
	for (off = 5 << 20; off < 11 << 20; off += 1 << 20) {
		ck_assert_int_eq(source_pread(s, buf, 1 << 20, off), 0);
		ck_assert(memcmp(buf, F.data + off, 1 << 20) == 0);
	}
	ck_assert_int_eq(stat_blocks(s, "cache_misses"), 0);
	ck_assert_int_eq(stat_blocks(s, "cache_hits"), 6);
	/* a hint past the end, or of nothing, does nothing */
	source_hint(s, OBJ_SIZE, 1 << 20);
	source_hint(s, 0, 0);
	free(buf);
	source_close(s);
}
END_TEST

/* A stream's requests near the reader are one block each (a block at the
 * end of a long request would come last), larger further on. */
START_TEST(requests_grow_away_from_the_reader)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	unsigned i, n, at0 = 0, larger = 0;

	F.delay_ms = 20;
	source_hint(s, 0, OBJ_SIZE);
	read_all(s, 128 << 10);
	n = F.data_reqs < 64 ? F.data_reqs : 64;
	for (i = 0; i < n; i++) {
		if (F.starts[i] == 0)
			at0 = (unsigned)F.lens[i];
		if (F.lens[i] > HTTP_BLOCK_BYTES)
			larger++;
	}
	ck_assert_uint_eq(at0, HTTP_BLOCK_BYTES);
	ck_assert_uint_gt(larger, 0);
	source_close(s);
}
END_TEST

/* -o http_connections=4: never more read-ahead requests at once than
 * that, plus the one the reading thread makes itself. */
START_TEST(connections_capped)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);

	F.delay_ms = 20;
	source_hint(s, 0, OBJ_SIZE);
	read_all(s, 128 << 10);
	ck_assert_msg(F.max_inflight <= 4 + 1, "%u requests at once",
		      F.max_inflight);
	ck_assert_uint_ge(F.max_inflight, 2);
	source_close(s);
}
END_TEST

/* ---- the disk cache (issue 16.5) ------------------------------------------ */

static char cache_dir[64];

static void
disk_on(void)
{
	snprintf(cache_dir, sizeof(cache_dir), "/tmp/stfs-unit-disk-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(cache_dir));
	use_client(cache_dir);
}

static void
disk_off(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache_dir);
	ck_assert_int_eq(system(cmd), 0);
}

static uint64_t
stat_of(struct source *s, const char *group, const char *name)
{
	json_t *j = source_http_stats(s);
	json_t *g = group ? json_object_get(j, group) : j;
	uint64_t v = (uint64_t)json_integer_value(json_object_get(g, name));

	json_decref(j);
	return v;
}

/* Streams only hinted (where a model-order reader goes next) take no
 * share of the read-ahead budget from the stream being read. */
START_TEST(hinted_streams_leave_the_window)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	char buf[128 << 10];
	uint64_t off;

	for (off = 0; off < (20u << 20); off += 5u << 20)
		source_hint(s, off, 2u << 20);	/* 4 streams + 1 read: */
	for (off = 19u << 20; off < (20u << 20); off += sizeof(buf))
		ck_assert_int_eq(source_pread(s, buf, sizeof(buf), off), 0);
	/* half of the 64 MiB cache among 5 would be 6.4 MiB */
	ck_assert_uint_eq(stat_of(s, NULL, "readahead_window_max"), 8u << 20);
	source_close(s);
}
END_TEST

/* A source lends the bytes where its cache holds them: one piece per
 * block, the same bytes pread gives, none when more pieces than allowed;
 * the header's bytes from the open request. */
START_TEST(lend_gives_cache_blocks)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	struct iovec iov[4];
	void *token = NULL;
	uint64_t off = (3u << 20) - 1000;
	int n;

	n = source_lend(s, off, 300000, iov, 4, &token);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(iov[0].iov_len, 1000);
	ck_assert_uint_eq(iov[1].iov_len, 300000 - 1000);
	ck_assert(memcmp(iov[0].iov_base, F.data + off, 1000) == 0);
	ck_assert(memcmp(iov[1].iov_base, F.data + (3u << 20),
			 300000 - 1000) == 0);
	source_lend_end(s, token);
	ck_assert_int_eq(source_lend(s, off, 300000, iov, 1, &token),
			 -EOPNOTSUPP);
	n = source_lend(s, 10, 100, iov, 4, &token);
	ck_assert_int_eq(n, 1);
	ck_assert(memcmp(iov[0].iov_base, F.data + 10, 100) == 0);
	source_lend_end(s, token);
	ck_assert_int_eq(source_lend(s, OBJ_SIZE - 10, 20, iov, 4, &token),
			 -EIO);
	source_close(s);	/* no block left pinned: all freed */
	ck_assert_uint_eq(http_cache_bytes(client->cache), 0);
}
END_TEST

/* ---- metadata reads (issue 31) ------------------------------------------ */

/* Bytes [off, off + n) read as metadata equal the object's. */
static void
meta_ok(struct source *s, uint64_t off, size_t n)
{
	char *buf = malloc(n);

	ck_assert_int_eq(source_pread_meta(s, buf, n, off), 0);
	ck_assert_msg(memcmp(buf, F.data + off, n) == 0, "bytes differ at "
		      "%llu", (unsigned long long)off);
	free(buf);
}

/* A header longer than the open's 64 KiB (DeepSeek-V3's are 73 KiB):
 * one GET of exactly the bytes missing, no cache block (which would
 * fetch and hold a MiB); read again, from memory until the header is
 * parsed. */
START_TEST(meta_read_fetches_exactly)
{
	struct source *s = open_url("http://origin.test/m.safetensors", NULL);
	uint64_t cached = http_cache_bytes(client->cache);
	char buf[10];

	ck_assert_uint_eq(F.data_reqs, 1);	/* the open */
	meta_ok(s, 8, 75000);
	ck_assert_uint_eq(F.data_reqs, 2);
	ck_assert_uint_eq(F.starts[1], HTTP_HEAD_BYTES);
	ck_assert_uint_eq(F.lens[1], 8 + 75000 - HTTP_HEAD_BYTES);
	ck_assert_uint_eq(http_cache_bytes(client->cache), cached);
	ck_assert_int_eq(stat_blocks(s, "cache_misses"), 0);
	meta_ok(s, 0, 75008);
	meta_ok(s, 70000, 5000);
	ck_assert_uint_eq(F.data_reqs, 2);
	/* parsed: let go of them, and of the head, all header; read
	 * again, fetched again */
	source_meta_done(s);
	meta_ok(s, 0, 75008);
	ck_assert_uint_eq(F.data_reqs, 3);
	ck_assert_uint_eq(F.starts[2], 0);
	ck_assert_uint_eq(F.lens[2], 75008);
	/* data reads stay on the block cache */
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 70000), 0);
	ck_assert(memcmp(buf, F.data + 70000, sizeof(buf)) == 0);
	ck_assert_int_eq(stat_blocks(s, "cache_misses"), 1);
	source_close(s);
}
END_TEST

/* issue 29.6: two clients share nothing: each source reads through its
 * own client's cache with its own settings, and a client is freed (its
 * threads joined) while another's sources go on. */
START_TEST(clients_are_independent)
{
	struct http_options o = { 0 };
	struct source_http_opts with = { 0 };
	struct http_client *other;
	struct source *s, *t = NULL;
	struct err e = { 0 };
	char buf[4096];

	o.timeout_s = 1;
	o.tries = 3;
	o.cache_mb = 8;
	o.readahead_mb = 2;
	o.cache = -1;
	other = http_client_new(&o, &fake, &e);
	ck_assert_msg(other != NULL, "%s", e.detail);
	ck_assert_uint_eq(other->conf.ra_max, 2u << 20);
	ck_assert_uint_eq(client->conf.ra_max, 8u << 20);
	s = open_url("http://origin.test/m.safetensors", NULL);
	with.client = other;
	ck_assert_int_eq(source_open_http_opts(
		"http://origin.test/m.safetensors", &with, &t, &e), 0);
	read_all(t, 1 << 20);
	ck_assert_uint_gt(http_cache_bytes(other->cache), 0);
	ck_assert_uint_eq(http_cache_bytes(client->cache), 0);
	ck_assert_int_eq(stat_blocks(s, "cache_hits") +
			 stat_blocks(s, "cache_misses"), 0);
	source_close(t);
	http_client_free(other);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 5 << 20), 0);
	ck_assert(memcmp(buf, F.data + (5 << 20), sizeof(buf)) == 0);
	ck_assert_int_eq(stat_blocks(s, "cache_misses"), 1);
	source_close(s);
}
END_TEST

/* A reader that goes on chunk after chunk where the metadata held ends
 * (GGUF's): requests that double, not one per chunk; a metadata read
 * elsewhere (a zip's directory at the end, its local headers) is one
 * exact request around it, outside the block cache (whose read-ahead
 * would fetch the data between a zip's local headers), and reads near
 * it cost nothing more. */
START_TEST(meta_read_sequential_grows)
{
	struct source *s = open_url("http://origin.test/m.gguf", NULL);
	uint64_t off;

	for (off = 0; off < (1u << 20); off += 65536)
		meta_ok(s, off, 65536);
	ck_assert_uint_eq(F.data_reqs, 1 + 4);	/* 64K, 128K, 256K, 512K */
	ck_assert_uint_eq(F.starts[4], 512u << 10);
	ck_assert_uint_eq(F.lens[4], 512u << 10);
	ck_assert_int_eq(stat_blocks(s, "cache_misses"), 0);
	meta_ok(s, OBJ_SIZE - 100, 100);
	ck_assert_uint_eq(F.data_reqs, 1 + 4 + 1);
	ck_assert_uint_eq(F.starts[5], OBJ_SIZE - 100 - 4096);
	ck_assert_uint_eq(F.lens[5], 100 + 4096);
	meta_ok(s, OBJ_SIZE - 3000, 30);	/* before it, within the window */
	meta_ok(s, (8u << 20) + 26, 4);		/* a local header's lengths, */
	meta_ok(s, 8u << 20, 30);		/* then the header itself */
	meta_ok(s, (8u << 20) + 30, 60000);	/* and its name, and more */
	ck_assert_uint_eq(F.data_reqs, 1 + 4 + 2);
	ck_assert_uint_eq(F.starts[6], (8u << 20) + 26 - 4096);
	ck_assert_uint_eq(F.lens[6], 4096 + (64u << 10));
	ck_assert_int_eq(stat_blocks(s, "cache_misses"), 0);
	source_close(s);
}
END_TEST

/* Known size and ETag (a listing), so no open request: the first
 * metadata read fetches the open's 64 KiB; through the validators like
 * every read: a change fails it. */
START_TEST(meta_read_without_probe)
{
	struct source_http_opts o = {
		.size_known = 1, .size = OBJ_SIZE, .etag = "\"v1\"",
	};
	struct source *s = open_url("http://origin.test/m.safetensors", &o);
	char buf[100];

	meta_ok(s, 0, 16);
	ck_assert_uint_eq(F.data_reqs, 1);
	ck_assert_uint_eq(F.starts[0], 0);
	ck_assert_uint_eq(F.lens[0], HTTP_HEAD_BYTES);
	snprintf(F.etag, sizeof(F.etag), "\"v2\"");
	ck_assert_int_eq(source_pread_meta(s, buf, sizeof(buf), 65500), -EIO);
	ck_assert_int_eq(source_http_verify(s), -ESTALE);
	ck_assert_int_eq(source_pread_meta(s, buf, 16, 0), -EIO);
	source_close(s);
}
END_TEST

START_TEST(disk_second_mount_no_data)
{
	struct source *s;
	char path[256];
	struct stat st;

	disk_on();
	s = open_url("http://origin.test/m.safetensors", NULL);
	read_all(s, 1 << 20);
	ck_assert_uint_gt(F.data_reqs, 1);
	source_close(s);
	/* an unchanged object: its blocks come from disk */
	F.data_reqs = 0;
	s = open_url("http://origin.test/m.safetensors", NULL);
	read_all(s, 1 << 20);
	ck_assert_uint_eq(F.data_reqs, 1);	/* the open request only */
	ck_assert_uint_eq(stat_of(s, NULL, "disk_cache_hits"),
			  (OBJ_SIZE + HTTP_BLOCK_BYTES - 1) / HTTP_BLOCK_BYTES);
	source_close(s);
	/* modes: 0700 directories, 0600 files */
	snprintf(path, sizeof(path), "%s/v1", cache_dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	/* a new version: another key, fetched again */
	snprintf(F.etag, sizeof(F.etag), "\"v2\"");
	F.data_reqs = 0;
	s = open_url("http://origin.test/m.safetensors", NULL);
	read_all(s, 1 << 20);
	ck_assert_uint_gt(F.data_reqs, 1);
	ck_assert_uint_eq(stat_of(s, NULL, "disk_cache_hits"), 0);
	source_close(s);
	/* two objects of two extents, each with a page of tags (and the
	 * short last block rounded up to a page) */
	ck_assert_uint_le(http_disk_trim(client->disk, 1ull << 40),
			  2ull * (OBJ_SIZE + 3 * 4096));
	ck_assert_uint_le(http_disk_trim(client->disk, 4 << 20), 4 << 20);
	disk_off();
}
END_TEST

/* issue 38.1: with the disk cache on, read-ahead larger than the memory
 * for blocks (8 MiB here, a window of 16) waits on the disk: the memory
 * of the blocks stays within the size (and a few a reader pins over it),
 * every byte is right, and nothing is fetched twice */
START_TEST(disk_read_ahead_waits_on_disk)
{
	struct source *s;
	char *buf = malloc(1 << 19);
	uint64_t off;

	snprintf(cache_dir, sizeof(cache_dir), "/tmp/stfs-unit-disk-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(cache_dir));
	use_client_sized(cache_dir, 8, 16);
	s = open_url("http://origin.test/m.safetensors", NULL);
	F.chunk_ms = 2;		/* 32 ms a block: read-ahead gets ahead */
	for (off = 0; off < OBJ_SIZE; off += 1 << 19) {
		size_t n = OBJ_SIZE - off < (1 << 19) ? OBJ_SIZE - off : 1 << 19;

		ck_assert_int_eq(source_pread(s, buf, n, off), 0);
		ck_assert_msg(memcmp(buf, F.data + off, n) == 0, "at %llu",
			      (unsigned long long)off);
		usleep(20 * 1000);	/* a reader slower than the link */
	}
	ck_assert_uint_gt(stat_of(s, NULL, "readahead_window_max"), 8u << 20);
	ck_assert_uint_le(http_cache_peak(client->cache), 12u << 20);
	ck_assert_uint_le(stat_of(s, NULL, "bytes_fetched"),
			  OBJ_SIZE + HTTP_HEAD_BYTES);
	source_close(s);
	free(buf);
	disk_off();
}
END_TEST

START_TEST(disk_damaged_block_is_a_miss)
{
	struct source *s;
	char cmd[1024];
	char buf[4096];

	disk_on();
	s = open_url("http://origin.test/m.safetensors", NULL);
	read_all(s, 1 << 20);
	source_close(s);
	/* in extent e0 (blocks 0-15 at k MiB, then a 16-byte tag for each
	 * from 16 MiB on: magic, then checksum) flip bytes of block 3, the
	 * checksum of block 7 and the magic of block 9; cut e1 (blocks 16-20)
	 * inside its last block: its tags go with it */
	snprintf(cmd, sizeof(cmd), "for f in %s/v1/*/*/e0; do printf xxxx | "
		 "dd of=$f bs=1 seek=%u conv=notrunc 2>/dev/null; "
		 "printf x | dd of=$f bs=1 seek=%u conv=notrunc 2>/dev/null; "
		 "printf 9 | dd of=$f bs=1 seek=%u conv=notrunc 2>/dev/null; "
		 "done; for f in %s/v1/*/*/e1; do truncate -s %u $f; done",
		 cache_dir, (3u << 20) + 100, (16u << 20) + 7 * 16 + 8 + 3,
		 (16u << 20) + 9 * 16 + 7, cache_dir, (4u << 20) + 1000);
	ck_assert_int_eq(system(cmd), 0);
	F.data_reqs = 0;
	s = open_url("http://origin.test/m.safetensors", NULL);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), (3 << 20) + 50), 0);
	ck_assert(memcmp(buf, F.data + (3 << 20) + 50, sizeof(buf)) == 0);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 20 << 20), 0);
	ck_assert(memcmp(buf, F.data + (20 << 20), sizeof(buf)) == 0);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), (7 << 20) + 9), 0);
	ck_assert(memcmp(buf, F.data + (7 << 20) + 9, sizeof(buf)) == 0);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), 9 << 20), 0);
	ck_assert(memcmp(buf, F.data + (9 << 20), sizeof(buf)) == 0);
	ck_assert_uint_eq(F.data_reqs, 5);	/* open + the four bad ones */
	source_close(s);
	/* fetched again, they were written anew: hits now */
	F.data_reqs = 0;
	s = open_url("http://origin.test/m.safetensors", NULL);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), (7 << 20) + 9), 0);
	ck_assert(memcmp(buf, F.data + (7 << 20) + 9, sizeof(buf)) == 0);
	ck_assert_uint_eq(F.data_reqs, 1);	/* the open request only */
	source_close(s);
	disk_off();
}
END_TEST

/* mtime of the extent file that holds cached block idx (the one object
 * in the cache). */
static time_t
block_mtime(unsigned idx)
{
	char cmd[256], out[64];
	FILE *p;
	long long t = -1;

	snprintf(cmd, sizeof(cmd), "stat -c %%Y %s/v1/*/*/e%u 2>/dev/null",
		 cache_dir, idx / 16);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	if (fgets(out, sizeof(out), p))
		t = atoll(out);
	pclose(p);
	return (time_t)t;
}

/* A hit marks its extent used (its mtime, the LRU order across mounts)
 * when it was not within the last minute; the trim then keeps it and
 * evicts the extents nobody read. */
START_TEST(disk_hit_keeps_block)
{
	struct source *s;
	char cmd[256], buf[4096];
	time_t now = time(NULL);

	disk_on();
	s = open_url("http://origin.test/m.safetensors", NULL);
	read_all(s, 1 << 20);
	source_close(s);
	/* everything last used two hours ago */
	snprintf(cmd, sizeof(cmd), "touch -d '2 hours ago' %s/v1/*/*/e[0-9]*",
		 cache_dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_lt(block_mtime(4), now - 3600);
	F.data_reqs = 0;
	s = open_url("http://origin.test/m.safetensors", NULL);
	ck_assert_int_eq(source_pread(s, buf, sizeof(buf), (4 << 20) + 7), 0);
	ck_assert(memcmp(buf, F.data + (4 << 20) + 7, sizeof(buf)) == 0);
	ck_assert_uint_eq(F.data_reqs, 1);	/* a hit */
	source_close(s);
	ck_assert_int_ge(block_mtime(4), now - 60);
	ck_assert_int_lt(block_mtime(17), now - 3600);
	/* room for about the first extent (16 MiB of the 20): the one just
	 * read stays */
	ck_assert_uint_le(http_disk_trim(client->disk, 20u << 20),
			  20u << 20);
	ck_assert_int_ge(block_mtime(4), now - 60);
	ck_assert_int_eq(block_mtime(17), -1);	/* evicted */
	disk_off();
}
END_TEST

/* Pages of the first MiB (block 0) of every extent e0 in the cache that
 * are in the page cache; 0 where the page cache is the file system's
 * storage (tmpfs, ramfs: there nothing can go around it). */
static unsigned
resident_pages(void)
{
	unsigned char vec[256];
	char pat[256];
	unsigned n = 0, i;
	size_t k;
	glob_t g;
	struct statfs fs;

	ck_assert_int_eq(statfs(cache_dir, &fs), 0);
	if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)
		return 0;
	snprintf(pat, sizeof(pat), "%s/v1/*/*/e0", cache_dir);
	ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
	for (k = 0; k < g.gl_pathc; k++) {
		int fd = open(g.gl_pathv[k], O_RDONLY);
		void *m;

		ck_assert_int_ge(fd, 0);
		m = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
		ck_assert_ptr_ne(m, MAP_FAILED);
		ck_assert_int_eq(mincore(m, 1 << 20, vec), 0);
		for (i = 0; i < 256; i++)
			n += vec[i] & 1;
		munmap(m, 1 << 20);
		close(fd);
	}
	globfree(&g);
	return n;
}

/* Blocks reach the disk through the spool's writers: more than it holds at
 * once (the putters wait), from several threads, all on disk once drained,
 * each with its own bytes, and no block left referenced.  Full blocks go
 * to and from the disk around the page cache (O_DIRECT): their pages do
 * not stay cached, written or read (into a page-aligned buffer; any other
 * buffer is read through the page cache).  "Not" allows a few: a file
 * system may do part of a direct write through the page cache (ext4 left
 * 4 of a block's 256 pages there once, under valgrind); a block written
 * through it leaves all 256. */
struct spool_putter {
	struct http_disk_object *d;
	unsigned first, n;
};

static int spool_owner;

static void *
spool_put_some(void *arg)
{
	struct spool_putter *p = arg;
	unsigned i;

	for (i = p->first; i < p->first + p->n; i++) {
		struct http_cache_block *b;

		ck_assert_int_eq(http_cache_add(client->cache, &spool_owner, i,
						HTTP_BLOCK_BYTES, 0, 1, &b),
				 HTTP_CACHE_ADDED);
		memset(b->data, (int)(i & 0xff), HTTP_BLOCK_BYTES);
		http_spool_put(client->spool, p->d, b);
		http_cache_settle(client->cache, &b, 1, 1, 0);
	}
	return NULL;
}

START_TEST(disk_spool_writes_everything)
{
	enum { THREADS = 3, EACH = SPOOL_MAX_BYTES / HTTP_BLOCK_BYTES / 2 };
	struct spool_putter p[THREADS];
	pthread_t t[THREADS];
	struct http_disk_object *d;
	char *buf = NULL;
	unsigned i, k;

	ck_assert_int_eq(posix_memalign((void **)&buf, 4096,
					HTTP_BLOCK_BYTES + 1), 0);
	disk_on();
	d = http_disk_open(client->disk, "http://origin.test/spool", "\"s1\"",
			   (uint64_t)THREADS * EACH * HTTP_BLOCK_BYTES);
	ck_assert_ptr_nonnull(d);
	for (i = 0; i < THREADS; i++) {
		p[i] = (struct spool_putter){ d, i * EACH, EACH };
		ck_assert_int_eq(pthread_create(&t[i], NULL, spool_put_some,
						&p[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	http_spool_drain(client->spool, d);
	ck_assert_uint_lt(resident_pages(), 64);
	for (i = 0; i < THREADS * EACH; i++) {
		ck_assert_int_eq(http_disk_get(d, i, buf, HTTP_BLOCK_BYTES), 1);
		for (k = 0; k < HTTP_BLOCK_BYTES; k += 4099)
			ck_assert_int_eq((unsigned char)buf[k], i & 0xff);
	}
	ck_assert_uint_lt(resident_pages(), 64);
	ck_assert_int_eq(http_disk_get(d, 0, buf + 1, HTTP_BLOCK_BYTES), 1);
	ck_assert_int_eq((unsigned char)buf[1 + 4099], 0);
	http_disk_close(d);
	/* the writers let go of every block: ours is the one reference */
	for (i = 0; i < THREADS * EACH; i++) {
		struct http_cache_block *b = http_cache_pin(client->cache,
							    &spool_owner, i);

		ck_assert(!b || b->refs == 1);
		http_cache_release(client->cache, &b, 1, 0);
	}
	http_cache_drop(client->cache, &spool_owner);
	free(buf);
	disk_off();
}
END_TEST

START_TEST(disk_unusable_dir_degrades)
{
	struct source *s;

	use_client("/proc/version/stfs");	/* cannot be made */
	s = open_url("http://origin.test/m.safetensors", NULL);
	read_all(s, 4 << 20);
	source_close(s);
}
END_TEST

/* Booleans (STFS_HTTP_INSECURE, STFS_CACHE) are parsed in one place:
 * "false" and "no" mean false, anything unknown is refused. */
START_TEST(booleans_parsed_once)
{
	static const char *const yes[] = { "1", "on", "yes", "true", "TRUE",
					   "Yes", "oN" };
	static const char *const no[] = { "0", "off", "no", "false", "FALSE",
					  "No" };
	static const char *const bad[] = { "", "2", "maybe", "truee", "y",
					   " 1", "enable" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_int_eq(http_conf_parse_bool(yes[i]), 1);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_int_eq(http_conf_parse_bool(no[i]), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(http_conf_parse_bool(bad[i]), -1);
	ck_assert_int_eq(http_conf_parse_bool(NULL), -1);
}
END_TEST

Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("source");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, booleans_parsed_once);
	tcase_add_test(tc, cache_lru_evicts_oldest);
	tcase_add_test(tc, cache_reuses_spent_memory);
	tcase_add_test(tc, cache_far_goes_first);
	tcase_add_test(tc, cache_reserve_whole_request);
	tcase_add_test(tc, sequential_read_coalesces);
	tcase_add_test(tc, random_reads);
	tcase_add_test(tc, transient_errors_are_retried);
	tcase_add_test(tc, refused_until_restart);
	tcase_add_test(tc, hung_server_one_wait);
	tcase_add_test(tc, slow_transfer_runs_to_its_end);
	tcase_add_test(tc, truncating_server_costs_few_requests);
	tcase_add_test(tc, redirect_resolved_once);
	tcase_add_test(tc, no_https_downgrade);
	tcase_add_test(tc, changed_etag_fails);
	tcase_add_test(tc, answer_without_etag_fails);
	tcase_add_test(tc, retry_after_honoured);
	tcase_add_test(tc, content_coding_refused);
	tcase_add_test(tc, cancelled_read_returns);
	tcase_add_test(tc, stopped_client_ends_transfers);
	tcase_add_test(tc, no_validator_refused);
	tcase_add_test(tc, known_size_no_probe);
	tcase_add_test(tc, stats_count);
	tcase_add_test(tc, hint_fetches_ahead);
	tcase_add_test(tc, connections_capped);
	tcase_add_test(tc, requests_grow_away_from_the_reader);
	tcase_add_test(tc, hinted_streams_leave_the_window);
	tcase_add_test(tc, lend_gives_cache_blocks);
	tcase_add_test(tc, meta_read_fetches_exactly);
	tcase_add_test(tc, meta_read_sequential_grows);
	tcase_add_test(tc, meta_read_without_probe);
	tcase_add_test(tc, clients_are_independent);
	tcase_add_test(tc, disk_second_mount_no_data);
	tcase_add_test(tc, disk_damaged_block_is_a_miss);
	tcase_add_test(tc, disk_read_ahead_waits_on_disk);
	tcase_add_test(tc, disk_spool_writes_everything);
	tcase_add_test(tc, disk_hit_keeps_block);
	tcase_add_test(tc, disk_unusable_dir_degrades);
	suite_add_tcase(s, tc);
	return s;
}
