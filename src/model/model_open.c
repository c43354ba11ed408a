/* model_open.c - a SOURCE as one model, for the two kinds the providers
 * share (provider.h): a local path (a .safetensors file, an index, a
 * directory) and a URL of one file or index.  Sits above model.c and shards.c, which both sit
 * below it: model.c knows nothing of indexes. */
#include "model/model.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/text.h"
#include "format/container.h"
#include "format/naming.h"
#include "model/gguf_split.h"
#include "model/nomodel.h"
#include "model/ollama_store.h"
#include "model/shards.h"

/* A GGUF file that is a part of a split set, but not named as one: the
 * set when it is a local blob of an Ollama store whose manifest lists the
 * parts, else refused (gguf_split.h). */
static int
open_lone_part(const struct source_opener *op, const char *name, int local,
	       const struct header *h, struct model **out, struct err *e)
{
	char **parts = NULL;
	size_t n = 0, i;
	int rc;

	if (local && ollama_split_blobs(name, &parts, &n, e))
		return err_at(e, name);
	if (!n) {
		gguf_split_whole(h, e);
		return err_at(e, name);
	}
	rc = gguf_split_open_parts(op, name, (const char *const *)parts, n,
				   out, e);
	for (i = 0; i < n; i++)
		free(parts[i]);
	free(parts);
	return rc;
}

/* model_open_file(); local: name is a local path. */
static int
open_file(const struct source_opener *op, const char *name, int local,
	  struct model **out, struct err *e)
{
	struct source *src = NULL;
	struct header *h = NULL;
	struct reader r;
	int rc;

	if (source_opener_open(op, name, &src, e))
		return err_at(e, name);
	r = source_reader(src);
	rc = container_open(&r, &h, e);
	source_meta_done(src);
	if (rc) {
		source_blame(src, e);
		source_close(src);
		return err_at(e, name);
	}
	if (gguf_split_part(h)) {
		rc = open_lone_part(op, name, local, h, out, e);
		container_free(h);
		source_close(src);
		return rc;
	}
	if (model_from_single(name, src, h, out, e))
		return err_at(e, name);
	return 0;
}

int
model_open_file(const struct source_opener *op, const char *name,
		struct model **out, struct err *e)
{
	return open_file(op, name, 0, out, e);
}

/* Replace m's arg (SOURCE as given) with arg. */
static int
set_arg(struct model *m, const char *arg, struct err *e)
{
	char *a = strdup(arg);

	if (!a) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	free(m->arg);
	m->arg = a;
	return 0;
}

/* A directory: its model.safetensors.index.json, else its only index,
 * else its only model file (a *.safetensors or *.gguf file, a GGUF split
 * set); without any of those, the same for the models that yield
 * (format/naming.h: *.bin.index.json, pytorch_model*.bin). */
static int
open_dir(const struct source_opener *files, const char *dir,
	 struct model **out, struct err *e)
{
	char *index = NULL, *single = NULL, *path = NULL;
	char *tindex = NULL, *tsingle = NULL;
	int nindex = 0, nsingle = 0, ntindex = 0, ntsingle = 0, rc, oom = 0;
	struct dirent *d;
	DIR *dp;

	dp = opendir(dir);
	if (!dp) {
		err_set(e, ERR_IO, "cannot open directory: %s",
			strerror(errno));
		return err_at(e, dir);
	}
	while ((d = readdir(dp))) {
		struct naming nm;
		char **slot = NULL;

		if (d->d_name[0] == '.')
			continue;
		if (strcmp(d->d_name, "model.safetensors.index.json") == 0) {
			free(index);
			index = strdup(d->d_name);
			oom |= !index;
			nindex = -1000;	/* the conventional name wins */
			continue;
		}
		naming_of(d->d_name, &nm);
		if (nm.role == NAMING_INDEX) {
			*(nm.yields ? &ntindex : &nindex) += 1;
			slot = nm.yields ? &tindex : &index;
		} else if (nm.role == NAMING_MODEL) {
			*(nm.yields ? &ntsingle : &nsingle) += 1;
			slot = nm.yields ? &tsingle : &single;
		}
		if (slot && !*slot)
			oom |= !(*slot = strdup(d->d_name));
	}
	closedir(dp);
	if (!index && !nsingle && (ntindex == 1 || (!ntindex &&
	    ntsingle == 1))) {
		if (ntindex) {
			index = tindex;
			tindex = NULL;
		} else {
			single = tsingle;
			tsingle = NULL;
		}
		nsingle = !ntindex;
	}

	if (oom) {
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	} else if (nindex > 1) {
		rc = err_set(e, ERR_USAGE, "%d *.safetensors.index.json files; "
			     "name the one to mount", nindex);
		err_at(e, dir);
	} else if (index || nsingle == 1) {
		if (asprintf(&path, "%s/%s", dir, index ? index : single) < 0) {
			path = NULL;
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		} else if (index) {
			rc = shards_open_index(files, dir, path, out,
					       e);
		} else {
			rc = model_open_path(files, path, out, e);
			if (rc == 0 && (rc = set_arg(*out, dir, e)) != 0)
				*out = NULL;
		}
	} else if (nsingle > 1) {
		rc = err_set(e, ERR_USAGE, "%d model files and no index; "
			     "name the file to mount", nsingle);
		err_at(e, dir);
	} else {
		rc = nomodel_set(e, dir, 0);
	}
	free(path);
	free(index);
	free(single);
	free(tindex);
	free(tsingle);
	return rc;
}

int
model_open_path(const struct source_opener *files, const char *path,
		struct model **out, struct err *e)
{
	struct naming nm;
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return open_dir(files, path, out, e);
	if (text_ends_with(path, ".index.json"))
		return shards_open_index(files, NULL, path, out, e);
	if (naming_of(path, &nm) != NAMING_NONE && nm.parts)
		return gguf_split_open(files, path, path, out, e);
	return open_file(files, path, 1, out, e);
}

int
model_open_url(const struct source_opener *files, const char *url,
	       struct model **out, struct err *e)
{
	struct naming nm;

	if (text_ends_with(url, ".json"))
		return shards_open_index(files, NULL, url, out, e);
	if (naming_of(url, &nm) != NAMING_NONE && nm.parts)
		return gguf_split_open(files, url, url, out, e);
	return model_open_file(files, url, out, e);
}
