/* fuzz_gguf.c - libFuzzer target for the GGUF parser
 * (src/format/gguf/gguf.c).
 *
 * The input is a whole GGUF file, read through a memory reader.  A
 * refusal must be a printable one-line record of ERR_INVALID_GGUF or
 * ERR_NO_MEMORY; an accepted file must keep every promise of gguf.h and
 * table.h: tensors in file order, not overlapping, inside the file, their
 * byte size numel / block * block_bytes, shapes of at most 4 dims, names
 * unique and NUL-terminated, metadata values that are JSON when they say
 * so.  No read may reach past the file's end.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/container.h"
#include "format/gguf/gguf.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_gguf: %s:%d: invariant failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

struct mem {
	const uint8_t *data;
	uint64_t size;
};

static int
mem_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct mem *m = ctx;

	CHECK(off <= m->size && len <= m->size - off);
	memcpy(buf, m->data + off, len);
	return 0;
}

static void
check_table(const struct header *h, uint64_t size)
{
	uint64_t prev_end = 0;

	CHECK(h->data_start <= size && h->header_len == h->data_start);
	CHECK(h->file_size == size);
	for (size_t i = 0; i < h->ntensors; i++) {
		const struct tensor *t = &h->tensors[i];
		const struct dtype_info *di = dtype_info(t->dtype);
		uint64_t numel = 1;

		CHECK(di != NULL && dtype_ggml(t->dtype) >= 0);
		CHECK(t->name && t->name[t->name_len] == '\0');
		CHECK(t->rank <= GGUF_MAX_DIMS);
		for (uint32_t j = 0; j < t->rank; j++)
			numel *= t->shape[j];
		CHECK(numel == t->numel);
		if (di->block)
			CHECK(t->end - t->begin ==
			      numel / di->block * di->block_bytes);
		else
			CHECK(t->end - t->begin == numel * (di->bits / 8));
		CHECK(t->begin >= prev_end && t->begin <= t->end);
		CHECK(t->end <= size - h->data_start);
		prev_end = t->end;
		for (size_t k = 0; k < i; k++)
			CHECK(t->name_len != h->tensors[k].name_len ||
			      memcmp(t->name, h->tensors[k].name,
				     t->name_len) != 0);
	}
	for (size_t i = 0; i < h->nmeta; i++) {
		const struct meta_pair *p = &h->meta[i];

		CHECK(p->key && p->key[p->key_len] == '\0');
		CHECK(p->val && p->val[p->val_len] == '\0');
		if (p->json) {
			json_t *v = json_loadb(p->val, p->val_len,
					       JSON_DECODE_ANY |
					       JSON_ALLOW_NUL, NULL);

			CHECK(v != NULL);
			json_decref(v);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct reader r = { mem_pread, &m, size, "fuzz" };
	struct header *h = NULL;
	struct err e;

	err_clear(&e);
	if (gguf_read(&r, &h, &e) < 0) {
		CHECK(h == NULL);
		CHECK(e.code == ERR_INVALID_GGUF || e.code == ERR_NO_MEMORY);
		CHECK(memchr(e.detail, '\0', sizeof(e.detail)) != NULL);
		CHECK(strchr(e.detail, '\n') == NULL);
		return 0;
	}
	CHECK(e.code == ERR_OK && h != NULL);
	check_table(h, size);
	container_free(h);
	return 0;
}
