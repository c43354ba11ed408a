/* http_jobs.h - the prefetcher's jobs, queue and workers, for the two
 * files that work on them (not for users of http_prefetch.h):
 * http_prefetch.c (the jobs, the workers that run them, read-ahead) and
 * http_read.c (one read: its blocks pinned, the missing ones fetched,
 * waited for).  Everything here is under the prefetcher's lock unless it
 * says otherwise; the block cache is reached only through its functions
 * (this lock, then the cache's, never the other way round).
 */
#ifndef STFS_HTTP_JOBS_H
#define STFS_HTTP_JOBS_H

#include <pthread.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "source/http/http_cache.h"
#include "source/http/http_fetch.h"
#include "source/http/http_pace.h"
#include "source/http/http_prefetch.h"

#define MAX_WORKERS	PACE_MAX

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
	int stop;			/* http_prefetch_free(): workers
					   leave */
	pthread_t threads[MAX_WORKERS];
	pid_t pid;			/* the process the workers belong to */
	struct hsrcs srcs;		/* open sources (for their streams) */
	unsigned running;		/* requests in flight, all sources */
	unsigned missed;		/* such jobs queued or in flight */
	struct http_pace pace;		/* how many may be in flight */
};

/* A job for blocks[0..n) (each referenced once for it), or NULL: then
 * the blocks fail. */
struct http_prefetch_job *
http_prefetch_job_new(struct http_prefetch_src *ps,
		      struct http_cache_block **blocks, unsigned n);

/* The job of ps that fills block b, or NULL. */
struct http_prefetch_job *
http_prefetch_job_of(struct http_prefetch_src *ps,
		     const struct http_cache_block *b);

/* Settle a job's blocks (waking their waiters), free the job. */
void http_prefetch_job_finish(struct http_prefetch_job *j, int ok);

/* A job becomes a reader's: it goes first.  missed: for blocks that were
 * not on their way; read-ahead does not start while it is queued or in
 * flight. */
void http_prefetch_job_demand(struct http_prefetch_job *j, int missed);

uint64_t http_prefetch_job_bytes(const struct http_prefetch_job *j);

/* A QUEUED (or new) job starts: RUNNING, counted in flight. */
void http_prefetch_job_start(struct http_prefetch_job *j);

/* Fill a RUNNING job's blocks within budget b (lock not held), then
 * settle it (lock taken and dropped). */
void http_prefetch_job_run(struct http_prefetch_job *j,
			   const struct http_fetch_budget *b);

/* Wake idle workers, or start new ones, for njobs new jobs. */
void http_prefetch_kick(struct http_prefetch *p, unsigned njobs);

/* The length of block idx of ps (the last one may be short). */
size_t http_prefetch_block_len(const struct http_prefetch_src *ps,
			       uint64_t idx);

/* A read of [off, end) at now: follow the streams of ps; a read that
 * continues one grows its window and tops up its read-ahead (*njobs
 * counts the jobs queued).  missed: a block of the read was not on its
 * way. */
void http_prefetch_readahead(struct http_prefetch_src *ps, uint64_t off,
			     uint64_t end, uint64_t now, int missed,
			     unsigned *njobs);

#endif
