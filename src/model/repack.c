/* repack.c - virtual safetensors files (see repack.h). */
#include "model/repack.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/safetensors/header.h"
#include "model/model.h"
#include "model/repack_json.h"
#include "model/tensor_render.h"

/* A prefix is the first len bytes of tensor tix's name; its tensors are
 * sorted[lo..hi).  NOSTRIP marks a prefix whose stripped file would hold
 * a tensor named "__metadata__". */
#define PFX_NOSTRIP 0x80000000u
#define PFX_LEN(p) ((p)->len & ~PFX_NOSTRIP)

struct repack_prefix {
	uint32_t tix;
	uint32_t len;
	uint32_t lo, hi;
};

/* A stretch of the data section stored back to back in one source: file
 * bytes [previous run's end, end) are source bytes from src_off on; or,
 * when render is set, that tensor's rendering (tensor_render.h) from
 * src_off on. */
struct repack_run {
	uint64_t end;
	uint64_t src_off;
	uint32_t shard;
	const struct model_tensor *render;
};

struct repack_file {
	struct repack_file *prev, *next;	/* cache list, most recent first */
	size_t id;
	int strip;
	unsigned refs;
	size_t bytes;		/* memory held, for the cache budget */
	char *hdr;
	size_t hdr_len;
	uint64_t size;
	size_t nruns;
	struct repack_run *runs;
};

struct repack {
	const struct model *m;
	uint32_t *sorted;	/* model tensor indexes in name order */
	size_t np;
	struct repack_prefix *pfx;	/* id i is pfx[i - 1]; in prefix order */
	char *meta;		/* "\"__metadata__\":{...}" or NULL */
	size_t meta_len;
	int meta_named;		/* a tensor is named "__metadata__" (GGUF
				   allows it): no whole file */
	uint64_t *sizes;	/* 2 per id: 0 unknown, SIZE_REFUSED, or size */

	pthread_mutex_t lock;
	struct repack_file *head, *tail;
	size_t cache_bytes;
};

#define SIZE_REFUSED UINT64_MAX
#define META_KEY "__metadata__"
#define META_KEY_LEN 12

/* --- prefixes ------------------------------------------------------------- */

static const struct tensor *
tensor_of(const struct model *m, uint32_t i)
{
	return m->tensors[i].t;
}

static int
cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c)
		return c;
	return (an > bn) - (an < bn);
}

static int
cmp_name(const void *a, const void *b, void *arg)
{
	const struct tensor *x = tensor_of(arg, *(const uint32_t *)a);
	const struct tensor *y = tensor_of(arg, *(const uint32_t *)b);

	return cmp_bytes(x->name, x->name_len, y->name, y->name_len);
}

static int
cmp_prefix(const void *a, const void *b, void *arg)
{
	const struct repack_prefix *x = a, *y = b;

	return cmp_bytes(tensor_of(arg, x->tix)->name, PFX_LEN(x),
			 tensor_of(arg, y->tix)->name, PFX_LEN(y));
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *q;
	size_t n;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* In name order the tensors under "P." are consecutive, so one pass with
 * a stack of the open prefixes finds each prefix once, with its range:
 * a prefix opens at the first name whose common part with the previous
 * name does not reach its '.', and closes at the first name that does
 * not share "P.". */
static int
build_prefixes(struct repack *v)
{
	const struct model *m = v->m;
	uint32_t *stack = NULL;
	size_t sp = 0, scap = 0, pcap = 0, s, i;
	const struct tensor *prev = NULL;

	v->sorted = malloc((m->ntensors ? m->ntensors : 1) *
			   sizeof(*v->sorted));
	if (!v->sorted)
		return -1;
	for (i = 0; i < m->ntensors; i++)
		v->sorted[i] = (uint32_t)i;
	qsort_r(v->sorted, m->ntensors, sizeof(*v->sorted), cmp_name,
		(void *)m);

	for (s = 0; s < m->ntensors; s++) {
		const struct tensor *t = tensor_of(m, v->sorted[s]);
		size_t lcp = 0, j;

		if (prev) {
			size_t n = prev->name_len < t->name_len ?
				   prev->name_len : t->name_len;

			while (lcp < n && prev->name[lcp] == t->name[lcp])
				lcp++;
		}
		while (sp && PFX_LEN(&v->pfx[stack[sp - 1]]) + 1 > lcp)
			v->pfx[stack[--sp]].hi = (uint32_t)s;
		for (j = lcp; j < t->name_len; j++) {
			struct repack_prefix *p;

			if (t->name[j] != '.')
				continue;
			if (grow((void **)&v->pfx, &pcap, v->np + 1,
				 sizeof(*v->pfx)) ||
			    grow((void **)&stack, &scap, sp + 1,
				 sizeof(*stack)))
				goto oom;
			p = &v->pfx[v->np];
			p->tix = v->sorted[s];
			p->len = (uint32_t)j;
			p->lo = (uint32_t)s;
			p->hi = 0;
			stack[sp++] = (uint32_t)v->np++;
		}
		if (t->name_len == META_KEY_LEN &&
		    memcmp(t->name, META_KEY, META_KEY_LEN) == 0)
			v->meta_named = 1;
		/* "P.__metadata__" cannot keep its name once stripped. */
		if (t->name_len > META_KEY_LEN &&
		    t->name[t->name_len - META_KEY_LEN - 1] == '.' &&
		    memcmp(t->name + t->name_len - META_KEY_LEN, META_KEY,
			   META_KEY_LEN) == 0) {
			size_t want = t->name_len - META_KEY_LEN - 1, k;

			for (k = sp; k-- > 0;) {
				if (PFX_LEN(&v->pfx[stack[k]]) == want) {
					v->pfx[stack[k]].len |= PFX_NOSTRIP;
					break;
				}
			}
		}
		prev = t;
	}
	while (sp)
		v->pfx[stack[--sp]].hi = (uint32_t)m->ntensors;
	free(stack);
	if (v->np > 1)
		qsort_r(v->pfx, v->np, sizeof(*v->pfx), cmp_prefix, (void *)m);
	return 0;
oom:
	free(stack);
	return -1;
}

int
repack_open(const struct model *m, struct repack **out, struct err *e)
{
	struct repack *v;

	*out = NULL;
	if (m->ntensors > UINT32_MAX / 2)
		return err_set(e, ERR_NO_MEMORY, "too many tensors");
	v = calloc(1, sizeof(*v));
	if (!v)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	v->m = m;
	pthread_mutex_init(&v->lock, NULL);
	if (build_prefixes(v) ||
	    repack_json_meta(m, &v->meta, &v->meta_len))
		goto oom;
	v->sizes = calloc(2 * (v->np + 1), sizeof(*v->sizes));
	if (!v->sizes)
		goto oom;
	*out = v;
	return 0;
oom:
	repack_free(v);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}

static void
file_free(struct repack_file *f)
{
	if (!f)
		return;
	free(f->hdr);
	free(f->runs);
	free(f);
}

void
repack_free(struct repack *v)
{
	struct repack_file *f, *next;

	if (!v)
		return;
	for (f = v->head; f; f = next) {
		next = f->next;
		file_free(f);
	}
	pthread_mutex_destroy(&v->lock);
	free(v->sorted);
	free(v->pfx);
	free(v->meta);
	free(v->sizes);
	free(v);
}

const struct model *
repack_model(const struct repack *v)
{
	return v->m;
}

size_t
repack_nprefixes(const struct repack *v)
{
	return v->np;
}

const char *
repack_prefix(const struct repack *v, size_t id, size_t *len)
{
	const struct repack_prefix *p;

	if (id == REPACK_WHOLE || id > v->np) {
		*len = 0;
		return NULL;
	}
	p = &v->pfx[id - 1];
	*len = PFX_LEN(p);
	return tensor_of(v->m, p->tix)->name;
}

size_t
repack_find(const struct repack *v, const char *p, size_t len)
{
	size_t lo = 0, hi = v->np;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct repack_prefix *x = &v->pfx[mid];
		int c = cmp_bytes(tensor_of(v->m, x->tix)->name, PFX_LEN(x),
				  p, len);

		if (c == 0)
			return mid + 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

size_t
repack_ntensors(const struct repack *v, size_t id)
{
	if (id == REPACK_WHOLE)
		return v->m->ntensors;
	if (id > v->np)
		return 0;
	return v->pfx[id - 1].hi - v->pfx[id - 1].lo;
}

int
repack_offered(const struct repack *v, size_t id, int strip)
{
	if (id == REPACK_WHOLE)
		return !v->meta_named;
	if (id > v->np)
		return 0;
	return !(strip && (v->pfx[id - 1].len & PFX_NOSTRIP));
}

/* --- one file: its tensors, header and runs ----------------------------- */

/* 1 when tensor i can be in a safetensors file (as stored or rendered). */
static int
servable(const struct repack *v, uint32_t i)
{
	struct tensor_render r;
	struct err e = { 0 };

	return tensor_render_of(v->m->tensors[i].t, &r, &e) == 0;
}

/* Model indexes of file id's tensors in model order (malloc'd); tensors
 * a safetensors file cannot hold (a quantization stfs does not decode)
 * are left out. */
static uint32_t *
file_tensors(const struct repack *v, size_t id, size_t *n)
{
	uint32_t *t;
	size_t i, k = 0;

	*n = repack_ntensors(v, id);
	t = malloc((*n ? *n : 1) * sizeof(*t));
	if (!t)
		return NULL;
	if (id == REPACK_WHOLE) {
		for (i = 0; i < *n; i++)
			t[i] = (uint32_t)i;
	} else {
		memcpy(t, v->sorted + v->pfx[id - 1].lo, *n * sizeof(*t));
		qsort(t, *n, sizeof(*t), cmp_u32);
	}
	for (i = 0; i < *n; i++)
		if (servable(v, t[i]))
			t[k++] = t[i];
	*n = k;
	return t;
}

/* What tensor mt is in a safetensors file; file_tensors() kept only
 * tensors that have it. */
static struct tensor_render
served(const struct model_tensor *mt)
{
	struct tensor_render r;
	struct err e = { 0 };

	tensor_render_of(mt->t, &r, &e);
	return r;
}

/* The JSON header of tensors tix[0..n) (repack_json.h). */
static uint64_t
emit_json(const struct repack *v, const uint32_t *tix, size_t n, size_t cut,
	  struct repack_json *o)
{
	return repack_json_header(v->m, v->meta, v->meta_len, tix, n, cut, o);
}

static size_t
cut_of(const struct repack *v, size_t id, int strip)
{
	return id != REPACK_WHOLE && strip ? PFX_LEN(&v->pfx[id - 1]) + 1 : 0;
}

static uint64_t
padded(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* A file whose header (over the reference's limit) or data (over
 * REPACK_DATA_MAX) emit_json() could not write.  The messages say what
 * to do in stfs-inspect's words: only it prints them (a mount's
 * .safetensors/ has no such file). */
#define PART_HINT "write a module's file instead (stfs-inspect --extract " \
		  "PREFIX)"

static int
refuse_out(struct err *e, const struct repack_json *o)
{
	if (o->big)
		return err_set(e, ERR_VALIDATION_OVERFLOW, "its tensors would "
			       "take more than %llu bytes, more than a file "
			       "can hold: " PART_HINT,
			       (unsigned long long)REPACK_DATA_MAX);
	return err_set(e, ERR_HEADER_TOO_LARGE, "the header would take %llu "
		       "bytes, over the reference reader's limit of %llu: "
		       PART_HINT, (unsigned long long)padded(o->n),
		       (unsigned long long)HEADER_MAX_LEN);
}

/* The file (id, strip) is not offered (repack_offered). */
static int
refuse_meta(struct err *e, size_t id)
{
	if (id == REPACK_WHOLE)
		return err_set(e, ERR_USAGE, "a tensor is named "
			       "\"__metadata__\", which a safetensors file "
			       "cannot hold (its metadata's key): "
			       PART_HINT);
	return err_set(e, ERR_USAGE, "stripping the prefix would name a "
		       "tensor \"__metadata__\": keep the names (no "
		       "--strip)");
}

int
repack_size(struct repack *v, size_t id, int strip, uint64_t *size,
	    struct err *e)
{
	struct repack_json o = { NULL, 0, 0 };
	uint64_t data, cached;
	uint32_t *tix;
	size_t n, slot;

	if (id == REPACK_WHOLE)
		strip = 0;
	if (id > v->np)
		return err_set(e, ERR_USAGE, "no such prefix");
	if (!repack_offered(v, id, strip))
		return refuse_meta(e, id);
	slot = 2 * id + (strip ? 1 : 0);
	cached = __atomic_load_n(&v->sizes[slot], __ATOMIC_RELAXED);
	if (cached != 0 && cached != SIZE_REFUSED) {
		*size = cached;
		return 0;
	}
	tix = file_tensors(v, id, &n);
	if (!tix)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	data = emit_json(v, tix, n, cut_of(v, id, strip), &o);
	free(tix);
	if (o.big || padded(o.n) > HEADER_MAX_LEN) {
		__atomic_store_n(&v->sizes[slot], SIZE_REFUSED,
				 __ATOMIC_RELAXED);
		return refuse_out(e, &o);
	}
	*size = 8 + padded(o.n) + data;
	__atomic_store_n(&v->sizes[slot], *size, __ATOMIC_RELAXED);
	return 0;
}

static struct repack_file *
render(struct repack *v, size_t id, int strip, struct err *e)
{
	struct repack_json o = { NULL, 0, 0 };
	struct repack_file *f;
	uint32_t *tix;
	size_t n, cut = cut_of(v, id, strip), i;
	uint64_t json, data, at, run_start;

	tix = file_tensors(v, id, &n);
	f = calloc(1, sizeof(*f));
	if (!tix || !f)
		goto oom;
	emit_json(v, tix, n, cut, &o);
	json = o.n;
	if (o.big || padded(json) > HEADER_MAX_LEN) {
		refuse_out(e, &o);
		goto fail;
	}
	f->hdr_len = (size_t)(8 + padded(json));
	f->hdr = malloc(f->hdr_len);
	f->runs = malloc((n ? n : 1) * sizeof(*f->runs));
	if (!f->hdr || !f->runs)
		goto oom;
	o.p = f->hdr + 8;
	o.n = 0;
	data = emit_json(v, tix, n, cut, &o);
	memset(f->hdr + 8 + json, ' ', f->hdr_len - 8 - json);
	for (i = 0; i < 8; i++)
		f->hdr[i] = (char)(unsigned char)(padded(json) >> (8 * i));

	/* Runs: consecutive tensors that are also consecutive in one
	 * source become one range (a whole single file is one run); a
	 * rendered tensor is a run of its own. */
	at = run_start = f->hdr_len;
	for (i = 0; i < n; i++) {
		const struct model_tensor *mt = &v->m->tensors[tix[i]];
		const struct tensor_render sr = served(mt);
		uint64_t len = sr.nbytes;
		uint64_t src = model_tensor_offset(v->m, mt);
		struct repack_run *r = f->nruns ? &f->runs[f->nruns - 1] : NULL;

		if (len == 0)
			continue;
		if (sr.kind == TENSOR_RENDER_NONE && r && !r->render &&
		    r->shard == mt->shard &&
		    r->src_off + (at - run_start) == src) {
			r->end += len;
		} else {
			run_start = at;
			r = &f->runs[f->nruns++];
			r->shard = mt->shard;
			r->src_off = sr.kind == TENSOR_RENDER_NONE ? src : 0;
			r->render = sr.kind == TENSOR_RENDER_NONE ? NULL : mt;
			r->end = at + len;
		}
		at += len;
	}
	f->size = at;
	if (at - f->hdr_len != data) {
		err_set(e, ERR_IO, "inconsistent tensor sizes");
		goto fail;
	}
	f->id = id;
	f->strip = strip;
	f->bytes = sizeof(*f) + f->hdr_len + n * sizeof(*f->runs);
	free(tix);
	return f;
oom:
	err_set(e, ERR_NO_MEMORY, "out of memory");
fail:
	free(tix);
	file_free(f);
	return NULL;
}

/* Cache list helpers; called with v->lock held. */
static void
unlink_file(struct repack *v, struct repack_file *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else
		v->head = f->next;
	if (f->next)
		f->next->prev = f->prev;
	else
		v->tail = f->prev;
	f->prev = f->next = NULL;
}

static void
push_front(struct repack *v, struct repack_file *f)
{
	f->prev = NULL;
	f->next = v->head;
	if (v->head)
		v->head->prev = f;
	v->head = f;
	if (!v->tail)
		v->tail = f;
}

static struct repack_file *
cache_find(struct repack *v, size_t id, int strip)
{
	struct repack_file *f;

	for (f = v->head; f; f = f->next) {
		if (f->id == id && f->strip == strip) {
			f->refs++;
			unlink_file(v, f);
			push_front(v, f);
			return f;
		}
	}
	return NULL;
}

/* Drop unused files from the cold end until the budget holds. */
static void
cache_trim(struct repack *v)
{
	struct repack_file *f = v->tail, *prev;

	while (f && v->cache_bytes > REPACK_CACHE_BYTES) {
		prev = f->prev;
		if (f->refs == 0) {
			unlink_file(v, f);
			v->cache_bytes -= f->bytes;
			file_free(f);
		}
		f = prev;
	}
}

int
repack_file_get(struct repack *v, size_t id, int strip,
		struct repack_file **out, struct err *e)
{
	struct repack_file *f, *mine;

	if (id == REPACK_WHOLE)
		strip = 0;
	strip = !!strip;
	if (id > v->np)
		return err_set(e, ERR_USAGE, "no such prefix");
	if (!repack_offered(v, id, strip))
		return refuse_meta(e, id);
	pthread_mutex_lock(&v->lock);
	f = cache_find(v, id, strip);
	pthread_mutex_unlock(&v->lock);
	if (f) {
		*out = f;
		return 0;
	}
	/* Render without the lock: other files stay readable meanwhile;
	 * when two threads race on one file the second copy is dropped. */
	mine = render(v, id, strip, e);
	if (!mine)
		return -1;
	pthread_mutex_lock(&v->lock);
	f = cache_find(v, id, strip);
	if (!f) {
		f = mine;
		mine = NULL;
		f->refs = 1;
		push_front(v, f);
		v->cache_bytes += f->bytes;
		cache_trim(v);
	}
	pthread_mutex_unlock(&v->lock);
	file_free(mine);
	*out = f;
	return 0;
}

void
repack_file_put(struct repack *v, struct repack_file *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&v->lock);
	f->refs--;
	if (f->refs == 0)
		cache_trim(v);
	pthread_mutex_unlock(&v->lock);
}

uint64_t
repack_file_size(const struct repack_file *f)
{
	return f->size;
}

const char *
repack_file_header(const struct repack_file *f, size_t *len)
{
	*len = f->hdr_len;
	return f->hdr;
}

size_t
repack_file_map(const struct repack_file *f, uint64_t off, uint64_t len,
		struct repack_seg *segs, size_t nseg, uint64_t *covered)
{
	size_t k = 0, lo, hi;
	uint64_t at = off, stop;

	*covered = 0;
	if (off >= f->size || len == 0 || nseg == 0)
		return 0;
	stop = len > f->size - off ? f->size : off + len;
	if (at < f->hdr_len) {
		uint64_t n = (stop < f->hdr_len ? stop : f->hdr_len) - at;

		segs[k].mem = f->hdr + at;
		segs[k].render = NULL;
		segs[k].shard = 0;
		segs[k].off = at;
		segs[k].len = n;
		k++;
		at += n;
	}
	/* First run ending after at. */
	lo = 0;
	hi = f->nruns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->runs[mid].end > at)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (; at < stop && k < nseg && lo < f->nruns; lo++) {
		const struct repack_run *r = &f->runs[lo];
		uint64_t start = lo ? f->runs[lo - 1].end : f->hdr_len;
		uint64_t end = r->end < stop ? r->end : stop;

		segs[k].mem = NULL;
		segs[k].render = r->render;
		segs[k].shard = r->shard;
		segs[k].off = r->src_off + (at - start);
		segs[k].len = end - at;
		k++;
		at = end;
	}
	*covered = at - off;
	return k;
}
