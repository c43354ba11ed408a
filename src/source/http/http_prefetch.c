/* http_prefetch.c - the jobs, the read-ahead workers that run them, read
 * streams and what read-ahead they queue (a reader's read is
 * http_read.c's, on the same state: http_jobs.h).
 *
 * Its state (the queue, the jobs, the sources' streams and counters, the
 * pace) is under its own lock; the block cache is reached only through
 * its functions, which take the cache's lock themselves (this lock, then
 * the cache's, never the other way round).  A job holds a reference to
 * each of its blocks until it is settled.
 *
 * With the disk cache on (a source that parks), read-ahead is not what
 * memory holds (issue 38.1): the window is as large as without it, a
 * request takes memory for its blocks when it starts (and starts only
 * when the cache has room for them: the memory of what is on its way),
 * and what arrives further ahead of the reader than memory
 * keeps (HTTP_CACHE_FAR) goes to the disk and leaves memory first; as
 * the reader gets near, it comes back from the disk ahead of it
 * (unpark()). */
#include "source/http/http_prefetch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cancel.h"
#include "source/http/http_conf.h"
#include "source/http/http_disk.h"
#include "source/http/http_jobs.h"
#include "source/http/http_pace.h"
#include "source/http/http_transport.h"

#define AHEAD_TRIES	3		/* attempts of read-ahead no one waits
					   for, in a row without progress */
#define AHEAD_PAUSE_MIN	1000		/* ms without read-ahead after it
					   failed, doubling ... */
#define AHEAD_PAUSE_MAX	30000		/* ... up to this */
#define AHEAD_UNPROVEN	4		/* read-ahead requests in flight at
					   a source not proven to answer */
#define ROOM_WAIT_MS	50		/* read-ahead that found no memory
					   looks again after this */

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
struct http_prefetch_job *
http_prefetch_job_new(struct http_prefetch_src *ps,
		      struct http_cache_block **blocks, unsigned n)
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
struct http_prefetch_job *
http_prefetch_job_of(struct http_prefetch_src *ps,
		     const struct http_cache_block *b)
{
	struct http_prefetch_job *j;

	TAILQ_FOREACH(j, &ps->jobs, of_src)
		if (b->idx >= j->first && b->idx < j->first + j->n &&
		    j->blocks[b->idx - j->first] == b)
			return j;
	return NULL;
}

/* Settle a job's blocks (waking their waiters), free the job. */
void
http_prefetch_job_finish(struct http_prefetch_job *j, int ok)
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
			http_prefetch_job_finish(j, 0);
	}
}

/* A job becomes a reader's: it goes first.  missed: for blocks that were
 * not on their way; read-ahead does not start while it is queued or in
 * flight (a queued read-ahead job a reader takes over was waiting for a
 * connection anyway). */
void
http_prefetch_job_demand(struct http_prefetch_job *j, int missed)
{
	j->demand = 1;
	if (missed && !j->missed) {
		j->missed = 1;
		j->ps->pf->missed++;
	}
}

uint64_t
http_prefetch_job_bytes(const struct http_prefetch_job *j)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < j->n; i++)
		n += j->blocks[i]->len;
	return n;
}

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
void
http_prefetch_job_run(struct http_prefetch_job *j,
		      const struct http_fetch_budget *b)
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
		http_prefetch_job_finish(j, 0);
		pthread_mutex_unlock(&p->lock);
		return;
	}
	/* a failed read pauses read-ahead as a failed read-ahead does */
	ahead_result(ps, ok, t1);
	if (ok && first) {
		uint64_t bytes = http_prefetch_job_bytes(j);
		unsigned limit = p->pace.limit;

		http_pace_conn_sample(&ps->conn, bytes, first - t0, t1 - t0);
		if (!TAILQ_EMPTY(&p->queue))
			http_pace_waiting(&p->pace, p->running);
		http_pace_done(&p->pace, bytes, t1 - first, received(p), t1);
		if (p->pace.limit > limit)
			http_prefetch_kick(p, p->pace.limit - limit);
	}
	http_prefetch_job_finish(j, ok);
	if (!ok)
		cancel_queued(ps, 0);
	pthread_mutex_unlock(&p->lock);
}

void
http_prefetch_job_start(struct http_prefetch_job *j)
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
		http_pace_demand(&p->pace, http_prefetch_job_bytes(j), now);
		return 1;
	}
	if (p->missed != 0 ||
	    !(j->ps->proven || j->ps->running < AHEAD_UNPROVEN) ||
	    !http_pace_admit(&p->pace, p->running, http_prefetch_job_bytes(j),
			     now, wait))
		return 0;
	/* Its blocks' memory now, within the cache's size: the read-ahead
	 * on its way is what memory holds (issue 38.1). */
	if (http_cache_reserve(p->cache, j->blocks, j->n)) {
		*wait = ROOM_WAIT_MS;
		return 0;
	}
	return 1;
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
		http_prefetch_job_start(j);
		pthread_mutex_unlock(&p->lock);
		b = http_fetch_budget_now(p->conf, j->demand ? 0 : AHEAD_TRIES,
					  j->demand);
		http_prefetch_job_run(j, &b);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Wake idle workers, or start new ones, for njobs new jobs. */
void
http_prefetch_kick(struct http_prefetch *p, unsigned njobs)
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

size_t
http_prefetch_block_len(const struct http_prefetch_src *ps, uint64_t idx)
{
	uint64_t left = ps->size - idx * HTTP_BLOCK_BYTES;

	return left < HTTP_BLOCK_BYTES ? (size_t)left : HTTP_BLOCK_BYTES;
}

/* Queue a job for run[0..n) at the back; 0, or -1 (the blocks failed). */
static int
queue_run(struct http_prefetch_src *ps, struct http_cache_block **run,
	  unsigned n)
{
	struct http_prefetch_job *j = http_prefetch_job_new(ps, run, n);

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

/* ps keeps read-ahead on disk: its disk cache takes blocks. */
static int
parks(const struct http_prefetch_src *ps)
{
	return http_disk_usable(ps->fill.disk);
}

/* Queue read-ahead jobs for the missing blocks of [from, to), for a reader
 * at near; returns where it stopped (to, or earlier without memory).
 * Memory keeps what a reader at near reads within keep bytes; further
 * on, at a source that parks, a block is fetched to wait on the disk
 * (HTTP_CACHE_FAR), and one the disk has already is left there. */
static uint64_t
queue_range(struct http_prefetch_src *ps, uint64_t near, uint64_t from,
	    uint64_t to, uint64_t window, uint64_t keep, unsigned *njobs)
{
	struct http_prefetch *p = ps->pf;
	struct http_cache_block *run[PACE_PART_MAX];
	unsigned nrun = 0, part = http_pace_part(&ps->conn, p->pace.limit,
						window / HTTP_BLOCK_BYTES,
						HTTP_BLOCK_BYTES), want = part;
	uint64_t idx, last = (to - 1) / HTTP_BLOCK_BYTES;
	uint64_t reached = from;

	int park = parks(ps);

	for (idx = from / HTTP_BLOCK_BYTES; idx <= last; idx++) {
		struct http_cache_block *b = NULL;
		int far = park && idx * HTTP_BLOCK_BYTES >= near + keep;
		int added = far && http_disk_has(ps->fill.disk, idx) ?
			    HTTP_CACHE_PRESENT :
			    http_cache_add(p->cache, ps, idx,
					   http_prefetch_block_len(ps, idx),
					   far ? HTTP_CACHE_FAR :
					   HTTP_CACHE_LATER, 1, &b);

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

/* What a stream's read-ahead keeps in memory now: a share of half the
 * cache. */
static uint64_t
keep_cap(const struct http_prefetch *p, uint64_t now)
{
	uint64_t cap = p->conf->cache_bytes / 2 / active_streams(p, now);

	return cap < 2 * (uint64_t)HTTP_BLOCK_BYTES ?
	       2 * (uint64_t)HTTP_BLOCK_BYTES : cap;
}

/* The largest window a stream of ps may have now: what memory keeps, or,
 * at a source that parks, a share of half of HTTP_DEFAULT_CACHE_MB (the
 * read-ahead it had when memory held all of it), whatever the memory;
 * http_readahead_mb at most. */
static uint64_t
window_cap(const struct http_prefetch *p, const struct http_prefetch_src *ps,
	   uint64_t now)
{
	uint64_t cap = keep_cap(p, now), most = (uint64_t)HTTP_DEFAULT_CACHE_MB
			<< 20, cache = p->conf->cache_bytes;

	if (parks(ps))
		cap = (cache > most ? cache : most) / 2 /
		      active_streams(p, now);
	if (cap > p->conf->ra_max)
		cap = p->conf->ra_max;
	if (cap < 2 * (uint64_t)HTTP_BLOCK_BYTES)
		cap = 2 * (uint64_t)HTTP_BLOCK_BYTES;
	return cap;
}

/* At a source that parks: what the disk holds within keep of the reader
 * of st comes back to memory ahead of it (a request each run of
 * neighbouring blocks, from the disk), once. */
static void
unpark(struct http_prefetch_src *ps, struct http_stream *st, uint64_t keep,
       unsigned *njobs)
{
	struct http_prefetch *p = ps->pf;
	struct http_cache_block *run[PACE_PART_MAX], *b;
	uint64_t idx, end = st->next + keep;
	unsigned nrun = 0;

	if (end > ps->size)
		end = ps->size;
	idx = (st->kept > st->next ? st->kept : st->next) / HTTP_BLOCK_BYTES;
	for (; idx * HTTP_BLOCK_BYTES < end; idx++) {
		int added = HTTP_CACHE_PRESENT;

		if (http_disk_has(ps->fill.disk, idx))
			added = http_cache_add(p->cache, ps, idx,
					       http_prefetch_block_len(ps, idx),
					       HTTP_CACHE_LATER, 1, &b);
		if (added == HTTP_CACHE_ADDED)
			run[nrun++] = b;
		if (nrun && (added != HTTP_CACHE_ADDED ||
			     nrun == PACE_PART_MAX)) {
			if (queue_run(ps, run, nrun) == 0)
				(*njobs)++;
			nrun = 0;
		}
	}
	if (nrun && queue_run(ps, run, nrun) == 0)
		(*njobs)++;
	st->kept = idx * HTTP_BLOCK_BYTES;
}

/* Follow the streams of ps; a read continuing one grows its window and
 * tops up the read-ahead. */
void
http_prefetch_readahead(struct http_prefetch_src *ps, uint64_t off,
			uint64_t end, uint64_t now, int missed,
			unsigned *njobs)
{
	struct http_stream *st = http_stream_read(ps->streams, off, end, now,
						  missed);
	uint64_t target;

	if (!st)
		return;
	http_stream_grow(st, window_cap(ps->pf, ps, now));
	if (ps->stats)
		http_stats_max(&ps->stats->ra_window, st->window);
	if (ps->pf->conf->ra_max == 0 || now < ps->ra_pause_until)
		return;
	if (parks(ps))
		unpark(ps, st, keep_cap(ps->pf, now), njobs);
	if (!(target = http_stream_target(st, ps->size)))
		return;
	st->ra_end = queue_range(ps, st->next, st->ra_end, target, st->window,
				 keep_cap(ps->pf, now), njobs);
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
	cap = window_cap(p, ps, now);
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
		st->ra_end = queue_range(ps, off, from, end, cap,
					 keep_cap(p, now), &njobs);
	}
	if (njobs)
		http_prefetch_kick(p, njobs);
	pthread_mutex_unlock(&p->lock);
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
