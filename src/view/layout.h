/* layout.h - which directory each tensor's files go in, and their names.
 *
 * Flat layout (the default): every tensor in the root, named
 * names_encode(name) (see names.h).
 *
 * Tree layout (-o tree): a name is split at every '.', the components
 * but the last are directories and the last is the file, each component
 * encoded on its own with the names.h rules:
 *
 *   model.layers.0.mlp.down_proj.weight -> model/layers/0/mlp/down_proj/weight
 *
 * Components hold no '.', so rules 2 and 3 never apply; an empty
 * component ("a..b", "x.", ".x") is "%" (rule 5); a "__*__" component
 * gets %5F (rule 4), so names of that form never come from a tensor.
 *
 * Leaf and prefix: when a tensor's path is also a directory (a.b next to
 * a.b.c), the directory keeps the name and the tensor is the file
 * LAYOUT_SELF inside it:
 *
 *   a.b    -> a/b/__tensor__
 *   a.b.c  -> a/b/c
 *
 * Reversing: drop a last "/__tensor__", replace '/' by '.', undo the
 * %XX escapes of each component ("%" alone is the empty component).
 * Like flat names, only rule-6 (hashed) components can make two tensors
 * meet; layout_build() refuses such a model.
 *
 * Directories are numbered in order of first appearance (0 is the root),
 * subdirectories and files listed in that order and in model order.
 */
#ifndef STFS_LAYOUT_H
#define STFS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct model;

#define LAYOUT_SELF "__tensor__"
#define LAYOUT_ROOT 0

struct layout_dir {
	const char *name;	/* encoded component (not NUL-terminated) */
	uint32_t name_len;
	uint32_t parent;	/* the root is its own parent */
	uint32_t sub, nsub;	/* subdirectories: subs[sub .. sub + nsub) */
	uint32_t file, nfile;	/* tensors: files[file .. file + nfile) */
};

struct layout_leaf {
	const char *name;	/* encoded file name (not NUL-terminated) */
	uint32_t name_len;
	uint32_t dir;
};

struct layout {
	int tree;
	size_t ntensors;
	struct layout_leaf *leaves;	/* one per tensor, model order */
	size_t ndirs;
	struct layout_dir *dirs;	/* dirs[0] is the root */
	uint32_t *subs;		/* directory indexes grouped by parent */
	uint32_t *files;	/* tensor indexes grouped by directory; NULL
				   in the flat layout (the root holds 0..n-1) */
	void *priv;		/* name arena, lookup table */
};

/* Lay out the tensors of m.  Fails with ERR_USAGE when two tensors get
 * the same path, or with ERR_NO_MEMORY.  0 with *out set, or -1 with *e.
 * The layout points into m's tensor names: m must outlive it. */
int layout_build(const struct model *m, int tree, struct layout **out,
		 struct err *e);

void layout_free(struct layout *l);

enum layout_hit {
	LAYOUT_NONE,
	LAYOUT_TENSOR,
	LAYOUT_DIR,
};

/* What name[0..len) is in directory dir: a tensor's file or a
 * subdirectory, with its index in *idx.  O(1). */
enum layout_hit layout_find(const struct layout *l, uint32_t dir,
			    const char *name, size_t len, uint32_t *idx);

/* The tensor index of the k-th file of dir (k < dirs[dir].nfile). */
static inline uint32_t
layout_file(const struct layout *l, uint32_t dir, uint64_t k)
{
	return l->files ? l->files[l->dirs[dir].file + k] : (uint32_t)k;
}

#endif
