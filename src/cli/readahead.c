/* readahead.c - the mount's readahead window (readahead.h says why). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "cli/mountpoint.h"
#include "cli/readahead.h"

int
readahead_find(struct readahead *ra, const char *mnt, unsigned kib)
{
	char devno[64];

	ra->kib = kib;
	if (kib == 0 || mountpoint_devno(mnt, devno, sizeof(devno)) != 0)
		return -1;
	snprintf(ra->path, sizeof(ra->path), "/sys/class/bdi/%s/read_ahead_kb",
		 devno);
	return 0;
}

void
readahead_apply(void *arg)
{
	const struct readahead *ra = arg;
	char val[32];
	int fd, n;

	fd = open(ra->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(val, sizeof(val), "%u\n", ra->kib);
	if (write(fd, val, (size_t)n) != n)
		fuse_log(FUSE_LOG_DEBUG, "readahead=%u not applied: %s\n",
			 ra->kib, strerror(errno));
	close(fd);
}
