/* test_tensor_size.c - the sizes every format's table is checked for
 * (format/tensor_size.c): tables written here by hand, as a hostile file
 * would have its format build them.  The PyTorch views of issue 30 (an
 * expand of one stored element to 2^62 elements, whose byte count
 * wrapped to 0 or 4) are refused in one line naming the tensor; views
 * that repeat stored bytes get 1 GiB per file (or the file's size); a
 * stored tensor must hold exactly its elements' bytes, inside the file.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "format/table.h"
#include "format/tensor_size.h"
#include "suites.h"

#define MAXT 4

struct table {
	struct header h;
	struct tensor t[MAXT];
	uint64_t shape[MAXT][4];
	uint64_t strides[MAXT][4];
};

static void
table_init(struct table *x, uint64_t file_size)
{
	memset(x, 0, sizeof(*x));
	x->h.tensors = x->t;
	x->h.file_size = file_size;
}

/* Tensor k: name, dtype, shape (rank entries), stored [begin, end);
 * strides NULL for a tensor stored as its bytes.  numel is the shape's
 * product, computed here with wrapping as a careless format would. */
static struct tensor *
add(struct table *x, const char *name, enum dtype d, uint32_t rank,
    const uint64_t *shape, const uint64_t *strides, uint64_t begin,
    uint64_t end)
{
	struct tensor *t = &x->t[x->h.ntensors];
	uint64_t n = 1;

	memcpy(x->shape[x->h.ntensors], shape, rank * sizeof(*shape));
	if (strides)
		memcpy(x->strides[x->h.ntensors], strides,
		       rank * sizeof(*strides));
	for (uint32_t i = 0; i < rank; i++)
		n *= shape[i];
	t->name = name;
	t->name_len = (uint32_t)strlen(name);
	t->dtype = d;
	t->rank = rank;
	t->shape = x->shape[x->h.ntensors];
	t->strides = strides ? x->strides[x->h.ntensors] : NULL;
	t->begin = begin;
	t->end = end;
	t->numel = n;
	x->h.ntensors++;
	return t;
}

static void
refused(struct table *x, enum err_code code, const char *name,
	const char *words)
{
	struct err e = { 0 };
	char want[64];

	ck_assert_int_eq(tensor_size_check(&x->h, &e), -1);
	ck_assert_msg(e.code == code, "%s: %s", err_name(e.code), e.detail);
	snprintf(want, sizeof(want), "tensor `%s`: ", name);
	ck_assert_msg(strncmp(e.detail, want, strlen(want)) == 0, "%s",
		      e.detail);
	ck_assert_msg(strstr(e.detail, words), "%s", e.detail);
	ck_assert_ptr_null(strchr(e.detail, '\n'));
}

static void
accepted(struct table *x)
{
	struct err e = { 0 };

	ck_assert_msg(tensor_size_check(&x->h, &e) == 0, "%s", e.detail);
}

/* The wraps of issue 30, as torch_tree.c builds them: an expand (stride
 * 0) of one stored element. */
START_TEST(test_expand_wraps)
{
	static const uint64_t sq[] = { 1ull << 31, 1ull << 31 }, z2[] = { 0, 0 };
	static const uint64_t lin[] = { (1ull << 62) + 1 }, z1[] = { 0 };
	static const uint64_t f16[] = { (1ull << 63) - 1 };
	struct table x;

	/* F32 [2^31, 2^31]: 2^64 bytes, which wrapped to 0 */
	table_init(&x, 600);
	add(&x, "sq", DTYPE_F32, 2, sq, z2, 100, 104);
	refused(&x, ERR_VALIDATION_OVERFLOW, "sq", "2^56");
	/* F32 [2^62 + 1]: wrapped to 4 bytes */
	table_init(&x, 600);
	add(&x, "lin", DTYPE_F32, 1, lin, z1, 100, 104);
	refused(&x, ERR_VALIDATION_OVERFLOW, "lin", "4611686018427387905");
	/* F16 [2^63 - 1]: 2^64 - 2 bytes */
	table_init(&x, 600);
	add(&x, "half", DTYPE_F16, 1, f16, z1, 100, 102);
	refused(&x, ERR_VALIDATION_OVERFLOW, "half", "elements");
}
END_TEST

/* The cap on bytes that views repeat: 1 GiB per file, all views
 * together, or the file's size when larger. */
START_TEST(test_repeat_budget)
{
	static const uint64_t gib4[] = { 1ull << 28 }, z1[] = { 0 };
	static const uint64_t tib4[] = { 1ull << 40 };
	static const uint64_t most[] = { (1ull << 28) - 1000 };
	static const uint64_t rest[] = { 1000 }, four[] = { 4 };
	struct table x;

	/* a view of 4 TiB from 4 bytes (a 600-byte checkpoint) */
	table_init(&x, 600);
	add(&x, "a", DTYPE_F32, 1, tib4, z1, 0, 4);
	refused(&x, ERR_VALIDATION_OVERFLOW, "a", "repeats its 4 stored bytes "
		"as 4398046511104");
	/* repeats of 1 GiB - 8 bytes in all fit, 4 more do not */
	table_init(&x, 600);
	add(&x, "a", DTYPE_F32, 1, most, z1, 0, 4);
	add(&x, "b", DTYPE_F32, 1, rest, z1, 0, 4);
	accepted(&x);
	add(&x, "c", DTYPE_F32, 1, four, z1, 0, 4);
	refused(&x, ERR_VALIDATION_OVERFLOW, "c", ".contiguous()");
	/* a file of 4 GiB may repeat 4 GiB */
	table_init(&x, 4ull << 30);
	add(&x, "a", DTYPE_F32, 1, gib4, z1, 0, 4);
	add(&x, "b", DTYPE_F32, 1, gib4, z1, 0, 4);
	add(&x, "c", DTYPE_F32, 1, gib4, z1, 0, 4);
	accepted(&x);
	ck_assert_uint_eq(tensor_size_bytes(&x.t[2]), 1ull << 30);
}
END_TEST

/* Views that repeat nothing (a transpose, a slice with a step) count
 * nothing, however large; their dtype must be whole bytes. */
START_TEST(test_views_without_repeats)
{
	static const uint64_t shape[] = { 3, 5 }, tr[] = { 1, 3 };
	static const uint64_t step[] = { 2, 3 }, st[] = { 10, 3 };
	static const uint64_t big[] = { 1ull << 20, 1ull << 12 };
	static const uint64_t bigt[] = { 1, 1ull << 20 };
	struct table x;

	table_init(&x, 20ull << 30);
	add(&x, "t", DTYPE_F32, 2, shape, tr, 0, 60);
	add(&x, "s", DTYPE_I16, 2, step, st, 60, 60 + 2 * 17);
	add(&x, "huge_t", DTYPE_F32, 2, big, bigt, 1024, 1024 + (16ull << 30));
	accepted(&x);
	ck_assert_uint_eq(tensor_size_bytes(&x.t[1]), 12);
	table_init(&x, 1000);
	add(&x, "f4", DTYPE_F4, 2, shape, tr, 0, 8);
	refused(&x, ERR_TENSOR_INVALID_INFO, "f4", "whole bytes");
	table_init(&x, 1000);
	add(&x, "q", DTYPE_Q4_0, 2, shape, tr, 0, 18);
	refused(&x, ERR_TENSOR_INVALID_INFO, "q", "whole bytes");
	table_init(&x, 1000);
	add(&x, "none", DTYPE_F32, 2, shape, tr, 0, 2);
	refused(&x, ERR_TENSOR_INVALID_INFO, "none", "reads 2 bytes");
}
END_TEST

/* A tensor stored as its bytes holds exactly its elements, inside the
 * file; F4 and F6 whole bytes; quantized whole blocks. */
START_TEST(test_stored)
{
	static const uint64_t s3[] = { 3 }, s4[] = { 4 }, s64[] = { 2, 32 };
	static const uint64_t max[] = { 1ull << 56 }, over[] = { (1ull << 56) + 1 };
	static const uint64_t zero[] = { 0, UINT64_MAX }, s16[] = { 16 };
	struct table x;

	table_init(&x, 1000);
	x.h.data_start = 8;
	add(&x, "a", DTYPE_F32, 1, s3, NULL, 0, 12);
	add(&x, "b", DTYPE_F4, 1, s4, NULL, 12, 14);
	add(&x, "c", DTYPE_F6_E2M3, 1, s4, NULL, 14, 17);
	add(&x, "q", DTYPE_Q4_0, 2, s64, NULL, 17, 17 + 36);
	accepted(&x);
	x.h.ntensors = 0;
	add(&x, "empty", DTYPE_F64, 2, zero, NULL, 0, 0);
	accepted(&x);

	table_init(&x, 1000);
	add(&x, "short", DTYPE_F32, 1, s3, NULL, 0, 8);
	refused(&x, ERR_TENSOR_INVALID_INFO, "short", "take 12 bytes");
	table_init(&x, 1000);
	add(&x, "odd", DTYPE_F4, 1, s3, NULL, 0, 2);
	refused(&x, ERR_MISALIGNED_SLICE, "odd", "whole bytes");
	table_init(&x, 1000);
	add(&x, "blk", DTYPE_Q4_0, 1, s16, NULL, 0, 9);
	refused(&x, ERR_TENSOR_INVALID_INFO, "blk", "whole blocks");
	table_init(&x, 1000);
	x.h.data_start = 990;
	add(&x, "past", DTYPE_F32, 1, s3, NULL, 0, 12);
	refused(&x, ERR_INVALID_OFFSET, "past", "not in the file");
	table_init(&x, 1000);
	add(&x, "bad", DTYPE_F32, 1, s3, NULL, 0, 12)->numel = 4;
	refused(&x, ERR_TENSOR_INVALID_INFO, "bad", "shape");

	/* 2^56 elements is the most; a remote file may claim the size */
	table_init(&x, UINT64_MAX);
	add(&x, "max", DTYPE_U8, 1, max, NULL, 0, 1ull << 56);
	accepted(&x);
	table_init(&x, UINT64_MAX);
	add(&x, "over", DTYPE_U8, 1, over, NULL, 0, (1ull << 56) + 1);
	refused(&x, ERR_VALIDATION_OVERFLOW, "over", "2^56");
}
END_TEST

Suite *
tensor_size_suite(void)
{
	Suite *s = suite_create("tensor_size");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_expand_wraps);
	tcase_add_test(tc, test_repeat_budget);
	tcase_add_test(tc, test_views_without_repeats);
	tcase_add_test(tc, test_stored);
	suite_add_tcase(s, tc);
	return s;
}
