/* model_open.c - resolve a SOURCE argument (a .safetensors file, an index,
 * a directory, a URL) into a model.  Sits above model.c and shards.c,
 * which both sit below it: model.c knows nothing of indexes. */
#include "model/model.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/text.h"
#include "model/shards.h"
#include "format/sniff.h"
#ifdef STFS_HAVE_S3
#include "source/s3/s3.h"
#endif

static int
open_single(const char *path, struct model **out, struct err *e)
{
	struct source *src = NULL;
	struct header *h = NULL;

	if (source_open(path, &src, e))
		return -1;
	if (sniff_header_read(src, &h, e)) {
		source_blame(src, e);
		source_close(src);
		return -1;
	}
	return model_from_single(path, src, h, out, e);
}

/* A directory: its model.safetensors.index.json, else its only
 * *.safetensors.index.json, else its only *.safetensors file. */
static int
open_dir(const char *dir, struct model **out, struct err *e)
{
	char *index = NULL, *single = NULL, *path;
	int nindex = 0, nsingle = 0, rc;
	struct dirent *d;
	DIR *dp;

	err_where(e, dir);
	dp = opendir(dir);
	if (!dp)
		return err_set(e, ERR_IO, "cannot open directory: %s",
			       strerror(errno));
	while ((d = readdir(dp))) {
		char **slot = NULL;

		if (d->d_name[0] == '.')
			continue;
		if (strcmp(d->d_name, "model.safetensors.index.json") == 0) {
			free(index);
			index = strdup(d->d_name);
			nindex = -1000;	/* the conventional name wins */
			continue;
		}
		if (text_ends_with(d->d_name, ".safetensors.index.json")) {
			nindex++;
			slot = &index;
		} else if (text_ends_with(d->d_name, ".safetensors")) {
			nsingle++;
			slot = &single;
		}
		if (slot && !*slot)
			*slot = strdup(d->d_name);
	}
	closedir(dp);

	if (nindex > 1) {
		rc = err_set(e, ERR_USAGE, "%d *.safetensors.index.json files; "
			     "name the one to mount", nindex);
	} else if (index) {
		rc = asprintf(&path, "%s/%s", dir, index) < 0 ? -1 : 0;
		if (rc == 0) {
			err_reset_where(e);
			rc = shards_open_index(dir, path, out, e);
			free(path);
		} else {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		}
	} else if (nsingle == 1) {
		rc = asprintf(&path, "%s/%s", dir, single) < 0 ? -1 : 0;
		if (rc == 0) {
			err_reset_where(e);
			rc = open_single(path, out, e);
			if (rc == 0) {
				free((*out)->arg);
				(*out)->arg = strdup(dir);
			}
			free(path);
		} else {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		}
	} else if (nsingle > 1) {
		rc = err_set(e, ERR_USAGE, "%d .safetensors files and no "
			     "model.safetensors.index.json; name the file to "
			     "mount", nsingle);
	} else {
		rc = err_set(e, ERR_USAGE, "no .safetensors file and no "
			     "*.safetensors.index.json in this directory");
	}
	free(index);
	free(single);
	return rc;
}

int
model_open(const char *source, struct model **out, struct err *e)
{
	struct stat st;

	*out = NULL;
#ifdef STFS_HAVE_S3
	if (s3_is_url(source))
		return s3_model_open(source, out, e);
#endif
	if (source_is_url(source)) {
		if (text_ends_with(source, ".json"))
			return shards_open_index(NULL, source, out, e);
		return open_single(source, out, e);
	}
	if (stat(source, &st) == 0 && S_ISDIR(st.st_mode))
		return open_dir(source, out, e);
	if (text_ends_with(source, ".index.json"))
		return shards_open_index(NULL, source, out, e);
	return open_single(source, out, e);
}
