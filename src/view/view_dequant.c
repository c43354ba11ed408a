/* view_dequant.c - the hidden .dequant/ directory at a model view's root:
 * the view of the model as its framework loads it, with its quantized
 * weights dequantized (model/quant_model.h).  It is a whole model view of
 * the derived model (tensor files, sidecars, .npy/, .txt/, .stats/,
 * .safetensors/ ...), built with the model view's own builder (struct
 * view_ops' build) and reached through its ops: a hidden directory
 * (struct view_hidden, view_kinds.h) whose inodes are the child view's,
 * shifted to a range of the parent's.  Its files are all
 * VIEW_HIDDEN_FILE to the parent, read through the child.
 *
 * A model without quantized weights has no .dequant/, and neither has
 * the derived model's own view.  The mirror views of a stored tensor that
 * a logical tensor of the same name replaces (an FP8 weight,
 * bitsandbytes' packed codes) are that logical tensor's
 * (view_dequant_mirror()): .npy/W.weight.npy holds the numbers W stands
 * for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "model/quant.h"
#include "model/quant_model.h"
#include "view/view.h"
#include "view/view_kinds.h"

#define DEQUANT_DIR ".dequant"

struct view_dequant {
	struct model *model;	/* derived, owned */
	struct view *child;
};

/* The child's inode of a parent's inode in the range, and back. */
static inline uint64_t
local(const struct view *v, uint64_t ino)
{
	return ino - v->ino_dequant + 1;
}

static inline uint64_t
global(const struct view *v, uint64_t c)
{
	return c ? v->ino_dequant + c - 1 : 0;
}

static const struct view *
child(const struct view *v)
{
	return v->dequant->child;
}

static void
dequant_free(struct view *v)
{
	if (!v->dequant)
		return;
	if (v->dequant->child)
		v->dequant->child->ops->free(v->dequant->child);
	model_free(v->dequant->model);
	free(v->dequant);
	v->dequant = NULL;
}

static int
dequant_build(struct view *v, struct err *e)
{
	struct view_dequant *d;
	struct model *dm;

	if (quant_model_base(v->model) || !v->ops->build)
		return 0;	/* already dequantized */
	if (quant_model_open(v->model, &dm, e))
		return -1;
	if (!dm)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d) {
		model_free(dm);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	d->model = dm;
	v->dequant = d;
	if (v->ops->build(dm, &v->opts, NULL, &d->child, e)) {
		dequant_free(v);
		return -1;
	}
	if (d->child->ninodes > UINT32_MAX - v->ninodes) {
		dequant_free(v);
		return err_set(e, ERR_USAGE, "too many tensors to dequantize");
	}
	v->ino_dequant = v->ninodes + 1;
	v->ninodes += d->child->ninodes;
	return 0;
}

static uint64_t
dequant_root(const struct view *v)
{
	return v->dequant ? v->ino_dequant : 0;
}

static int
dequant_owns(const struct view *v, uint64_t ino)
{
	return v->dequant && ino >= v->ino_dequant &&
	       ino - v->ino_dequant < child(v)->ninodes;
}

static enum view_kind
dequant_kind(const struct view *v, uint64_t ino)
{
	enum view_kind k = child(v)->ops->kind(child(v), local(v, ino));

	return k == VIEW_DIR || k == VIEW_NONE ? k : VIEW_HIDDEN_FILE;
}

static uint64_t
dequant_lookup(const struct view *v, uint64_t parent, const char *name,
	       size_t len)
{
	return global(v, child(v)->ops->lookup(child(v), local(v, parent), name,
					       len));
}

static uint64_t
dequant_nchildren(const struct view *v, uint64_t dir)
{
	return child(v)->ops->nchildren(child(v), local(v, dir));
}

static uint64_t
dequant_child(const struct view *v, uint64_t dir, uint64_t k)
{
	return global(v, child(v)->ops->child(child(v), local(v, dir), k));
}

static size_t
dequant_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	if (ino == v->ino_dequant) {
		strcpy(out, DEQUANT_DIR);
		return strlen(DEQUANT_DIR);
	}
	return child(v)->ops->name(child(v), local(v, ino), out);
}

static uint64_t
dequant_size(const struct view *v, uint64_t ino)
{
	return child(v)->ops->size(child(v), local(v, ino));
}

static int
dequant_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	     struct view_segs *out)
{
	return child(v)->ops->read(child(v), local(v, ino), off, size, out);
}

static uint64_t
dequant_subdirs(const struct view *v, uint64_t ino)
{
	struct stat st;

	if (child(v)->ops->stat(child(v), local(v, ino), &st) ||
	    st.st_nlink < 2)
		return 0;
	return (uint64_t)st.st_nlink - 2;
}

static int
dequant_is_volatile(const struct view *v, uint64_t ino)
{
	if (!v->dequant)
		return 0;
	return child(v)->ops->is_volatile(child(v), ino ? local(v, ino) : 0);
}

struct shifted {
	const struct view *v;
	void (*fn)(uint64_t ino, void *arg);
	void *arg;
};

static void
shift_fn(uint64_t ino, void *arg)
{
	struct shifted *s = arg;

	s->fn(global(s->v, ino), s->arg);
}

/* 1 when one of weight w's parts lies in src. */
static int
weight_uses(const struct model *base, const struct quant_weight *w,
	    const struct source *src)
{
	size_t k;

	for (k = 0; k < QUANT_PARTS; k++)
		if (w->part[k] != QUANT_ABSENT &&
		    base->shards[base->tensors[w->part[k]].shard].src == src)
			return 1;
	return 0;
}

/* Files whose bytes come from src: the child's (its stored tensors; its
 * logical ones, computed from the parts, whenever a part's source is
 * src) and the parent's mirror files of replaced tensors. */
static void
dequant_for_source(const struct view *v, const struct source *src,
		   void (*fn)(uint64_t ino, void *arg), void *arg)
{
	struct shifted s = { v, fn, arg };
	const struct model *dm;
	const struct quant *q;
	size_t k, j;
	int any = 0;

	if (!v->dequant)
		return;
	dm = v->dequant->model;
	q = quant_model_quant(dm);
	child(v)->ops->for_source(child(v), src, shift_fn, &s);
	for (k = 0; k < q->n; k++) {
		const struct quant_weight *w = &q->w[k];

		if (!weight_uses(v->model, w, src))
			continue;
		any = 1;
		for (j = 0; w->replaces != QUANT_ABSENT && j < v->nmirrors; j++)
			fn(v->ino_vfiles + v->nmirrors * (uint64_t)w->replaces +
			   j, arg);
	}
	if (any)
		child(v)->ops->for_source(child(v),
					  dm->shards[dm->nshards - 1].src,
					  shift_fn, &s);
}

const struct model_tensor *
view_dequant_mirror(const struct view *v, size_t i, const struct view **mv)
{
	size_t r;

	*mv = v;
	if (!v->dequant)
		return &v->model->tensors[i];
	r = quant_model_replacement(v->dequant->model, i);
	if (r == SIZE_MAX)
		return &v->model->tensors[i];
	*mv = child(v);
	return &v->dequant->model->tensors[r];
}

const struct view_hidden view_dequant_dir = {
	.dir = DEQUANT_DIR,
	.build = dequant_build,
	.free = dequant_free,
	.root = dequant_root,
	.owns = dequant_owns,
	.kind = dequant_kind,
	.lookup = dequant_lookup,
	.nchildren = dequant_nchildren,
	.child = dequant_child,
	.name = dequant_name,
	.size = dequant_size,
	.read = dequant_read,
	.subdirs = dequant_subdirs,
	.is_volatile = dequant_is_volatile,
	.for_source = dequant_for_source,
};
