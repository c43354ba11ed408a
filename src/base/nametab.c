/* nametab.c - keyed name table (see nametab.h). */
#include "base/nametab.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---- SipHash-2-4 ------------------------------------------------------ */

static inline uint64_t
rotl(uint64_t x, unsigned b)
{
	return x << b | x >> (64 - b);
}

static inline uint64_t
le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void
sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

static inline void
sip_init(struct sip *s, uint64_t k0, uint64_t k1)
{
	s->v0 = k0 ^ 0x736f6d6570736575ULL;	/* "somepseudorandomlygeneratedbytes" */
	s->v1 = k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

static inline void
sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* The words of p[0..len), the last one holding the remaining bytes and
 * total mod 256 in its top byte (total counts words absorbed before). */
static uint64_t
sip_finish(struct sip *s, const unsigned char *p, size_t len, uint64_t total)
{
	uint64_t last;
	size_t i = 0, rest;

	for (; len - i >= 8; i += 8)
		sip_word(s, le64(p + i));
	rest = len - i;
	last = (total & 0xff) << 56;
	for (size_t j = 0; j < rest; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	sip_word(s, last);
	s->v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t
nametab_siphash24(const unsigned char key[16], const void *p, size_t len)
{
	struct sip s;

	sip_init(&s, le64(key), le64(key + 8));
	return sip_finish(&s, p, len, len);
}

/* ---- the process key -------------------------------------------------- */

static uint64_t key0, key1;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static int
read_urandom(unsigned char *b, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, b, n);
	close(fd);
	return r == (ssize_t)n ? 0 : -1;
}

static void
key_init(void)
{
	unsigned char b[16];
	ssize_t r;

	do
		r = getrandom(b, sizeof(b), 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(b) && read_urandom(b, sizeof(b)) < 0) {
		/* No kernel randomness at all (a seccomp jail?): a key that
		 * differs per process and run still beats a fixed one. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		memset(b, 0, sizeof(b));
		memcpy(b, &ts, sizeof(ts) < 16 ? sizeof(ts) : 16);
		b[15] ^= (unsigned char)getpid();
		b[14] ^= (unsigned char)(getpid() >> 8);
	}
	key0 = le64(b);
	key1 = le64(b + 8);
}

void
nametab_set_key(const unsigned char key[16])
{
	pthread_once(&key_once, key_init);
	key0 = le64(key);
	key1 = le64(key + 8);
}

void
nametab_key(struct nametab_key *k, uint64_t space, const char *name,
	    size_t len)
{
	struct sip s;

	pthread_once(&key_once, key_init);
	k->space = space;
	k->name = name;
	k->len = len;
	/* the message is space (8 bytes, little-endian) then the name */
	sip_init(&s, key0, key1);
	sip_word(&s, space);
	k->hash = sip_finish(&s, (const unsigned char *)name, len, len + 8);
}

/* ---- the table -------------------------------------------------------- */

#define NAMETAB_CAP_MAX ((size_t)1 << 32)	/* tag * cap fits in 64 bits */

/* The home slot is tag * cap / 2^32 with tag = the hash's upper half: no
 * power-of-two capacity needed, and growing needs no rehash (the tag is
 * in the slot). */
static inline size_t
home(uint64_t tag, size_t cap)
{
	return (size_t)((tag * (uint64_t)cap) >> 32);
}

static inline size_t
next(size_t j, size_t cap)
{
	return j + 1 == cap ? 0 : j + 1;
}

static int
resize(struct nametab *t, size_t cap)
{
	uint64_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; t->slot && i < t->cap; i++) {
		uint64_t v = t->slot[i];
		size_t j;

		if (!v)
			continue;
		for (j = home(v >> 32, cap); slot[j]; j = next(j, cap))
			;
		slot[j] = v;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

int
nametab_init(struct nametab *t, size_t expected, nametab_eq_fn eq,
	     const void *ctx)
{
	size_t cap = 16;

	memset(t, 0, sizeof(*t));
	t->eq = eq;
	t->ctx = ctx;
	while (cap < expected * 2 && cap < NAMETAB_CAP_MAX)
		cap *= 2;
	return resize(t, cap);
}

void
nametab_free(struct nametab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->used = 0;
}

/* The slot holding k, or the empty slot where it would go. */
static size_t
lookup(const struct nametab *t, const struct nametab_key *k)
{
	uint64_t tag = k->hash >> 32;
	size_t j;

	for (j = home(tag, t->cap); t->slot[j]; j = next(j, t->cap)) {
		uint64_t v = t->slot[j];

		if (v >> 32 == tag && t->eq(t->ctx, (uint32_t)v - 1, k))
			break;
	}
	return j;
}

long
nametab_find(const struct nametab *t, const struct nametab_key *k)
{
	uint64_t v;

	if (!t->slot)
		return -1;
	v = t->slot[lookup(t, k)];
	return v ? (long)((uint32_t)v - 1) : -1;
}

long
nametab_put(struct nametab *t, const struct nametab_key *k, uint32_t id)
{
	uint64_t v;
	size_t j;

	if (id > NAMETAB_ID_MAX)
		return -2;
	if (!t->slot || (t->used + 1) * 2 > t->cap) {
		size_t cap = t->slot ? t->cap * 2 : 16;

		if (cap > NAMETAB_CAP_MAX || resize(t, cap) < 0)
			return -2;
	}
	j = lookup(t, k);
	v = t->slot[j];
	t->slot[j] = (k->hash >> 32) << 32 | ((uint64_t)id + 1);
	if (v)
		return (long)((uint32_t)v - 1);
	t->used++;
	return -1;
}

size_t
nametab_max_displacement(const struct nametab *t)
{
	size_t max = 0;

	for (size_t i = 0; i < t->cap; i++) {
		uint64_t v = t->slot[i];
		size_t h, d;

		if (!v)
			continue;
		h = home(v >> 32, t->cap);
		d = i >= h ? i - h : t->cap - h + i;
		if (d > max)
			max = d;
	}
	return max;
}
