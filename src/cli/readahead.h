/* readahead.h - the mount's readahead window, set once the kernel has
 * answered INIT.
 *
 * FUSE read requests are as large as the readahead window (128 KiB by
 * default), and 512 KiB measured ~1.5x faster with splice.  The knob is
 * /sys/class/bdi/MAJ:MIN/read_ahead_kb; it is found right after mounting
 * and written from the first request after INIT (see fuse/adapter.h),
 * since the INIT reply would lower it again.  Only root may write it;
 * anyone else silently keeps the default.
 */
#ifndef STFS_READAHEAD_H
#define STFS_READAHEAD_H

struct readahead {
	char path[128];
	unsigned kib;
};

/* Where the window of the stfs mount on mnt is set, for kib KiB: 0, or
 * -1 when kib is 0 (the kernel's default stays) or there is no such
 * mount. */
int readahead_find(struct readahead *ra, const char *mnt, unsigned kib);

/* Write it (arg: a struct readahead): the adapter's after_init. */
void readahead_apply(void *arg);

#endif
