/* layout.c - flat and tree layouts of a model's tensors (see layout.h). */
#include "view/layout.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "view/names.h"
#include "base/nametab.h"

/* The lookup table holds ids: tensor i is i + 1, directory d is
 * ntensors + 1 + d (the root is never looked up). */
struct layout_priv {
	char *arena;		/* encoded names that differ from the bytes
				   of the tensor name they come from */
	size_t arena_len;
	size_t dirs_cap;
	struct nametab tab;	/* (directory, name) -> id */
};

static inline struct layout_priv *
priv(const struct layout *l)
{
	return l->priv;
}

/* --- lookup table ---------------------------------------------------------- */

static void
key_of(const struct layout *l, uint32_t id, uint32_t *dir, const char **name,
       uint32_t *len)
{
	if (id <= l->ntensors) {
		const struct layout_leaf *lf = &l->leaves[id - 1];

		*dir = lf->dir;
		*name = lf->name;
		*len = lf->name_len;
	} else {
		const struct layout_dir *d = &l->dirs[id - 1 - l->ntensors];

		*dir = d->parent;
		*name = d->name;
		*len = d->name_len;
	}
}

/* nametab callback: is id the entry (k->space, k->name)? */
static int
id_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const char *kn;
	uint32_t kd, kl;

	key_of(ctx, id, &kd, &kn, &kl);
	return kd == k->space && kl == k->len && memcmp(kn, k->name, kl) == 0;
}

/* The id of (dir, name), or 0. */
static uint32_t
lookup(const struct layout *l, uint32_t dir, const char *name, size_t len)
{
	struct nametab_key k;
	long id;

	nametab_key(&k, dir, name, len);
	id = nametab_find(&priv(l)->tab, &k);
	return id < 0 ? 0 : (uint32_t)id;
}

/* Insert id; its key must be absent (callers look first). */
static int
insert(struct layout *l, uint32_t id)
{
	struct nametab_key k;
	const char *kn;
	uint32_t kd, kl;

	key_of(l, id, &kd, &kn, &kl);
	nametab_key(&k, kd, kn, kl);
	return nametab_put(&priv(l)->tab, &k, id) == -2 ? -1 : 0;
}

enum layout_hit
layout_find(const struct layout *l, uint32_t dir, const char *name,
	    size_t len, uint32_t *idx)
{
	uint32_t id;

	if (len == 0 || len > NAMES_MAX || dir >= l->ndirs)
		return LAYOUT_NONE;
	id = lookup(l, dir, name, len);
	if (!id)
		return LAYOUT_NONE;
	if (id <= l->ntensors) {
		*idx = id - 1;
		return LAYOUT_TENSOR;
	}
	*idx = id - 1 - (uint32_t)l->ntensors;
	return LAYOUT_DIR;
}

/* --- names ------------------------------------------------------------------ */

/* Bytes the arena needs for the components (tree) or names (flat) of
 * every tensor that do not encode to themselves. */
static size_t
arena_size(const struct model *m, int tree)
{
	char enc[NAMES_MAX + 1];
	size_t i, total = 0;

	for (i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;
		const char *s = t->name, *end = t->name + t->name_len, *dot;

		if (!tree) {
			if (!names_is_identity(s, t->name_len))
				total += names_encode(s, t->name_len, enc);
			continue;
		}
		for (;;) {
			dot = memchr(s, '.', (size_t)(end - s));
			if (!dot)
				dot = end;
			if (!names_is_identity(s, (size_t)(dot - s)))
				total += names_encode(s, (size_t)(dot - s), enc);
			if (dot == end)
				break;
			s = dot + 1;
		}
	}
	return total;
}

/* The encoding of s[0..len): s itself when it encodes to itself, else a
 * copy in the arena (made only when keep is set; otherwise enc holds it
 * for a lookup). */
static const char *
encode(struct layout *l, const char *s, size_t len, char enc[NAMES_MAX + 1],
       uint32_t *out_len, int keep)
{
	struct layout_priv *p = priv(l);
	size_t n;
	char *dst;

	if (names_is_identity(s, len)) {
		*out_len = (uint32_t)len;
		return s;
	}
	n = names_encode(s, len, enc);
	*out_len = (uint32_t)n;
	if (!keep)
		return enc;
	dst = p->arena + p->arena_len;
	memcpy(dst, enc, n);
	p->arena_len += n;
	return dst;
}

/* --- build ----------------------------------------------------------------- */

static int
collision(const struct layout *l, const struct model *m, uint32_t id,
	  size_t b, struct err *e)
{
	const struct tensor *tb = m->tensors[b].t;
	char qa[160], qb[160];

	if (id > l->ntensors)
		return err_set(e, ERR_USAGE, "tensor %s and a directory map "
			       "to the same path; stfs cannot mount this model",
			       err_quote(qb, sizeof(qb), tb->name,
					 tb->name_len));
	return err_set(e, ERR_USAGE, "tensors %s and %s map to the same %s; "
		       "stfs cannot mount this model",
		       err_quote(qa, sizeof(qa), m->tensors[id - 1].t->name,
				 m->tensors[id - 1].t->name_len),
		       err_quote(qb, sizeof(qb), tb->name, tb->name_len),
		       l->tree ? "path" : "file name");
}

static int
add_dir(struct layout *l, uint32_t parent, const char *name, uint32_t len,
	uint32_t *out)
{
	struct layout_priv *p = priv(l);
	struct layout_dir *d;

	/* ids are 32-bit */
	if (l->ndirs >= UINT32_MAX - l->ntensors - 2)
		return -1;
	if (l->ndirs == p->dirs_cap) {
		size_t cap = p->dirs_cap * 2;

		d = realloc(l->dirs, cap * sizeof(*d));
		if (!d)
			return -1;
		l->dirs = d;
		p->dirs_cap = cap;
	}
	d = &l->dirs[l->ndirs];
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->name_len = len;
	d->parent = parent;
	*out = (uint32_t)l->ndirs++;
	return insert(l, (uint32_t)(l->ntensors + 1 + *out));
}

/* Tree: make the directories of every name, and set each leaf's name
 * and directory. */
static int
build_dirs(struct layout *l, const struct model *m)
{
	char enc[NAMES_MAX + 1];
	size_t i;

	for (i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;
		const char *s = t->name, *end = t->name + t->name_len, *dot;
		uint32_t dir = LAYOUT_ROOT, n, id;
		const char *c;

		while ((dot = memchr(s, '.', (size_t)(end - s))) != NULL) {
			c = encode(l, s, (size_t)(dot - s), enc, &n, 0);
			id = lookup(l, dir, c, n);
			if (id) {
				/* only directories are in the table yet */
				dir = id - 1 - (uint32_t)l->ntensors;
			} else {
				c = encode(l, s, (size_t)(dot - s), enc, &n, 1);
				if (add_dir(l, dir, c, n, &dir))
					return -1;
			}
			s = dot + 1;
		}
		l->leaves[i].name = encode(l, s, (size_t)(end - s), enc,
					   &l->leaves[i].name_len, 1);
		l->leaves[i].dir = dir;
	}
	return 0;
}

/* Put every tensor in the table; a tree leaf whose path is a directory
 * becomes LAYOUT_SELF inside it. */
static int
place_leaves(struct layout *l, const struct model *m, struct err *e)
{
	size_t i;

	for (i = 0; i < m->ntensors; i++) {
		struct layout_leaf *lf = &l->leaves[i];
		uint32_t id = lookup(l, lf->dir, lf->name, lf->name_len);

		if (id > l->ntensors && l->tree) {
			lf->dir = id - 1 - (uint32_t)l->ntensors;
			lf->name = LAYOUT_SELF;
			lf->name_len = (uint32_t)strlen(LAYOUT_SELF);
			id = lookup(l, lf->dir, lf->name, lf->name_len);
		}
		if (id)
			return collision(l, m, id, i, e);
		if (insert(l, (uint32_t)(i + 1)))
			return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	return 0;
}

/* Listing order: counts, then starts, then fill in order. */
static int
build_lists(struct layout *l)
{
	uint32_t s = 0, f = 0;
	size_t d, i;

	if (!l->tree) {
		l->dirs[0].nfile = (uint32_t)l->ntensors;
		return 0;
	}
	l->subs = malloc((l->ndirs ? l->ndirs : 1) * sizeof(*l->subs));
	l->files = malloc((l->ntensors ? l->ntensors : 1) * sizeof(*l->files));
	if (!l->subs || !l->files)
		return -1;
	for (d = 1; d < l->ndirs; d++)
		l->dirs[l->dirs[d].parent].nsub++;
	for (i = 0; i < l->ntensors; i++)
		l->dirs[l->leaves[i].dir].nfile++;
	for (d = 0; d < l->ndirs; d++) {
		l->dirs[d].sub = s;
		l->dirs[d].file = f;
		s += l->dirs[d].nsub;
		f += l->dirs[d].nfile;
		l->dirs[d].nsub = 0;
		l->dirs[d].nfile = 0;
	}
	for (d = 1; d < l->ndirs; d++) {
		struct layout_dir *p = &l->dirs[l->dirs[d].parent];

		l->subs[p->sub + p->nsub++] = (uint32_t)d;
	}
	for (i = 0; i < l->ntensors; i++) {
		struct layout_dir *p = &l->dirs[l->leaves[i].dir];

		l->files[p->file + p->nfile++] = (uint32_t)i;
	}
	return 0;
}

int
layout_build(const struct model *m, int tree, struct layout **out,
	     struct err *e)
{
	struct layout_priv *p;
	struct layout *l;
	size_t i;

	if (m->ntensors > UINT32_MAX / 4)
		return err_set(e, ERR_USAGE, "too many tensors (%zu)",
			       m->ntensors);
	l = calloc(1, sizeof(*l));
	if (!l)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	l->tree = tree;
	l->ntensors = m->ntensors;
	l->priv = p = calloc(1, sizeof(*p));
	l->leaves = calloc(m->ntensors ? m->ntensors : 1, sizeof(*l->leaves));
	l->dirs = calloc(16, sizeof(*l->dirs));
	if (p) {
		p->dirs_cap = 16;
		p->arena = malloc(arena_size(m, tree) + 1);
	}
	if (!p || !l->leaves || !l->dirs || !p->arena ||
	    nametab_init(&p->tab, m->ntensors, id_eq, l) < 0)
		goto oom;
	l->ndirs = 1;		/* the root, all zero: its own parent */

	if (tree) {
		if (build_dirs(l, m))
			goto oom;
	} else {
		char enc[NAMES_MAX + 1];

		for (i = 0; i < m->ntensors; i++) {
			const struct tensor *t = m->tensors[i].t;

			l->leaves[i].name = encode(l, t->name, t->name_len,
						   enc,
						   &l->leaves[i].name_len, 1);
		}
	}
	if (place_leaves(l, m, e))
		goto fail;
	if (build_lists(l))
		goto oom;
	*out = l;
	return 0;
oom:
	err_set(e, ERR_NO_MEMORY, "out of memory");
fail:
	layout_free(l);
	return -1;
}

void
layout_free(struct layout *l)
{
	if (!l)
		return;
	if (l->priv) {
		free(priv(l)->arena);
		nametab_free(&priv(l)->tab);
		free(l->priv);
	}
	free(l->leaves);
	free(l->dirs);
	free(l->subs);
	free(l->files);
	free(l);
}
