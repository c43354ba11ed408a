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
 * Built on first use: a mount pays only quant_count() (a pass over the
 * names, and compressed-tensors' 16-byte weight_shapes) until someone looks into .dequant/ or at the mirror files of a
 * replaced tensor, so a DeepSeek-sized FP8 model mounts as fast and as
 * small as before.  The range reserved for it is the rest of the model
 * view's 32-bit inode space (view_multi.c numbers models by the upper
 * 32 bits); the first use builds the child under a mutex, once, and
 * publishes it with a release store.  A build that fails for want of
 * memory keeps nothing: .dequant/ and the mirror files of the weights it
 * replaces answer ENOMEM (view.h: VIEW_INO_AGAIN, view_stat) until a
 * build succeeds; they never show the stored tensors instead, nor an
 * empty directory.
 *
 * A model without candidates has no .dequant/, and neither has the
 * derived model's own view.  The mirror views of a stored tensor that a
 * logical tensor of the same name replaces (an FP8 weight, bitsandbytes'
 * packed codes) are that logical tensor's (view_dequant_mirror()):
 * .npy/W.weight.npy holds the numbers W stands for.
 */
#include <errno.h>
#include <pthread.h>
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
	pthread_mutex_t lock;	/* taken to build, once */
	int built;		/* atomic: model and child are final */
	struct model *model;	/* derived, owned; NULL when none */
	struct view *child;
	uint64_t reserved;	/* inodes of the range */
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

/* The child view, built on the first call that can; NULL when there is
 * none (nothing recognised after all: for good) or when it could not be
 * built for want of memory (nothing kept: the next call tries again;
 * built() tells the two apart). */
static const struct view *
child(const struct view *v)
{
	struct view_dequant *d = v->dequant;
	struct err e = { 0 };
	struct model *dm = NULL;
	struct view *c = NULL;

	if (__atomic_load_n(&d->built, __ATOMIC_ACQUIRE))
		return d->child;
	pthread_mutex_lock(&d->lock);
	if (!d->built) {
		if (quant_model_open(v->model, DTYPE_F32, &dm, &e) == 0 &&
		    dm &&
		    (v->ops->build(dm, &v->opts, NULL, &c, &e) ||
		     c->ninodes > d->reserved)) {
			if (c)
				c->ops->free(c);
			c = NULL;
		}
		if (!c) {
			model_free(dm);
			dm = NULL;
		}
		if (c || e.code != ERR_NO_MEMORY) {
			d->model = dm;
			d->child = c;
			__atomic_store_n(&d->built, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return d->child;
}

/* 1 when child() has its answer for good. */
static int
built(const struct view *v)
{
	return __atomic_load_n(&v->dequant->built, __ATOMIC_ACQUIRE);
}

static void
dequant_free(struct view *v)
{
	if (!v->dequant)
		return;
	if (v->dequant->child)
		v->dequant->child->ops->free(v->dequant->child);
	model_free(v->dequant->model);
	pthread_mutex_destroy(&v->dequant->lock);
	free(v->dequant);
	v->dequant = NULL;
}

static int
dequant_build(struct view *v, struct err *e)
{
	struct view_dequant *d;
	struct quant_count c;

	if (quant_model_base(v->model) || !v->ops->build ||
	    v->ninodes >= UINT32_MAX - 1)
		return 0;	/* already dequantized */
	if (quant_count(v->model, &c, e))
		return -1;
	if (c.weights == 0 && c.refused == 0)
		return 0;	/* nothing to do */
	d = calloc(1, sizeof(*d));
	if (!d)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	pthread_mutex_init(&d->lock, NULL);
	v->dequant = d;
	v->ino_dequant = v->ninodes + 1;
	d->reserved = UINT32_MAX - v->ninodes;
	v->ninodes = UINT32_MAX;
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
	       ino - v->ino_dequant < v->dequant->reserved;
}

static enum view_kind
dequant_kind(const struct view *v, uint64_t ino)
{
	const struct view *c;
	enum view_kind k;

	if (ino == v->ino_dequant)
		return VIEW_DIR;
	c = child(v);
	k = c ? c->ops->kind(c, local(v, ino)) : VIEW_NONE;
	return k == VIEW_DIR || k == VIEW_NONE ? k : VIEW_HIDDEN_FILE;
}

static uint64_t
dequant_lookup(const struct view *v, uint64_t parent, const char *name,
	       size_t len)
{
	const struct view *c = child(v);
	uint64_t ino;

	if (!c)
		return built(v) ? 0 : VIEW_INO_AGAIN;
	ino = c->ops->lookup(c, local(v, parent), name, len);
	return ino == VIEW_INO_AGAIN ? ino : global(v, ino);
}

static uint64_t
dequant_nchildren(const struct view *v, uint64_t dir)
{
	const struct view *c = child(v);

	return c ? c->ops->nchildren(c, local(v, dir)) : 0;
}

static uint64_t
dequant_child(const struct view *v, uint64_t dir, uint64_t k)
{
	const struct view *c = child(v);

	return c ? global(v, c->ops->child(c, local(v, dir), k)) : 0;
}

static size_t
dequant_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const struct view *c;

	if (ino == v->ino_dequant) {
		strcpy(out, DEQUANT_DIR);
		return strlen(DEQUANT_DIR);
	}
	c = child(v);
	if (!c) {
		out[0] = '\0';
		return 0;
	}
	return c->ops->name(c, local(v, ino), out);
}

static uint64_t
dequant_size(const struct view *v, uint64_t ino)
{
	const struct view *c = child(v);

	return c ? c->ops->size(c, local(v, ino)) : 0;
}

static int
dequant_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	     struct view_segs *out)
{
	const struct view *c = child(v);

	return c ? c->ops->read(c, local(v, ino), off, size, out) : -ENOENT;
}

/* The child built, and what the child's stat of ino needs (its own
 * .safetensors/). */
static int
dequant_prepare(const struct view *v, uint64_t ino, uint64_t *size)
{
	const struct view *c = child(v);
	struct stat st;
	int rc;

	*size = 0;
	if (!c)
		return built(v) ? 0 : -ENOMEM;
	if (ino == v->ino_dequant)
		return 0;
	rc = c->ops->stat(c, local(v, ino), &st);
	if (rc == -ENOMEM)
		return rc;
	*size = rc ? 0 : (uint64_t)st.st_size;
	return 0;
}

static uint64_t
dequant_subdirs(const struct view *v, uint64_t ino)
{
	const struct view *c = child(v);
	struct stat st;

	if (!c || c->ops->stat(c, local(v, ino), &st) || st.st_nlink < 2)
		return 0;
	return (uint64_t)st.st_nlink - 2;
}

/* ino 0 asks whether the view has a file whose content changes: the
 * derived model's .stfs/stats.json changes when the model's own does,
 * which answers for both, so nothing is built to say no. */
static int
dequant_is_volatile(const struct view *v, uint64_t ino)
{
	const struct view *c;

	if (!v->dequant || ino == 0)
		return 0;
	c = child(v);
	return c ? c->ops->is_volatile(c, local(v, ino)) : 0;
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
	const struct view *c;
	const struct model *dm;
	const struct quant *q;
	size_t k, j;
	int any = 0;

	/* not built: none of its files, nor a replaced tensor's mirror
	 * file, was ever read */
	if (!v->dequant || !__atomic_load_n(&v->dequant->built,
					    __ATOMIC_ACQUIRE) ||
	    !v->dequant->child)
		return;
	c = v->dequant->child;
	dm = v->dequant->model;
	q = quant_model_quant(dm);
	c->ops->for_source(c, src, shift_fn, &s);
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
		c->ops->for_source(c, dm->shards[dm->nshards - 1].src,
				   shift_fn, &s);
}

const struct model_tensor *
view_dequant_mirror(const struct view *v, size_t i, const struct view **mv)
{
	const struct view *c;
	size_t r;

	*mv = v;
	if (!v->dequant)
		return &v->model->tensors[i];
	if (!(c = child(v)))
		return built(v) ? &v->model->tensors[i] : NULL;
	r = quant_model_replacement(v->dequant->model, i);
	if (r == SIZE_MAX)
		return &v->model->tensors[i];
	*mv = c;
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
	.prepare = dequant_prepare,
	.is_volatile = dequant_is_volatile,
	.for_source = dequant_for_source,
};
