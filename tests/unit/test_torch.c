/* test_torch.c - PyTorch checkpoints through container_open() over a
 * reader of memory (format/torch: the zip, the state dict).
 *
 * The checkpoints are built here: a stored zip written the way torch.save
 * lays one out (local headers, data, central directory) around a
 * hand-written protocol 2 pickle.  int-torch compares real torch.save
 * files with torch.load; this runs under valgrind (scripts/check-valgrind).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/container.h"
#include "suites.h"

/* --- a zip writer -------------------------------------------------------- */

static uint32_t
crc32(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *b++;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

static void
le(struct buf *b, uint64_t v, int k)
{
	while (k--) {
		char c = (char)(v & 0xff);

		ck_assert_int_eq(buf_add(b, &c, 1), 0);
		v >>= 8;
	}
}

struct entry {
	const char *name;
	const void *data;
	size_t len;
	int method;		/* 0 stored; 8 claimed deflated */
};

/* The zip of entries; *local_name_of lets a test make a local header
 * disagree with the central directory. */
static struct buf
zip_of(const struct entry *v, size_t n, const char *local_name_of_first)
{
	struct buf z = BUF_INIT, cd = BUF_INIT;
	uint64_t off[16];

	ck_assert_uint_le(n, 16);
	for (size_t i = 0; i < n; i++) {
		const char *ln = i == 0 && local_name_of_first ?
				 local_name_of_first : v[i].name;
		uint32_t crc = crc32(v[i].data, v[i].len);

		off[i] = z.len;
		le(&z, 0x04034b50, 4);
		le(&z, 20, 2);
		le(&z, 0, 2);
		le(&z, (uint64_t)v[i].method, 2);
		le(&z, 0, 4);		/* time, date */
		le(&z, crc, 4);
		le(&z, v[i].len, 4);
		le(&z, v[i].len, 4);
		le(&z, strlen(ln), 2);
		le(&z, 0, 2);
		ck_assert_int_eq(buf_add(&z, ln, strlen(ln)), 0);
		ck_assert_int_eq(buf_add(&z, v[i].data, v[i].len), 0);
	}
	for (size_t i = 0; i < n; i++) {
		le(&cd, 0x02014b50, 4);
		le(&cd, 20, 2);
		le(&cd, 20, 2);
		le(&cd, 0, 2);
		le(&cd, (uint64_t)v[i].method, 2);
		le(&cd, 0, 4);
		le(&cd, crc32(v[i].data, v[i].len), 4);
		le(&cd, v[i].len, 4);
		le(&cd, v[i].len, 4);
		le(&cd, strlen(v[i].name), 2);
		le(&cd, 0, 2);
		le(&cd, 0, 2);
		le(&cd, 0, 2);
		le(&cd, 0, 2);
		le(&cd, 0, 4);
		le(&cd, off[i], 4);
		ck_assert_int_eq(buf_add(&cd, v[i].name, strlen(v[i].name)),
				 0);
	}
	off[0] = z.len;
	ck_assert_int_eq(buf_add(&z, cd.data, cd.len), 0);
	le(&z, 0x06054b50, 4);
	le(&z, 0, 2);
	le(&z, 0, 2);
	le(&z, n, 2);
	le(&z, n, 2);
	le(&z, cd.len, 4);
	le(&z, off[0], 4);
	le(&z, 0, 2);
	buf_free(&cd);
	return z;
}

/* --- reading ---------------------------------------------------------------- */

struct mem {
	const uint8_t *p;
	size_t n;
};

static int
mem_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem *m = ctx;

	if (off > m->n || len > m->n - off)
		return -EIO;
	memcpy(buf, m->p + off, len);
	return 0;
}

static int
open_buf(const struct buf *z, struct header **h, struct err *e)
{
	struct mem m = { (const uint8_t *)z->data, z->len };
	struct reader r = { mem_pread, &m, z->len, "ckpt.pt" };

	err_clear(e);
	return container_open(&r, h, e);
}

/* {'w': tensor(storage '0' float32 [numel 4], offset OFF, size (2,),
 * stride (STRIDE,)), 'n': {'e': 3, 'lr': 0.5}, 'tied': the same tensor} */
#define P_TENSOR(off, stride) \
	"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\0\0\0storage" \
	"ctorch\nFloatStorage\nX\x01\0\0\0" "0X\x03\0\0\0cpuK\x04tQK" off \
	"K\x02\x85K" stride "\x85\x89" "ccollections\nOrderedDict\n)RtR"
static const char pkl[] =
	"\x80\x02}(X\x01\0\0\0w" P_TENSOR("\x01", "\x01") "q\x01"
	"X\x01\0\0\0n}(X\x01\0\0\0eK\x03X\x02\0\0\0lrG?\xe0\0\0\0\0\0\0u"
	"X\x04\0\0\0tiedh\x01u.";
static const char pkl_strided[] =
	"\x80\x02}(X\x01\0\0\0w" P_TENSOR("\x00", "\x02") "u.";
static const float storage[4] = { 1, 2, 3, 4 };

static struct buf
checkpoint(const char *p, size_t plen, size_t slen, int method)
{
	const struct entry v[] = {
		{ "ck/data.pkl", p, plen, 0 },
		{ "ck/data/0", storage, slen, method },
		{ "ck/version", "3\n", 2, 0 },
	};

	return zip_of(v, 3, NULL);
}

static const struct tensor *
find(const struct header *h, const char *name)
{
	for (size_t i = 0; i < h->ntensors; i++)
		if (strcmp(h->tensors[i].name, name) == 0)
			return &h->tensors[i];
	return NULL;
}

START_TEST(test_state_dict)
{
	struct buf z = checkpoint(pkl, sizeof(pkl) - 1, 16, 0);
	struct header *h = NULL;
	const struct tensor *w, *tied;
	struct err e;
	uint64_t data = (uint64_t)((const char *)memmem(z.data, z.len,
				   storage, 16) - z.data);

	ck_assert_msg(open_buf(&z, &h, &e) == 0, "%s", e.detail);
	ck_assert_uint_eq(h->ntensors, 2);
	ck_assert_uint_eq(h->data_start, 0);
	w = find(h, "w");
	tied = find(h, "tied");
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(tied);
	ck_assert_int_eq(w->dtype, DTYPE_F32);
	ck_assert_uint_eq(w->rank, 1);
	ck_assert_uint_eq(w->shape[0], 2);
	ck_assert_ptr_null(w->strides);		/* contiguous */
	ck_assert_uint_eq(w->storage_offset, 1);
	ck_assert_uint_eq(w->begin, data + 4);	/* element 1 on */
	ck_assert_uint_eq(w->end, data + 12);
	ck_assert_ptr_eq(w->storage, tied->storage);
	ck_assert_str_eq(w->storage, "0");
	ck_assert_uint_eq(h->nmeta, 2);
	ck_assert_str_eq(h->meta[0].key, "n.e");
	ck_assert_str_eq(h->meta[0].val, "3");
	ck_assert_str_eq(h->meta[1].key, "n.lr");
	ck_assert_str_eq(h->meta[1].val, "0.5");
	container_free(h);
	buf_free(&z);
}
END_TEST

START_TEST(test_strided)
{
	struct buf z = checkpoint(pkl_strided, sizeof(pkl_strided) - 1, 16, 0);
	struct header *h = NULL;
	const struct tensor *w;
	struct err e;

	ck_assert_msg(open_buf(&z, &h, &e) == 0, "%s", e.detail);
	w = find(h, "w");
	ck_assert_ptr_nonnull(w->strides);
	ck_assert_uint_eq(w->strides[0], 2);
	ck_assert_uint_eq(w->end - w->begin, 12);	/* elements 0..2 */
	container_free(h);
	buf_free(&z);
}
END_TEST

/* Each broken checkpoint: refused with code and a word of the detail. */
static void
refused(struct buf z, enum err_code code, const char *word)
{
	struct header *h = NULL;
	struct err e;

	ck_assert_int_eq(open_buf(&z, &h, &e), -1);
	ck_assert_ptr_null(h);
	ck_assert_msg(e.code == code && strstr(e.detail, word),
		      "%s: %s, want %s and '%s'", err_name(e.code), e.detail,
		      err_name(code), word);
	ck_assert_str_eq(e.where, "ckpt.pt");
	buf_free(&z);
}

START_TEST(test_refused)
{
	const struct entry two[] = {
		{ "a/data.pkl", pkl, sizeof(pkl) - 1, 0 },
		{ "b/data.pkl", pkl, sizeof(pkl) - 1, 0 },
	};
	const struct entry lie[] = {
		{ "ck/data.pkl", pkl, sizeof(pkl) - 1, 0 },
		{ "ck/data/0", storage, 16, 0 },
	};
	const struct entry npz[] = { { "a.npy", "x", 1, 0 } };
	/* the magic number pickled at protocol 2 and 3, and behind a FRAME
	 * at 4 and 5 (torch.save(..., pickle_protocol=N)) */
	static const char *const legacy[] = {
		"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50"
		"\x19\x2e",
		"\x80\x03\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50"
		"\x19\x2e",
		"\x80\x04\x95\x0d\0\0\0\0\0\0\0\x8a\x0a\x6c\xfc\x9c"
		"\x46\xf9\x20\x6a\xa8\x50\x19\x2e",
		"\x80\x05\x95\x0d\0\0\0\0\0\0\0\x8a\x0a\x6c\xfc\x9c"
		"\x46\xf9\x20\x6a\xa8\x50\x19\x2e",
	};
	static const size_t legacy_len[] = { 15, 15, 24, 24 };

	refused(checkpoint(pkl, sizeof(pkl) - 1, 16, 8),
		ERR_INVALID_CHECKPOINT, "compressed");
	refused(checkpoint(pkl, sizeof(pkl) - 1, 12, 0),
		ERR_INVALID_PICKLE, "numel");
	refused(checkpoint(pkl_strided, sizeof(pkl_strided) - 1, 8, 0),
		ERR_INVALID_PICKLE, "numel");
	refused(zip_of(two, 2, NULL), ERR_INVALID_CHECKPOINT, "two pickles");
	refused(zip_of(lie, 2, "ck/data.pkX"), ERR_INVALID_CHECKPOINT,
		"local header");
	/* a zip that is no checkpoint: the safetensors reader's error, and
	 * what the file is */
	refused(zip_of(npz, 1, NULL), ERR_HEADER_TOO_LARGE, ".npz");
	for (size_t i = 0; i < 4; i++) {
		struct buf b = BUF_INIT;

		ck_assert_int_eq(buf_add(&b, legacy[i], legacy_len[i]), 0);
		refused(b, ERR_INVALID_CHECKPOINT, "legacy");
	}
}
END_TEST

Suite *
torch_suite(void)
{
	Suite *s = suite_create("torch");
	TCase *tc = tcase_create("torch");

	tcase_add_test(tc, test_state_dict);
	tcase_add_test(tc, test_strided);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return s;
}
