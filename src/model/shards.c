/* shards.c - sharded sets: read model.safetensors.index.json (its form:
 * weight_map.c), open and validate every shard, and check the weight_map
 * against their contents.
 *
 * The index is an allow-list: every tensor of every shard must be listed,
 * under the shard that holds it, and every listed tensor must exist.
 */
#include "model/shards.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/meter.h"
#include "model/model.h"
#include "base/nametab.h"
#include "base/parallel.h"
#include "base/text.h"
#include "model/display.h"
#include "model/weight_map.h"
#include "format/container.h"
#include "source/http/http_options.h"

#define INDEX_MAX_BYTES (256u << 20)	/* far above any real index */
#define SHARDS_MAX 100000

static int
index_error(struct err *e, const char *where, const char *fmt, const char *a,
	    const char *b)
{
	/* The index is at fault: name it, not the shard read last (no
	 * error is recorded yet; a remote source opened fine may have left
	 * its name). */
	err_clear(e);
	err_set(e, ERR_INVALID_INDEX, fmt, a, b);
	return err_at(e, where);
}

/* Read the whole index file (local or remote) through a source. */
static char *
read_index(const struct source_opener *op, const char *path, size_t *len,
	   struct err *e)
{
	struct source *src;
	char *text;
	int rc;

	if (source_opener_open(op, path, &src, e))
		return NULL;
	if (src->size > INDEX_MAX_BYTES) {
		err_set(e, ERR_INVALID_INDEX, "index is %llu bytes, more than "
			"the %u allowed", (unsigned long long)src->size,
			INDEX_MAX_BYTES);
		source_close(src);
		return NULL;
	}
	text = malloc((size_t)src->size + 1);
	if (!text) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		source_close(src);
		return NULL;
	}
	rc = source_pread_meta(src, text, (size_t)src->size, 0);
	if (rc) {
		err_set(e, ERR_IO, "cannot read: %s", strerror(-rc));
		free(text);
		source_close(src);
		return NULL;
	}
	text[src->size] = '\0';
	*len = (size_t)src->size;
	source_close(src);
	return text;
}

/* A shard name must name a .safetensors file (or a PyTorch .bin, for a
 * pytorch_model.bin.index.json) under the index's
 * directory: relative, no "..", no backslash, no empty component.  The
 * index is untrusted input; symlinks the directory holds are not. */
static const char *
bad_shard_name(const char *name)
{
	const char *p = name;
	size_t n = strlen(name);

	if (n == 0)
		return "is empty";
	if (name[0] == '/')
		return "is an absolute path";
	if (strchr(name, '\\'))
		return "contains a backslash";
	if (strstr(name, "://"))
		return "is a URL";
	if (!text_ends_with(name, ".safetensors") &&
	    !text_ends_with(name, ".bin"))
		return "does not end in .safetensors or .bin";
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t k = slash ? (size_t)(slash - p) : strlen(p);

		if (k == 0)
			return "has an empty path component";
		if ((k == 1 && p[0] == '.') || (k == 2 && !strncmp(p, "..", 2)))
			return "has a . or .. component";
		p += k + (slash ? 1 : 0);
	}
	return NULL;
}

/* Directory part of an index path or URL, with a trailing '/' ("" for a
 * bare file name). */
static char *
base_of(const char *index_path)
{
	const char *end = index_path + strlen(index_path);
	const char *q = strpbrk(index_path, "?#");
	const char *slash;
	char *dir;

	if (source_is_url(index_path) && q)
		end = q;
	slash = end;
	while (slash > index_path && slash[-1] != '/')
		slash--;
	dir = strndup(index_path, (size_t)(slash - index_path));
	return dir;
}

/* Join the base and a shard name; URLs get unsafe bytes percent-encoded. */
static char *
shard_path(const char *base, const char *name, int url)
{
	char *enc = url ? text_pct_encode(name, strlen(name), "/") :
		    strdup(name), *out;

	if (!enc || asprintf(&out, "%s%s", base, enc) < 0)
		out = NULL;
	free(enc);
	return out;
}

/* Opening the shards of one index, on several threads. */
struct shard_batch {
	const struct source_opener *op;
	struct model *m;
	char **paths;		/* each shard's path or URL */
	struct err *errs;	/* each shard's failure */
	size_t failed;		/* the first shard that failed (atomic) */
};

static void
open_shard(void *arg, size_t i)
{
	struct shard_batch *b = arg;
	struct shard *sh = &b->m->shards[i];
	struct err *se = &b->errs[i];
	size_t first;

	/* Past a failure nothing is opened: the error reported is the
	 * first in the index's order, as when shards opened one by one. */
	if (i > __atomic_load_n(&b->failed, __ATOMIC_RELAXED))
		return;
	/* Symlinks in the directory are followed, wherever they point (the
	 * hub cache links every shard into ../../blobs/): they are the
	 * user's; only the index's names are checked.  source_open_local()
	 * still wants a regular file. */
	if (source_opener_open(b->op, b->paths[i], &sh->src, se) == 0 &&
	    model_read_header(sh->src, b->op->meter, &sh->hdr, se) == 0)
		return;
	/* about the shard's own file, whatever the opening left behind */
	err_at(se, b->paths[i]);
	first = __atomic_load_n(&b->failed, __ATOMIC_RELAXED);
	while (i < first && !__atomic_compare_exchange_n(&b->failed, &first,
			i, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Open every shard and read its header: for URLs all at once, up to the
 * most requests the HTTP layer keeps in flight (each costs a round trip
 * or two, and one after the other they would cost a round trip per
 * shard); for local files on every CPU (parsing a header is the work). */
static int
open_shards(const struct source_opener *op, struct model *m,
	    const char **names, const char *index_path, struct err *e)
{
	int url = source_is_url(index_path);
	struct shard_batch b = { .op = op, .m = m, .failed = SIZE_MAX };
	char *base = base_of(index_path);
	size_t i, n = m->nshards;
	int rc = 0;

	b.paths = calloc(n ? n : 1, sizeof(*b.paths));
	b.errs = calloc(n ? n : 1, sizeof(*b.errs));
	if (!base || !b.paths || !b.errs) {
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *why = bad_shard_name(names[i]);

		if (why) {
			rc = index_error(e, index_path, "shard name `%s` %s",
					 names[i], why);
			goto out;
		}
		m->shards[i].name = strdup(names[i]);
		b.paths[i] = shard_path(base, names[i], url);
		if (!m->shards[i].name || !b.paths[i]) {
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			goto out;
		}
	}
	meter_phase(op->meter, "shards' headers read", n);
	parallel_run(n, url ? HTTP_MAX_CONNECTIONS : parallel_cpus(),
		     open_shard, &b);
	if (b.failed != SIZE_MAX) {
		*e = b.errs[b.failed];
		rc = -1;
	}
out:
	for (i = 0; b.paths && i < n; i++)
		free(b.paths[i]);
	free(b.paths);
	free(b.errs);
	free(base);
	return rc;
}

/* Two shard names that open one local file (a symlink to the other, a
 * hard link): the index lists one file twice. */
static int
same_file(const struct source *a, const struct source *b)
{
	return a->ino != 0 && a->dev == b->dev &&
	       a->ino == b->ino;
}

/* Build the merged table (and tab, its names); a name in two shards is an
 * error. */
static int
merge(struct model *m, struct nametab *tab, const char *index_path,
      struct err *e)
{
	const struct shard *o, *sh;
	const struct tensor *t;
	char q[160], both[512];
	size_t first;
	int rc = model_merge_shards(m, tab, &first, e);

	if (rc == -2)
		return index_error(e, index_path, "more than %s%s tensors",
				   "2^32", "");
	if (rc <= 0)
		return rc;
	t = m->tensors[m->ntensors].t;
	sh = &m->shards[m->tensors[m->ntensors].shard];
	o = &m->shards[m->tensors[first].shard];
	err_quote(q, sizeof(q), t->name, t->name_len);
	snprintf(both, sizeof(both), "`%s` and `%s`%s", o->name, sh->name,
		 same_file(o->src, sh->src) ? ", which are the same file (one "
		 "name links to the other's file)" : "");
	return index_error(e, index_path, "tensor %s is in two shards: %s", q,
			   both);
}

/* The index is an allow-list: every tensor is listed under the shard that
 * holds it, and every listed tensor exists. */
static int
check_weight_map(struct model *m, const struct nametab *tab,
		 const struct weight_map *w, const char *index_path,
		 struct err *e)
{
	size_t i;
	char q[160];

	for (i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;
		const char *held = m->shards[m->tensors[i].shard].name;
		const struct weight_map_entry *want =
			weight_map_find(w, t->name, t->name_len);

		err_quote(q, sizeof(q), t->name, t->name_len);
		if (!want)
			return index_error(e, index_path, "tensor %s of shard "
					   "`%s` is not in the weight_map", q,
					   held);
		if (want->file != m->tensors[i].shard)
			return index_error(e, index_path, "tensor %s is in "
					   "shard `%s`, but the weight_map "
					   "says otherwise", q, held);
	}
	if (m->ntensors == w->n)
		return 0;
	for (i = 0; i < w->n; i++) {
		const struct weight_map_entry *x = &w->entries[i];
		struct nametab_key k;

		nametab_key(&k, 0, x->name, x->len);
		if (nametab_find(tab, &k) < 0) {
			err_quote(q, sizeof(q), x->name, x->len);
			return index_error(e, index_path, "weight_map lists %s "
					   "in shard `%s`, which has no such "
					   "tensor", q, w->files[x->file]);
		}
	}
	return 0;
}

/* Read the index's text (weight_map.h) and open the shards it names, in
 * the order of their sorted names (as transformers). */
static int
parse_index(const struct source_opener *op, struct model *m,
	    const char *text, size_t len, struct weight_map *w,
	    const char *index_path, struct err *e)
{
	struct err we = { 0 };

	if (weight_map_read(text, len, w, &we)) {
		err_clear(e);	/* the index is at fault, see index_error() */
		*e = we;
		return err_at(e, index_path);
	}
	if (w->nfiles > SHARDS_MAX)
		return index_error(e, index_path, "too many shards%s%s", "",
				   "");
	m->nshards = w->nfiles;
	m->metadata_json = strdup(w->metadata_json);
	m->shards = calloc(m->nshards ? m->nshards : 1, sizeof(*m->shards));
	if (!m->shards || !m->metadata_json)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	return open_shards(op, m, w->files, index_path, e);
}

int
shards_open_index(const struct source_opener *op, const char *dir,
		  const char *index_path, struct model **out, struct err *e)
{
	struct model *m;
	struct nametab tab = { 0 };
	struct weight_map w;
	size_t len;
	char *text;

	m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	m->sharded = 1;
	m->arg = display_name(dir ? dir : index_path);
	m->index_path = strdup(index_path);
	if (!m->arg || !m->index_path) {
		model_free(m);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	text = read_index(op, index_path, &len, e);
	if (!text) {
		model_free(m);
		return -1;
	}
	m->index_size = len;
	if (parse_index(op, m, text, len, &w, index_path, e) ||
	    merge(m, &tab, index_path, e) ||
	    check_weight_map(m, &tab, &w, index_path, e)) {
		free(text);
		weight_map_free(&w);
		nametab_free(&tab);
		model_free(m);
		return -1;
	}
	free(text);
	weight_map_free(&w);
	nametab_free(&tab);
	*out = m;
	return 0;
}
