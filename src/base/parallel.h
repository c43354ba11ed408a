/* parallel.h - run jobs 0..n-1 on a few threads and wait for all of them.
 *
 * For work that waits rather than computes (opening remote files: a round
 * trip or two each) or that computes on every CPU (parsing the headers of
 * local shards).  The calling thread works too; threads that cannot be
 * created are simply not there (at worst the caller runs every job).
 * Jobs are handed out in order, one at a time, to whichever thread is
 * free.
 */
#ifndef STFS_PARALLEL_H
#define STFS_PARALLEL_H

#include <stddef.h>

/* Call job(arg, i) for every i in [0, n) on up to `threads` threads (the
 * caller's included; 0 counts as 1); return when all calls returned. */
void parallel_run(size_t n, unsigned threads,
		  void (*job)(void *arg, size_t i), void *arg);

/* The processors online (at least 1): how many threads computing work
 * may keep busy. */
unsigned parallel_cpus(void);

#endif
