/* model_beside.c - the configs beside a model (see model_beside.h). */
#include "model/model_beside.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/jsonmem.h"
#include "model/model.h"
#include "source/source.h"

/* The local path of file name in the folder of m's first file in *full,
 * or NULL (a URL, no file).  0, or -1 when out of memory. */
static int
local_path(const struct model *m, const char *name, char **full)
{
	const char *path, *slash;

	*full = NULL;
	if (!m->nshards || !m->shards[0].src || !m->shards[0].src->name)
		return 0;
	path = m->shards[0].src->name;
	if (source_is_url(path))
		return 0;
	slash = strrchr(path, '/');
	if (asprintf(full, "%.*s%s", slash ? (int)(slash - path + 1) : 0,
		     path, name) < 0) {
		*full = NULL;
		return -1;
	}
	return 0;
}

static json_t *
object_or_null(json_t *j)
{
	if (j && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

int
model_beside_json(const struct model *m, const char *name, json_t **out)
{
	unsigned long jf = jsonmem_failures();
	const struct model_beside *b;
	struct stat st;
	json_t *j = NULL;
	char *full;

	*out = NULL;
	if (m->listed) {
		for (b = m->beside; b; b = b->next)
			if (strcmp(b->name, name) == 0) {
				j = json_loadb(b->text, b->len, 0, NULL);
				break;
			}
	} else {
		if (local_path(m, name, &full))
			return -1;
		if (full && stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size <= MODEL_BESIDE_MAX)
			j = json_load_file(full, 0, NULL);
		free(full);
	}
	/* a parse short of memory may fail, or drop a byte (jsonmem.h) */
	if (jsonmem_failures() != jf) {
		json_decref(j);
		return -1;
	}
	*out = object_or_null(j);
	return 0;
}

int
model_beside_known(const struct model *m)
{
	return m->listed || (m->nshards && m->shards[0].src &&
			     m->shards[0].src->name &&
			     !source_is_url(m->shards[0].src->name));
}

/* Keep name's bytes text[0..len) in m (text taken, also on failure). */
static int
keep(struct model *m, const char *name, char *text, size_t len,
     struct err *e)
{
	struct model_beside *b = calloc(1, sizeof(*b));

	if (!b || !(b->name = strdup(name))) {
		free(b);
		free(text);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	b->text = text;
	b->len = len;
	b->next = m->beside;
	m->beside = b;
	return 0;
}

int
model_beside_fetch(struct model *m, const struct source_opener *op,
		   const char *name, const char *url, struct err *e)
{
	struct err scratch = { 0 };
	struct source *src = NULL;
	uint64_t size;
	char *text = NULL;
	int rc;

	m->listed = 1;
	if (!url || source_opener_open(op, url, &src, &scratch))
		return 0;	/* none, or unreadable: absent */
	size = src->size;
	if (size <= MODEL_BESIDE_MAX && !(text = malloc((size_t)size + 1))) {
		source_opener_keep(op, url, src);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	rc = text ? source_pread_meta(src, text, (size_t)size, 0) : -1;
	source_opener_keep(op, url, src);
	if (rc) {
		free(text);
		return 0;
	}
	return keep(m, name, text, (size_t)size, e);
}

int
model_beside_copy(struct model *d, const struct model *m, struct err *e)
{
	const struct model_beside *b;
	char *text;

	d->listed = m->listed;
	for (b = m->beside; b; b = b->next) {
		text = malloc(b->len + 1);
		if (!text)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		memcpy(text, b->text, b->len);
		if (keep(d, b->name, text, b->len, e))
			return -1;
	}
	return 0;
}
