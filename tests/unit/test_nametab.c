/* test_nametab.c - the keyed name table (src/base/nametab.c): SipHash-2-4
 * against the reference vectors, table behaviour, and the flooding bound:
 * names crafted to collide in the unkeyed FNV-1a table that stfs used
 * before cost no more than random names. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/names.h"
#include "base/nametab.h"
#include "suites.h"

/* ---- SipHash-2-4 ------------------------------------------------------ */

/* The reference implementation's vectors (key 00..0f, message 00..len-1)
 * for the first 16 lengths, as 64-bit little-endian values; length 15 is
 * also the example of the paper's appendix. */
static const uint64_t sip_vectors[16] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
	0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
	0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
	0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
	0xa129ca6149be45e5ULL,
};

START_TEST(test_siphash_vectors)
{
	unsigned char key[16], msg[16];

	for (int i = 0; i < 16; i++)
		key[i] = msg[i] = (unsigned char)i;
	for (size_t len = 0; len < 16; len++)
		ck_assert_msg(nametab_siphash24(key, msg, len) ==
			      sip_vectors[len], "SipHash-2-4 of %zu bytes", len);
}
END_TEST

/* ---- the table -------------------------------------------------------- */

struct names {
	char (*s)[64];
	size_t n;
	uint64_t *space;
};

static int
names_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct names *ns = ctx;
	uint64_t sp = ns->space ? ns->space[id] : 0;

	return sp == k->space && strlen(ns->s[id]) == k->len &&
	       memcmp(ns->s[id], k->name, k->len) == 0;
}

static long
put(struct nametab *t, const struct names *ns, uint32_t id)
{
	struct nametab_key k;

	nametab_key(&k, ns->space ? ns->space[id] : 0, ns->s[id],
		    strlen(ns->s[id]));
	return nametab_put(t, &k, id);
}

static long
find(const struct nametab *t, uint64_t space, const char *s)
{
	struct nametab_key k;

	nametab_key(&k, space, s, strlen(s));
	return nametab_find(t, &k);
}

START_TEST(test_put_find)
{
	enum { N = 50000 };
	struct names ns = { calloc(N, 64), N, calloc(N, sizeof(uint64_t)) };
	struct nametab t;

	ck_assert_int_eq(nametab_init(&t, 0, names_eq, &ns), 0);
	ck_assert_int_eq(find(&t, 0, "x"), -1);
	for (uint32_t i = 0; i < N; i++) {
		/* the same name in two spaces is two keys */
		snprintf(ns.s[i], 64, "layer.%u", i / 2);
		ns.space[i] = i % 2;
		ck_assert_int_eq(put(&t, &ns, i), -1);
	}
	ck_assert_uint_eq(t.used, N);
	ck_assert_uint_le(t.used * 2, t.cap);
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(find(&t, i % 2, ns.s[i]), i);
	ck_assert_int_eq(find(&t, 2, "layer.0"), -1);
	ck_assert_int_eq(find(&t, 0, "layer."), -1);
	ck_assert_int_eq(find(&t, 0, ""), -1);
	/* a name put again: the old id is returned, the new one wins */
	strcpy(ns.s[7], ns.s[5]);
	ns.space[7] = ns.space[5];
	ck_assert_int_eq(put(&t, &ns, 7), 5);
	ck_assert_int_eq(find(&t, ns.space[5], ns.s[5]), 7);
	ck_assert_uint_eq(t.used, N);
	nametab_free(&t);
	free(ns.s);
	free(ns.space);
}
END_TEST

START_TEST(test_empty_and_nul)
{
	struct names ns = { calloc(2, 64), 2, NULL };
	struct nametab t;
	struct nametab_key k;

	ck_assert_int_eq(nametab_init(&t, 2, names_eq, &ns), 0);
	ck_assert_int_eq(put(&t, &ns, 0), -1);		/* "" */
	ck_assert_int_eq(find(&t, 0, ""), 0);
	/* names may hold NUL: "a\0b" is not "a" */
	nametab_key(&k, 0, "a\0b", 3);
	ck_assert_int_eq(nametab_find(&t, &k), -1);
	nametab_free(&t);
	free(ns.s);
}
END_TEST

/* ---- flooding --------------------------------------------------------- */

#define FLOOD_BITS 20
#define FLOOD_STEPS 16
#define FLOOD_N (1u << FLOOD_STEPS)

static const char alphabet[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static uint64_t
fnv_step(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The names of tests/flood.py: "w" then 16 three-byte blocks, each one of
 * a pair that takes FNV-1a's low 20 bits to the same state, so all 2^16
 * names share the low 20 bits of their hash (the old table's slot). */
static void
crafted(struct names *ns)
{
	const uint64_t mask = (1u << FLOOD_BITS) - 1;
	uint32_t *seen = calloc(1u << FLOOD_BITS, sizeof(*seen));
	char pair[FLOOD_STEPS][2][4];
	uint64_t state = fnv_step(0xcbf29ce484222325ULL, "w", 1) & mask;
	const size_t na = sizeof(alphabet) - 1;

	ck_assert_ptr_nonnull(seen);
	for (int st = 0; st < FLOOD_STEPS; st++) {
		int done = 0;

		memset(seen, 0, (1u << FLOOD_BITS) * sizeof(*seen));
		for (uint32_t c = 0; c < na * na * na && !done; c++) {
			char b[3] = { alphabet[c / (na * na)],
				      alphabet[c / na % na], alphabet[c % na] };
			uint64_t s = fnv_step(state, b, 3) & mask;

			if (seen[s]) {
				uint32_t o = seen[s] - 1;

				pair[st][0][0] = alphabet[o / (na * na)];
				pair[st][0][1] = alphabet[o / na % na];
				pair[st][0][2] = alphabet[o % na];
				memcpy(pair[st][1], b, 3);
				pair[st][0][3] = pair[st][1][3] = '\0';
				state = s;
				done = 1;
			}
			seen[s] = c + 1;
		}
		ck_assert_msg(done, "no FNV-1a collision at step %d", st);
	}
	free(seen);
	for (uint32_t i = 0; i < FLOOD_N; i++) {
		char *p = ns->s[i];

		*p++ = 'w';
		for (int st = 0; st < FLOOD_STEPS; st++, p += 3)
			memcpy(p, pair[st][(i >> st) & 1], 3);
		*p = '\0';
	}
	ns->n = FLOOD_N;
}

static void
random_names(struct names *ns, uint64_t seed)
{
	for (uint32_t i = 0; i < FLOOD_N; i++) {
		char *p = ns->s[i];

		*p++ = 'w';
		for (int j = 0; j < 3 * FLOOD_STEPS; j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			*p++ = alphabet[(seed >> 33) % (sizeof(alphabet) - 1)];
		}
		*p = '\0';
	}
	ns->n = FLOOD_N;
}

/* Probes of all lookups (sum of displacements + 1) and the longest. */
static void
cost(const struct names *ns, uint64_t *probes, size_t *maxd)
{
	struct nametab t;

	ck_assert_int_eq(nametab_init(&t, 0, names_eq, ns), 0);
	for (uint32_t i = 0; i < ns->n; i++)
		ck_assert_int_eq(put(&t, ns, i), -1);
	*probes = 0;
	for (size_t j = 0; j < t.cap; j++) {
		uint64_t v = t.slot[j];
		size_t home;

		if (!v)
			continue;
		home = (size_t)(((v >> 32) * (uint64_t)t.cap) >> 32);
		*probes += (j >= home ? j - home : t.cap - home + j) + 1;
	}
	*maxd = nametab_max_displacement(&t);
	for (uint32_t i = 0; i < ns->n; i += 97)
		ck_assert_int_eq(find(&t, 0, ns->s[i]), i);
	nametab_free(&t);
}

START_TEST(test_flooding)
{
	struct names cr = { calloc(FLOOD_N, 64), 0, NULL };
	struct names rn = { calloc(FLOOD_N, 64), 0, NULL };
	const uint64_t mask = (1u << FLOOD_BITS) - 1;
	uint64_t low;

	crafted(&cr);
	random_names(&rn, 1);
	/* the crafted names do flood an unkeyed FNV-1a table: all share the
	 * slot of a table of up to 2^20 slots */
	low = names_fnv1a(cr.s[0], strlen(cr.s[0])) & mask;
	for (uint32_t i = 1; i < FLOOD_N; i++) {
		ck_assert_uint_eq(names_fnv1a(cr.s[i], strlen(cr.s[i])) & mask,
				  low);
		ck_assert_str_ne(cr.s[i], cr.s[i - 1]);
	}
	/* under a few fixed keys (reproducible), crafted names cost at most
	 * twice what random ones do, in total and in the longest lookup */
	for (int k = 0; k < 4; k++) {
		unsigned char key[16];
		uint64_t pc, pr;
		size_t mc, mr;

		for (int i = 0; i < 16; i++)
			key[i] = (unsigned char)(k * 16 + i * 7 + 1);
		nametab_set_key(key);
		cost(&cr, &pc, &mc);
		cost(&rn, &pr, &mr);
		printf("key %d: crafted %llu probes (longest %zu), random "
		       "%llu (longest %zu)\n", k, (unsigned long long)pc, mc,
		       (unsigned long long)pr, mr);
		ck_assert_uint_le(pc, 2 * pr);
		ck_assert_uint_le(mc, 2 * mr + 8);
		/* linear probing at load <= 1/2: about 1.5 probes a name */
		ck_assert_uint_le(pc, 2 * (uint64_t)FLOOD_N);
	}
	free(cr.s);
	free(rn.s);
}
END_TEST

Suite *
nametab_suite(void)
{
	Suite *s = suite_create("nametab");
	TCase *tc = tcase_create("nametab");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_siphash_vectors);
	tcase_add_test(tc, test_put_find);
	tcase_add_test(tc, test_empty_and_nul);
	tcase_add_test(tc, test_flooding);
	suite_add_tcase(s, tc);
	return s;
}
