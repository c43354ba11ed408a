/* view_hint.c - the bytes a loader reads next, hinted to the sources. */
#include "view/view_hint.h"

#include "model/model.h"
#include "model/model_order.h"
#include "source/source.h"
#include "view/view.h"
#include "view/view_segs.h"

/* The model's order, built by the first read that has something to hint
 * (a remote source); readers race to build it, one wins. */
static struct model_order *
order_of(const struct view *v)
{
	struct view *w = (struct view *)v;	/* only this field changes */
	struct model_order *o = __atomic_load_n(&w->order, __ATOMIC_ACQUIRE);
	struct model_order *none = NULL;

	if (o)
		return o;
	o = model_order_new(v->model);
	if (!o)
		return NULL;
	if (!__atomic_compare_exchange_n(&w->order, &none, o, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		model_order_free(o);
		o = none;
	}
	return o;
}

void
view_hint_after(const struct view *v, const struct view_segs *segs)
{
	struct model_order_range r[MODEL_ORDER_MAX_RANGES];
	const struct view_seg *last = NULL;
	const struct model *m = v->model;
	struct model_order *o;
	size_t i, n;

	for (i = segs->n; i-- > 0;)
		if (segs->seg[i].kind == VIEW_SEG_SOURCE) {
			last = &segs->seg[i];
			break;
		}
	if (!m || !last || !last->src->ops->hint)
		return;
	for (i = 0; i < m->nshards && m->shards[i].src != last->src; i++)
		;
	if (i == m->nshards || !(o = order_of(v)))
		return;
	/* a tensor's first read: the prefetch runs before its second */
	n = (size_t)model_order_rest(o, (uint32_t)i, last->off,
				     last->off + last->len,
				     VIEW_HINT_FIRST_BYTES, r);
	n += model_order_next(o, (uint32_t)i, last->off + last->len,
			      VIEW_HINT_BYTES, r + n,
			      MODEL_ORDER_MAX_RANGES - n);
	for (i = 0; i < n; i++)
		source_hint(r[i].src, r[i].off, r[i].len);
}

void
view_hint_free(struct view *v)
{
	model_order_free(v->order);
	v->order = NULL;
}
