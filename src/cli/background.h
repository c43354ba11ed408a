/* background.h - how stfs goes to the background: fork first, report
 * later.
 *
 * libfuse's fuse_daemonize() forks after the mount exists, and stfs opens
 * the model before mounting: the remote sources' worker threads (read-ahead,
 * disk-cache writers) would already run, and a fork keeps only the thread
 * that calls it.  The child inherited locks and condition variables with
 * waiters that no longer exist; a daemonised mount of a sharded model over
 * http with the disk cache on stalled after a few requests and never exited
 * after unmount (issue 29).  So stfs forks before it opens anything, while
 * the process has one thread: the child opens, validates and mounts, with
 * the terminal as its stderr (its messages and errors are the ones a
 * foreground run prints), and the parent waits until the child says the
 * mount is ready, or exits with the child's status when it failed.  Once
 * ready the child does what fuse_daemonize() does: a session of its own,
 * "/" as working directory, /dev/null as stdin, stdout and stderr.
 */
#ifndef STFS_BACKGROUND_H
#define STFS_BACKGROUND_H

/* Fork.  The parent never returns: it waits for the child's report and
 * exits with status 0 once the mount is ready, else with the child's exit
 * status (2 after printing a line naming mountpoint when the child died of
 * a signal).  The child gets 0 and the descriptor to report on in *report;
 * -1 (errno) when the fork failed, in the one process. */
int background_start(const char *mountpoint, int *report);

/* In the child, the mount ready: leave the terminal (setsid, chdir("/"),
 * stdio on /dev/null) and let the parent exit 0.  0, or -1 (errno) when
 * no session could be made: then nothing is changed or reported, and the
 * child prints its error and exits as for any other failure. */
int background_ready(int report);

#endif
