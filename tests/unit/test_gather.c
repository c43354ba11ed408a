/* test_gather.c - strided PyTorch views gathered in C order
 * (model/tensor_render.c, TENSOR_RENDER_GATHER), against a naive gather.
 *
 * The stored bytes are a function of their offset (never allocated), so a
 * view may span gigabytes: the three ways a window is read (one stored
 * window, a window at a time, element runs for spans past 256 windows)
 * are each reached, with windows that cut elements.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/table.h"
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

	ck_assert_uint_le(off + len, f->span);
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
		for (uint64_t i = 0; i < len; i++)
			ck_assert_msg(got[i] == naive(&t, es, off + i),
				      "byte %llu of window %llu+%llu",
				      (unsigned long long)(off + i),
				      (unsigned long long)off,
				      (unsigned long long)len);
		free(got);
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

Suite *
gather_suite(void)
{
	Suite *s = suite_create("gather");
	TCase *tc = tcase_create("gather");

	tcase_add_test(tc, test_transpose_small);
	tcase_add_test(tc, test_transpose_windows);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_expand_and_permute);
	suite_add_tcase(s, tc);
	return s;
}
