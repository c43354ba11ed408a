/* fuzz_render.c - libFuzzer target for what a mounted model serves: the
 * view's files and the virtual safetensors files (issue 30: the sizes
 * that wrapped lived here, where no parser fuzzer reached).
 *
 * The input is a whole file (safetensors, a PyTorch checkpoint, GGUF),
 * written to a temporary file and opened with model_open() as `stfs FILE`
 * would.  A refusal must be one printable line.  An accepted model gets a
 * view with every hidden directory listed, and every file of it (up to
 * MAX_FILES, in breadth-first order) is checked against the promises of
 * view.h, npy.h, txt.h and repack.h:
 *
 *   - every size fits an off_t, stat agrees with it, and a read of a
 *     window answers exactly the bytes up to the end;
 *   - a tensor file holds model_tensor_nbytes() bytes, those of
 *     model_tensor_read(); its sidecar's nbytes and numel are those, its
 *     user.safetensors.nbytes too;
 *   - a .npy file is its header (magic, version, length field, a dict
 *     naming the shape) and numel elements of 4 bytes (decoded) or of the
 *     dtype's size; a .txt file numel * (width + 1) bytes, each element's
 *     text ending in ' ' or '\n'; a .stats file (small tensors) JSON;
 *   - every .safetensors file parses with the safetensors parser (offsets
 *     contiguous, each size shape x dtype, the file covered exactly), and
 *     in model.safetensors every tensor is the model's, its bytes those of
 *     its rendering;
 *   - the root's JSON files parse.
 * Nothing may leak (LeakSanitizer) or read past a buffer (ASan).
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/container.h"
#include "format/safetensors/header.h"
#include "format/tensor_size.h"
#include "model/model.h"
#include "model/tensor_render.h"
#include "source/source.h"
#include "view/npy.h"
#include "view/tensor_stats.h"
#include "view/txt.h"
#include "view/view.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_render: %s:%d: invariant failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

#define MAX_FILES 2000		/* files checked per input */
#define WINDOW 256		/* bytes read at each end of a file */
#define STATS_MAX 65536		/* elements: .stats/ computed up to this */

static char path[4200];
static char dir[4096];

struct walk {
	const struct view *v;
	const struct model *m;
	struct view_segs segs;
	uint64_t vst;		/* the root's .safetensors/ (not that of a
				   derived model's view, .dequant/) */
};

/* Bytes [off, off + len) of file ino into out (len at most WINDOW or a
 * header), the segments resolved; returns view_read's result.  The reply
 * must be exactly the bytes up to the file's end. */
static int
read_file(struct walk *w, uint64_t ino, uint64_t off, size_t len, char *out)
{
	uint64_t size = view_size(w->v, ino), want, at = 0;
	int rc;

	rc = view_read(w->v, ino, off, len, &w->segs);
	if (rc)
		return rc;
	want = off >= size ? 0 : size - off < len ? size - off : len;
	CHECK(w->segs.len == want);
	for (size_t i = 0; i < w->segs.n; i++) {
		const struct view_seg *g = &w->segs.seg[i];

		CHECK(at + g->len <= want);
		if (g->kind == VIEW_SEG_SOURCE) {
			CHECK(g->off + g->len <= g->src->size);
			CHECK(source_pread(g->src, out + at, g->len, g->off) ==
			      0);
		} else {
			memcpy(out + at, view_seg_mem(&w->segs, g), g->len);
		}
		at += g->len;
	}
	CHECK(at == want);
	return 0;
}

static uint64_t
json_u64(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	CHECK(p != NULL);
	return strtoull(p + strlen(key), NULL, 10);
}

/* p[0..len) is JSON.  jansson refuses \u0000 in an object's keys, which
 * JSON allows (a GGUF key may hold one): those are read as \u0001. */
static void
check_json(const char *p, size_t len)
{
	char *q = malloc(len ? len : 1), *at;
	json_t *j;

	CHECK(q != NULL);
	memcpy(q, p, len);
	for (at = q; (at = memmem(at, len - (size_t)(at - q), "\\u0000",
				  6)); at += 6)
		at[5] = '1';
	j = json_loadb(q, len, JSON_DECODE_ANY | JSON_ALLOW_NUL |
		       JSON_DECODE_INT_AS_REAL, NULL);
	CHECK(j != NULL);
	json_decref(j);
	free(q);
}

static void
check_tensor(struct walk *w, uint64_t ino, uint64_t size)
{
	const struct model_tensor *mt = view_tensor(w->v, ino);
	char a[WINDOW], b[WINDOW];
	struct buf x = BUF_INIT;
	uint64_t off;
	size_t len;

	CHECK(size == model_tensor_nbytes(mt));
	CHECK(size == tensor_size_bytes(mt->t));
	/* its first and its last bytes */
	len = size < WINDOW ? (size_t)size : WINDOW;
	for (off = 0; len; off = size - len) {
		CHECK(read_file(w, ino, off, len, a) == 0);
		CHECK(model_tensor_read(w->m, mt, off, len, b) == 0);
		CHECK(memcmp(a, b, len) == 0);
		if (off + len == size)
			break;
	}
	CHECK(view_xattr_get(w->v, ino, "user.safetensors.nbytes", &x) == 0);
	CHECK(buf_add(&x, "", 1) == 0);
	CHECK(strtoull(x.data, NULL, 10) == size);
	x.len = 0;
	CHECK(view_render_sidecar(w->v, ino, &x) == 0);
	CHECK(buf_add(&x, "", 1) == 0);
	check_json(x.data, x.len - 1);
	CHECK(json_u64(x.data, "\"nbytes\": ") == size);
	CHECK(json_u64(x.data, "\"numel\": ") == mt->t->numel);
	buf_free(&x);
}

/* A .npy file: its header as numpy reads it, then the elements. */
static void
check_npy(struct walk *w, uint64_t ino, uint64_t size)
{
	const struct tensor *t = view_tensor(w->v, ino)->t;
	uint64_t hsize = npy_header_size(t), elem, hlen;
	char *h, tail[16];
	int rc;

	elem = npy_is_raw(t->dtype) ? dtype_info(t->dtype)->bits / 8 : 4;
	CHECK(npy_data_size(t) == t->numel * elem);
	CHECK(size == hsize + t->numel * elem);
	CHECK(hsize % 64 == 0 && hsize <= 65536);
	h = malloc(hsize);
	CHECK(h != NULL);
	rc = read_file(w, ino, 0, (size_t)hsize, h);
	if (rc == -EOPNOTSUPP) {
		CHECK(!npy_readable(t));
		free(h);
		return;
	}
	CHECK(rc == 0 && npy_readable(t));
	CHECK(memcmp(h, "\x93NUMPY", 6) == 0 && (h[6] == 1 || h[6] == 2));
	hlen = h[6] == 1 ? (uint8_t)h[8] | (uint64_t)(uint8_t)h[9] << 8 :
	       (uint8_t)h[8] | (uint64_t)(uint8_t)h[9] << 8 |
	       (uint64_t)(uint8_t)h[10] << 16 | (uint64_t)(uint8_t)h[11] << 24;
	CHECK(hlen + (h[6] == 1 ? 10 : 12) == hsize);
	CHECK(h[hsize - 1] == '\n');
	CHECK(memmem(h, (size_t)hsize, "'shape': (", 10) != NULL);
	free(h);
	if (size > hsize)
		CHECK(read_file(w, ino, size - (size - hsize < 16 ?
			size - hsize : 16), 16, tail) == 0);
}

static void
check_txt(struct walk *w, uint64_t ino, uint64_t size)
{
	const struct tensor *t = view_tensor(w->v, ino)->t;
	unsigned wd = txt_width(t->dtype) + 1;
	char a[4 * (TXT_WIDTH_MAX + 1)];
	uint64_t n;
	int rc;

	CHECK(wd >= 2 && wd <= TXT_WIDTH_MAX + 1);
	CHECK(size == t->numel * wd);
	if (!size)
		return;
	n = t->numel < 4 ? t->numel : 4;
	rc = read_file(w, ino, 0, (size_t)(n * wd), a);
	if (rc == -EOPNOTSUPP) {
		CHECK(!npy_readable(t));
		return;
	}
	CHECK(rc == 0);
	for (uint64_t i = 1; i <= n; i++)
		CHECK(a[i * wd - 1] == ' ' || a[i * wd - 1] == '\n');
	CHECK(read_file(w, ino, size - wd, wd, a) == 0);
	CHECK(a[wd - 1] == '\n');
}

static void
check_stats(struct walk *w, uint64_t ino, uint64_t size)
{
	const struct tensor *t = view_tensor(w->v, ino)->t;
	char *p;
	int rc;

	CHECK(size == tensor_stats_json_size(t->name, t->name_len));
	if (t->numel > STATS_MAX || size > 1 << 20)
		return;
	p = malloc(size ? size : 1);
	CHECK(p != NULL);
	rc = read_file(w, ino, 0, (size_t)size, p);
	CHECK(rc == 0 || (rc == -EOPNOTSUPP && !npy_readable(t)));
	if (rc == 0)
		check_json(p, size);
	free(p);
}

/* The reader the safetensors parser reads a virtual file through. */
struct vfile {
	struct walk *w;
	uint64_t ino;
};

static int
vfile_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct vfile *f = ctx;

	return read_file(f->w, f->ino, off, len, buf);
}

/* The tensor of m named like x (model.safetensors keeps whole names). */
static const struct model_tensor *
find(const struct model *m, const struct tensor *x)
{
	for (size_t i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;

		if (t->name_len == x->name_len &&
		    memcmp(t->name, x->name, x->name_len) == 0)
			return &m->tensors[i];
	}
	return NULL;
}

static void
check_virtual(struct walk *w, uint64_t ino, uint64_t size, int whole)
{
	struct vfile vf = { w, ino };
	struct reader r = { vfile_pread, &vf, size, "virtual" };
	struct header *h = NULL;
	struct err e = { 0 };
	size_t i;

	if (size == 0)
		return;		/* refused: its header over 100 MB, ... */
	CHECK(header_read(&r, &h, &e) == 0);
	CHECK(h->data_start + h->data_len == size);
	CHECK(h->data_start % 8 == 0);
	/* what stfs writes it would read back: no size past its limits */
	CHECK(tensor_size_check(h, &e) == 0);
	for (i = 0; i < h->ntensors; i++) {
		const struct tensor *x = &h->tensors[i];
		const struct model_tensor *mt;
		struct model_tensor_at at;
		struct tensor_render rd;
		char a[16], b[16];
		size_t len;

		CHECK(i == 0 || x->begin == h->tensors[i - 1].end);
		if (!whole)
			continue;
		mt = find(w->m, x);
		CHECK(mt != NULL);
		CHECK(tensor_render_of(mt->t, &rd, &e) == 0);
		CHECK(rd.dtype == x->dtype && rd.nbytes == x->end - x->begin);
		CHECK(x->rank == mt->t->rank);
		CHECK(!x->rank || memcmp(x->shape, mt->t->shape,
					 x->rank * sizeof(*x->shape)) == 0);
		len = rd.nbytes < 16 ? (size_t)rd.nbytes : 16;
		if (!len)
			continue;
		CHECK(read_file(w, ino, h->data_start + x->begin, len, a) == 0);
		at.m = w->m;
		at.mt = mt;
		if (rd.kind == TENSOR_RENDER_NONE)
			CHECK(model_tensor_read(w->m, mt, 0, len, b) == 0);
		else
			CHECK(tensor_render_read(mt->t, 0, len, b,
						 model_tensor_read_stored,
						 &at) == 0);
		CHECK(memcmp(a, b, len) == 0);
	}
	container_free(h);
}

static void
check_blob(struct walk *w, uint64_t ino, uint64_t size)
{
	size_t len;
	const char *p = view_blob(w->v, ino, &len);

	CHECK(p != NULL && len == size);
	check_json(p, len);
}

static int
ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static void
check_file(struct walk *w, uint64_t ino, uint64_t parent)
{
	char name[VIEW_NAME_MAX + 1];
	size_t n = view_name(w->v, ino, name);
	uint64_t size = view_size(w->v, ino);
	struct stat st;

	CHECK(view_stat(w->v, ino, &st) == 0);
	CHECK(size <= INT64_MAX && (uint64_t)st.st_size == size);
	switch (view_kind(w->v, ino)) {
	case VIEW_TENSOR:
		check_tensor(w, ino, size);
		break;
	case VIEW_MIRROR:
		if (ends_with(name, n, ".npy"))
			check_npy(w, ino, size);
		else if (ends_with(name, n, ".txt"))
			check_txt(w, ino, size);
		else
			check_stats(w, ino, size);
		break;
	case VIEW_HIDDEN_FILE:
		if (ends_with(name, n, ".safetensors"))
			check_virtual(w, ino, size, parent == w->vst &&
				      strcmp(name, "model.safetensors") == 0);
		break;
	case VIEW_BLOB:
		check_blob(w, ino, size);
		break;
	default:
		break;
	}
}

static void
check_view(const struct model *m)
{
	struct view_opts opts = { .views = VIEW_VIEWS_VISIBLE };
	struct walk w = { 0 };
	struct view *v = NULL;
	struct err e = { 0 };
	uint64_t *queue, *parents, head = 0, tail = 0;

	if (view_build(m, &opts, &v, &e)) {
		CHECK(e.code == ERR_NO_MEMORY || e.code == ERR_USAGE);
		return;
	}
	w.v = v;
	w.m = m;
	w.vst = view_lookup(v, VIEW_ROOT_INO, ".safetensors", 12);
	queue = malloc(MAX_FILES * sizeof(*queue));
	parents = malloc(MAX_FILES * sizeof(*parents));
	CHECK(queue && parents);
	queue[tail] = VIEW_ROOT_INO;
	parents[tail++] = 0;
	while (head < tail) {
		uint64_t ino = queue[head], parent = parents[head++], k, n;

		if (view_kind(v, ino) != VIEW_DIR) {
			check_file(&w, ino, parent);
			continue;
		}
		n = view_nchildren(v, ino);
		for (k = 0; k < n && tail < MAX_FILES; k++) {
			queue[tail] = view_child(v, ino, k);
			CHECK(queue[tail] != 0);
			parents[tail++] = ino;
		}
	}
	free(queue);
	free(parents);
	view_segs_free(&w.segs);
	view_free(v);
}

static void
cleanup(void)
{
	if (path[0])
		unlink(path);
	if (dir[0])
		rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/stfs-fuzz-render.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(1);
	}
	atexit(cleanup);
	/* no extension: the format is sniffed from the bytes */
	snprintf(path, sizeof(path), "%s/input", dir);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m = NULL;
	struct err e = { 0 };
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	CHECK(size == 0 || fwrite(data, 1, size, f) == size);
	CHECK(fclose(f) == 0);
	if (model_open(path, NULL, &m, &e)) {
		CHECK(m == NULL && e.code != ERR_OK);
		CHECK(memchr(e.detail, '\0', sizeof(e.detail)) != NULL);
		CHECK(strchr(e.detail, '\n') == NULL);
		return 0;
	}
	CHECK(m != NULL);
	check_view(m);
	model_free(m);
	return 0;
}
