/* gguf_split.c - GGUF split sets as one model (gguf_split.h). */
#include "model/gguf_split.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/nametab.h"
#include "base/text.h"
#include "format/container.h"
#include "model/display.h"
#include "model/model.h"

#define SUFFIX_LEN 20	/* "-00001-of-00003.gguf" */

static int
digits5(const char *s, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 5; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10 + (unsigned)(s[i] - '0');
	}
	return 1;
}

int
gguf_split_name(const char *path, size_t *prefix_len, unsigned *count)
{
	size_t len = strlen(path);
	const char *s;
	unsigned k, n;

	if (len <= SUFFIX_LEN)
		return 0;
	s = path + len - SUFFIX_LEN;
	if (s[0] != '-' || memcmp(s + 6, "-of-", 4) != 0 ||
	    strcmp(s + 15, ".gguf") != 0 || !digits5(s + 1, &k) ||
	    !digits5(s + 10, &n) || k < 1 || k > n || s[-1] == '/')
		return 0;
	*prefix_len = len - SUFFIX_LEN;
	*count = n;
	return 1;
}

int
gguf_split_model(const char *name)
{
	size_t plen;
	unsigned n;

	if (!text_ends_with(name, ".gguf"))
		return 0;
	return !gguf_split_name(name, &plen, &n) ||
	       strncmp(name + plen, "-00001-", 7) == 0;
}

/* The value of an integer metadata key of h, or -1 when absent. */
static long long
meta_int(const struct header *h, const char *key)
{
	size_t i;

	for (i = 0; i < h->nmeta; i++)
		if (h->meta[i].json && strcmp(h->meta[i].key, key) == 0)
			return strtoll(h->meta[i].val, NULL, 10);
	return -1;
}

/* Open part i (0-based) of n: prefix-0000{i+1}-of-0000n.gguf. */
static int
open_part(const struct source_opener *op, const char *path, size_t plen,
	  unsigned i, unsigned n, struct shard *sh, struct err *e)
{
	struct reader r;
	char *p;
	const char *slash;
	long long no, count;

	if (asprintf(&p, "%.*s-%05u-of-%05u.gguf", (int)plen, path, i + 1,
		     n) < 0)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	slash = strrchr(p, '/');
	sh->name = strdup(slash ? slash + 1 : p);
	if (!sh->name) {
		free(p);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (source_opener_open(op, p, &sh->src, e))
		goto fail;
	r = source_reader(sh->src);
	if (container_open(&r, &sh->hdr, e)) {
		source_blame(sh->src, e);
		goto fail;
	}
	if (!sh->hdr->format || strcmp(sh->hdr->format, "gguf") != 0) {
		err_set(e, ERR_INVALID_GGUF, "not a GGUF file, but named as a "
			"part of a GGUF split set");
		goto fail;
	}
	no = meta_int(sh->hdr, "split.no");
	count = meta_int(sh->hdr, "split.count");
	if (no != (long long)i || count != (long long)n) {
		err_set(e, ERR_INVALID_GGUF, "split.no %lld and split.count "
			"%lld (-1: absent) do not say part %u of %u as its "
			"name does", no, count, i, n);
		goto fail;
	}
	free(p);
	return 0;
fail:
	err_at(e, p);
	free(p);
	return -1;
}

static int
merge(struct model *m, struct err *e)
{
	struct nametab tab = { 0 };
	size_t first;
	int rc = model_merge_shards(m, &tab, &first, e);

	nametab_free(&tab);
	if (rc == -2)
		return err_set(e, ERR_INVALID_GGUF, "more than 2^32 tensors");
	if (rc == 1) {
		const struct model_tensor *dup = &m->tensors[m->ntensors];
		char q[160];

		err_quote(q, sizeof(q), dup->t->name, dup->t->name_len);
		err_set(e, ERR_INVALID_GGUF, "tensor %s is also in %s", q,
			m->shards[m->tensors[first].shard].name);
		rc = err_at(e, m->shards[dup->shard].name);
	}
	return rc;
}

int
gguf_split_open(const struct source_opener *op, const char *arg,
		const char *path, struct model **out, struct err *e)
{
	struct model *m;
	size_t plen;
	unsigned n, i;

	if (!gguf_split_name(path, &plen, &n))
		return err_set(e, ERR_USAGE, "not a GGUF split name");
	m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	m->sharded = 1;
	m->arg = display_name(arg);
	m->shards = calloc(n, sizeof(*m->shards));
	if (!m->arg || !m->shards) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	for (i = 0; i < n; i++) {
		m->nshards = i + 1;
		if (open_part(op, path, plen, i, n, &m->shards[i], e)) {
			model_free(m);
			return -1;
		}
	}
	if (merge(m, e)) {
		model_free(m);
		return -1;
	}
	m->metadata_json = model_render_metadata(m->shards[0].hdr);
	if (!m->metadata_json) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	*out = m;
	return 0;
}
