/* http_prefetch.c - cached reads, read streams, the read-ahead workers.
 *
 * Its state (the queue, the jobs, the sources' streams and counters, the
 * pace) is under its own lock; the block cache is reached only through
 * its functions, which take the cache's lock themselves (this lock, then
 * the cache's, never the other way round).  A job holds a reference to
 * each of its blocks until it is settled. */
#include "source/http/http_prefetch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cancel.h"
#include "source/http/http_conf.h"
#include "source/http/http_pace.h"
#include "source/http/http_transport.h"

#define SPLIT_PART	8		/* a large demand run: 8 MiB requests */
#define SPLIT_BLOCKS	32		/* demand runs above 32 MiB go parallel */
#define MAX_WORKERS	PACE_MAX
#define AHEAD_TRIES	3		/* attempts of read-ahead no one waits
					   for, in a row without progress */
#define AHEAD_PAUSE_MIN	1000		/* ms without read-ahead after it
					   failed, doubling ... */
#define AHEAD_PAUSE_MAX	30000		/* ... up to this */
#define AHEAD_UNPROVEN	4		/* read-ahead requests in flight at
					   a source not proven to answer */
#define READ_PASSES	3		/* a read asks again after read-ahead
					   it waited for failed */

enum { JOB_QUEUED, JOB_RUNNING };

struct http_prefetch_job {
	struct http_prefetch_src *ps;
	TAILQ_ENTRY(http_prefetch_job) of_src;	/* ps->jobs */
	int state;
	int demand;			/* a reader asked for (or took) it */
	int missed;			/* for blocks a reader missed (not on
					   their way): read-ahead waits */
	uint64_t fed_ms;		/* atomic: bytes came for it then */
	TAILQ_ENTRY(http_prefetch_job) q;
	uint64_t first;			/* blocks[0]->idx */
	unsigned n;
	struct http_cache_block *blocks[];	/* consecutive */
};

TAILQ_HEAD(hjobq, http_prefetch_job);
TAILQ_HEAD(hsrcs, http_prefetch_src);

struct http_prefetch {
	const struct http_conf *conf;	/* the client's settings */
	struct http_cache *cache;
	pthread_mutex_t lock;		/* the rest, and the sources' state */
	pthread_cond_t work;		/* the queue has jobs */
	pthread_cond_t ended;		/* a running job ended */
	struct hjobq queue;
	unsigned nworkers, idle;
	int stop;			/* http_prefetch_free(): workers leave */
	pthread_t threads[MAX_WORKERS];
	pid_t pid;			/* the process the workers belong to */
	struct hsrcs srcs;		/* open sources (for their streams) */
	unsigned running;		/* requests in flight, all sources */
	unsigned missed;		/* such jobs queued or in flight */
	struct http_pace pace;		/* how many may be in flight */
};

struct http_prefetch *
http_prefetch_new(const struct http_conf *conf, struct http_cache *cache)
{
	struct http_prefetch *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->conf = conf;
	p->cache = cache;
	pthread_mutex_init(&p->lock, NULL);
	http_conf_cond_init(&p->work);
	pthread_cond_init(&p->ended, NULL);
	TAILQ_INIT(&p->queue);
	TAILQ_INIT(&p->srcs);
	return p;
}

void
http_prefetch_add(struct http_prefetch *p, struct http_prefetch_src *ps)
{
	ps->pf = p;
	TAILQ_INIT(&ps->jobs);
	pthread_mutex_lock(&p->lock);
	if (TAILQ_EMPTY(&p->srcs))
		http_pace_init(&p->pace, p->conf->max_workers,
			       p->conf->max_bps, http_conf_now_ms());
	TAILQ_INSERT_TAIL(&p->srcs, ps, link);
	pthread_mutex_unlock(&p->lock);
}

/* ---- jobs --------------------------------------------------------------- */

/* A job for blocks[0..n) (each referenced once for it), or NULL: then
 * the blocks fail. */
static struct http_prefetch_job *
job_new(struct http_prefetch_src *ps, struct http_cache_block **blocks,
	unsigned n)
{
	struct http_prefetch_job *j = calloc(1,
					     sizeof(*j) + n * sizeof(j->blocks[0]));

	if (!j) {
		http_cache_settle(ps->pf->cache, blocks, n, 0, 0);
		return NULL;
	}
	j->ps = ps;
	j->first = blocks[0]->idx;
	j->n = n;
	j->state = JOB_QUEUED;
	memcpy(j->blocks, blocks, n * sizeof(j->blocks[0]));
	TAILQ_INSERT_TAIL(&ps->jobs, j, of_src);
	return j;
}

/* The job of ps that fills block b, or NULL. */
static struct http_prefetch_job *
job_of(struct http_prefetch_src *ps, const struct http_cache_block *b)
{
	struct http_prefetch_job *j;

	TAILQ_FOREACH(j, &ps->jobs, of_src)
		if (b->idx >= j->first && b->idx < j->first + j->n &&
		    j->blocks[b->idx - j->first] == b)
			return j;
	return NULL;
}

/* Settle a job's blocks (waking their waiters), free the job. */
static void
job_finish(struct http_prefetch_job *j, int ok)
{
	struct http_prefetch *p = j->ps->pf;

	http_cache_settle(p->cache, j->blocks, j->n, ok, !j->demand);
	if (j->missed)
		p->missed--;
	if (j->state == JOB_RUNNING) {
		j->ps->running--;
		p->running--;
		if (!TAILQ_EMPTY(&p->queue))
			pthread_cond_broadcast(&p->work);
		pthread_cond_broadcast(&p->ended);
	} else {
		TAILQ_REMOVE(&p->queue, j, q);
	}
	TAILQ_REMOVE(&j->ps->jobs, j, of_src);
	free(j);
}

/* Drop the queued read-ahead of ps (all: its demand too).  After a
 * failure it would wait for the same dead server; later reads queue it
 * again, or fetch what they need themselves (queued demand stays: its
 * readers decide). */
static void
cancel_queued(struct http_prefetch_src *ps, int all)
{
	struct http_prefetch_job *j, *next;

	for (j = TAILQ_FIRST(&ps->pf->queue); j; j = next) {
		next = TAILQ_NEXT(j, q);
		if (j->ps == ps && (all || !j->demand))
			job_finish(j, 0);
	}
}

/* A job becomes a reader's: it goes first.  missed: for blocks that were
 * not on their way; read-ahead does not start while it is queued or in
 * flight (a queued read-ahead job a reader takes over was waiting for a
 * connection anyway). */
static void
job_demand(struct http_prefetch_job *j, int missed)
{
	j->demand = 1;
	if (missed && !j->missed) {
		j->missed = 1;
		j->ps->pf->missed++;
	}
}

static uint64_t
job_bytes(const struct http_prefetch_job *j)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < j->n; i++)
		n += j->blocks[i]->len;
	return n;
}

static void kick_workers(struct http_prefetch *p, unsigned njobs);

/* The bytes all open sources have received (lock held). */
static uint64_t
received(const struct http_prefetch *p)
{
	const struct http_prefetch_src *ps;
	uint64_t n = 0;

	TAILQ_FOREACH(ps, &p->srcs, link)
		if (ps->stats)
			n += http_stats_get(&ps->stats->bytes);
	return n;
}

/* A request of ps failed, or succeeded: whether its read-ahead pauses
 * (and how long), and how much of it may be in flight. */
static void
ahead_result(struct http_prefetch_src *ps, int ok, uint64_t now)
{
	ps->proven = ok;
	if (ok) {
		ps->ra_backoff_ms = 0;
		return;
	}
	ps->ra_backoff_ms = ps->ra_backoff_ms ? ps->ra_backoff_ms * 2 :
			    AHEAD_PAUSE_MIN;
	if (ps->ra_backoff_ms > AHEAD_PAUSE_MAX)
		ps->ra_backoff_ms = AHEAD_PAUSE_MAX;
	ps->ra_pause_until = now + ps->ra_backoff_ms;
}

/* Fill a RUNNING job's blocks within budget b (lock not held), then
 * settle it (lock taken); what the transfer took teaches the pace (the
 * level, the source's request size). */
static void
job_run(struct http_prefetch_job *j, const struct http_fetch_budget *b)
{
	struct http_prefetch_src *ps = j->ps;
	struct http_prefetch *p = ps->pf;
	uint64_t t0 = http_conf_now_ms(), first = 0, t1;
	int r = http_fill_run(&ps->fill, j->blocks, j->n, b, &first,
			      &j->fed_ms), ok = r == HTTP_OK;

	t1 = http_conf_now_ms();
	pthread_mutex_lock(&p->lock);
	if (r == HTTP_CANCELLED) {
		/* its reader left (or the client stops): no fault of the
		 * server's, and another reader of these blocks asks again
		 * (as after read-ahead no one waited for) */
		j->demand = 0;
		job_finish(j, 0);
		pthread_mutex_unlock(&p->lock);
		return;
	}
	/* a failed read pauses read-ahead as a failed read-ahead does */
	ahead_result(ps, ok, t1);
	if (ok && first) {
		uint64_t bytes = job_bytes(j);
		unsigned limit = p->pace.limit;

		http_pace_conn_sample(&ps->conn, bytes, first - t0, t1 - t0);
		if (!TAILQ_EMPTY(&p->queue))
			http_pace_waiting(&p->pace, p->running);
		http_pace_done(&p->pace, bytes, t1 - first, received(p), t1);
		if (p->pace.limit > limit)
			kick_workers(p, p->pace.limit - limit);
	}
	job_finish(j, ok);
	if (!ok)
		cancel_queued(ps, 0);
	pthread_mutex_unlock(&p->lock);
}

static void
job_start(struct http_prefetch_job *j)
{
	struct http_prefetch *p = j->ps->pf;

	if (j->state == JOB_QUEUED)
		TAILQ_REMOVE(&p->queue, j, q);
	j->state = JOB_RUNNING;
	j->ps->running++;
	p->running++;
}

/* The next job for a worker: a reader's first; else the first queued one
 * of the source with the fewest requests in flight, so that several
 * readers share the connections (the first few of the queue are looked
 * at). */
static struct http_prefetch_job *
pick_job(struct http_prefetch *p)
{
	struct http_prefetch_job *j, *best = NULL;
	unsigned seen = 0;

	TAILQ_FOREACH(j, &p->queue, q)
		if (j->demand)
			return j;
	TAILQ_FOREACH(j, &p->queue, q) {
		if (!best || j->ps->running < best->ps->running)
			best = j;
		if (best->ps->running == 0 || ++seen == 64)
			break;
	}
	return best;
}

/* May a worker start j now?  A reader's job always (a reader never waits
 * for the level; it counts against a throughput cap); read-ahead when the
 * pace admits it, no request for blocks a reader missed is queued or in
 * flight, and its source has answered since its last failure or has few
 * requests out (a broken server costs a few requests, not the whole
 * level's). */
static int
may_start(struct http_prefetch *p, struct http_prefetch_job *j, uint64_t now,
	  uint64_t *wait)
{
	*wait = 0;
	if (j->demand) {
		http_pace_demand(&p->pace, job_bytes(j), now);
		return 1;
	}
	return p->missed == 0 &&
	       (j->ps->proven || j->ps->running < AHEAD_UNPROVEN) &&
	       http_pace_admit(&p->pace, p->running, job_bytes(j), now, wait);
}

static void *
worker_main(void *arg)
{
	struct http_prefetch *p = arg;
	struct http_prefetch_job *j;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint64_t wait = 0, now = http_conf_now_ms();
		struct http_fetch_budget b;

		if (p->stop || __atomic_load_n(&p->conf->stopping,
					       __ATOMIC_ACQUIRE))
			break;
		j = TAILQ_EMPTY(&p->queue) ? NULL : pick_job(p);
		if (j && !may_start(p, j, now, &wait))
			j = NULL;
		if (!j) {
			p->idle++;
			if (wait)	/* the throughput cap */
				http_conf_cond_wait_until(&p->work, &p->lock,
							  now + wait);
			else
				pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
			continue;
		}
		job_start(j);
		pthread_mutex_unlock(&p->lock);
		b = http_fetch_budget_now(p->conf, j->demand ? 0 : AHEAD_TRIES,
					  j->demand);
		job_run(j, &b);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Wake idle workers, or start new ones, for njobs new jobs. */
static void
kick_workers(struct http_prefetch *p, unsigned njobs)
{
	sigset_t all, old;

	if (p->pid != getpid()) {
		/* A fork left the workers behind in the parent. */
		p->pid = getpid();
		p->nworkers = p->idle = 0;
	}
	if (p->idle) {
		pthread_cond_broadcast(&p->work);
		njobs = njobs > p->idle ? njobs - p->idle : 0;
	}
	if (njobs == 0 || p->nworkers >= p->pace.limit ||
	    p->nworkers >= MAX_WORKERS || p->stop)
		return;
	/* Workers take no signals: they belong to the FUSE threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (njobs-- && p->nworkers < p->pace.limit &&
	       p->nworkers < MAX_WORKERS) {
		if (pthread_create(&p->threads[p->nworkers], NULL, worker_main,
				   p) != 0)
			break;	/* readers fetch their own blocks anyway */
		p->nworkers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- read-ahead ------------------------------------------------------------ */

static size_t
block_len(const struct http_prefetch_src *ps, uint64_t idx)
{
	uint64_t left = ps->size - idx * HTTP_BLOCK_BYTES;

	return left < HTTP_BLOCK_BYTES ? (size_t)left : HTTP_BLOCK_BYTES;
}

/* Queue a job for run[0..n) at the back; 0, or -1 (the blocks failed). */
static int
queue_run(struct http_prefetch_src *ps, struct http_cache_block **run,
	  unsigned n)
{
	struct http_prefetch_job *j = job_new(ps, run, n);

	if (!j)
		return -1;
	TAILQ_INSERT_TAIL(&ps->pf->queue, j, q);
	return 0;
}

/* Blocks for a request starting at off when the reader is at near.  One
 * request's blocks arrive one after another at a connection's rate, so a
 * large request just ahead of the reader makes it wait for each block in
 * turn; with the level's requests in flight, a block d bytes ahead has
 * about d / (level * block) blocks' time to arrive.  Requests grow from
 * one block near the reader to the full part further on (the start of a
 * stream, or a jump). */
static unsigned
ramp_part(const struct http_prefetch *p, unsigned part, uint64_t near,
	  uint64_t off)
{
	uint64_t d = off > near ? off - near : 0;
	uint64_t most = d / ((uint64_t)p->pace.limit * HTTP_BLOCK_BYTES) + 1;

	return most < part ? (unsigned)most : part;
}

/* Queue read-ahead jobs for the missing blocks of [from, to), for a reader
 * at near; returns where it stopped (to, or earlier when the cache is
 * full). */
static uint64_t
queue_range(struct http_prefetch_src *ps, uint64_t near, uint64_t from,
	    uint64_t to, uint64_t window, unsigned *njobs)
{
	struct http_prefetch *p = ps->pf;
	struct http_cache_block *run[PACE_PART_MAX];
	unsigned nrun = 0, part = http_pace_part(&ps->conn, p->pace.limit,
						window / HTTP_BLOCK_BYTES,
						HTTP_BLOCK_BYTES), want = part;
	uint64_t idx, last = (to - 1) / HTTP_BLOCK_BYTES;
	uint64_t reached = from;

	for (idx = from / HTTP_BLOCK_BYTES; idx <= last; idx++) {
		struct http_cache_block *b;
		int added = http_cache_add(p->cache, ps, idx,
					   block_len(ps, idx), 1, 1, &b);

		if (nrun == 0)
			want = ramp_part(p, part, near,
					 idx * HTTP_BLOCK_BYTES);
		if (added == HTTP_CACHE_FULL)
			break;
		if (added == HTTP_CACHE_ADDED)
			run[nrun++] = b;
		if (nrun && (added == HTTP_CACHE_PRESENT || nrun == want ||
			     idx == last)) {
			if (queue_run(ps, run, nrun)) {
				nrun = 0;	/* failed, and gone */
				break;
			}
			(*njobs)++;
			nrun = 0;
		}
		reached = (idx + 1) * HTTP_BLOCK_BYTES;
	}
	/* stopped early with a partial run: queue what we have */
	if (nrun && queue_run(ps, run, nrun) == 0)
		(*njobs)++;
	return reached < to ? reached : to;
}

/* Streams that a reader continued within the last second, in every open
 * source: together they share half of the cache for read-ahead, so that
 * one stream's read-ahead does not evict another's before it is read.
 * Streams only hinted (model order: where a reader goes next) do not
 * count: the reader they belong to is counted where it reads now. */
static unsigned
active_streams(const struct http_prefetch *p, uint64_t now)
{
	struct http_prefetch_src *ps;
	unsigned n = 0;
	int i;

	TAILQ_FOREACH(ps, &p->srcs, link)
		for (i = 0; i < HTTP_STREAMS; i++)
			n += (unsigned)http_stream_reading(&ps->streams[i],
							   now);
	return n ? n : 1;
}

/* The largest window a stream may have now: a share of half the cache. */
static uint64_t
window_cap(const struct http_prefetch *p, uint64_t now)
{
	uint64_t cap = p->conf->cache_bytes / 2 / active_streams(p, now);

	if (cap > p->conf->ra_max)
		cap = p->conf->ra_max;
	if (cap < 2 * (uint64_t)HTTP_BLOCK_BYTES)
		cap = 2 * (uint64_t)HTTP_BLOCK_BYTES;
	return cap;
}

/* Follow the streams of ps; a read continuing one grows its window and
 * tops up the read-ahead. */
static void
readahead(struct http_prefetch_src *ps, uint64_t off, uint64_t end,
	  uint64_t now, int missed, unsigned *njobs)
{
	struct http_stream *st = http_stream_read(ps->streams, off, end, now,
						  missed);
	uint64_t target;

	if (!st)
		return;
	http_stream_grow(st, window_cap(ps->pf, now));
	if (ps->stats)
		http_stats_max(&ps->stats->ra_window, st->window);
	if (ps->pf->conf->ra_max == 0 || now < ps->ra_pause_until ||
	    !(target = http_stream_target(st, ps->size)))
		return;
	st->ra_end = queue_range(ps, st->next, st->ra_end, target, st->window,
				 njobs);
}

void
http_prefetch_hint(struct http_prefetch_src *ps, uint64_t off, uint64_t len)
{
	struct http_prefetch *p = ps->pf;
	uint64_t now = http_conf_now_ms(), cap, end, from;
	struct http_stream *st;
	unsigned njobs = 0;

	if (off >= ps->size || len == 0 || p->conf->ra_max == 0)
		return;
	pthread_mutex_lock(&p->lock);
	if (now < ps->ra_pause_until) {
		pthread_mutex_unlock(&p->lock);
		return;		/* its read-ahead failed a moment ago */
	}
	st = http_stream_hinted(ps->streams, off, now);
	cap = window_cap(p, now);
	if (len > cap)
		len = cap;
	end = (off + len + HTTP_BLOCK_BYTES - 1) / HTTP_BLOCK_BYTES *
	      HTTP_BLOCK_BYTES;
	if (end > ps->size)
		end = ps->size;
	from = st->ra_end > off ? st->ra_end : off;
	/* A reader's every read slides the hint a little further: top up
	 * by whole requests, not by the read's size. */
	if (end > from && (from == off || end == ps->size ||
			   end - from >= (uint64_t)http_pace_part(&ps->conn,
				p->pace.limit, cap / HTTP_BLOCK_BYTES,
				HTTP_BLOCK_BYTES) * HTTP_BLOCK_BYTES)) {
		/* a reader arriving at off goes on at this pace */
		if (st->window < len)
			st->window = len;
		st->used = now;
		st->ra_end = queue_range(ps, off, from, end, cap, &njobs);
	}
	if (njobs)
		kick_workers(p, njobs);
	pthread_mutex_unlock(&p->lock);
}

/* ---- one read ------------------------------------------------------------ */

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
	struct http_prefetch_job *j = job_new(r->ps, run, nrun);

	if (!j) {
		r->rc = -ENOMEM;
		return;
	}
	job_demand(j, 1);
	if (!r->mine) {
		/* a reader never waits for the level, but its request counts
		 * against a throughput cap */
		r->mine = j;
		j->state = JOB_RUNNING;	/* never queued */
		r->ps->running++;
		p->running++;
		http_pace_demand(&p->pace, job_bytes(j), http_conf_now_ms());
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
		switch (http_cache_add(c, r->ps, idx, block_len(r->ps, idx), 0,
				       2, &b)) {
		case HTTP_CACHE_ADDED:
			*fresh = 1;
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
		j = job_of(r->ps, b);
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
		    !(j = job_of(r->ps, b)))
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
				job_finish(j, 0);
				break;
			}
			job_start(j);
			job_demand(j, 0);
			http_pace_demand(&p->pace, job_bytes(j),
					 http_conf_now_ms());
			pthread_mutex_unlock(&p->lock);
			job_run(j, &b);
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
			readahead(ps, r->off, r->end, now, r->missed,
				  &r->njobs);
		if (r->njobs)
			kick_workers(p, r->njobs);
		pthread_mutex_unlock(&p->lock);

		if (r->mine) {
			struct http_fetch_budget b = {
				.quiet_until = r->quiet_until, .demand = 1,
			};

			job_run(r->mine, &b);
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
http_prefetch_read(struct http_prefetch_src *ps, void *buf, size_t len,
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
http_prefetch_lend(struct http_prefetch_src *ps, uint64_t off, size_t len,
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
http_prefetch_lend_end(void *token)
{
	struct rd *r = token;

	release(r);
	free(r);
}

void
http_prefetch_free(struct http_prefetch *p)
{
	unsigned i, n;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->pid != getpid())
		p->nworkers = p->idle = 0;	/* a fork's: not ours */
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	n = p->nworkers;
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < n; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->ended);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void
http_prefetch_remove(struct http_prefetch_src *ps)
{
	struct http_prefetch *p = ps->pf;

	pthread_mutex_lock(&p->lock);
	TAILQ_REMOVE(&p->srcs, ps, link);
	cancel_queued(ps, 1);
	while (ps->running)
		pthread_cond_wait(&p->ended, &p->lock);
	pthread_mutex_unlock(&p->lock);
	http_cache_drop(p->cache, ps);
}
