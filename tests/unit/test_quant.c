/* test_quant.c - GGUF's quantized tensors in the views and virtual files:
 * every window of the .npy data, the .txt text, the statistics and the
 * rendering in a safetensors file (model/tensor_render.c) must equal what
 * the float32 values give through the F32 paths, which are tested on
 * their own.  The values themselves are checked against ggml's reference
 * code by tests/test_dequant.py.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/dequant.h"
#include "format/table.h"
#include "model/tensor_render.h"
#include "view/npy.h"
#include "view/tensor_stats.h"
#include "view/txt.h"
#include "suites.h"

/* The quantized types stfs decodes, by name (dtype.h's enum values are
 * not assumed): all of ggml's. */
static const char *const quant_names[] = {
	"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K",
	"Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS",
	"IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "IQ1_M", "TQ1_0",
	"TQ2_0", "MXFP4", "NVFP4", "Q1_0", "Q2_0",
};
#define NQUANT (sizeof(quant_names) / sizeof(quant_names[0]))

static enum dtype
dtype_named(const char *name)
{
	enum dtype d;

	ck_assert_msg(dtype_from_any_name(name, strlen(name), &d) == 0,
		      "%s is not a dtype", name);
	ck_assert_msg(dequant_has(d), "%s is not decoded", name);
	return d;
}

/* A quantized tensor of rows x cols (cols a multiple of the block) over
 * random blocks with moderate half scales, and its float32 values. */
struct quant {
	struct tensor t, f;	/* the quantized tensor, the same as F32 */
	uint64_t shape[2];
	uint8_t *blocks;
	float *vals;
	size_t nbytes;
};

static void
quant_make(struct quant *q, enum dtype d, uint64_t rows, unsigned seed)
{
	unsigned blk = dequant_block(d), bb = dequant_block_bytes(d);
	uint64_t cols = 2 * blk, nb, i;

	memset(q, 0, sizeof(*q));
	q->shape[0] = rows;
	q->shape[1] = cols;
	nb = rows * cols / blk;
	q->nbytes = (size_t)(nb * bb);
	q->blocks = malloc(q->nbytes);
	q->vals = malloc(rows * cols * sizeof(float));
	ck_assert(q->blocks && q->vals);
	srand(seed);
	for (i = 0; i < q->nbytes; i++)
		q->blocks[i] = (uint8_t)rand();
	/* every byte random makes NaN and inf scales common; those are
	 * test_dequant.py's business: keep the halves finite here by
	 * clearing the top exponent bit of every byte pair that could be
	 * a half (harmless for the quants) */
	for (i = 1; i < q->nbytes; i += 2)
		q->blocks[i] &= 0x3f;
	if (strcmp(dtype_info(d)->name, "MXFP4") == 0)
		for (i = 0; i < nb; i++)
			q->blocks[i * bb] = (uint8_t)(110 + i % 30);
	if (strcmp(dtype_info(d)->name, "Q8_K") == 0)
		for (i = 0; i < nb; i++)
			memcpy(q->blocks + i * bb, &(float){ 0.25f }, 4);
	dequant_blocks(d, q->blocks, (size_t)nb, q->vals);
	q->t.name = "q";
	q->t.name_len = 1;
	q->t.dtype = d;
	q->t.rank = 2;
	q->t.shape = q->shape;
	q->t.numel = rows * cols;
	q->t.begin = 0;
	q->t.end = q->nbytes;
	q->f = q->t;
	q->f.dtype = DTYPE_F32;
	q->f.end = q->t.numel * 4;
}

static void
quant_free(struct quant *q)
{
	free(q->blocks);
	free(q->vals);
}

/* Windows: every read of .npy data decodes exactly the values' bytes. */
START_TEST(test_npy_windows)
{
	enum dtype d = dtype_named(quant_names[_i]);
	struct quant q;
	uint64_t size, off, len, so, sl;
	uint8_t *out;
	int k;

	quant_make(&q, d, 3, 1 + _i);
	size = npy_data_size(&q.t);
	ck_assert_uint_eq(size, q.t.numel * 4);
	ck_assert(!npy_is_raw(d));
	ck_assert(npy_decodes(d));
	ck_assert_str_eq(npy_descr(d), "<f4");
	out = malloc(size);
	for (k = 0; k < 200; k++) {
		off = k == 0 ? 0 : (uint64_t)rand() % size;
		len = k == 0 ? size : 1 + (uint64_t)rand() % (size - off);
		npy_src_range(&q.t, off, len, &so, &sl);
		ck_assert_uint_le(so + sl, q.nbytes);
		ck_assert_uint_eq(npy_decode(&q.t, q.blocks + so, off,
					     (size_t)len, out), len);
		ck_assert_msg(memcmp(out, (uint8_t *)q.vals + off, len) == 0,
			      "%s: window [%llu, +%llu)", quant_names[_i],
			      (unsigned long long)off,
			      (unsigned long long)len);
	}
	free(out);
	quant_free(&q);
}
END_TEST

/* .txt of the quantized tensor is .txt of its values as F32. */
START_TEST(test_txt_same_as_f32)
{
	enum dtype d = dtype_named(quant_names[_i]);
	struct quant q;
	uint64_t size, off, len, so, sl, fo, fl;
	char *a, *b;
	int k;

	quant_make(&q, d, 2, 100 + _i);
	size = txt_size(&q.t);
	ck_assert_uint_eq(size, txt_size(&q.f));
	a = malloc(size);
	b = malloc(size);
	for (k = 0; k < 60; k++) {
		off = k == 0 ? 0 : (uint64_t)rand() % size;
		len = k == 0 ? size : 1 + (uint64_t)rand() % (size - off);
		txt_src_range(&q.t, off, len, &so, &sl);
		txt_src_range(&q.f, off, len, &fo, &fl);
		ck_assert_uint_le(so + sl, q.nbytes);
		ck_assert_uint_eq(txt_render(&q.t, q.blocks + so, off,
					     (size_t)len, a), len);
		ck_assert_uint_eq(txt_render(&q.f, (uint8_t *)q.vals + fo, off,
					     (size_t)len, b), len);
		ck_assert_msg(memcmp(a, b, len) == 0, "%s: text [%llu, +%llu)",
			      quant_names[_i], (unsigned long long)off,
			      (unsigned long long)len);
	}
	free(a);
	free(b);
	quant_free(&q);
}
END_TEST

struct mem {
	const uint8_t *p;
	size_t n;
	unsigned calls;
	size_t most;
};

static int
read_mem(void *arg, uint64_t off, size_t len, void *dst)
{
	struct mem *m = arg;

	if (off + len > m->n)
		return -EIO;
	memcpy(dst, m->p + off, len);
	m->calls++;
	if (len > m->most)
		m->most = len;
	return 0;
}

/* Statistics of the quantized tensor are those of its values as F32. */
START_TEST(test_stats_same_as_f32)
{
	enum dtype d = dtype_named(quant_names[_i]);
	struct tensor_stats a, b;
	struct quant q;
	struct mem mq, mf;

	quant_make(&q, d, 40, 200 + _i);
	mq = (struct mem){ q.blocks, q.nbytes, 0, 0 };
	mf = (struct mem){ (uint8_t *)q.vals, q.t.numel * 4, 0, 0 };
	ck_assert_int_eq(tensor_stats_compute(&q.t, read_mem, &mq, &a, NULL,
					      NULL), 0);
	ck_assert_int_eq(tensor_stats_compute(&q.f, read_mem, &mf, &b, NULL,
					      NULL), 0);
	ck_assert_uint_eq(a.count, b.count);
	ck_assert_uint_eq(a.finite, b.finite);
	ck_assert_uint_eq(a.zeros, b.zeros);
	ck_assert_uint_eq(a.subnormals, b.subnormals);
	ck_assert(a.min == b.min && a.max == b.max);
	ck_assert(fabs(a.mean - b.mean) <= 1e-12 * (fabs(b.mean) + 1));
	ck_assert(fabs(a.std - b.std) <= 1e-12 * (fabs(b.std) + 1));
	ck_assert_int_eq(a.kind, TENSOR_STATS_FLOAT);
	quant_free(&q);
}
END_TEST

/* A float format counted in a histogram of codes (BF16 here) whose
 * extremes no int64_t holds: the integer extremes are left alone (the
 * conversion was undefined; fuzz_render found it under UBSan). */
START_TEST(test_stats_float_extremes)
{
	static const uint8_t bf16[] = { 0x7f, 0x7f, 0xbc, 0xe3, 0, 0 };
	static const uint64_t shape[] = { 3 };
	struct tensor t = { .name = "x", .name_len = 1, .dtype = DTYPE_BF16,
			    .rank = 1, .shape = shape, .begin = 0, .end = 6,
			    .numel = 3 };
	struct mem m = { bf16, sizeof(bf16), 0, 0 };
	struct tensor_stats st;

	ck_assert_int_eq(tensor_stats_compute(&t, read_mem, &m, &st, NULL,
					      NULL), 0);
	ck_assert_int_eq(st.kind, TENSOR_STATS_FLOAT);
	ck_assert(st.max > 3e38 && st.min < -6e21 && st.min > -7e21);
	ck_assert(st.imin == 0 && st.imax == 0 && st.umin == 0 &&
		  st.umax == 0);
}
END_TEST

/* In a safetensors file: F32, numel * 4 bytes, any window rendered from
 * bounded reads of the blocks. */
START_TEST(test_render)
{
	enum dtype d = dtype_named(quant_names[_i]);
	struct tensor_render r;
	struct err e = { 0 };
	struct quant q;
	struct mem m;
	uint64_t size, off, len;
	uint8_t *out;
	int k;

	/* more than two windows of stored bytes */
	quant_make(&q, d, 2 * TENSOR_RENDER_WINDOW / (2 * dequant_block_bytes(d))
		   + 3, 300 + _i);
	ck_assert_int_eq(tensor_render_of(&q.t, &r, &e), 0);
	ck_assert_int_eq(r.kind, TENSOR_RENDER_DEQUANT);
	ck_assert_int_eq(r.dtype, DTYPE_F32);
	ck_assert_uint_eq(r.nbytes, q.t.numel * 4);
	size = r.nbytes;
	out = malloc(size);
	for (k = 0; k < 6; k++) {
		off = k == 0 ? 0 : (uint64_t)rand() % size;
		len = k == 0 ? size : 1 + (uint64_t)rand() % (size - off);
		m = (struct mem){ q.blocks, q.nbytes, 0, 0 };
		ck_assert_int_eq(tensor_render_read(&q.t, off, (size_t)len, out,
						    read_mem, &m), 0);
		ck_assert(memcmp(out, (uint8_t *)q.vals + off, len) == 0);
		ck_assert_uint_le(m.most, TENSOR_RENDER_WINDOW +
				  2 * dequant_block_bytes(d));
	}
	free(out);
	quant_free(&q);
}
END_TEST

/* Blocks that do not add up are refused by the views and the rendering. */
START_TEST(test_render_refusals)
{
	enum dtype d = dtype_named("Q4_K");
	struct tensor_render r;
	struct err e = { 0 };
	struct quant q;

	quant_make(&q, d, 2, 7);
	ck_assert(npy_readable(&q.t));
	q.t.end -= 1;
	ck_assert(!npy_readable(&q.t));
	ck_assert_int_eq(tensor_render_of(&q.t, &r, &e), -1);
	ck_assert_int_eq(e.code, ERR_USAGE);
	err_clear(&e);
	q.t.end += 1;
	q.t.numel -= 1;
	ck_assert(!npy_readable(&q.t));
	ck_assert_int_eq(tensor_render_of(&q.t, &r, &e), -1);
	err_clear(&e);
	/* F32 is served as stored */
	ck_assert_int_eq(tensor_render_of(&q.f, &r, &e), 0);
	ck_assert_int_eq(r.kind, TENSOR_RENDER_NONE);
	ck_assert_uint_eq(r.nbytes, q.f.end);
	quant_free(&q);
}
END_TEST

/* dequant.c's block geometry is dtype.h's; every quantized dtype is
 * decoded; the GGUF names are not safetensors dtypes; ggml's numbers map
 * both ways. */
START_TEST(test_block_table)
{
	unsigned d, decoded = 0;
	enum dtype x;

	for (d = 0; d < DTYPE__COUNT; d++) {
		const struct dtype_info *di = dtype_info((enum dtype)d);
		int g = dtype_ggml((enum dtype)d);

		if (g >= 0) {
			ck_assert_int_eq(dtype_from_ggml((uint32_t)g, &x), 0);
			ck_assert_int_eq(x, d);
		}
		if (d < DTYPE_SAFETENSORS_COUNT) {
			ck_assert_uint_eq(di->block, 0);
			ck_assert(!dequant_has((enum dtype)d));
			continue;
		}
		ck_assert_msg(g >= 0, "%s has no ggml number", di->name);
		ck_assert(di->block > 0 && di->block_bytes > 0 && !di->bits);
		ck_assert_int_eq(dtype_from_name(di->name, strlen(di->name),
						 &x), -1);
		ck_assert_msg(dequant_has((enum dtype)d), "%s is not decoded",
			      di->name);
		decoded++;
		ck_assert_uint_eq(dequant_block((enum dtype)d), di->block);
		ck_assert_uint_eq(dequant_block_bytes((enum dtype)d),
				  di->block_bytes);
	}
	ck_assert_uint_eq(decoded, NQUANT);
	ck_assert_int_eq(dtype_from_ggml(4, &x), -1);	/* removed Q4_2 */
	ck_assert_int_eq(dtype_from_ggml(43, &x), -1);
	ck_assert_int_eq(dtype_from_ggml(0, &x), 0);
	ck_assert_int_eq(x, DTYPE_F32);
	ck_assert_int_eq(dtype_from_ggml(30, &x), 0);
	ck_assert_int_eq(x, DTYPE_BF16);
}
END_TEST

Suite *
quant_suite(void)
{
	Suite *s = suite_create("quant");
	TCase *tc = tcase_create("quant");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_npy_windows, 0, NQUANT);
	tcase_add_loop_test(tc, test_txt_same_as_f32, 0, NQUANT);
	tcase_add_loop_test(tc, test_stats_same_as_f32, 0, NQUANT);
	tcase_add_loop_test(tc, test_render, 0, NQUANT);
	tcase_add_test(tc, test_render_refusals);
	tcase_add_test(tc, test_block_table);
	tcase_add_test(tc, test_stats_float_extremes);
	suite_add_tcase(s, tc);
	return s;
}
