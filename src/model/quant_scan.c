/* quant_scan.c - one pass of recognising quantized weights (see
 * quant_scan.h). */
#include "model/quant_scan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/table.h"
#include "model/model.h"

const struct tensor *
quant_scan_tensor(const struct quant_scan *f, size_t i)
{
	return f->m->tensors[i].t;
}

static int
name_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct tensor *t = ((const struct model *)ctx)->tensors[id].t;

	return t->name_len == k->len && memcmp(t->name, k->name, k->len) == 0;
}

int
quant_scan_init(struct quant_scan *f, const struct model *m, int count)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->m = m;
	f->count = count;
	if (quant_config_read(m, &f->cfg))
		return -1;
	f->q = calloc(1, sizeof(*f->q));
	f->claimed = calloc(m->ntensors ? m->ntensors : 1, 1);
	if (!f->q || !f->claimed ||
	    nametab_init(&f->tab, m->ntensors, name_eq, m) < 0)
		return -1;
	f->q->config = f->cfg.file;
	f->q->assumed_why = f->cfg.why_none;
	for (i = 0; i < m->ntensors; i++) {
		struct nametab_key key;

		nametab_key(&key, 0, m->tensors[i].t->name,
			    m->tensors[i].t->name_len);
		if (nametab_put(&f->tab, &key, (uint32_t)i) == -2)
			return -1;
	}
	return 0;
}

void
quant_scan_free(struct quant_scan *f)
{
	nametab_free(&f->tab);
	free(f->claimed);
	f->claimed = NULL;
	buf_free(&f->names);
}

size_t
quant_scan_lookup(const struct quant_scan *f, const char *a, size_t alen,
		  const char *b)
{
	size_t blen = strlen(b), n = alen + blen;
	struct nametab_key k;
	char stack[256], *s = n <= sizeof(stack) ? stack : malloc(n);
	long id;

	if (!s)
		return QUANT_ABSENT;
	memcpy(s, a, alen);
	memcpy(s + alen, b, blen);
	nametab_key(&k, 0, s, n);
	id = nametab_find(&f->tab, &k);
	if (s != stack)
		free(s);
	return id < 0 ? QUANT_ABSENT : (size_t)id;
}

int
quant_scan_ends_with(const struct tensor *t, const char *suffix,
		     size_t *base)
{
	size_t n = strlen(suffix);

	if (t->name_len < n || memcmp(t->name + t->name_len - n, suffix, n))
		return 0;
	*base = t->name_len - n;
	return 1;
}

void
quant_scan_refuse(struct quant_scan *f, const char *name, size_t len,
		  const char *fmt, ...)
{
	struct quant *q = f->q;
	struct buf line = BUF_INIT;
	char why[256];
	va_list ap;
	size_t at;

	f->found = 1;
	q->nrefused++;
	at = quant_scan_lookup(f, name, len, "");
	if (at != QUANT_ABSENT && !q->refused_at) {
		q->refused_at = calloc(f->m->ntensors, 1);
		if (!q->refused_at) {
			f->oom = 1;
			return;
		}
	}
	if (at != QUANT_ABSENT)
		q->refused_at[at] = 1;
	if (q->nkept >= QUANT_REFUSED_KEPT)
		return;
	if (!q->refused) {
		q->refused = calloc(QUANT_REFUSED_KEPT, sizeof(*q->refused));
		if (!q->refused) {
			f->oom = 1;
			return;
		}
	}
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (buf_add(&line, name, len) || buf_adds(&line, ": ") ||
	    buf_adds(&line, why)) {
		buf_free(&line);
		f->oom = 1;
		return;
	}
	q->refused[q->nkept].len = line.len;
	q->refused[q->nkept++].text = buf_steal(&line);
}

/* The next slot of f->q's weights; NULL when out of memory. */
static struct quant_weight *
next_slot(struct quant_scan *f)
{
	struct quant *q = f->q;

	if (q->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		void *p = realloc(q->w, cap * sizeof(*q->w));

		if (!p)
			return NULL;
		q->w = p;
		f->cap = cap;
	}
	return &q->w[q->n];
}

struct quant_weight *
quant_scan_add(struct quant_scan *f, enum quant_scheme s, const char *label,
	       const char *a, size_t alen, const char *b)
{
	struct quant_weight *w = f->count ? &f->scratch : next_slot(f);
	size_t k;

	f->found = 1;
	if (!w) {
		f->oom = 1;
		return NULL;
	}
	memset(w, 0, sizeof(*w));
	if (!f->count) {
		/* the name's offset for now: the arena may still move */
		w->name = (const char *)(uintptr_t)f->names.len;
		w->name_len = (uint32_t)(alen + strlen(b));
		if (buf_add(&f->names, a, alen) || buf_adds(&f->names, b) ||
		    buf_add(&f->names, "", 1)) {
			f->oom = 1;
			return NULL;
		}
		f->q->n++;
	}
	w->scheme = s;
	w->label = label;
	w->replaces = QUANT_ABSENT;
	for (k = 0; k < QUANT_PARTS; k++)
		w->part[k] = QUANT_ABSENT;
	return w;
}

int
quant_scan_parts_free(const struct quant_scan *f, const size_t *parts,
		      size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (parts[k] != QUANT_ABSENT && f->claimed[parts[k]])
			return 0;
	return 1;
}

/* One more weight that took a: counted with those that took the same. */
static void
count_assumed(struct quant_count *c, const struct quant_assumption *a)
{
	size_t k;

	for (k = 0; k < c->nassumed; k++) {
		const struct quant_assumption *b = &c->assumed[k].a;

		if (a->what == b->what && a->block[0] == b->block[0] &&
		    a->block[1] == b->block[1] &&
		    a->group_size == b->group_size)
			break;
	}
	if (k == c->nassumed && k < QUANT_ASSUMPTIONS)
		c->assumed[c->nassumed++].a = *a;
	if (k < QUANT_ASSUMPTIONS)
		c->assumed[k].n++;
	else
		c->assumed_more++;
}

void
quant_scan_claim(struct quant_scan *f, const struct quant_weight *w)
{
	struct quant_count *c = &f->counted;
	size_t k;

	for (k = 0; k < QUANT_PARTS; k++)
		if (w->part[k] != QUANT_ABSENT)
			f->claimed[w->part[k]] = 1;
	if (!f->count)
		return;
	/* quant_find() leaves an empty weight as stored (a bitsandbytes
	 * candidate's size is in its quant_state, not read here) */
	if (w->numel == 0 && w->scheme != QUANT_BNB4) {
		f->q->nrefused++;
		return;
	}
	c->weights++;
	for (k = 0; k < c->nlabels && strcmp(c->label[k].label, w->label); k++)
		;
	if (k == c->nlabels && k < QUANT_LABELS)
		c->label[c->nlabels++].label = w->label;
	if (k < QUANT_LABELS)
		c->label[k].n++;
	if (w->assumed.what)
		count_assumed(c, &w->assumed);
}

int
quant_scan_name_free(const struct quant_scan *f, const char *a, size_t alen,
		     const char *b, size_t replaces)
{
	size_t at = quant_scan_lookup(f, a, alen, b);

	return at == QUANT_ABSENT || at == replaces;
}
