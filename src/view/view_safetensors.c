/* view_safetensors.c - the hidden .safetensors/ directory (struct
 * view_hidden, view_kinds.h): the model's virtual safetensors files
 * (repack.h), as files.
 *
 *   .safetensors/model.safetensors         the whole model, every shard
 *   .safetensors/PREFIX.safetensors        the tensors named PREFIX.*
 *   .safetensors/strip/PREFIX.safetensors  the same, "PREFIX." removed
 *   .safetensors/bf16/model.safetensors    in .dequant/ only (a derived
 *                                          model, model/quant_model.h):
 *                                          the whole model with its
 *                                          logical tensors BF16, not F32
 *
 * PREFIX is written names_encode(PREFIX) (names.h) followed by
 * ".safetensors"; when that would not fit in 255 bytes (or names_encode
 * had to hash it) the name is "%~" and the 16 hex digits of the FNV-1a
 * hash of the prefix instead.  The prefix "model" has no file with its
 * name kept (model.safetensors is the whole model); its stripped file
 * exists.  A prefix whose stripped file would hold a tensor named
 * "__metadata__" has no stripped file.
 *
 * Inodes, a range after the view's others: ino_safetensors is
 * .safetensors/, + 1 strip/, + 2 model.safetensors, and prefix id p (1..)
 * + 1 + 2p (names kept) and + 2 + 2p (stripped); then, in .dequant/,
 * bf16/ and its model.safetensors.
 * The number of prefixes is bounded at build by the number of '.' bytes
 * in the names (one pass over the names, nothing else); the prefix table
 * itself (repack_open: a sort of the names) is built on the first lookup or
 * listing inside .safetensors/, so mounting costs what it did before; the
 * BF16 model behind bf16/ (the quantized weights found again, their
 * values rounded when read) on the first lookup inside bf16/.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "model/quant_model.h"
#include "view/names.h"
#include "view/view.h"
#include "view/view_kinds.h"
#include "model/repack.h"
#include "view/view_repack.h"

#define SAFETENSORS_DIR ".safetensors"
#define STRIP_DIR "strip"
#define SUFFIX ".safetensors"
#define SUFFIX_LEN 12
#define WHOLE_NAME "model.safetensors"
#define BF16_DIR "bf16"
#define HASH_NAME_LEN (2 + 16)	/* "%~" and 16 hex digits */

struct view_safetensors {
	pthread_mutex_t lock;
	struct repack *repack;	/* NULL until first needed; then fixed */
	uint64_t pmax;		/* bound on the number of prefixes */
	/* ids not listed, ascending: in .safetensors/ (the prefix
	 * "model"), in strip/ (prefixes that cannot be stripped) */
	size_t nskip_kept, nskip_strip;
	size_t *skip_kept, *skip_strip;
	/* bf16/: the view's model is a derived one; its BF16 twin and
	 * repack, built once (bf16_built, atomic), NULL when none */
	int bf16;
	int bf16_built;
	struct model *bf16_model;
	struct repack *bf16_repack;
};

/* --- build ------------------------------------------------------------- */

static int
safetensors_build(struct view *v, struct err *e)
{
	const struct model *m = v->model;
	struct view_safetensors *s;
	uint64_t dots = 0;
	size_t i;

	for (i = 0; i < m->ntensors; i++) {
		const char *p = m->tensors[i].t->name;
		const char *end = p + m->tensors[i].t->name_len;

		while ((p = memchr(p, '.', (size_t)(end - p)))) {
			dots++;
			p++;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	s->pmax = dots;
	s->bf16 = quant_model_base(m) != NULL;
	v->safetensors = s;
	v->ino_safetensors = v->ninodes + 1;
	v->ninodes = v->ino_safetensors + 2 + 2 * dots + (s->bf16 ? 2 : 0);
	return 0;
}

static void
safetensors_free(struct view *v)
{
	struct view_safetensors *s = v->safetensors;

	if (!s)
		return;
	repack_free(s->repack);
	repack_free(s->bf16_repack);
	model_free(s->bf16_model);
	pthread_mutex_destroy(&s->lock);
	free(s->skip_kept);
	free(s->skip_strip);
	free(s);
	v->safetensors = NULL;
}

/* The prefix table, built once; NULL when out of memory (then the view
 * shows an empty .safetensors/ and logs nothing: the next call retries). */
static struct repack *
get(const struct view *v)
{
	struct view_safetensors *s = v->safetensors;
	struct repack *t = __atomic_load_n(&s->repack, __ATOMIC_ACQUIRE);
	struct err e = { 0 };
	size_t id, np, nk = 0, ns = 0;

	if (t)
		return t;
	pthread_mutex_lock(&s->lock);
	t = s->repack;
	if (!t && repack_open(v->model, &t, &e) == 0) {
		np = repack_nprefixes(t);
		free(s->skip_kept);
		free(s->skip_strip);
		s->skip_kept = malloc(sizeof(size_t));
		s->skip_strip = NULL;
		id = repack_find(t, "model", 5);
		if (id && s->skip_kept)
			s->skip_kept[nk++] = id;
		for (id = 1; id <= np; id++) {
			size_t *q;

			if (repack_offered(t, id, 1))
				continue;
			q = realloc(s->skip_strip, (ns + 1) * sizeof(*q));
			if (!q)
				break;
			s->skip_strip = q;
			s->skip_strip[ns++] = id;
		}
		if (!s->skip_kept || id <= np) {
			repack_free(t);
			t = NULL;
		} else {
			s->nskip_kept = nk;
			s->nskip_strip = ns;
			__atomic_store_n(&s->repack, t, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return t;
}

/* The repack of the BF16 twin of the view's derived model, built once;
 * NULL when there is none, or when it could not be built for want of
 * memory (then nothing is kept and the next call tries again: bf16_built
 * tells the two apart). */
static struct repack *
get_bf16(const struct view *v)
{
	struct view_safetensors *s = v->safetensors;
	struct err e = { 0 };
	struct model *bm = NULL;
	struct repack *t = NULL;

	if (__atomic_load_n(&s->bf16_built, __ATOMIC_ACQUIRE))
		return s->bf16_repack;
	pthread_mutex_lock(&s->lock);
	if (!s->bf16_built) {
		if (quant_model_open(quant_model_base(v->model), DTYPE_BF16,
				     &bm, &e) == 0 && bm &&
		    repack_open(bm, &t, &e) != 0)
			t = NULL;
		if (!t) {
			model_free(bm);
			bm = NULL;
		}
		if (t || e.code != ERR_NO_MEMORY) {
			s->bf16_model = bm;
			s->bf16_repack = t;
			__atomic_store_n(&s->bf16_built, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return s->bf16_repack;
}

/* --- inodes -------------------------------------------------------------- */

enum node { N_NONE, N_DIR, N_STRIP, N_FILE, N_BF16_DIR, N_BF16_FILE };

/* bf16/ and its file: after the prefixes' inodes. */
static uint64_t
bf16_ino(const struct view *v)
{
	return v->ino_safetensors + 3 + 2 * v->safetensors->pmax;
}

/* What ino is; for a file, its prefix id and strip flag.  Does not
 * build the prefix table: inodes of files are only handed out by
 * lookup and listing, which do. */
static enum node
node_of(const struct view *v, uint64_t ino, size_t *id, int *strip)
{
	uint64_t k;

	if (!v->ino_safetensors || ino < v->ino_safetensors)
		return N_NONE;
	if (v->safetensors->bf16 && ino == bf16_ino(v))
		return N_BF16_DIR;
	if (v->safetensors->bf16 && ino == bf16_ino(v) + 1)
		return N_BF16_FILE;
	if (ino > v->ino_safetensors + 2 + 2 * v->safetensors->pmax)
		return N_NONE;
	if (ino == v->ino_safetensors)
		return N_DIR;
	if (ino == v->ino_safetensors + 1)
		return N_STRIP;
	/* 0: whole; 2p - 1 kept, 2p strip */
	k = ino - v->ino_safetensors - 2;
	*id = (size_t)((k + 1) / 2);
	*strip = k && k % 2 == 0;
	return N_FILE;
}

static uint64_t
file_ino(const struct view *v, size_t id, int strip)
{
	if (id == REPACK_WHOLE)
		return v->ino_safetensors + 2;
	return v->ino_safetensors + 1 + 2 * (uint64_t)id + (strip ? 1 : 0);
}

static int
safetensors_owns(const struct view *v, uint64_t ino)
{
	size_t id;
	int strip;

	return node_of(v, ino, &id, &strip) != N_NONE;
}

/* 1 when the file exists: its prefix exists and is listed. */
static int
exists(const struct view *v, size_t id, int strip)
{
	const struct view_safetensors *s = v->safetensors;
	struct repack *t = get(v);
	size_t i;

	if (!t || id > repack_nprefixes(t))
		return 0;
	if (id == REPACK_WHOLE)
		return !strip;
	for (i = 0; !strip && i < s->nskip_kept; i++)
		if (s->skip_kept[i] == id)
			return 0;
	return repack_offered(t, id, strip);
}

static enum view_kind
safetensors_kind(const struct view *v, uint64_t ino)
{
	const struct view_safetensors *s = v->safetensors;
	size_t id = 0;
	int strip = 0;

	switch (node_of(v, ino, &id, &strip)) {
	case N_DIR:
	case N_STRIP:
	case N_BF16_DIR:
		return VIEW_DIR;
	case N_FILE:
		if (__atomic_load_n(&s->repack, __ATOMIC_ACQUIRE) &&
		    !exists(v, id, strip))
			return VIEW_NONE;
		return id <= s->pmax ? VIEW_HIDDEN_FILE : VIEW_NONE;
	case N_BF16_FILE:
		if (__atomic_load_n(&s->bf16_built, __ATOMIC_ACQUIRE) &&
		    !s->bf16_repack)
			return VIEW_NONE;
		return VIEW_HIDDEN_FILE;
	default:
		return VIEW_NONE;
	}
}

/* --- names ----------------------------------------------------------------- */

/* The file name of (id) without the directory, NUL-terminated. */
static size_t
file_name(const struct repack *t, size_t id, char out[VIEW_NAME_MAX + 1])
{
	char enc[NAMES_MAX + 1];
	const char *p;
	size_t plen, n;

	if (id == REPACK_WHOLE) {
		memcpy(out, WHOLE_NAME, sizeof(WHOLE_NAME));
		return sizeof(WHOLE_NAME) - 1;
	}
	p = repack_prefix(t, id, &plen);
	n = names_encode(p, plen, enc);
	if (n + SUFFIX_LEN > VIEW_NAME_MAX || memmem(enc, n, "%~", 2)) {
		/* too long for a file name: the hash alone */
		n = (size_t)snprintf(out, VIEW_NAME_MAX + 1, "%%~%016llx",
				     (unsigned long long)names_fnv1a(p, plen));
	} else {
		memcpy(out, enc, n);
	}
	memcpy(out + n, SUFFIX, SUFFIX_LEN + 1);
	return n + SUFFIX_LEN;
}

/* The prefix id a file name in .safetensors/ or strip/ names, or 0 (the
 * whole model is handled by the caller). */
static size_t
id_of_name(const struct repack *t, const char *name, size_t len)
{
	char dec[VIEW_NAME_MAX], back[VIEW_NAME_MAX + 1];
	size_t dlen, id, np;

	if (len <= SUFFIX_LEN || len > VIEW_NAME_MAX ||
	    memcmp(name + len - SUFFIX_LEN, SUFFIX, SUFFIX_LEN) != 0)
		return 0;
	if (len - SUFFIX_LEN == HASH_NAME_LEN && name[0] == '%' &&
	    name[1] == '~') {
		/* Only prefixes of 82 bytes or more can need a hashed name
		 * (an encoded byte takes at most 3): a rare, linear path. */
		np = repack_nprefixes(t);
		for (id = 1; id <= np; id++) {
			size_t plen;

			repack_prefix(t, id, &plen);
			if (plen >= (VIEW_NAME_MAX - SUFFIX_LEN) / 3 &&
			    file_name(t, id, back) == len &&
			    memcmp(back, name, len) == 0)
				return id;
		}
		return 0;
	}
	if (names_decode(name, len - SUFFIX_LEN, dec, &dlen) != 0)
		return 0;
	id = repack_find(t, dec, dlen);
	/* only the canonical spelling names the file */
	if (!id || file_name(t, id, back) != len ||
	    memcmp(back, name, len) != 0)
		return 0;
	return id;
}

static struct repack *file_of(const struct view *v, uint64_t ino,
			      size_t *id, int *strip);
static uint64_t safetensors_size(const struct view *v, uint64_t ino);

/* The size of file ino: 0; -ENOENT when it is none, or refused
 * (repack_size: a header over 100 MB, tensors past REPACK_DATA_MAX, a
 * tensor named __metadata__); -ENOMEM when it could not be computed now
 * (a size computed is kept: repack_size). */
static int
file_size(const struct view *v, uint64_t ino, uint64_t *size)
{
	struct err e = { 0 };
	struct repack *t;
	size_t id;
	int strip;

	t = file_of(v, ino, &id, &strip);
	if (!t) {
		if (node_of(v, ino, &id, &strip) == N_BF16_FILE)
			return __atomic_load_n(&v->safetensors->bf16_built,
					       __ATOMIC_ACQUIRE) ? -ENOENT :
			       -ENOMEM;
		return __atomic_load_n(&v->safetensors->repack,
				       __ATOMIC_ACQUIRE) ? -ENOENT : -ENOMEM;
	}
	if (repack_size(t, id, strip, size, &e))
		return e.code == ERR_NO_MEMORY ? -ENOMEM : -ENOENT;
	return 0;
}

/* File ino, if it has a size (0, VIEW_INO_AGAIN: file_size). */
static uint64_t
sized(const struct view *v, uint64_t ino)
{
	uint64_t size;
	int rc = file_size(v, ino, &size);

	return rc == -ENOMEM ? VIEW_INO_AGAIN : rc ? 0 : ino;
}

static uint64_t
safetensors_lookup(const struct view *v, uint64_t parent, const char *name,
		   size_t len)
{
	struct repack *t;
	size_t id = 0;
	int strip = 0;
	enum node n = node_of(v, parent, &id, &strip);

	if (n == N_BF16_DIR)
		return len == sizeof(WHOLE_NAME) - 1 &&
		       memcmp(name, WHOLE_NAME, len) == 0 ?
		       sized(v, bf16_ino(v) + 1) : 0;
	if (n != N_DIR && n != N_STRIP)
		return 0;
	strip = n == N_STRIP;
	if (!strip && len == 5 && memcmp(name, STRIP_DIR, 5) == 0)
		return v->ino_safetensors + 1;
	if (!strip && v->safetensors->bf16 && len == sizeof(BF16_DIR) - 1 &&
	    memcmp(name, BF16_DIR, len) == 0)
		return bf16_ino(v);
	t = get(v);
	if (!t)
		return VIEW_INO_AGAIN;	/* get(): only for want of memory */
	if (!strip && len == sizeof(WHOLE_NAME) - 1 &&
	    memcmp(name, WHOLE_NAME, len) == 0)
		id = REPACK_WHOLE;
	else if (!(id = id_of_name(t, name, len)) || !exists(v, id, strip))
		return 0;
	return sized(v, file_ino(v, id, strip));
}

static uint64_t
safetensors_nchildren(const struct view *v, uint64_t dir)
{
	const struct view_safetensors *s = v->safetensors;
	struct repack *t;
	size_t id;
	int strip;
	enum node n = node_of(v, dir, &id, &strip);

	if (n == N_BF16_DIR)
		return safetensors_size(v, bf16_ino(v) + 1) ? 1 : 0;
	if (n != N_DIR && n != N_STRIP)
		return 0;
	t = get(v);
	if (!t)
		return n == N_DIR ? 1 : 0;
	if (n == N_DIR)
		return 2 + (uint64_t)s->bf16 + repack_nprefixes(t) -
		       s->nskip_kept;
	return repack_nprefixes(t) - s->nskip_strip;
}

/* The k-th listed id (0-based) of a list with the ids skip[0..n) left
 * out (ascending). */
static size_t
nth_id(size_t k, const size_t *skip, size_t n)
{
	size_t id = k + 1, i;

	for (i = 0; i < n && skip[i] <= id; i++)
		id++;
	return id;
}

static uint64_t
safetensors_child(const struct view *v, uint64_t dir, uint64_t k)
{
	const struct view_safetensors *s = v->safetensors;
	size_t id;
	int strip;
	enum node n = node_of(v, dir, &id, &strip);

	if (k >= safetensors_nchildren(v, dir))
		return 0;
	if (n == N_BF16_DIR)
		return bf16_ino(v) + 1;
	if (n == N_DIR) {
		/* model.safetensors, strip/, bf16/, then the prefixes */
		if (k == 0)
			return file_ino(v, REPACK_WHOLE, 0);
		if (k == 1)
			return v->ino_safetensors + 1;
		if (k == 2 && s->bf16)
			return bf16_ino(v);
		return file_ino(v, nth_id((size_t)k - 2 - (size_t)s->bf16,
					  s->skip_kept, s->nskip_kept), 0);
	}
	return file_ino(v, nth_id((size_t)k, s->skip_strip, s->nskip_strip),
			1);
}

static size_t
safetensors_name(const struct view *v, uint64_t ino,
		 char out[VIEW_NAME_MAX + 1])
{
	struct repack *t;
	size_t id = 0;
	int strip = 0;

	switch (node_of(v, ino, &id, &strip)) {
	case N_DIR:
		memcpy(out, SAFETENSORS_DIR, sizeof(SAFETENSORS_DIR));
		return sizeof(SAFETENSORS_DIR) - 1;
	case N_STRIP:
		memcpy(out, STRIP_DIR, sizeof(STRIP_DIR));
		return sizeof(STRIP_DIR) - 1;
	case N_BF16_DIR:
		memcpy(out, BF16_DIR, sizeof(BF16_DIR));
		return sizeof(BF16_DIR) - 1;
	case N_BF16_FILE:
		if (!get_bf16(v))
			break;
		memcpy(out, WHOLE_NAME, sizeof(WHOLE_NAME));
		return sizeof(WHOLE_NAME) - 1;
	case N_FILE:
		t = get(v);
		if (t && exists(v, id, strip))
			return file_name(t, id, out);
		/* fall through */
	default:
		break;
	}
	out[0] = '\0';
	return 0;
}

static uint64_t
safetensors_subdirs(const struct view *v, uint64_t ino)
{
	return ino == v->ino_safetensors ? 1 + (uint64_t)v->safetensors->bf16 :
	       0;
}

/* The repack and (id, strip) of file ino, or NULL when it is none (or
 * not offered). */
static struct repack *
file_of(const struct view *v, uint64_t ino, size_t *id, int *strip)
{
	struct repack *t;

	*id = REPACK_WHOLE;
	*strip = 0;
	switch (node_of(v, ino, id, strip)) {
	case N_FILE:
		t = get(v);
		return t && exists(v, *id, *strip) ? t : NULL;
	case N_BF16_FILE:
		return get_bf16(v);
	default:
		return NULL;
	}
}

static uint64_t
safetensors_size(const struct view *v, uint64_t ino)
{
	uint64_t size;

	return file_size(v, ino, &size) ? 0 : size;
}

/* stat() of ino: the prefix table (a directory's listing, a file's
 * name), the BF16 twin for bf16/, a file's size. */
static int
safetensors_prepare(const struct view *v, uint64_t ino, uint64_t *size)
{
	size_t id;
	int strip, rc;

	*size = 0;
	switch (node_of(v, ino, &id, &strip)) {
	case N_DIR:
	case N_STRIP:
		return get(v) ? 0 : -ENOMEM;
	case N_BF16_DIR:
		return get_bf16(v) || __atomic_load_n(
			&v->safetensors->bf16_built, __ATOMIC_ACQUIRE) ? 0 :
		       -ENOMEM;
	case N_FILE:
	case N_BF16_FILE:
		rc = file_size(v, ino, size);
		if (rc)
			*size = 0;
		return rc == -ENOMEM ? rc : 0;
	default:
		return 0;
	}
}

static int
safetensors_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
		 struct view_segs *out)
{
	struct repack *t;
	uint64_t len;
	size_t id;
	int strip, rc;

	/* its size first: a file short of memory is ENOMEM, not absent */
	rc = file_size(v, ino, &len);
	if (rc)
		return rc;
	t = file_of(v, ino, &id, &strip);
	if (!t)
		return -ENOENT;
	return view_repack_read(v, t, id, strip, off, size, out);
}

/* A changed source: every virtual file that was handed out may hold its
 * bytes; dropping the kernel's pages of all of them is simpler than
 * finding which, and sources change rarely. */
static void
safetensors_for_source(const struct view *v, const struct source *src,
		       void (*fn)(uint64_t ino, void *arg), void *arg)
{
	struct repack *t;
	size_t id, np;
	int strip;

	(void)src;
	if (!v->ino_safetensors)
		return;
	if (__atomic_load_n(&v->safetensors->bf16_built, __ATOMIC_ACQUIRE) &&
	    v->safetensors->bf16_repack)
		fn(bf16_ino(v) + 1, arg);
	t = __atomic_load_n(&v->safetensors->repack, __ATOMIC_ACQUIRE);
	if (!t)
		return;		/* no file was ever looked up */
	fn(file_ino(v, REPACK_WHOLE, 0), arg);
	np = repack_nprefixes(t);
	for (id = 1; id <= np; id++)
		for (strip = 0; strip < 2; strip++)
			if (exists(v, id, strip))
				fn(file_ino(v, id, strip), arg);
}

static uint64_t
safetensors_root(const struct view *v)
{
	return v->ino_safetensors;
}

const struct view_hidden view_safetensors_dir = {
	.dir = SAFETENSORS_DIR,
	.build = safetensors_build,
	.free = safetensors_free,
	.root = safetensors_root,
	.owns = safetensors_owns,
	.kind = safetensors_kind,
	.lookup = safetensors_lookup,
	.nchildren = safetensors_nchildren,
	.child = safetensors_child,
	.name = safetensors_name,
	.size = safetensors_size,
	.read = safetensors_read,
	.subdirs = safetensors_subdirs,
	.prepare = safetensors_prepare,
	.for_source = safetensors_for_source,
};
