/* view.c - the immutable node table of a mounted model (flat layout). */
#include "view.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dtype.h"
#include "error.h"
#include "model.h"
#include "names.h"
#include "summary.h"

#define META_NAME "__metadata__.json"
#define SUMMARY_NAME "__summary__.json"
#define SHARDS_NAME "__shards__"

#define INO_META 2
#define INO_SUMMARY 3
#define INO_FIRST_TENSOR 4	/* tensor i: 4 + 2i data, 5 + 2i sidecar */

struct view_priv {
	char *arena;		/* encoded names that differ from the tensor's */
	uint32_t *slots;	/* open addressing: tensor index + 1, 0 = free */
	uint64_t mask;
};

static inline struct view_priv *
priv(const struct view *v)
{
	return v->priv;
}

static inline uint64_t
tensor_of(uint64_t ino)
{
	return (ino - INO_FIRST_TENSOR) / 2;
}

/* One past the last tensor inode. */
static inline uint64_t
tensors_end(const struct view *v)
{
	return INO_FIRST_TENSOR + 2 * (uint64_t)v->model->ntensors;
}

/* The __shards__/SHARD.json behind ino, else NULL. */
static const struct view_file *
shard_file(const struct view *v, uint64_t ino)
{
	if (!v->ino_shards || ino <= v->ino_shards || ino > v->ninodes)
		return NULL;
	return &v->shard_files[ino - v->ino_shards - 1];
}

enum view_kind
view_kind(const struct view *v, uint64_t ino)
{
	if (ino == VIEW_ROOT_INO || (ino && ino == v->ino_shards))
		return VIEW_DIR;
	if (ino == INO_META || ino == INO_SUMMARY || shard_file(v, ino))
		return VIEW_BLOB;
	if (ino < INO_FIRST_TENSOR || ino >= tensors_end(v))
		return VIEW_NONE;
	return (ino - INO_FIRST_TENSOR) % 2 ? VIEW_SIDECAR : VIEW_TENSOR;
}

const struct model_tensor *
view_tensor(const struct view *v, uint64_t ino)
{
	enum view_kind k = view_kind(v, ino);

	if (k != VIEW_TENSOR && k != VIEW_SIDECAR)
		return NULL;
	return &v->model->tensors[tensor_of(ino)];
}

/* --- lookup table ------------------------------------------------------ */

static int
entry_is(const struct view_entry *en, const char *name, size_t len)
{
	return en->name_len == len && memcmp(en->name, name, len) == 0;
}

/* Slot holding name, or the free slot where it would go. */
static uint32_t *
find_slot(const struct view *v, const char *name, size_t len)
{
	struct view_priv *p = priv(v);
	uint64_t i = names_fnv1a(name, len) & p->mask;

	while (p->slots[i] &&
	       !entry_is(&v->entries[p->slots[i] - 1], name, len))
		i = (i + 1) & p->mask;
	return &p->slots[i];
}

uint64_t
view_lookup(const struct view *v, uint64_t parent, const char *name,
	    size_t len)
{
	int sidecar = 0;
	uint32_t *slot;
	size_t j;

	if (parent && parent == v->ino_shards) {
		/* A handful of shards: a scan is fine. */
		for (j = 0; j < v->nshard_files; j++)
			if (v->shard_files[j].name_len == len &&
			    memcmp(v->shard_files[j].name, name, len) == 0)
				return v->ino_shards + 1 + j;
		return 0;
	}
	if (parent != VIEW_ROOT_INO)
		return 0;
	if (len == strlen(META_NAME) && memcmp(name, META_NAME, len) == 0)
		return INO_META;
	if (len == strlen(SUMMARY_NAME) && memcmp(name, SUMMARY_NAME, len) == 0)
		return INO_SUMMARY;
	if (v->ino_shards && len == strlen(SHARDS_NAME) &&
	    memcmp(name, SHARDS_NAME, len) == 0)
		return v->ino_shards;
	/* Encoded tensor names never end in ".json" (rule 3), so the suffix
	 * always means "the sidecar of the name before it". */
	if (len > NAMES_SUFFIX_LEN &&
	    memcmp(name + len - NAMES_SUFFIX_LEN, NAMES_SUFFIX,
		   NAMES_SUFFIX_LEN) == 0) {
		sidecar = 1;
		len -= NAMES_SUFFIX_LEN;
	}
	if (len == 0 || len > NAMES_MAX)
		return 0;
	slot = find_slot(v, name, len);
	if (!*slot)
		return 0;
	return INO_FIRST_TENSOR + 2 * (uint64_t)(*slot - 1) + sidecar;
}

/* --- directory listing and names --------------------------------------- */

uint64_t
view_nchildren(const struct view *v, uint64_t dir)
{
	if (dir == VIEW_ROOT_INO)
		return 2 + (v->ino_shards != 0) + 2 * (uint64_t)v->model->ntensors;
	if (dir && dir == v->ino_shards)
		return v->nshard_files;
	return 0;
}

uint64_t
view_child(const struct view *v, uint64_t dir, uint64_t k)
{
	if (k >= view_nchildren(v, dir))
		return 0;
	if (dir != VIEW_ROOT_INO)
		return v->ino_shards + 1 + k;
	if (k < 2)
		return INO_META + k;
	if (v->ino_shards) {
		/* __shards__ is listed third but numbered after the
		 * tensors, so tensor inodes do not depend on it. */
		if (k == 2)
			return v->ino_shards;
		k--;
	}
	return INO_FIRST_TENSOR + (k - 2);
}

size_t
view_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const struct view_entry *en;
	const char *s;
	size_t n;

	switch (view_kind(v, ino)) {
	case VIEW_DIR:
		if (ino == VIEW_ROOT_INO)
			break;
		memcpy(out, SHARDS_NAME, sizeof(SHARDS_NAME));
		return strlen(SHARDS_NAME);
	case VIEW_BLOB:
		if (shard_file(v, ino)) {
			s = shard_file(v, ino)->name;
			n = shard_file(v, ino)->name_len;
		} else {
			s = ino == INO_META ? META_NAME : SUMMARY_NAME;
			n = strlen(s);
		}
		memcpy(out, s, n + 1);
		return n;
	case VIEW_TENSOR:
	case VIEW_SIDECAR:
		en = &v->entries[tensor_of(ino)];
		memcpy(out, en->name, en->name_len);
		n = en->name_len;
		if (view_kind(v, ino) == VIEW_SIDECAR) {
			memcpy(out + n, NAMES_SUFFIX, NAMES_SUFFIX_LEN);
			n += NAMES_SUFFIX_LEN;
		}
		out[n] = '\0';
		return n;
	default:
		break;
	}
	out[0] = '\0';
	return 0;
}

/* --- attributes and content -------------------------------------------- */

uint64_t
view_size(const struct view *v, uint64_t ino)
{
	switch (view_kind(v, ino)) {
	case VIEW_BLOB:
		if (ino == INO_META)
			return strlen(v->model->metadata_json);
		if (ino == INO_SUMMARY)
			return v->summary_len;
		return shard_file(v, ino)->len;
	case VIEW_TENSOR:
		return model_tensor_nbytes(&v->model->tensors[tensor_of(ino)]);
	case VIEW_SIDECAR:
		return v->entries[tensor_of(ino)].sidecar_size;
	default:
		return 0;
	}
}

/* Files are readable by whoever may read the source, never more: with
 * allow_other a 0600 model must not become world-readable.  Directories
 * get x wherever they get r. */
static mode_t
file_mode(mode_t src)
{
	return src & 0444;
}

static mode_t
dir_mode(mode_t src)
{
	return (src & 0444) | ((src & 0444) >> 2);
}

int
view_stat(const struct view *v, uint64_t ino, struct stat *st)
{
	enum view_kind k = view_kind(v, ino);
	const struct model_tensor *mt;
	mode_t perm = v->mode;

	if (k == VIEW_NONE)
		return -1;
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mtim = v->mtime;
	st->st_ctim = v->ctime;
	st->st_uid = v->uid;
	st->st_gid = v->gid;
	mt = view_tensor(v, ino);
	if (mt) {
		/* A tensor's files carry the times of the shard they live in. */
		const struct source *src = v->model->shards[mt->shard].src;

		st->st_mtim = src->mtime;
		st->st_ctim = src->ctime;
		perm = src->mode;
		st->st_uid = v->opts.set_uid ? v->opts.uid : src->uid;
		st->st_gid = v->opts.set_gid ? v->opts.gid : src->gid;
	}
	st->st_atim = st->st_mtim;
	if (k == VIEW_DIR) {
		st->st_mode = S_IFDIR | dir_mode(perm);
		/* "." and the parent's entry, plus each subdirectory's "..". */
		st->st_nlink = 2 + (ino == VIEW_ROOT_INO && v->ino_shards);
	} else {
		st->st_mode = S_IFREG | file_mode(perm);
		st->st_nlink = 1;
		st->st_size = (off_t)view_size(v, ino);
		st->st_blocks = (blkcnt_t)((view_size(v, ino) + 511) / 512);
	}
	st->st_blksize = 4096;
	return 0;
}

int
view_data(const struct view *v, uint64_t ino, struct source **src,
	  uint64_t *offset, uint64_t *len)
{
	const struct model_tensor *mt;

	if (view_kind(v, ino) != VIEW_TENSOR)
		return -1;
	mt = &v->model->tensors[tensor_of(ino)];
	*src = v->model->shards[mt->shard].src;
	*offset = model_tensor_offset(v->model, mt);
	*len = model_tensor_nbytes(mt);
	return 0;
}

const char *
view_blob(const struct view *v, uint64_t ino, size_t *len)
{
	if (ino == INO_META) {
		*len = strlen(v->model->metadata_json);
		return v->model->metadata_json;
	}
	if (ino == INO_SUMMARY) {
		*len = v->summary_len;
		return v->summary;
	}
	if (shard_file(v, ino)) {
		*len = shard_file(v, ino)->len;
		return shard_file(v, ino)->data;
	}
	return NULL;
}

/* A pretty JSON array of integers, as jansson's JSON_INDENT(2) lays it
 * out one level down: one element per line, "[]" when empty. */
static int
add_u64_array(struct buf *b, const uint64_t *a, size_t n)
{
	int bad = 0;
	size_t i;

	if (n == 0)
		return buf_adds(b, "[]");
	bad |= buf_adds(b, "[\n");
	for (i = 0; i < n; i++) {
		bad |= buf_adds(b, "    ");
		bad |= buf_add_u64(b, a[i]);
		bad |= buf_adds(b, i + 1 < n ? ",\n" : "\n");
	}
	bad |= buf_adds(b, "  ]");
	return bad ? -1 : 0;
}

static int
render_sidecar(const struct model *m, const struct model_tensor *mt,
	       struct buf *b)
{
	const struct tensor *t = mt->t;
	const struct dtype_info *di = dtype_info(t->dtype);
	const struct source *src = m->shards[mt->shard].src;
	uint64_t offs[2] = { t->begin, t->end };
	int bad = 0;

	bad |= buf_adds(b, "{\n  \"name\": ");
	bad |= buf_add_json_string(b, t->name, t->name_len);
	bad |= buf_adds(b, ",\n  \"dtype\": ");
	bad |= buf_add_json_string(b, di->name, strlen(di->name));
	bad |= buf_adds(b, ",\n  \"shape\": ");
	bad |= add_u64_array(b, t->shape, t->rank);
	bad |= buf_adds(b, ",\n  \"data_offsets\": ");
	bad |= add_u64_array(b, offs, 2);
	bad |= buf_adds(b, ",\n  \"nbytes\": ");
	bad |= buf_add_u64(b, t->end - t->begin);
	bad |= buf_adds(b, ",\n  \"numel\": ");
	bad |= buf_add_u64(b, t->numel);
	bad |= buf_adds(b, ",\n  \"offset\": ");
	bad |= buf_add_u64(b, model_tensor_offset(m, mt));
	bad |= buf_adds(b, ",\n  \"numpy\": ");
	if (di->numpy) {
		bad |= buf_add_json_string(b, di->numpy, strlen(di->numpy));
	} else {
		bad |= buf_adds(b, "null");
		if (di->note) {
			bad |= buf_adds(b, ",\n  \"decode\": ");
			bad |= buf_add_json_string(b, di->note,
						   strlen(di->note));
		}
	}
	bad |= buf_adds(b, ",\n  \"source\": ");
	bad |= buf_add_json_string(b, src->base, strlen(src->base));
	bad |= buf_adds(b, "\n}\n");
	return bad ? -1 : 0;
}

int
view_render_sidecar(const struct view *v, uint64_t ino, struct buf *out)
{
	const struct model_tensor *mt = view_tensor(v, ino);

	if (!mt)
		return -1;
	return render_sidecar(v->model, mt, out);
}

/* --- build ------------------------------------------------------------- */

static int
newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

static int
collision(const struct view *v, size_t a, size_t b, struct err *e)
{
	const struct tensor *ta = v->model->tensors[a].t;
	const struct tensor *tb = v->model->tensors[b].t;
	char qa[160], qb[160];

	return err_set(e, ERR_USAGE, "tensors %s and %s map to the same file "
		       "name; stfs cannot mount this model",
		       err_quote(qa, sizeof(qa), ta->name, ta->name_len),
		       err_quote(qb, sizeof(qb), tb->name, tb->name_len));
}

/* Encode every name: identity names point at the tensor's own bytes,
 * the rest go to one arena sized by a first pass. */
static int
build_names(struct view *v)
{
	const struct model *m = v->model;
	char enc[NAMES_MAX + 1];
	size_t i, total = 0, o = 0;
	char *arena;

	for (i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;

		if (!names_is_identity(t->name, t->name_len))
			total += names_encode(t->name, t->name_len, enc);
	}
	arena = malloc(total ? total : 1);
	if (!arena)
		return -1;
	priv(v)->arena = arena;
	for (i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;
		struct view_entry *en = &v->entries[i];
		size_t n;

		if (names_is_identity(t->name, t->name_len)) {
			en->name = t->name;
			en->name_len = t->name_len;
			continue;
		}
		n = names_encode(t->name, t->name_len, enc);
		memcpy(arena + o, enc, n);
		en->name = arena + o;
		en->name_len = (uint32_t)n;
		o += n;
	}
	return 0;
}

static int
build_table(struct view *v, struct err *e)
{
	struct view_priv *p = priv(v);
	uint64_t size = 16;
	size_t i;

	/* Load factor at most 1/2 keeps probes short. */
	while (size < 2 * (uint64_t)v->model->ntensors)
		size *= 2;
	p->slots = calloc(size, sizeof(*p->slots));
	if (!p->slots)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	p->mask = size - 1;
	for (i = 0; i < v->model->ntensors; i++) {
		const struct view_entry *en = &v->entries[i];
		uint32_t *slot = find_slot(v, en->name, en->name_len);

		if (*slot)
			return collision(v, *slot - 1, i, e);
		*slot = (uint32_t)(i + 1);
	}
	return 0;
}

/* __shards__/SHARD.json: the summary's per-shard objects, each rendered
 * once (a sharded set has few shards), named like tensors. */
static int
build_shards(struct view *v, struct err *e)
{
	const struct model *m = v->model;
	char enc[NAMES_MAX + 1];
	json_t *root, *arr;
	size_t j, n;

	root = json_loads(v->summary, JSON_ALLOW_NUL, NULL);
	arr = json_object_get(root, "shards");
	if (!json_is_array(arr) || json_array_size(arr) != m->nshards) {
		json_decref(root);
		return err_set(e, ERR_NO_MEMORY, "cannot list the shards");
	}
	v->shard_files = calloc(m->nshards, sizeof(*v->shard_files));
	if (!v->shard_files)
		goto oom;
	v->nshard_files = m->nshards;
	for (j = 0; j < m->nshards; j++) {
		struct view_file *f = &v->shard_files[j];
		const char *sn = m->shards[j].name;
		char *text;

		n = names_encode(sn, strlen(sn), enc);
		f->name = malloc(n + NAMES_SUFFIX_LEN + 1);
		text = json_dumps(json_array_get(arr, j),
				  JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (!f->name || !text) {
			free(text);
			goto oom;
		}
		memcpy(f->name, enc, n);
		memcpy(f->name + n, NAMES_SUFFIX, NAMES_SUFFIX_LEN + 1);
		f->name_len = n + NAMES_SUFFIX_LEN;
		f->len = strlen(text) + 1;
		f->data = realloc(text, f->len + 1);
		if (!f->data) {
			free(text);
			goto oom;
		}
		memcpy(f->data + f->len - 1, "\n", 2);
		v->total_bytes += f->len;
		for (n = 0; n < j; n++)
			if (strcmp(v->shard_files[n].name, f->name) == 0) {
				json_decref(root);
				return err_set(e, ERR_USAGE, "two shards map "
					       "to the file name %s", f->name);
			}
	}
	json_decref(root);
	return 0;
oom:
	json_decref(root);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}

static int
build_sidecar_sizes(struct view *v, struct err *e)
{
	struct buf scratch = BUF_INIT;
	size_t i;

	for (i = 0; i < v->model->ntensors; i++) {
		scratch.len = 0;
		if (render_sidecar(v->model, &v->model->tensors[i], &scratch)) {
			buf_free(&scratch);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		v->entries[i].sidecar_size = (uint32_t)scratch.len;
		v->total_bytes += scratch.len;
		v->total_bytes += model_tensor_nbytes(&v->model->tensors[i]);
	}
	buf_free(&scratch);
	return 0;
}

int
view_build(const struct model *m, const struct view_opts *opts,
	   struct view **out, struct err *e)
{
	struct view *v;
	size_t i;

	/* Inodes and table slots are 32-bit tensor indexes underneath. */
	if (m->ntensors > (UINT32_MAX - INO_FIRST_TENSOR) / 2)
		return err_set(e, ERR_USAGE, "too many tensors (%zu)",
			       m->ntensors);
	v = calloc(1, sizeof(*v));
	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	v->model = m;
	if (opts)
		v->opts = *opts;
	v->priv = calloc(1, sizeof(struct view_priv));
	v->entries = calloc(m->ntensors ? m->ntensors : 1,
			    sizeof(*v->entries));
	v->summary = summary_json(m, 1);
	if (!v->priv || !v->entries || !v->summary || build_names(v)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	v->summary_len = strlen(v->summary);
	v->ninodes = INO_FIRST_TENSOR - 1 + 2 * (uint64_t)m->ntensors;
	if (m->sharded) {
		v->ino_shards = v->ninodes + 1;
		v->ninodes += 1 + m->nshards;
	}
	if (build_table(v, e) || build_sidecar_sizes(v, e) ||
	    (m->sharded && build_shards(v, e)))
		goto fail;
	v->total_bytes += strlen(m->metadata_json) + v->summary_len;

	/* Generated files and directories tell about every shard: only
	 * who may read all of them may read those. */
	v->mode = 0777;
	for (i = 0; i < m->nshards; i++) {
		const struct source *src = m->shards[i].src;

		v->mode &= src->mode;
		if (i == 0 || newer(&src->mtime, &v->mtime))
			v->mtime = src->mtime;
		if (i == 0 || newer(&src->ctime, &v->ctime))
			v->ctime = src->ctime;
	}
	if (m->nshards) {
		v->uid = m->shards[0].src->uid;
		v->gid = m->shards[0].src->gid;
	}
	if (v->opts.set_uid)
		v->uid = v->opts.uid;
	if (v->opts.set_gid)
		v->gid = v->opts.gid;
	*out = v;
	return 0;
fail:
	view_free(v);
	return -1;
}

void
view_free(struct view *v)
{
	size_t i;

	if (!v)
		return;
	if (v->priv) {
		free(priv(v)->arena);
		free(priv(v)->slots);
		free(v->priv);
	}
	for (i = 0; i < v->nshard_files; i++) {
		free(v->shard_files[i].name);
		free(v->shard_files[i].data);
	}
	free(v->shard_files);
	free(v->entries);
	free(v->summary);
	free(v);
}
