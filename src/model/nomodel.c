/* nomodel.c - "no model in this directory", and the checkpoints in it
 * (nomodel.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "format/naming.h"
#include "model/nomodel.h"

#define MISSING_NAMED 8		/* missing parts the message names */

/* dir holds a later part of a GGUF split set (part, a file name) and not
 * its first: say which part of how many it is and every part missing.
 * Returns -1. */
static int
lone_part(struct err *e, const char *dir, int below, const char *part)
{
	char names[600] = "", path[4096];
	struct naming nm;
	size_t plen, k = 0;
	unsigned i, missing = 0;
	struct stat st;

	naming_of(part, &nm);
	plen = strlen(part) - nm.suffix;
	for (i = 1; i <= nm.parts; i++) {
		snprintf(path, sizeof(path), "%s/%.*s-%05u-of-%05u.gguf", dir,
			 (int)plen, part, i, nm.parts);
		if (stat(path, &st) == 0)
			continue;
		if (++missing <= MISSING_NAMED && k < sizeof(names))
			k += (size_t)snprintf(names + k, sizeof(names) - k,
					      "%s%.*s-%05u-of-%05u.gguf",
					      missing > 1 ? ", " : "",
					      (int)plen, part, i, nm.parts);
	}
	if (missing > MISSING_NAMED && k < sizeof(names))
		snprintf(names + k, sizeof(names) - k, " and %u more",
			 missing - MISSING_NAMED);
	err_set(e, ERR_USAGE, "no model (" NAMING_WHAT ") in this "
		"directory%s; it holds %s, part %u of %u of a GGUF split set "
		"whose part%s %s %s missing: put every part beside it and "
		"mount the first", below ? " or below it" : "", part, nm.part,
		nm.parts, missing == 1 ? "" : "s", names,
		missing == 1 ? "is" : "are");
	return err_at(e, dir);
}

int
nomodel_set(struct err *e, const char *dir, int below)
{
	char part[256] = "";
	char first[256] = "", more[48] = "";
	struct naming nm;
	struct dirent *d;
	size_t n = 0;
	DIR *dp = opendir(dir);

	/* the directory's own files only: a checkpoint further down is
	 * no likelier to be what was meant */
	while (dp && (d = readdir(dp)) != NULL) {
		if (d->d_name[0] != '.' &&
		    naming_of(d->d_name, &nm) == NAMING_PART &&
		    (!part[0] || strcmp(d->d_name, part) < 0))
			snprintf(part, sizeof(part), "%s", d->d_name);
		if (d->d_name[0] == '.' ||
		    naming_of(d->d_name, &nm) != NAMING_CHECKPOINT)
			continue;
		if (!n++ || strcmp(d->d_name, first) < 0)
			snprintf(first, sizeof(first), "%s", d->d_name);
	}
	if (dp)
		closedir(dp);
	if (!n && part[0])
		return lone_part(e, dir, below, part);
	if (!n) {
		err_set(e, ERR_USAGE, "no model (" NAMING_WHAT ") in this "
			"directory%s", below ? " or below it" : "");
		return err_at(e, dir);
	}
	if (n > 1)
		snprintf(more, sizeof(more), " (and %zu more)", n - 1);
	err_set(e, ERR_USAGE, "no model (" NAMING_WHAT ") in this "
		"directory%s; it holds the PyTorch checkpoint %s%s, and a "
		"checkpoint (*.pt, *.pth, other *.bin) is a model only when "
		"named by its own path: %s%s%s", below ? " or below it" : "",
		first, more, dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" :
		"/", first);
	return err_at(e, dir);
}
