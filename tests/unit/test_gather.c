/* test_gather.c - strided PyTorch views gathered in C order
 * (model/tensor_render.c, TENSOR_RENDER_GATHER), against a naive gather.
 *
 * The stored bytes are a function of their offset (never allocated), so a
 * view may span gigabytes: lines along the dimension of the least stride
 * are read on their own, several in one span, with a stride (a slice with
 * a step) or element by element (an expand, a stride past a window),
 * staged and written out row by row; with windows that cut elements, and
 * the bytes read bounded (a transpose's window reads what it needs, not
 * its stored span).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/table.h"
#include "model/gather_cache.h"
#include "model/tensor_render.h"
#include "suites.h"

struct fake {
	uint64_t span;		/* stored bytes */
	unsigned reads;
	uint64_t bytes;		/* bytes read in all */
};

static uint8_t
stored_byte(uint64_t off)
{
	return (uint8_t)(off * 2654435761u >> 7);
}

static int
fake_read(void *arg, uint64_t off, size_t len, void *dst)
{
	struct fake *f = arg;
	uint8_t *p = dst;

	if (off + len > f->span)
		ck_abort_msg("read past the storage");
	f->reads++;
	f->bytes += len;
	for (size_t i = 0; i < len; i++)
		p[i] = stored_byte(off + i);
	return 0;
}

/* Byte b of the gathered view, the slow way. */
static uint8_t
naive(const struct tensor *t, unsigned es, uint64_t b)
{
	uint64_t e = b / es, pos = 0;

	for (uint32_t k = t->rank; k-- > 0;) {
		pos += (e % t->shape[k]) * t->strides[k];
		e /= t->shape[k];
	}
	return stored_byte(pos * es + b % es);
}

/* Bytes read by the last window of check_view(). */
static uint64_t last_bytes;

static void
check_view(enum dtype d, unsigned es, uint32_t rank, const uint64_t *shape,
	   const uint64_t *strides, const uint64_t *windows, size_t nwin)
{
	struct tensor t = { 0 };
	struct tensor_render r;
	struct err e = { 0 };
	uint64_t last = 0, numel = 1;
	struct fake f;

	for (uint32_t k = 0; k < rank; k++) {
		numel *= shape[k];
		last += (shape[k] - 1) * strides[k];
	}
	t.name = "v";
	t.name_len = 1;
	t.dtype = d;
	t.rank = rank;
	t.shape = shape;
	t.strides = strides;
	t.numel = numel;
	t.begin = 0;
	t.end = (last + 1) * es;
	ck_assert_int_eq(tensor_render_of(&t, &r, &e), 0);
	ck_assert_int_eq(r.kind, TENSOR_RENDER_GATHER);
	ck_assert_int_eq(r.dtype, d);
	ck_assert_uint_eq(r.nbytes, numel * es);
	f.span = t.end;
	for (size_t w = 0; w < nwin; w += 2) {
		uint64_t off = windows[w], len = windows[w + 1];
		uint8_t *got = malloc(len);

		f.reads = 0;
		f.bytes = 0;
		ck_assert_int_eq(tensor_render_read(&t, off, (size_t)len, got,
						    fake_read, &f), 0);
		/* (ck_assert_* records its place each time: a write) */
		for (uint64_t i = 0; i < len; i++)
			if (got[i] != naive(&t, es, off + i))
				ck_abort_msg("byte %llu of window %llu+%llu",
					     (unsigned long long)(off + i),
					     (unsigned long long)off,
					     (unsigned long long)len);
		free(got);
		last_bytes = f.bytes;
	}
}

START_TEST(test_transpose_small)
{
	/* 5 x 7 float32 transposed: one stored window */
	static const uint64_t shape[] = { 7, 5 }, strides[] = { 1, 7 };
	static const uint64_t win[] = { 0, 140, 3, 9, 137, 3, 60, 1 };

	check_view(DTYPE_F32, 4, 2, shape, strides, win, 8);
}
END_TEST

START_TEST(test_transpose_windows)
{
	/* 1024 x 700 bfloat16 transposed (1.4 MB): a window at a time */
	static const uint64_t shape[] = { 700, 1024 }, strides[] = { 1, 700 };
	static const uint64_t win[] = { 0, 4096, 1433597, 3, 700001, 70000 };

	check_view(DTYPE_BF16, 2, 2, shape, strides, win, 6);
}
END_TEST

START_TEST(test_runs)
{
	/* a view 1.2 GB wide (a slice of a huge storage): element runs;
	 * [3, 2, 4] with strides [300M, 5, 1]: runs of 4 elements */
	static const uint64_t shape[] = { 3, 2, 4 };
	static const uint64_t strides[] = { 300000000, 5, 1 };
	static const uint64_t win[] = { 0, 96, 5, 50, 95, 1 };

	check_view(DTYPE_F32, 4, 3, shape, strides, win, 6);
}
END_TEST

START_TEST(test_expand_and_permute)
{
	static const uint64_t shape[] = { 3, 4 }, strides[] = { 1, 0 };
	static const uint64_t pshape[] = { 4, 2, 3 }, pstrides[] = { 1, 12, 4 };
	static const uint64_t win[] = { 0, 24, 7, 5 };
	static const uint64_t pwin[] = { 0, 192, 13, 100, 191, 1 };

	check_view(DTYPE_I16, 2, 2, shape, strides, win, 4);
	check_view(DTYPE_C64, 8, 3, pshape, pstrides, pwin, 6);
}
END_TEST

START_TEST(test_lines)
{
	/* 2048 x 2048 float32 transposed: a window of 16 rows reads its
	 * 2048 runs of 16 elements, not the 16 MiB its span covers; a whole
	 * view (512 x 512) reads its storage once */
	static const uint64_t shape[] = { 2048, 2048 }, strides[] = { 1, 2048 };
	static const uint64_t win[] = { 1 << 20, 16 * 2048 * 4 };
	static const uint64_t ashape[] = { 512, 512 }, astrides[] = { 1, 512 };
	static const uint64_t all[] = { 0, 512 * 512 * 4 };
	/* a transposed slice with a step: lines of stride 2 */
	static const uint64_t sshape[] = { 300, 500 }, sstrides[] = { 2, 601 };
	static const uint64_t swin[] = { 0, 600000, 12345, 6789, 599999, 1 };
	/* a stride past a window: element by element; an expand along the
	 * least stride's dimension */
	static const uint64_t bshape[] = { 3, 5 }, bstrides[] = { 1, 400000 };
	static const uint64_t eshape[] = { 6, 5, 4 };
	static const uint64_t estrides[] = { 0, 4, 1 };
	static const uint64_t bwin[] = { 0, 15, 7, 3 }, ewin[] = { 0, 120, 9, 99 };

	check_view(DTYPE_F32, 4, 2, shape, strides, win, 2);
	ck_assert_uint_le(last_bytes, 2 * win[1]);
	check_view(DTYPE_F32, 4, 2, ashape, astrides, all, 2);
	ck_assert_uint_eq(last_bytes, all[1]);
	check_view(DTYPE_F32, 4, 2, sshape, sstrides, swin, 6);
	check_view(DTYPE_U8, 1, 2, bshape, bstrides, bwin, 4);
	check_view(DTYPE_I8, 1, 3, eshape, estrides, ewin, 4);
}
END_TEST

START_TEST(test_wide_inner)
{
	/* [2, 2^28] bytes with strides [1, 2] (a [N, 2] tensor transposed):
	 * a window's lines are found among its own elements, not among the
	 * 2^28 of a row (which took a second a window); windows that wrap
	 * from one row of the least stride's dimension to the next */
	static const uint64_t shape[] = { 2, (uint64_t)1 << 28 };
	static const uint64_t strides[] = { 1, 2 };
	uint64_t win[80];

	for (size_t w = 0; w < 40; w++) {
		win[2 * w] = ((uint64_t)1 << 28) - 20 + w * 3 +
			     (w % 2) * 9000000;
		win[2 * w + 1] = 7 + w;
	}
	check_view(DTYPE_U8, 1, 2, shape, strides, win, 80);
}
END_TEST

/* A transposed n x n float32 tensor over the fake storage. */
static void
transposed(struct tensor *t, uint64_t *shape, uint64_t *strides, uint64_t n)
{
	memset(t, 0, sizeof(*t));
	shape[0] = shape[1] = n;
	strides[0] = 1;
	strides[1] = n;
	t->name = "t";
	t->name_len = 1;
	t->dtype = DTYPE_F32;
	t->rank = 2;
	t->shape = shape;
	t->strides = strides;
	t->numel = n * n;
	t->end = n * n * 4;
}

/* Bytes [off, off + len) of t read through the cache equal the naive
 * gather. */
static void
cache_check(const void *owner, const struct tensor *t, uint64_t off,
	    size_t len, struct fake *f)
{
	uint8_t *got = malloc(len);

	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(gather_cache_read(owner, t, t->numel * 4, off, len,
					   got, fake_read, f), 0);
	for (size_t i = 0; i < len; i++)
		if (got[i] != naive(t, 4, off + i))
			ck_abort_msg("byte %llu", (unsigned long long)(off + i));
	free(got);
}

START_TEST(test_cache)
{
	/* 2304 x 2304 float32 transposed: 20.25 MiB, two tiles */
	uint64_t n = 2304, size = n * n * 4, sh[3][2], st[3][2], off;
	struct tensor t[3];
	struct fake f = { .span = n * n * 4 };
	int owner[2];

	for (int k = 0; k < 3; k++)
		transposed(&t[k], sh[k], st[k], n);
	/* read in 128 KiB windows, each tile is gathered once: a read per
	 * stored row a tile (2 x 2304), not per row a window (162 x 2304) */
	for (off = 0; off < size; off += 128 << 10)
		cache_check(&owner[0], &t[0], off, size - off < (128 << 10) ?
			    (size_t)(size - off) : 128 << 10, &f);
	ck_assert_uint_le(f.reads, 2 * 2304 + 64);
	/* a window read twice: the second from the tile kept */
	cache_check(&owner[0], &t[0], 4096, 4096, &f);
	f.reads = 0;
	cache_check(&owner[0], &t[0], 8192, 4096, &f);
	ck_assert_uint_eq(f.reads, 0);
	/* dropped with its model: gathered again */
	gather_cache_drop(&owner[0]);
	cache_check(&owner[0], &t[0], 8192, 4096, &f);
	ck_assert_uint_gt(f.reads, 0);
	/* three readers at once, more than there are tiles: the same bytes,
	 * the third gathering its windows alone; a window across two
	 * tiles; bytes that cut elements */
	for (off = 0; off < 6 * (64 << 10); off += 64 << 10)
		for (int k = 0; k < 3; k++)
			cache_check(&owner[k == 2], &t[k],
				    off + k * 5000000 + 3, 64 << 10, &f);
	cache_check(&owner[1], &t[1], GATHER_CACHE_TILE - 7, 4099, &f);
	gather_cache_drop(&owner[0]);
	gather_cache_drop(&owner[1]);
}
END_TEST

Suite *
gather_suite(void)
{
	Suite *s = suite_create("gather");
	TCase *tc = tcase_create("gather");

	tcase_set_timeout(tc, 60);

	tcase_add_test(tc, test_transpose_small);
	tcase_add_test(tc, test_transpose_windows);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_expand_and_permute);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_wide_inner);
	tcase_add_test(tc, test_cache);
	suite_add_tcase(s, tc);
	return s;
}
