/* source_http.c - a read-only source over HTTP(S) range requests.
 *
 * Open costs one request: a speculative GET of the first 64 KiB, which
 * gives the object's size (Content-Range), its validators (ETag,
 * Last-Modified) and, for almost every safetensors file, the whole header,
 * so header_read()'s two preads are served from memory.  When the caller
 * knows size and ETag (a listing said so), open sends nothing.
 *
 * A format's metadata past those 64 KiB (source_pread_meta(): the rest of
 * a long header, an index, GGUF's key-value pairs) costs one ranged GET
 * of just the missing bytes, kept with the source until the format has
 * parsed them (source_meta_done()) and never in the block cache:
 * DeepSeek-V3's 73 KiB headers would otherwise fetch, and hold, a 1 MiB
 * block each for their last 9 KiB.
 *
 * Everything else goes through the block cache and the read-ahead of
 * http_prefetch.c, whose jobs http_fill.c fills from the disk cache or
 * with the ranged GETs of http_fetch.c (checked, retried within the
 * per-read bound, redirects resolved once): down once, and back by
 * return values.
 */
#include "source/source.h"
#include "source/http/source_http.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "base/error.h"
#include "base/text.h"
#include "source/http/http_cache.h"
#include "source/http/http_client.h"
#include "source/http/http_conf.h"
#include "source/http/http_disk.h"
#include "source/http/http_fetch.h"
#include "source/http/http_prefetch.h"
#include "source/http/http_read.h"
#include "source/http/http_spool.h"
#include "source/http/http_tier.h"

struct http_src {
	struct http_client *client;
	struct http_fetch_object obj;
	struct http_prefetch_src pf;
	struct http_disk_object *disk;	/* NULL: no disk cache for this one */
	struct http_tier_src *tier;	/* NULL: no shared cache for it */
	char *head;		/* bytes [0, head_len) from the open request */
	size_t head_len;
	/* Bytes [head_len, head_len + meta_len) that metadata reads fetched
	 * (http_pread_meta), until http_meta_done(); only they look here,
	 * under meta_lock. */
	pthread_mutex_t meta_lock;
	char *meta;
	size_t meta_len;
	/* Bytes [far_off, far_off + far_len) that a metadata read away from
	 * those fetched (a zip's directory at its end, its local headers
	 * between the entries' data), under meta_lock, until
	 * http_meta_done(). */
	char *far;
	uint64_t far_off;
	size_t far_len;
};

/* The most metadata one source fetches past its head; a read beyond it
 * goes through the block cache like data.  Above a safetensors header's
 * 100 MB and an index's 256 MiB (shards.c), which their readers check
 * before reading. */
#define META_MAX	((uint64_t)256 << 20)
/* A reader that goes on where the metadata held ends fetches twice what
 * is held, at most this much more at once. */
#define META_STEP	((uint64_t)16 << 20)
/* A metadata read away from the bytes held fetches at least this much
 * from where it starts: a zip's local header and the next ones when the
 * entries are small. */
#define META_FAR	((uint64_t)64 << 10)
/* ... and this much before it, for a reader whose next read lands just
 * before the last (libzip read a local header's lengths 26 bytes in before
 * the header; torch_zip.c's own reader reads the header first, and the
 * 4 KiB cost one far read little). */
#define META_BACK	((uint64_t)4 << 10)

/* ---- the source ops ---------------------------------------------------- */

/* A read of [off, off + len) may go on: within the object, and no change
 * seen.  0 or -EIO. */
static int
readable(const struct http_src *hs, uint64_t off, size_t len)
{
	if (off > hs->obj.size || len > hs->obj.size - off ||
	    __atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED))
		return -EIO;
	return 0;
}

static int
http_pread(struct source *s, void *buf, size_t len, uint64_t off)
{
	struct http_src *hs = s->priv;
	int rc;

	if (len == 0)
		return 0;
	if (readable(hs, off, len))
		return -EIO;
	if (off + len <= hs->head_len) {
		memcpy(buf, hs->head + off, len);
		return 0;
	}
	rc = http_read_copy(&hs->pf, buf, len, off);
	if (rc == 0 && __atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED))
		rc = -EIO;	/* never hand out bytes once a change is seen */
	return rc;
}

/* ---- metadata reads ------------------------------------------------------ */

struct metaget {
	struct http_fetch_range g;
	char *to;		/* byte `from` of the object goes here */
	uint64_t from;
};

static void
meta_data(struct http_fetch_range *g, const char *p, size_t n)
{
	struct metaget *m = (struct metaget *)g;

	memcpy(m->to + (g->start + g->got - m->from), p, n);
}

/* Where a metadata read of [off, end) fetches to, [0, held) being held:
 * exactly to end; at least the open's 64 KiB when nothing is held (the
 * open knew size and ETag and sent nothing); for a reader that goes on
 * where the bytes held end (GGUF's metadata, read in 64 KiB chunks)
 * twice what is held, so that its chunks cost a few requests, not one
 * each. */
static uint64_t
meta_want(uint64_t held, uint64_t off, uint64_t end, uint64_t size)
{
	uint64_t want = end;

	if (held == 0 && want < HTTP_HEAD_BYTES)
		want = HTTP_HEAD_BYTES;
	else if (held && off == held)
		want = held + (held < META_STEP ? held : META_STEP);
	if (want < end)
		want = end;
	if (want > META_MAX)
		want = META_MAX;	/* end is within it */
	return want < size ? want : size;
}

/* Bytes [from + *len, want) of the object fetched onto *buf, which holds
 * [from, from + *len): one ranged GET through http_fetch.c, as a data
 * read's (validators, deadlines, retries).  0 or -errno.  meta_lock
 * held. */
static int
meta_fetch(struct http_src *hs, char **buf, size_t *len, uint64_t from,
	   uint64_t want)
{
	uint64_t held = from + *len;
	size_t n = (size_t)(want - from);
	struct metaget m = {
		.g = { .kind = HTTP_STATS_REQ_HEADER, .resume = 1,
		       .data = meta_data, .start = held, .len = want - held },
		.from = from,
	};
	struct http_fetch_budget b = http_fetch_budget_now(&hs->client->conf,
							   0, 1);
	char *grown = realloc(*buf, n);

	if (!grown)
		return -ENOMEM;
	*buf = m.to = grown;
	if (http_fetch_get(&hs->obj, &m.g, &b) != HTTP_OK)
		return -EIO;
	*len = n;
	return 0;
}

/* A metadata read of [off, end) away from the bytes held: from the far
 * window, grown when the read goes on where it ends, else replaced by a
 * fetch of [off - META_BACK, off + META_FAR) at least.  Never through the block
 * cache: its read-ahead would fetch the data between a zip's local
 * headers (all of a checkpoint, to mount it).  meta_lock held. */
static int
far_read(struct http_src *hs, void *buf, uint64_t off, uint64_t end)
{
	uint64_t want = end, size = hs->obj.size;
	int rc = 0;

	if (off < hs->far_off || end > hs->far_off + hs->far_len) {
		if (hs->far_len && off >= hs->far_off &&
		    off <= hs->far_off + hs->far_len) {
			/* goes on where the window ends: twice as much,
			 * META_STEP more at most */
			want = hs->far_off + hs->far_len +
			       (hs->far_len < META_STEP ? hs->far_len :
				META_STEP);
		} else {
			hs->far_off = off > META_BACK ? off - META_BACK : 0;
			hs->far_len = 0;
			want = off + META_FAR;
		}
		if (want < end)
			want = end;
		if (want > size)
			want = size;
		rc = meta_fetch(hs, &hs->far, &hs->far_len, hs->far_off, want);
		if (rc)
			hs->far_len = 0;
	}
	if (rc == 0)
		memcpy(buf, hs->far + (off - hs->far_off), (size_t)(end - off));
	return rc;
}

/* A metadata read: from the head and the metadata held, and what is
 * missing fetched exactly (meta_want).  A read that does not start
 * within or right after the bytes held (a zip's directory at the end,
 * its local headers) goes to the far window (far_read); one longer than
 * META_MAX (no format reads that much) through the block cache. */
static int
http_pread_meta(struct source *s, void *buf, size_t len, uint64_t off)
{
	struct http_src *hs = s->priv;
	uint64_t end = off + len, held;
	size_t k = 0;
	int rc = 0;

	if (len == 0)
		return 0;
	if (readable(hs, off, len))
		return -EIO;
	if (end <= hs->head_len) {
		memcpy(buf, hs->head + off, len);
		return 0;
	}
	pthread_mutex_lock(&hs->meta_lock);
	held = hs->head_len + hs->meta_len;
	if (len > META_MAX) {
		pthread_mutex_unlock(&hs->meta_lock);
		return http_pread(s, buf, len, off);
	}
	if (off > held || end > META_MAX) {
		rc = far_read(hs, buf, off, end);
	} else {
		if (end > held)
			rc = meta_fetch(hs, &hs->meta, &hs->meta_len,
					hs->head_len, meta_want(held, off, end,
								hs->obj.size));
		if (rc == 0 && off < hs->head_len) {
			k = hs->head_len - (size_t)off;
			memcpy(buf, hs->head + off, k);
		}
		if (rc == 0)
			memcpy((char *)buf + k,
			       hs->meta + (off + k - hs->head_len), len - k);
	}
	pthread_mutex_unlock(&hs->meta_lock);
	if (rc == 0 && __atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED))
		rc = -EIO;	/* never hand out bytes once a change is seen */
	return rc;
}

/* The metadata is parsed: what was fetched for it goes, and so does the
 * head when the metadata went past it (DeepSeek-V3's headers): it holds
 * nothing a data read wants then.  Before the source serves data
 * (source.h), so no read or lend of the head runs. */
static void
http_meta_done(struct source *s)
{
	struct http_src *hs = s->priv;

	pthread_mutex_lock(&hs->meta_lock);
	if (hs->meta_len) {
		free(hs->head);
		hs->head = NULL;
		hs->head_len = 0;
	}
	free(hs->meta);
	hs->meta = NULL;
	hs->meta_len = 0;
	free(hs->far);
	hs->far = NULL;
	hs->far_len = 0;
	pthread_mutex_unlock(&hs->meta_lock);
}

static int
http_lend(struct source *s, uint64_t off, size_t len, struct iovec *iov,
	  int max, void **token)
{
	struct http_src *hs = s->priv;
	int n;

	if (len == 0 || max < 1)
		return -EOPNOTSUPP;
	if (readable(hs, off, len))
		return -EIO;
	if (off + len <= hs->head_len) {
		/* kept while open (http_meta_done() runs before lends) */
		iov[0].iov_base = hs->head + off;
		iov[0].iov_len = len;
		*token = NULL;
		return 1;
	}
	n = http_read_lend(&hs->pf, off, len, iov, max, token);
	if (n > 0 && __atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED)) {
		http_read_lend_end(*token);	/* never once a change is seen */
		n = -EIO;
	}
	return n;
}

static void
http_lend_end(struct source *s, void *token)
{
	(void)s;
	if (token)
		http_read_lend_end(token);
}

static void
http_hint(struct source *s, uint64_t off, uint64_t len)
{
	struct http_src *hs = s->priv;

	if (!__atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED))
		http_prefetch_hint(&hs->pf, off, len);
}

static void
http_src_free(struct http_src *hs)
{
	if (!hs)
		return;
	if (hs->disk)
		http_spool_drain(hs->client->spool, hs->disk);
	http_disk_close(hs->disk);
	http_tier_src_close(hs->tier);	/* its blocks put first */
	http_fetch_fini(&hs->obj);
	free(hs->head);
	free(hs->meta);
	free(hs->far);
	pthread_mutex_destroy(&hs->meta_lock);
	free(hs);
}

/* One line at close (unmount): what this source cost. */
static void
log_stats(struct http_src *hs)
{
	const struct http_stats *st = &hs->obj.stats;
	uint64_t req = 0, err = 0;
	int i;

	for (i = 0; i < HTTP_STATS_REQ_KINDS; i++)
		req += http_stats_get(&st->requests[i]);
	for (i = 0; i < HTTP_STATS_ERR_KINDS; i++)
		err += http_stats_get(&st->errors[i]);
#define N(kind) (unsigned long long)http_stats_get(&st->requests[ \
		HTTP_STATS_REQ_ ## kind])
#define V(c) (unsigned long long)http_stats_get(&st->c)
	http_conf_log(&hs->client->conf, HTTP_LOG_INFO, "%s: %llu requests "
		      "(%llu header, %llu data, %llu resolve), %llu bytes "
		      "fetched, blocks: %llu cached, %llu missed, %llu from "
		      "disk; %llu retries, %llu failed attempts",
		      hs->obj.display,
		      (unsigned long long)req, N(HEADER), N(DATA), N(RESOLVE),
		      V(bytes), V(hits), V(misses), V(disk_hits), V(retries),
		      (unsigned long long)err);
#undef N
#undef V
	if (hs->tier) {
		const struct http_tier_stats *t = http_tier_src_stats(hs->tier);
		uint64_t rej = 0;

		for (i = 0; i < HTTP_TIER_REJECT_KINDS; i++)
			rej += http_stats_get(&t->rejected[i]);
#define V(c) (unsigned long long)http_stats_get(&t->c)
		http_conf_log(&hs->client->conf, HTTP_LOG_INFO, "%s: shared "
			      "cache: %llu blocks from it, %llu absent, %llu "
			      "refused, %llu put (%llu not)", hs->obj.display,
			      V(hits), V(misses), (unsigned long long)rej,
			      V(puts), V(put_failed) + V(put_dropped));
#undef V
	}
}

static void
http_close(struct source *s)
{
	struct http_src *hs = s->priv;

	if (!hs)
		return;
	log_stats(hs);
	http_prefetch_remove(&hs->pf);
	http_src_free(hs);
	s->priv = NULL;
}

static const struct source_ops http_ops = {
	.pread = http_pread,
	.pread_meta = http_pread_meta,
	.meta_done = http_meta_done,
	.close = http_close,
	.server_at_fault = source_http_size_wrong,
	.hint = http_hint,
	.lend = http_lend,
	.lend_end = http_lend_end,
};

uint64_t
source_http_fetched(struct source *s)
{
	struct http_src *hs;

	if (!s || s->ops != &http_ops || !(hs = s->priv))
		return 0;
	return http_stats_get(&hs->obj.stats.bytes);
}

/* The last failure a reader saw, {"time": ..., "message": ...}, or null. */
static json_t *
last_error(struct http_src *hs)
{
	char msg[sizeof(hs->obj.last_error)], when[TEXT_TIME_ISO];
	struct timespec at;

	if (!http_fetch_last_error(&hs->obj, msg, sizeof(msg), &at))
		return json_null();
	text_time_iso(when, sizeof(when), &at);
	return json_pack("{s:s, s:s}", "time", when, "message", msg);
}

/* The shared cache's counters of hs, or null without one. */
static json_t *
shared_stats(struct http_src *hs)
{
	const struct http_tier_stats *t;

	if (!hs->tier)
		return json_null();
	t = http_tier_src_stats(hs->tier);
#define N(x) json_integer((json_int_t)http_stats_get(&(x)))
	return json_pack("{s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o}, s:o, s:o, "
			 "s:o, s:o, s:o, s:o, s:o, s:o}",
		"requests", N(t->requests), "bytes", N(t->bytes),
		"hits", N(t->hits), "misses", N(t->misses),
		"rejected",
		  "corrupt", N(t->rejected[HTTP_TIER_REJECT_CORRUPT]),
		  "truncated", N(t->rejected[HTTP_TIER_REJECT_TRUNCATED]),
		  "foreign", N(t->rejected[HTTP_TIER_REJECT_FOREIGN]),
		"failed", N(t->failed), "late", N(t->late),
		"passed", N(t->passed),
		"puts", N(t->puts), "put_bytes", N(t->put_bytes),
		"put_failed", N(t->put_failed),
		"put_dropped", N(t->put_dropped),
		"put_pending", N(t->put_pending));
#undef N
}

/* What each tier served: memory, disk, the shared cache, the origin. */
static json_t *
tier_stats(struct http_src *hs)
{
	const struct http_stats *st = &hs->obj.stats;
	uint64_t req = 0;
	int i;

	for (i = 0; i < HTTP_STATS_REQ_KINDS; i++)
		req += http_stats_get(&st->requests[i]);
#define N(x) json_integer((json_int_t)http_stats_get(&(x)))
	return json_pack("{s:{s:o, s:o}, s:o, s:o, s:{s:I, s:o, s:o}}",
		"memory", "hits", N(st->hits), "misses", N(st->misses),
		"disk", hs->disk ? json_pack("{s:o, s:o, s:o}",
			"hits", N(st->disk_hits), "misses", N(st->disk_misses),
			"puts", N(st->disk_puts)) : json_null(),
		"shared", shared_stats(hs),
		"origin", "requests", (json_int_t)req,
		  "bytes", N(st->bytes), "blocks", N(st->origin_blocks));
#undef N
}

json_t *
source_http_stats(struct source *s)
{
	struct http_src *hs;
	const struct http_stats *st;

	if (!s || s->ops != &http_ops || !(hs = s->priv))
		return NULL;
	st = &hs->obj.stats;
#define N(x) json_integer((json_int_t)http_stats_get(&(x)))
	return json_pack("{s:s, s:{s:o, s:o, s:o, s:o}, s:o, s:{s:o, s:o}, "
			 "s:o, s:{s:o, s:o, s:o, s:o}, s:o, s:o, s:b, s:o, "
			 "s:o, s:{s:I, s:I, s:I}}",
		"source", hs->obj.display,
		"requests",
		  "header", N(st->requests[HTTP_STATS_REQ_HEADER]),
		  "data", N(st->requests[HTTP_STATS_REQ_DATA]),
		  "list", N(st->requests[HTTP_STATS_REQ_LIST]),
		  "resolve", N(st->requests[HTTP_STATS_REQ_RESOLVE]),
		"bytes_fetched", N(st->bytes),
		"blocks",
		  "cache_hits", N(st->hits),
		  "cache_misses", N(st->misses),
		"retries", N(st->retries),
		"failed_attempts",
		  "network", N(st->errors[HTTP_STATS_ERR_NET]),
		  "http_status", N(st->errors[HTTP_STATS_ERR_STATUS]),
		  "changed", N(st->errors[HTTP_STATS_ERR_CHANGED]),
		  "protocol", N(st->errors[HTTP_STATS_ERR_PROTOCOL]),
		"readahead_window_max", N(st->ra_window),
		"disk_cache_hits", N(st->disk_hits),
		"stale", __atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED),
		"last_error", last_error(hs),
		"tiers", tier_stats(hs),
		"memory",	/* of all the client's sources together */
		  "blocks", (json_int_t)http_cache_bytes(hs->client->cache),
		  "blocks_peak",
		  (json_int_t)http_cache_peak(hs->client->cache),
		  "blocks_limit",
		  (json_int_t)http_cache_limit(hs->client->cache));
#undef N
}

int
source_http_size_wrong(struct source *s)
{
	struct http_src *hs = s->ops == &http_ops ? s->priv : NULL;

	return hs && http_fetch_serves_past(&hs->obj);
}

void
source_http_stop(void)
{
	http_client_stop_process();
}

int
source_http_verify(struct source *s)
{
	struct http_src *hs = s->ops == &http_ops ? s->priv : NULL;

	return hs && __atomic_load_n(&hs->obj.stale, __ATOMIC_RELAXED) ?
	       -ESTALE : 0;
}

/* ---- open ---------------------------------------------------------------- */

static void
head_data(struct http_fetch_range *g, const char *p, size_t n)
{
	memcpy((char *)g->ud + g->got, p, n);
}

/* The open request: size, validators and the first 64 KiB (and the
 * X-Linked-Etag seen on the way into linked). */
static int
probe(struct http_src *hs, char linked[HTTP_VALIDATOR_MAX], struct err *e)
{
	struct http_fetch_range g = {
		.probe = 1, .kind = HTTP_STATS_REQ_HEADER, .start = 0,
		.len = HTTP_HEAD_BYTES, .data = head_data,
	};
	struct http_fetch_budget b = http_fetch_budget_now(&hs->client->conf,
							   0, 1);

	hs->head = malloc(HTTP_HEAD_BYTES);
	if (!hs->head)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	g.ud = hs->head;
	if (http_fetch_get(&hs->obj, &g, &b) != HTTP_OK)
		return err_set(e, ERR_IO, "cannot fetch: %s", g.why);
	memcpy(linked, g.linked, HTTP_VALIDATOR_MAX);
	if (g.resp.status == 206) {
		hs->obj.size = g.resp.r_total;
		hs->head_len = (size_t)g.got;
	} else if (g.resp.status == 200) {
		hs->obj.size = g.got;	/* the whole object fit */
		hs->head_len = (size_t)g.got;
	} else {
		hs->obj.size = 0;	/* 416 "bytes * /0": empty */
		hs->head_len = 0;
	}
	if (hs->obj.etag[0])
		return 0;	/* known, and the answer matched it */
	/* Without a validator a change during the mount cannot be seen:
	 * the reads would mix two versions.  Unless this answer held the
	 * whole object, nothing is left to fetch then. */
	if (!g.resp.etag[0] && !g.resp.lastmod[0] &&
	    hs->head_len < hs->obj.size && !hs->client->conf.no_validator)
		return err_set(e, ERR_IO, "the server sends neither ETag nor "
			       "Last-Modified, so a change of the file during "
			       "the mount could not be seen and reads could "
			       "mix two versions; to mount it anyway: -o "
			       "http_no_validator (STFS_HTTP_NO_VALIDATOR=1)");
	if (http_fetch_validators(&hs->obj, g.resp.etag, g.resp.lastmod))
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	return 0;
}

/* The headers for the URL's origin: the header file's, then the
 * caller's. */
static int
origin_headers(const struct http_conf *conf, const struct source_http_opts *o,
	       struct curl_slist **out)
{
	struct curl_slist *l, *list = NULL, *tmp;
	const char *const *h;

	/* S3 wants the payload hash signed: that of an empty body. */
	if (o->aws_sigv4 && !(list = curl_slist_append(list,
			"x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92"
			"427ae41e4649b934ca495991b7852b855")))
		goto fail;
	if (!o->no_header_file && !o->aws_sigv4)
		for (l = conf->headers; l; l = l->next) {
			if (!(tmp = curl_slist_append(list, l->data)))
				goto fail;
			list = tmp;
		}
	for (h = o->headers; h && *h; h++) {
		if (!(tmp = curl_slist_append(list, *h)))
			goto fail;
		list = tmp;
	}
	*out = list;
	return 0;
fail:
	curl_slist_free_all(list);
	return -1;
}

/* "sha256:" and 64 lowercase hex digits, maybe quoted: an LFS oid. */
static int
lfs_oid(const char *v, char oid[65])
{
	size_t n = strlen(v), i;

	if (n == 66 && v[0] == '"' && v[65] == '"') {
		v++;
		n = 64;
	}
	if (n != 64)
		return 0;
	for (i = 0; i < 64; i++)
		if (!v[i] || !strchr("0123456789abcdef", v[i]))
			return 0;
	memcpy(oid, v, 64);
	oid[64] = '\0';
	return 1;
}

/* What names the bytes of hs in the shared cache (http_tier.h): an LFS
 * file's sha256 and size; else its name (the display name the caller
 * gave: s3://BUCKET/KEY; else the URL without user info and query) with a
 * strong ETag, or, for a URL without a query (which could pick the
 * bytes), its Last-Modified; and its size.  NULL: not shared (no
 * validator to tell versions apart). */
static char *
tier_identity(const struct http_src *hs, const char *url,
	      const struct source_http_opts *o, const char *linked)
{
	const char *name = o->display ? o->display : hs->obj.display;
	unsigned long long size = (unsigned long long)hs->obj.size;
	char oid[65], *id = NULL;
	int n = -1;

	if (o->linked_etag && lfs_oid(linked, oid))
		n = asprintf(&id, "lfs sha256:%s %llu", oid, size);
	else if (hs->obj.etag[0] && strncmp(hs->obj.etag, "W/", 2) != 0)
		n = asprintf(&id, "url %s etag %s %llu", name, hs->obj.etag,
			     size);
	else if (hs->obj.lastmod[0] && !strchr(url, '?'))
		n = asprintf(&id, "url %s last-modified %s %llu", name,
			     hs->obj.lastmod, size);
	return n < 0 ? NULL : id;
}

static void
fill_source(struct source *s, struct http_src *hs,
	    const struct source_http_opts *o)
{
	s->ops = &http_ops;
	s->size = hs->obj.size;
	s->mode = 0444;
	s->uid = getuid();
	s->gid = getgid();
	s->mtime.tv_sec = o->mtime;
	if (!o->mtime && hs->obj.lastmod[0]) {
		time_t t = curl_getdate(hs->obj.lastmod, NULL);

		if (t != (time_t)-1)
			s->mtime.tv_sec = t;
	}
	if (s->mtime.tv_sec == 0)
		clock_gettime(CLOCK_REALTIME, &s->mtime);
	s->ctime = s->mtime;
	s->priv = hs;
}

int
source_open_http_opts(const char *url, const struct source_http_opts *o,
		      struct source **out, struct err *e)
{
	struct http_transport_sigv4 sig = { 0 };
	static const struct source_http_opts none;
	struct http_client *client;
	struct curl_slist *hdrs = NULL;
	struct http_src *hs = NULL;
	struct source *s = NULL;
	char linked[HTTP_VALIDATOR_MAX] = "", *ident;
	uint64_t t0 = http_conf_now_ms();
	char *shown;

	if (!o)
		o = &none;
	shown = o->display ? strdup(o->display) : http_url_redact(url);

	*out = NULL;
	sig.provider = o->aws_sigv4;
	sig.access_key = o->aws_key;
	sig.secret_key = o->aws_secret;
	client = o->client ? o->client : http_client_process(e);
	if (!client)
		goto fail;
	hs = calloc(1, sizeof(*hs));
	if (hs)
		pthread_mutex_init(&hs->meta_lock, NULL);
	s = calloc(1, sizeof(*s));
	if (hs)
		hs->client = client;
	if (!hs || !s || !shown || origin_headers(&client->conf, o, &hdrs) ||
	    http_fetch_init(&hs->obj, &client->conf, client->tr, url, shown,
			    hdrs, &sig, o->aws_token) ||
	    !(s->name = strdup(shown)) ||
	    !(s->base = o->base ? strdup(o->base) : http_url_base(url))) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	curl_slist_free_all(hdrs);
	hdrs = NULL;
	hs->obj.if_match = o->if_match || o->aws_sigv4;
	if (o->etag && o->etag[0] &&
	    http_fetch_validators(&hs->obj, o->etag, NULL)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	if (o->size_known && o->etag && o->etag[0])
		hs->obj.size = o->size;
	else if (probe(hs, linked, e))
		goto fail;
	fill_source(s, hs, o);
	/* Identity: the URL without user info and query (or the caller's
	 * name for it: bucket/key, repo/file), the ETag, the size. */
	hs->disk = http_disk_open(client->disk,
				  o->display ? o->display : hs->obj.display,
				  hs->obj.etag, hs->obj.size);
	if (client->tier && (ident = tier_identity(hs, url, o, linked))) {
		/* the open's time is the origin's first deadline */
		hs->tier = http_tier_src_open(client->tier, ident,
					      hs->obj.size,
					      http_conf_now_ms() - t0);
		free(ident);
	}
	hs->pf.fill.obj = &hs->obj;
	hs->pf.fill.tier = hs->tier;
	hs->pf.fill.disk = hs->disk;
	hs->pf.fill.cache = client->cache;
	hs->pf.fill.spool = client->spool;
	hs->pf.size = hs->obj.size;
	hs->pf.stats = &hs->obj.stats;
	http_prefetch_add(client->prefetch, &hs->pf);
	free(shown);
	*out = s;
	return 0;

fail:
	err_at(e, shown ? shown : "remote source");
	curl_slist_free_all(hdrs);
	http_src_free(hs);	/* no disk object yet: nothing spooled */
	if (s) {
		free(s->name);
		free(s->base);
		free(s);
	}
	free(shown);
	return -1;
}

int
source_open_http(const char *url, struct source **out, struct err *e)
{
	struct source_http_opts o = { 0 };

	return source_open_http_opts(url, &o, out, e);
}
