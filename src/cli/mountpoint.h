/* mountpoint.h - the checks on MOUNTPOINT before stfs mounts there, and
 * which mount on it is stfs's (from /proc/self/mountinfo).
 */
#ifndef STFS_MOUNTPOINT_H
#define STFS_MOUNTPOINT_H

#include <stddef.h>

struct err;

/* Device number (maj:min) of the newest fuse.stfs mount on mnt, from
 * /proc/self/mountinfo: stat()ing the mount point instead would send a
 * request to this very daemon, whose loop is not running yet.  0 with
 * devno set, or -1 (none). */
int mountpoint_devno(const char *mnt, char *devno, size_t cap);

/* path is an existing directory and not already an stfs mount (stacking
 * a second one hides the first and leaves its daemon running unseen);
 * *resolved is its realpath (malloc'd).  A directory with files in it is
 * allowed, with a warning on stderr.  0, or -1 with *e naming path. */
int mountpoint_check(const char *path, char **resolved, struct err *e);

#endif
