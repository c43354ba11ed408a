/* http_read.c - one read through the block cache (see http_read.h).
 *
 * A read pins its blocks (the cache's, or new ones), makes the runs of
 * missing ones jobs (the first fetched by the reading thread itself, the
 * others first in the queue), starts what read-ahead it calls for
 * (http_prefetch_readahead()) and waits until every block is READY: it
 * fetches queued ones itself rather than wait behind other work, and
 * waits for the others as long as the requests filling them move.  The
 * prefetcher's state is under its lock (http_jobs.h); the block cache is
 * reached through its functions. */
#include "source/http/http_read.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/cancel.h"
#include "source/http/http_conf.h"
#include "source/http/http_disk.h"
#include "source/http/http_jobs.h"

#define SPLIT_PART	8		/* a large demand run: 8 MiB requests */
#define SPLIT_BLOCKS	32		/* demand runs above 32 MiB go parallel */
#define READ_PASSES	3		/* a read asks again after read-ahead
					   it waited for failed */

struct rd {
	struct http_prefetch *pf;
	struct http_prefetch_src *ps;
	int missed;		/* some block was not in the cache */
	uint64_t off, end, b0, n;
	uint64_t quiet_until;	/* no progress for the read by then: fail */
	struct http_cache_block **blks;	/* referenced */
	struct http_prefetch_job *mine;	/* fetched by this thread first */
	unsigned njobs;		/* jobs queued for the workers */
	int rc;
};

/* A run of fresh blocks becomes a job: the first one is this thread's,
 * the others go to the front of the queue (ahead of read-ahead). */
static void
demand_job(struct rd *r, struct http_cache_block **run, unsigned nrun)
{
	struct http_prefetch *p = r->pf;
	struct http_prefetch_job *j = http_prefetch_job_new(r->ps, run, nrun);

	if (!j) {
		r->rc = -ENOMEM;
		return;
	}
	http_prefetch_job_demand(j, 1);
	if (!r->mine) {
		/* a reader never waits for the level, but its request counts
		 * against a throughput cap */
		r->mine = j;
		j->state = JOB_RUNNING;	/* never queued */
		r->ps->running++;
		p->running++;
		http_pace_demand(&p->pace, http_prefetch_job_bytes(j),
				 http_conf_now_ms());
	} else {
		TAILQ_INSERT_HEAD(&p->queue, j, q);
		r->njobs++;
	}
}

/* Block idx of the read, referenced: the cache's, or a new one (fresh,
 * referenced for its job too); NULL with r->rc set. */
static struct http_cache_block *
pin_block(struct rd *r, uint64_t idx, int *fresh)
{
	struct http_cache *c = r->pf->cache;
	struct http_cache_block *b;

	for (;;) {
		b = http_cache_pin(c, r->ps, idx);
		if (b) {
			if (r->ps->stats)
				http_stats_add(&r->ps->stats->hits, 1);
			return b;
		}
		if (http_fetch_held(r->ps->fill.obj, idx * HTTP_BLOCK_BYTES,
				    (idx + 1) * HTTP_BLOCK_BYTES)) {
			r->rc = -EIO;	/* the server just failed a read
					   here */
			return NULL;
		}
		switch (http_cache_add(c, r->ps, idx,
				       http_prefetch_block_len(r->ps, idx),
				       HTTP_CACHE_NOW, 2, &b)) {
		case HTTP_CACHE_ADDED:
			*fresh = 1;
			/* not on its way: unless it waits on the disk, its
			 * stream's read-ahead starts again from here */
			if (!http_disk_has(r->ps->fill.disk, idx))
				r->missed = 1;
			if (r->ps->stats)
				http_stats_add(&r->ps->stats->misses, 1);
			return b;
		case HTTP_CACHE_FULL:
			r->rc = -ENOMEM;
			return NULL;
		}
		/* HTTP_CACHE_PRESENT: added meanwhile, pin it */
	}
}

/* Reference every block of the read not referenced yet (or FAILED: a read
 * asking again), creating the missing ones (lock held).  Runs of missing
 * blocks become one request each, split for parallelism only when large
 * (a header read stays one request). */
static void
pin_blocks(struct rd *r)
{
	struct http_cache_block *run[SPLIT_BLOCKS];
	unsigned nrun = 0, split = r->n > SPLIT_BLOCKS ? SPLIT_PART :
				   SPLIT_BLOCKS;
	uint64_t i;

	for (i = 0; i < r->n && r->rc == 0; i++) {
		struct http_cache_block *b = r->blks[i];
		int fresh = 0;

		if (!b || http_cache_state(b) == HTTP_CACHE_FAILED) {
			http_cache_release(r->pf->cache, &r->blks[i], 1, 0);
			r->blks[i] = b = pin_block(r, r->b0 + i, &fresh);
			if (fresh)
				run[nrun++] = b;
		}
		if (nrun && r->rc) {
			/* the read fails: fetch nothing */
			http_cache_settle(r->pf->cache, run, nrun, 0, 0);
		} else if (nrun && (!fresh || nrun == split || i == r->n - 1)) {
			demand_job(r, run, nrun);
			nrun = 0;
		}
	}
}

/* A queued job one of our LOADING blocks waits for, or NULL; 1 in
 * *loading when some block is still LOADING (lock held). */
static struct http_prefetch_job *
queued_job(struct rd *r, int *loading)
{
	struct http_prefetch_job *j;
	uint64_t i;

	*loading = 0;
	for (i = 0; i < r->n; i++) {
		struct http_cache_block *b = r->blks[i];

		if (!b || http_cache_state(b) != HTTP_CACHE_LOADING)
			continue;
		*loading = 1;
		j = http_prefetch_job_of(r->ps, b);
		if (j && j->state == JOB_QUEUED)
			return j;
	}
	return NULL;
}

/* The last time a byte came for a request that fills one of our LOADING
 * blocks (lock held; 0: none). */
static uint64_t
last_progress(struct rd *r)
{
	struct http_prefetch_job *j;
	uint64_t i, t, latest = 0;

	for (i = 0; i < r->n; i++) {
		const struct http_cache_block *b = r->blks[i];

		if (!b || http_cache_state(b) != HTTP_CACHE_LOADING ||
		    !(j = http_prefetch_job_of(r->ps, b)))
			continue;
		t = __atomic_load_n(&j->fed_ms, __ATOMIC_RELAXED);
		if (t > latest)
			latest = t;
	}
	return latest;
}

/* Until every block settled (lock held, dropped while waiting): fetch
 * queued ones ourselves rather than wait behind other work, wait for the
 * others as long as the requests filling them move. */
static void
wait_blocks(struct rd *r)
{
	struct http_prefetch *p = r->pf;
	uint64_t i, bound = http_conf_bound_ms(p->conf);

	while (r->rc == 0) {
		int loading;
		struct http_prefetch_job *j = queued_job(r, &loading);
		uint64_t now, fed, until;

		if (http_conf_cancelled(p->conf)) {
			r->rc = -EINTR;	/* the reader is gone */
			break;
		}
		if (j) {
			uint64_t s = j->blocks[0]->idx * HTTP_BLOCK_BYTES;
			struct http_fetch_budget b = {
				.quiet_until = r->quiet_until, .demand = 1,
			};

			if (http_fetch_held(r->ps->fill.obj, s,
					    s + (uint64_t)j->n *
					    HTTP_BLOCK_BYTES)) {
				http_prefetch_job_finish(j, 0);
				break;
			}
			http_prefetch_job_start(j);
			http_prefetch_job_demand(j, 0);
			http_pace_demand(&p->pace, http_prefetch_job_bytes(j),
					 http_conf_now_ms());
			pthread_mutex_unlock(&p->lock);
			http_prefetch_job_run(j, &b);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		if (!loading)
			break;
		/* A reader waits for the network: when every connection
		 * allowed is busy, more of them (and smaller parts of the
		 * window) would have had it sooner. */
		http_pace_waiting(&p->pace, p->running);
		/* Someone else is fetching it, within a budget of its own:
		 * ours moves with the bytes that come for it. */
		fed = last_progress(r);
		if (fed && fed + bound > r->quiet_until)
			r->quiet_until = fed + bound;
		now = http_conf_now_ms();
		/* A safety net: that request ends within about one bound
		 * without progress. */
		if (now >= r->quiet_until + bound) {
			r->rc = -EIO;
			break;
		}
		/* a block settling wakes us; bytes within a block, and a
		 * reader who left, only show when we look */
		until = now + CANCEL_POLL_MS;
		if (until > r->quiet_until + bound)
			until = r->quiet_until + bound;
		pthread_mutex_unlock(&p->lock);
		http_cache_wait(p->cache, r->blks, r->n, until);
		pthread_mutex_lock(&p->lock);
	}
	for (i = 0; i < r->n && r->rc == 0; i++)
		if (!r->blks[i] ||
		    http_cache_state(r->blks[i]) != HTTP_CACHE_READY)
			r->rc = -EIO;
}

/* Some block of the read failed as read-ahead no one waited for: the
 * reader asks for it itself. */
static int
ahead_failed(const struct rd *r)
{
	uint64_t i;

	for (i = 0; i < r->n; i++)
		if (r->blks[i] &&
		    http_cache_state(r->blks[i]) == HTTP_CACHE_FAILED &&
		    r->blks[i]->failed_ahead)
			return 1;
	return 0;
}

/* The bytes of the read in its i-th block.  READY blocks are immutable
 * and our references keep them. */
static struct iovec
piece(const struct rd *r, uint64_t i)
{
	const struct http_cache_block *b = r->blks[i];
	uint64_t bstart = b->idx * HTTP_BLOCK_BYTES;
	uint64_t from = r->off > bstart ? r->off : bstart;
	uint64_t to = r->end < bstart + b->len ? r->end : bstart + b->len;

	return (struct iovec){ b->data + (from - bstart), (size_t)(to - from) };
}

static void
copy_out(struct rd *r, void *buf)
{
	char *at = buf;
	uint64_t i;

	for (i = 0; i < r->n; i++) {
		struct iovec v = piece(r, i);

		memcpy(at, v.iov_base, v.iov_len);
		at += v.iov_len;
	}
}

/* Blocks the bytes [off, off + len) touch (len > 0). */
static uint64_t
span(uint64_t off, size_t len)
{
	return (off + len - 1) / HTTP_BLOCK_BYTES - off / HTTP_BLOCK_BYTES + 1;
}

/* Pin the blocks of [off, off + len), start what read-ahead it calls for
 * and wait until they are READY: r->rc.  release() in every case. */
static int
acquire(struct http_prefetch_src *ps, uint64_t off, size_t len, struct rd *r)
{
	struct http_prefetch *p = ps->pf;
	uint64_t now = http_conf_now_ms();
	int pass, again;

	*r = (struct rd){
		.pf = p, .ps = ps, .off = off, .end = off + len,
		.b0 = off / HTTP_BLOCK_BYTES,
		.quiet_until = now + http_conf_bound_ms(p->conf),
	};
	if (http_conf_cancelled(p->conf))
		return r->rc = -EINTR;
	r->n = span(off, len);
	r->blks = calloc((size_t)r->n, sizeof(*r->blks));
	if (!r->blks)
		return r->rc = -ENOMEM;
	for (pass = 0; ; pass++) {
		pthread_mutex_lock(&p->lock);
		r->rc = 0;
		r->mine = NULL;
		r->njobs = 0;
		pin_blocks(r);
		if (pass == 0 && r->rc == 0)
			http_prefetch_readahead(ps, r->off, r->end, now,
						r->missed, &r->njobs);
		if (r->njobs)
			http_prefetch_kick(p, r->njobs);
		pthread_mutex_unlock(&p->lock);

		if (r->mine) {
			struct http_fetch_budget b = {
				.quiet_until = r->quiet_until, .demand = 1,
			};

			http_prefetch_job_run(r->mine, &b);
		}

		pthread_mutex_lock(&p->lock);
		wait_blocks(r);
		again = r->rc == -EIO && pass + 1 < READ_PASSES &&
			ahead_failed(r);
		pthread_mutex_unlock(&p->lock);
		if (!again)
			return r->rc;
	}
}

/* Drop our references; blocks read from become the most recent, or,
 * read to their end, the next to go. */
static void
release(struct rd *r)
{
	if (r->blks)
		http_cache_release(r->pf->cache, r->blks, r->n,
				   r->rc == 0 ? r->end : 0);
	free(r->blks);
	r->blks = NULL;
}

int
http_read_copy(struct http_prefetch_src *ps, void *buf, size_t len,
	       uint64_t off)
{
	struct rd r;
	int rc = acquire(ps, off, len, &r);

	if (rc == 0)
		copy_out(&r, buf);
	release(&r);
	return rc;
}

int
http_read_lend(struct http_prefetch_src *ps, uint64_t off, size_t len,
	       struct iovec *iov, int max, void **token)
{
	struct rd *r;
	uint64_t i;
	int rc;

	if (max < 1 || span(off, len) > (uint64_t)max)
		return -EOPNOTSUPP;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	rc = acquire(ps, off, len, r);
	if (rc) {
		release(r);
		free(r);
		return rc;
	}
	for (i = 0; i < r->n; i++)
		iov[i] = piece(r, i);
	*token = r;
	return (int)r->n;
}

void
http_read_lend_end(void *token)
{
	struct rd *r = token;

	release(r);
	free(r);
}

