/* model_folder.c - the folder a model's files are in (model_folder.h). */
#include "model/model_folder.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "format/naming.h"
#include "model/model.h"
#include "model/model_files.h"

/* The absolute directory of path, malloc'd (NULL: out of memory or no
 * such directory). */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *real;

	if (slash == path)
		return strdup("/");
	dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return NULL;
	real = realpath(dir, NULL);
	free(dir);
	return real;
}

int
model_folder_local(struct model *m, const struct source_opener *files,
		   const char *path, struct err *e)
{
	struct naming nm;
	char *dir;

	if (naming_of(path, &nm) == NAMING_NONE)
		return 0;	/* a blob: only its own */
	dir = dir_of(path);
	if (!dir)
		return 0;	/* its folder went away: only its own */
	model_files_unref(m->files);
	m->files = model_files_new(MODEL_FILES_LOCAL, dir, files);
	free(dir);
	if (!m->files)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	return 0;
}

/* The last component of url (without a query), decoded, malloc'd. */
static char *
url_base(const char *url)
{
	const char *end = url + strcspn(url, "?#"), *s = end;

	while (s > url && s[-1] != '/')
		s--;
	return text_pct_decode(s, (size_t)(end - s), "/", NULL);
}

int
model_folder_url(struct model *m, const struct source_opener *files,
		 const char *url, struct err *e)
{
	const char *end = url + strcspn(url, "?#"), *s = end;
	char *where, *rel = NULL;
	int rc = 0;

	while (s > url && s[-1] != '/')
		s--;
	where = strndup(url, (size_t)(s - url));
	model_files_unref(m->files);
	m->files = where ? model_files_new(MODEL_FILES_PROBED, where, files) :
		   NULL;
	free(where);
	if (!m->files)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	/* (an index whose name does not decode is left out) */
	if (m->index_path && (rel = url_base(m->index_path)) &&
	    model_files_add(m->files, rel, m->index_path, NULL,
			    m->index_size, NULL, 0, 1))
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	free(rel);
	return rc;
}
