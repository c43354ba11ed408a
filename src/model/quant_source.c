/* quant_source.c - logical tensors as a source (see quant_source.h). */
#include "model/quant_source.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/quant/qscalar.h"
#include "model/model.h"
#include "model/quant.h"
#include "model/quant_render.h"
#include "source/source.h"

struct tile {
	struct tile *prev, *next;	/* the cache, most recent first */
	size_t w;		/* weight */
	uint64_t t;		/* tile of the weight */
	uint64_t e0, e1;	/* its logical elements */
	unsigned refs;
	float *data;
};

struct qsrc {
	struct model *base;
	int own;
	enum dtype dt;		/* F32, or BF16, F16: rounded */
	unsigned es;		/* bytes per element: 2 or 4 */
	struct quant *q;
	uint64_t *offs;
	struct quant_tiling *tiling;	/* per weight */

	pthread_mutex_t lock;
	struct tile *head, *tail;
	size_t ntiles;
};

/* --- the cache ------------------------------------------------------------ */

static void
unlink_tile(struct qsrc *c, struct tile *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		c->head = x->next;
	if (x->next)
		x->next->prev = x->prev;
	else
		c->tail = x->prev;
	x->prev = x->next = NULL;
}

static void
push_front(struct qsrc *c, struct tile *x)
{
	x->next = c->head;
	if (c->head)
		c->head->prev = x;
	c->head = x;
	if (!c->tail)
		c->tail = x;
}

static void
tile_free(struct tile *x)
{
	if (x) {
		free(x->data);
		free(x);
	}
}

/* With the lock held: tile (w, t), pinned, or NULL. */
static struct tile *
cache_find(struct qsrc *c, size_t w, uint64_t t)
{
	struct tile *x;

	for (x = c->head; x; x = x->next)
		if (x->w == w && x->t == t) {
			x->refs++;
			unlink_tile(c, x);
			push_front(c, x);
			return x;
		}
	return NULL;
}

/* With the lock held: drop unpinned tiles from the cold end. */
static void
cache_trim(struct qsrc *c)
{
	struct tile *x = c->tail, *prev;

	while (x && c->ntiles > QUANT_SOURCE_TILES) {
		prev = x->prev;
		if (x->refs == 0) {
			unlink_tile(c, x);
			c->ntiles--;
			tile_free(x);
		}
		x = prev;
	}
}

/* The shard that holds part k of qw. */
static size_t
part_shard(const struct model *m, const struct quant_weight *qw, size_t k)
{
	return m->tensors[qw->part[k]].shard;
}

/* 1 when a part of qw before part k lies in k's shard. */
static int
shard_seen(const struct model *m, const struct quant_weight *qw, size_t k)
{
	size_t j;

	for (j = 0; j < k; j++)
		if (qw->part[j] != QUANT_ABSENT &&
		    part_shard(m, qw, j) == part_shard(m, qw, k))
			return 1;
	return 0;
}

/* The parts' sources have not changed since they were opened: a tile
 * computed before a change must not outlive it.  Every read comes here,
 * cached tile or not, and a weight's parts mostly share one shard: each
 * shard is checked once (a local file's check is an fstat). */
static int
parts_verify(struct source *s, const struct qsrc *c, size_t w)
{
	const struct quant_weight *qw = &c->q->w[w];
	size_t k;
	int rc;

	for (k = 0; k < QUANT_PARTS; k++) {
		if (qw->part[k] == QUANT_ABSENT ||
		    shard_seen(c->base, qw, k))
			continue;
		rc = source_verify(c->base->shards[
			part_shard(c->base, qw, k)].src);
		if (rc == -ESTALE)
			source_mark_stale(s, "a quantized weight's part changed");
		if (rc)
			return rc;
	}
	return 0;
}

/* Tile t of weight w, pinned (tile_put()), or NULL with *rc. */
static struct tile *
tile_get(struct source *s, struct qsrc *c, size_t w, uint64_t t, int *rc)
{
	struct tile *x, *mine;

	pthread_mutex_lock(&c->lock);
	x = cache_find(c, w, t);
	pthread_mutex_unlock(&c->lock);
	if (!x) {
		mine = calloc(1, sizeof(*mine));
		if (!mine) {
			*rc = -ENOMEM;
			return NULL;
		}
		mine->w = w;
		mine->t = t;
		quant_render_range(&c->tiling[w], t, &mine->e0, &mine->e1);
		mine->data = malloc((size_t)(mine->e1 - mine->e0 + 1) *
				    sizeof(float));
		*rc = mine->data ? quant_render_tile(c->base, &c->q->w[w],
						     &c->tiling[w], t,
						     mine->data) : -ENOMEM;
		if (*rc) {
			tile_free(mine);
			return NULL;
		}
		/* two readers may race to compute one tile: the second
		 * copy is dropped */
		pthread_mutex_lock(&c->lock);
		x = cache_find(c, w, t);
		if (!x) {
			x = mine;
			mine = NULL;
			x->refs = 1;
			push_front(c, x);
			c->ntiles++;
			cache_trim(c);
		}
		pthread_mutex_unlock(&c->lock);
		tile_free(mine);
	}
	*rc = parts_verify(s, c, w);
	if (*rc) {
		pthread_mutex_lock(&c->lock);
		x->refs--;
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	return x;
}

static void
tile_put(struct qsrc *c, struct tile *x)
{
	pthread_mutex_lock(&c->lock);
	x->refs--;
	if (x->refs == 0)
		cache_trim(c);
	pthread_mutex_unlock(&c->lock);
}

/* --- the source ----------------------------------------------------------- */

/* The weight whose bytes hold off (offs ascending: no weight is empty,
 * quant.h). */
static size_t
weight_at(const struct qsrc *c, uint64_t off)
{
	size_t lo = 0, hi = c->q->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->offs[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Little-endian float32 bytes of host floats: bytes [skip, skip +
 * nbytes) of src's. */
static void
put_le(uint8_t *dst, const float *src, size_t nbytes, size_t skip)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	size_t i;

	for (i = 0; i < nbytes; i++) {
		size_t at = skip + i;
		uint32_t b;

		memcpy(&b, &src[at / 4], 4);
		dst[i] = (uint8_t)(b >> (8 * (at % 4)));
	}
#else
	memcpy(dst, (const uint8_t *)src + skip, nbytes);
#endif
}

/* The BF16 code of x as torch's .to(torch.bfloat16) rounds it: to
 * nearest, ties to even (format/quant/qscalar.h). */
static uint16_t
bf16_of(float x)
{
	float r = qscalar_round_bf16(x);
	uint32_t b;

	memcpy(&b, &r, 4);
	return (uint16_t)(b >> 16);
}

/* The F16 code of x as torch's .to(torch.float16) rounds it: to
 * nearest, ties to even, past the largest finite value to infinity. */
static uint16_t
f16_of(float x)
{
	float r = qscalar_round_f16(x);	/* exact in F16 now */
	uint32_t b, m;
	uint16_t sign;
	int e;

	memcpy(&b, &r, 4);
	sign = (uint16_t)((b >> 16) & 0x8000);
	e = (int)((b >> 23) & 0xff);
	m = b & 0x7fffff;
	if (e == 0xff)			/* infinity, or a quiet NaN */
		return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
	if (e == 0)			/* zero (no float32 subnormal is
					   an F16 value but 0) */
		return sign;
	if (e - 127 + 15 >= 1)		/* normal */
		return (uint16_t)(sign | ((e - 127 + 15) << 10) | (m >> 13));
	/* subnormal: (1.m) 2^(e - 127) is c 2^-24 */
	return (uint16_t)(sign | ((m | 0x800000) >> (126 - e)));
}

/* Little-endian 16-bit codes of host floats (code: bf16_of, f16_of):
 * bytes [skip, skip + nbytes) of their codes'. */
static void
put_half(uint8_t *dst, const float *src, size_t nbytes, size_t skip,
	 uint16_t (*code)(float))
{
	size_t i = 0, at;
	uint16_t h;

	if (skip % 2 && nbytes) {	/* the high byte of an element */
		dst[i++] = (uint8_t)(code(src[skip / 2]) >> 8);
	}
	for (; i + 2 <= nbytes; i += 2) {
		h = code(src[(skip + i) / 2]);
		dst[i] = (uint8_t)h;
		dst[i + 1] = (uint8_t)(h >> 8);
	}
	if (i < nbytes) {		/* the low byte of the last one */
		at = skip + i;
		dst[i] = (uint8_t)code(src[at / 2]);
	}
}

static int
qsrc_pread(struct source *s, void *buf, size_t len, uint64_t off)
{
	struct qsrc *c = s->priv;
	uint8_t *dst = buf;
	int rc = 0;

	if (off > s->size || len > s->size - off)
		return -EIO;
	while (len) {
		size_t w = weight_at(c, off), n;
		uint64_t at = off - c->offs[w], e = at / c->es, e0, e1, t;
		struct tile *x;

		t = quant_render_tile_of(&c->tiling[w], e);
		x = tile_get(s, c, w, t, &rc);
		if (!x)
			return rc;
		e0 = x->e0;
		e1 = x->e1;
		n = (size_t)(e1 * c->es - at) < len ?
		    (size_t)(e1 * c->es - at) : len;
		if (c->dt == DTYPE_BF16 || c->dt == DTYPE_F16)
			put_half(dst, x->data, n, (size_t)(at - e0 * c->es),
				 c->dt == DTYPE_BF16 ? bf16_of : f16_of);
		else
			put_le(dst, x->data, n, (size_t)(at - e0 * c->es));
		tile_put(c, x);
		dst += n;
		off += n;
		len -= n;
	}
	return 0;
}

static void
qsrc_close(struct source *s)
{
	struct qsrc *c = s->priv;
	struct tile *x, *next;

	for (x = c->head; x; x = next) {
		next = x->next;
		tile_free(x);
	}
	pthread_mutex_destroy(&c->lock);
	quant_free(c->q);
	free(c->offs);
	free(c->tiling);
	if (c->own)
		model_free(c->base);
	free(c);
}

static const struct source_ops qsrc_ops = {
	.pread = qsrc_pread,
	.close = qsrc_close,
};

const struct quant *
quant_source_quant(const struct source *s)
{
	return s && s->ops == &qsrc_ops ? ((struct qsrc *)s->priv)->q : NULL;
}

const struct model *
quant_source_base(const struct source *s)
{
	return s && s->ops == &qsrc_ops ? ((struct qsrc *)s->priv)->base :
	       NULL;
}

/* What the source shows (times, owner, mode): the newest times of the
 * base's files, the first one's owner, the permissions all grant. */
static void
take_attrs(struct source *s, const struct model *base)
{
	size_t i;

	s->mode = 07777;
	for (i = 0; i < base->nshards; i++) {
		const struct source *b = base->shards[i].src;

		s->mode &= b->mode;
		if (i == 0 || b->mtime.tv_sec > s->mtime.tv_sec ||
		    (b->mtime.tv_sec == s->mtime.tv_sec &&
		     b->mtime.tv_nsec > s->mtime.tv_nsec))
			s->mtime = b->mtime;
		if (i == 0 || b->ctime.tv_sec > s->ctime.tv_sec ||
		    (b->ctime.tv_sec == s->ctime.tv_sec &&
		     b->ctime.tv_nsec > s->ctime.tv_nsec))
			s->ctime = b->ctime;
	}
	if (base->nshards) {
		s->uid = base->shards[0].src->uid;
		s->gid = base->shards[0].src->gid;
	}
}

int
quant_source_open(struct model *base, int own, struct quant *q,
		  enum dtype dt, uint64_t *offs, uint64_t size,
		  const char *name, struct source **out, struct err *e)
{
	struct source *s = calloc(1, sizeof(*s));
	struct qsrc *c = calloc(1, sizeof(*c));
	size_t k;

	if (!s || !c)
		goto oom;
	c->base = base;
	c->own = own;
	c->dt = dt;
	c->es = dt == DTYPE_F32 ? 4 : 2;
	c->q = q;
	c->offs = offs;
	q = NULL;
	offs = NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->tiling = calloc(c->q->n ? c->q->n : 1, sizeof(*c->tiling));
	s->name = strdup(name);
	s->base = strdup("dequantized");
	if (!c->tiling || !s->name || !s->base)
		goto oom_c;
	for (k = 0; k < c->q->n; k++)
		quant_render_tiling(&c->q->w[k], &c->tiling[k]);
	s->ops = &qsrc_ops;
	s->size = size;
	s->priv = c;
	take_attrs(s, base);
	*out = s;
	return 0;
oom_c:
	c->own = 0;	/* the caller still frees base on failure */
	s->priv = c;
	qsrc_close(s);
	c = NULL;
oom:
	if (s) {
		free(s->name);
		free(s->base);
		free(s);
	}
	free(c);
	quant_free(q);
	free(offs);
	return err_set(e, ERR_NO_MEMORY, "out of memory");
}
