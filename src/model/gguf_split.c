/* gguf_split.c - GGUF split sets as one model (gguf_split.h). */
#include "model/gguf_split.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/meter.h"
#include "base/nametab.h"
#include "format/container.h"
#include "format/naming.h"
#include "model/display.h"
#include "model/model.h"

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

int
gguf_split_part(const struct header *h)
{
	return h->format && strcmp(h->format, "gguf") == 0 &&
	       meta_int(h, "split.count") > 1;
}

int
gguf_split_whole(const struct header *h, struct err *e)
{
	long long no, count;

	if (!gguf_split_part(h))
		return 0;
	count = meta_int(h, "split.count");
	no = meta_int(h, "split.no");
	return err_set(e, ERR_INVALID_GGUF, "split.no %lld and split.count "
		       "%lld: part %lld of %lld of a GGUF split set, not a "
		       "whole model: name the parts NAME-00001-of-%05lld.gguf "
		       "to NAME-%05lld-of-%05lld.gguf (llama.cpp's gguf-split "
		       "names) and mount the first, or merge them with "
		       "llama-gguf-split --merge", no, count, no + 1, count,
		       count, count, count);
}

/* Open the GGUF file at path as sh, with its split.no and split.count
 * (-1: absent). */
static int
open_part(const struct source_opener *op, const char *path,
	  struct shard *sh, long long *no, long long *count, struct err *e)
{
	const char *slash = strrchr(path, '/');

	*no = *count = -1;
	sh->name = strdup(slash ? slash + 1 : path);
	if (!sh->name)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	if (source_opener_open(op, path, &sh->src, e) ||
	    model_read_header(sh->src, op->meter, &sh->hdr, e))
		return err_at(e, path);
	if (!sh->hdr->format || strcmp(sh->hdr->format, "gguf") != 0) {
		err_set(e, ERR_INVALID_GGUF, "not a GGUF file, but named as a "
			"part of a GGUF split set");
		return err_at(e, path);
	}
	*no = meta_int(sh->hdr, "split.no");
	*count = meta_int(sh->hdr, "split.count");
	return 0;
}

/* A split.no or split.count for a message: the number, or "absent"
 * (meta_int()'s -1). */
static const char *
meta_text(char *buf, size_t cap, long long v)
{
	if (v == -1)
		return "absent";
	snprintf(buf, cap, "%lld", v);
	return buf;
}

#define MISSING_NAMED 16	/* missing parts a message names */

/* Part first of the set named by its part given (1-based) cannot be
 * opened: every part that cannot, named (each tried; a part that opens is
 * closed again), in one error about the part given. */
static int
missing_parts(const struct source_opener *op, const char *const *paths,
	      unsigned n, unsigned given, unsigned first, struct err *e)
{
	char why[ERR_DETAIL_MAX];
	struct buf names = BUF_INIT;
	struct err probe = { 0 };
	unsigned i, missing = 0;
	int bad = 0;

	snprintf(why, sizeof(why), "%s", e->detail);
	for (i = first; i < n; i++) {
		struct source *src = NULL;
		const char *slash = strrchr(paths[i], '/');

		if (i != first &&
		    source_opener_open(op, paths[i], &src, &probe) == 0) {
			source_close(src);
			continue;
		}
		err_clear(&probe);
		if (++missing <= MISSING_NAMED)
			bad |= buf_addf(&names, "%s%s", missing > 1 ? ", " :
					"", slash ? slash + 1 : paths[i]);
	}
	if (missing > MISSING_NAMED)
		bad |= buf_addf(&names, " and %u more", missing - MISSING_NAMED);
	err_clear(e);
	if (bad) {
		buf_free(&names);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	err_set(e, ERR_IO, "part %u of %u of a GGUF split set; %u part%s "
		"cannot be opened: %s (the first: %.200s): put every part "
		"beside it, or merge the set with llama-gguf-split --merge",
		given, n, missing, missing == 1 ? "" : "s", names.data, why);
	buf_free(&names);
	return err_at(e, paths[given - 1]);
}

/* Open the n parts at paths into m->shards in split.no order.  named: the
 * paths are the set's names, in order, which the parts must confirm (the
 * part given, 1-based, is the one named); else they come in any order (a
 * manifest's) and each part's split.no places it. */
static int
open_parts(const struct source_opener *op, const char *const *paths,
	   unsigned n, int named, unsigned given, struct model *m,
	   struct err *e)
{
	struct shard sh;
	long long no, count;
	unsigned i;

	meter_phase(op->meter, "parts' headers read", n);
	for (i = 0; i < n; i++) {
		memset(&sh, 0, sizeof(sh));
		if (open_part(op, paths[i], &sh, &no, &count, e)) {
			if (named && given && !sh.src && e->code == ERR_IO)
				missing_parts(op, paths, n, given, i, e);
			goto fail;
		}
		if (named && (no != (long long)i || count != (long long)n)) {
			char a[24], b[24];

			err_set(e, ERR_INVALID_GGUF, "its name says part %u of "
				"%u (split.no %u, split.count %u), its metadata "
				"split.no %s and split.count %s: a whole model "
				"or a part of another set, renamed? rename it to "
				"what its metadata says (a whole model: no "
				"-KKKKK-of-NNNNN in its name)", i + 1, n, i, n,
				meta_text(a, sizeof(a), no),
				meta_text(b, sizeof(b), count));
			goto fail_named;
		}
		if (!named && (count != (long long)n || no < 0 ||
			       no >= (long long)n || m->shards[no].name)) {
			err_set(e, ERR_INVALID_GGUF, "split.no %lld and "
				"split.count %lld (-1: absent) do not make it "
				"one part of the %u listed with it%s", no, count,
				n, no >= 0 && no < (long long)n &&
				m->shards[no].name ? " (two parts say the same "
				"split.no)" : "");
			goto fail_named;
		}
		m->shards[named ? i : (unsigned)no] = sh;
	}
	return 0;
fail_named:
	err_at(e, paths[i]);
fail:
	free(sh.name);
	container_free(sh.hdr);
	source_close(sh.src);
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

/* The set of n parts at paths (named: see open_parts) as one model. */
static int
open_set(const struct source_opener *op, const char *arg,
	 const char *const *paths, unsigned n, int named, unsigned given,
	 struct model **out, struct err *e)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	m->sharded = 1;
	m->arg = display_name(arg);
	m->shards = calloc(n, sizeof(*m->shards));
	m->nshards = n;
	if (!m->arg || !m->shards) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (open_parts(op, paths, n, named, given, m, e) || merge(m, e)) {
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

int
gguf_split_open(const struct source_opener *op, const char *arg,
		const char *path, struct model **out, struct err *e)
{
	struct naming nm;
	char **paths;
	size_t plen;
	unsigned n, i;
	int rc = -1;

	if (naming_of(path, &nm) == NAMING_NONE || !nm.parts)
		return err_set(e, ERR_USAGE, "not a GGUF split name");
	plen = strlen(path) - nm.suffix;
	n = nm.parts;
	paths = calloc(n, sizeof(*paths));
	for (i = 0; paths && i < n; i++)
		if (asprintf(&paths[i], "%.*s-%05u-of-%05u.gguf", (int)plen,
			     path, i + 1, n) < 0) {
			paths[i] = NULL;
			break;
		}
	if (paths && i == n)
		rc = open_set(op, arg, (const char *const *)paths, n, 1,
			      nm.part, out, e);
	else
		err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

int
gguf_split_open_parts(const struct source_opener *op, const char *arg,
		      const char *const *paths, size_t n, struct model **out,
		      struct err *e)
{
	if (n < 2 || n > 99999)
		return err_set(e, ERR_USAGE, "%zu parts of a GGUF split set",
			       n);
	return open_set(op, arg, paths, (unsigned)n, 0, 0, out, e);
}
