/* nofile.h - the front ends' descriptor limit.  Not a library's business:
 * stfs and stfs-inspect call it first thing in main().
 */
#ifndef STFS_NOFILE_H
#define STFS_NOFILE_H

/* Trees of thousands of models and sets of thousands of shards: the soft
 * RLIMIT_NOFILE goes up to the hard one.  Nothing depends on it (the
 * source descriptor pool stays within whatever limit there is,
 * srcpool.h); it only leaves more of them open. */
void nofile_raise(void);

#endif
