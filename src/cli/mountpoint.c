/* mountpoint.c - the checks on MOUNTPOINT before stfs mounts there
 * (mountpoint.h).
 */
#include "cli/mountpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

/* Undo the octal escapes (\040 for ' ', ...) of a mountinfo field. */
static void
unescape_field(char *s)
{
	char *o = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
}

int
mountpoint_devno(const char *mnt, char *devno, size_t cap)
{
	char *line = NULL, *save, *f[6], *p;
	size_t n = 0;
	int found = 0, i;
	FILE *fp;

	fp = fopen("/proc/self/mountinfo", "re");
	if (!fp)
		return -1;
	while (getline(&line, &n, fp) > 0) {
		/* id parent maj:min root mountpoint opts [tags...] - type */
		for (i = 0, p = line; i < 5; i++, p = NULL) {
			f[i] = strtok_r(p, " \n", &save);
			if (!f[i])
				break;
		}
		if (i < 5)
			continue;
		while ((f[5] = strtok_r(NULL, " \n", &save)) &&
		       strcmp(f[5], "-") != 0)
			;
		if (!f[5] || !(f[5] = strtok_r(NULL, " \n", &save)))
			continue;
		unescape_field(f[4]);
		if (strcmp(f[4], mnt) == 0 && strcmp(f[5], "fuse.stfs") == 0 &&
		    strlen(f[2]) < cap) {
			strcpy(devno, f[2]);
			found = 1;
		}
	}
	free(line);
	fclose(fp);
	return found ? 0 : -1;
}

/* Mounting over files hides them until the unmount: allowed (FUSE 3 has
 * no "nonempty" option), but rarely meant. */
static void
warn_nonempty(const char *shown, const char *path)
{
	struct dirent *d;
	DIR *dp = opendir(path);
	int n = 0;

	if (!dp)
		return;
	while (!n && (d = readdir(dp)))
		n = strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(dp);
	if (n)
		fprintf(stderr, "stfs: warning: %s is not empty: its files are "
			"hidden while the model is mounted there\n", shown);
}

int
mountpoint_check(const char *path, char **resolved, struct err *e)
{
	char devno[64];
	struct stat st;
	int ok = 0;

	*resolved = realpath(path, NULL);
	if (!*resolved && errno == ENOENT)
		err_set(e, ERR_IO, "mount point: %s (create it: mkdir -p %s)",
			strerror(errno), path);
	else if (!*resolved)
		err_set(e, ERR_IO, "mount point: %s", strerror(errno));
	else if (stat(*resolved, &st) != 0)
		err_set(e, ERR_IO, "mount point: %s", strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		err_set(e, ERR_IO, "mount point: %s", strerror(ENOTDIR));
	/* Stacking a second stfs on the first hides it and leaves its
	 * daemon running unseen: almost always a script run twice. */
	else if (mountpoint_devno(*resolved, devno, sizeof(devno)) == 0)
		err_set(e, ERR_IO, "mount point: already an stfs mount "
			"(unmount it first: fusermount3 -u %s)", path);
	else
		ok = 1;
	if (!ok)
		return err_at(e, path);
	warn_nonempty(path, *resolved);
	return 0;
}
