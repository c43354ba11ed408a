/* model.c - the model: one merged table of tensors over its shards.
 * model_open() (resolving a SOURCE) is in model_open.c, above shards.c;
 * this file sits below both and knows nothing of indexes. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/meter.h"
#include "base/nametab.h"
#include "format/container.h"
#include "model/display.h"
#include "model/gather_cache.h"
#include "model/model_files.h"
#include "model/tensor_render.h"

/* A reader that counts what it reads (model_read_header). */
struct counted {
	struct source *src;
	uint64_t bytes;
};

static int
counted_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct counted *c = ctx;
	int rc = source_pread_meta(c->src, buf, len, off);

	if (!rc)
		c->bytes += len;
	return rc;
}

int
model_read_header(struct source *src, struct meter *meter,
		  struct header **out, struct err *e)
{
	struct counted c = { src, 0 };
	struct reader r = { counted_pread, &c, src->size, src->name };
	int rc = container_open(&r, out, e);

	source_meta_done(src);	/* parsed: the table holds it now */
	if (rc)
		return source_blame(src, e);
	meter_step(meter, c.bytes);
	return 0;
}

char *
model_render_metadata(const struct header *h)
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
		bad |= p->json ? buf_add(&b, p->val, p->val_len) :
		       buf_add_json_string(&b, p->val, p->val_len);
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
	m->arg = display_name(arg);
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
	m->metadata_json = model_render_metadata(m->shards[0].hdr);
	if (!m->metadata_json)
		goto oom;
	*out = m;
	return 0;
oom:
	source_close(src);
	container_free(h);
	model_free(m);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}

int
model_tensor_read_stored(void *at, uint64_t off, size_t len, void *dst)
{
	const struct model_tensor_at *a = at;

	return source_pread(a->m->shards[a->mt->shard].src, dst, len,
			    model_tensor_offset(a->m, a->mt) + off);
}

int
model_tensor_read(const struct model *m, const struct model_tensor *mt,
		  uint64_t off, size_t len, void *dst)
{
	struct model_tensor_at a = { m, mt };

	if (len == 0)
		return 0;
	if (mt->t->strides)
		return gather_cache_read(m, mt->t, model_tensor_nbytes(mt),
					 off, len, dst, model_tensor_read_stored,
					 &a);
	return model_tensor_read_stored(&a, off, len, dst);
}

int
model_tensor_read_file(void *at, uint64_t off, size_t len, void *dst)
{
	const struct model_tensor_at *a = at;

	return model_tensor_read(a->m, a->mt, off, len, dst);
}

/* nametab callback: is merged tensor id the name k? */
static int
tensor_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct model *m = ctx;
	const struct tensor *t = m->tensors[id].t;

	return t->name_len == k->len && memcmp(t->name, k->name, k->len) == 0;
}

int
model_merge_shards(struct model *m, struct nametab *tab, size_t *first,
		   struct err *e)
{
	size_t total = 0, i, j;

	for (i = 0; i < m->nshards; i++)
		total += m->shards[i].hdr->ntensors;
	if (total > NAMETAB_ID_MAX)
		return -2;
	m->tensors = calloc(total ? total : 1, sizeof(*m->tensors));
	if (!m->tensors || nametab_init(tab, total, tensor_eq, m) < 0)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < m->nshards; i++) {
		const struct header *h = m->shards[i].hdr;

		for (j = 0; j < h->ntensors; j++) {
			const struct tensor *t = &h->tensors[j];
			struct nametab_key k;
			long other;

			m->tensors[m->ntensors].t = t;
			m->tensors[m->ntensors].shard = (uint32_t)i;
			nametab_key(&k, 0, t->name, t->name_len);
			other = nametab_put(tab, &k, (uint32_t)m->ntensors);
			if (other == -2)
				return err_set(e, ERR_NO_MEMORY,
					       "out of memory");
			if (other >= 0) {
				*first = (size_t)other;
				return 1;
			}
			m->ntensors++;
		}
	}
	return 0;
}

void
model_watch(const struct model *m, const struct source_watch *w)
{
	size_t i;

	for (i = 0; i < m->nshards; i++)
		if (m->shards[i].src)
			source_watch(m->shards[i].src, w);
	if (m->files)
		model_files_watch(m->files, w);
}

void
model_free(struct model *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nshards; i++) {
		free(m->shards[i].name);
		if (!m->shards[i].borrowed)
			source_close(m->shards[i].src);
		container_free(m->shards[i].hdr);
	}
	free(m->shards);
	free(m->tensors);
	gather_cache_drop(m);
	free(m->metadata_json);
	free(m->index_path);
	free(m->arg);
	model_files_unref(m->files);
	while (m->beside) {
		struct model_beside *b = m->beside;

		m->beside = b->next;
		free(b->name);
		free(b->text);
		free(b);
	}
	free(m);
}
