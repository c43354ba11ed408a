/* nomodel.c - "no model in this directory", and the checkpoints in it
 * (nomodel.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "format/naming.h"
#include "model/nomodel.h"

int
nomodel_set(struct err *e, const char *dir, int below)
{
	char first[256] = "", more[48] = "";
	struct naming nm;
	struct dirent *d;
	size_t n = 0;
	DIR *dp = opendir(dir);

	/* the directory's own files only: a checkpoint further down is
	 * no likelier to be what was meant */
	while (dp && (d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.' ||
		    naming_of(d->d_name, &nm) != NAMING_CHECKPOINT)
			continue;
		if (!n++ || strcmp(d->d_name, first) < 0)
			snprintf(first, sizeof(first), "%s", d->d_name);
	}
	if (dp)
		closedir(dp);
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
