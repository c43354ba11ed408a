/* model.c - resolve a SOURCE argument into one merged table of tensors. */
#include "model.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "error.h"
#include "shards.h"
#include "sniff.h"
#ifdef STFS_HAVE_S3
#include "s3.h"
#endif

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* Pretty JSON object of a header's __metadata__ pairs, in header order. */
static char *
render_metadata(const struct header *h)
{
	struct buf b = BUF_INIT;
	size_t i;
	int bad = 0;

	if (h->nmeta == 0)
		return strdup("{}\n");
	bad |= buf_adds(&b, "{\n");
	for (i = 0; i < h->nmeta; i++) {
		const struct meta_pair *p = &h->meta[i];

		bad |= buf_adds(&b, "  ");
		bad |= buf_add_json_string(&b, p->key, p->key_len);
		bad |= buf_adds(&b, ": ");
		bad |= buf_add_json_string(&b, p->val, p->val_len);
		bad |= buf_adds(&b, i + 1 < h->nmeta ? ",\n" : "\n");
	}
	bad |= buf_adds(&b, "}\n");
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

int
model_from_single(const char *arg, struct source *src, struct header *h,
		  struct model **out, struct err *e)
{
	struct model *m;
	size_t i;

	m = calloc(1, sizeof(*m));
	if (!m)
		goto oom;
	m->shards = calloc(1, sizeof(*m->shards));
	m->tensors = calloc(h->ntensors ? h->ntensors : 1, sizeof(*m->tensors));
	m->arg = source_display(arg);
	if (!m->shards || !m->tensors || !m->arg)
		goto oom;
	m->shards[0].name = strdup(src->base);
	if (!m->shards[0].name)
		goto oom;
	m->shards[0].src = src;
	m->shards[0].hdr = h;
	m->nshards = 1;
	src = NULL;
	h = NULL;
	m->ntensors = m->shards[0].hdr->ntensors;
	for (i = 0; i < m->ntensors; i++) {
		m->tensors[i].t = &m->shards[0].hdr->tensors[i];
		m->tensors[i].shard = 0;
	}
	m->metadata_json = render_metadata(m->shards[0].hdr);
	if (!m->metadata_json)
		goto oom;
	*out = m;
	return 0;
oom:
	source_close(src);
	header_free(h);
	model_free(m);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}

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
		if (ends_with(d->d_name, ".safetensors.index.json")) {
			nindex++;
			slot = &index;
		} else if (ends_with(d->d_name, ".safetensors")) {
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
			e->where[0] = '\0';
			rc = shards_open_index(dir, path, out, e);
			free(path);
		} else {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		}
	} else if (nsingle == 1) {
		rc = asprintf(&path, "%s/%s", dir, single) < 0 ? -1 : 0;
		if (rc == 0) {
			e->where[0] = '\0';
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
		if (ends_with(source, ".json"))
			return shards_open_index(NULL, source, out, e);
		return open_single(source, out, e);
	}
	if (stat(source, &st) == 0 && S_ISDIR(st.st_mode))
		return open_dir(source, out, e);
	if (ends_with(source, ".index.json"))
		return shards_open_index(NULL, source, out, e);
	return open_single(source, out, e);
}

const struct model_tensor *
model_find(const struct model *m, const char *name, size_t len)
{
	const struct tensor *t;

	if (m->sharded)
		return shards_find(m, name, len);
	t = header_find(m->shards[0].hdr, name, len);
	return t ? &m->tensors[t - m->shards[0].hdr->tensors] : NULL;
}

void
model_free(struct model *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nshards; i++) {
		free(m->shards[i].name);
		source_close(m->shards[i].src);
		header_free(m->shards[i].hdr);
	}
	shards_free_priv(m);
	free(m->shards);
	free(m->tensors);
	free(m->metadata_json);
	free(m->index_path);
	free(m->arg);
	free(m);
}
