/* fuzz_header.c - libFuzzer target for the header parser and validator.
 *
 * Input layout: an 8-byte little-endian word X, then the header bytes H
 * (what follows the 8-byte prefix in a real file).  X claims the file
 * size: with its top bit clear the file is 8 + |H| + X bytes (X is the
 * data length, so seeds are easy to write); with its top bit set the file
 * size is X without that bit (any size at all, including ones smaller than
 * the header).
 *
 * Each input is run three ways:
 *   A. header_parse(H, |H|, size);
 *   B. header_read() on a virtual file [u64 |H|][H][zero data] of that
 *      size, when it is at least 8 + |H|: it must reach the same verdict
 *      as A and never read past 8 + |H| (the data section is not read);
 *   C. container_open() on the raw input taken as a whole file (the
 *      prefix is then arbitrary; refused files go through sniff.c): it
 *      must never read past the end of the file.  A zip is a PyTorch
 *      checkpoint there (format/torch: the zip reader, the pickle reader, the
 *      state dict), whose table has invariants of its own (check_torch).
 * Whenever a header is accepted, its invariants are checked and any
 * violation aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/nametab.h"
#include "base/text.h"
#include "format/container.h"
#include "format/dtype.h"
#include "format/safetensors/header.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_header: %s:%d: invariant failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* An error record must be printable: both strings end inside their arrays,
 * and the kind is a real one. */
/* nametab callback over h->tensors */
static int
tensor_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct tensor *t = &((const struct header *)ctx)->tensors[id];

	return t->name_len == k->len && memcmp(t->name, k->name, k->len) == 0;
}

/* No two tensors share a name, "__metadata__" is none of them, and the
 * name table finds each one. */
static int
names_unique(const struct header *h)
{
	struct nametab tab;
	struct nametab_key k;
	int ok = 1;

	if (nametab_init(&tab, h->ntensors, tensor_eq, h) < 0)
		return 1;	/* out of memory: nothing to say */
	for (size_t i = 0; ok && i < h->ntensors; i++) {
		nametab_key(&k, 0, h->tensors[i].name, h->tensors[i].name_len);
		ok = nametab_put(&tab, &k, (uint32_t)i) == -1;
	}
	for (size_t i = 0; ok && i < h->ntensors; i++) {
		nametab_key(&k, 0, h->tensors[i].name, h->tensors[i].name_len);
		ok = nametab_find(&tab, &k) == (long)i;
	}
	nametab_key(&k, 0, "__metadata__", 12);
	ok = ok && nametab_find(&tab, &k) == -1;
	nametab_free(&tab);
	return ok;
}

/* What a PyTorch checkpoint's table promises (format/torch): absolute
 * ranges inside the file in file order, a storage per tensor, a
 * contiguous tensor exactly numel elements, unique names. */
static void
check_torch(const struct header *h, uint64_t file_size)
{
	uint64_t last = 0;

	CHECK(h->file_size == file_size);
	CHECK(h->data_len <= file_size);
	CHECK(h->ntensors == 0 || h->tensors != NULL);
	for (size_t i = 0; i < h->ntensors; i++) {
		const struct tensor *t = &h->tensors[i];
		unsigned __int128 numel = 1;

		CHECK(t->begin >= last);
		last = t->begin;
		CHECK(t->begin <= t->end && t->end <= file_size);
		CHECK(t->storage != NULL);
		CHECK((unsigned)t->dtype < DTYPE__COUNT);
		CHECK(t->rank == 0 || t->shape != NULL);
		for (uint32_t j = 0; j < t->rank; j++) {
			numel *= t->shape[j];
			CHECK(numel <= UINT64_MAX);
		}
		CHECK(numel == t->numel);
		if (!t->strides)
			CHECK(t->end - t->begin == numel *
			      (dtype_info(t->dtype)->bits / 8));
		else
			CHECK(t->numel > 0 && t->end > t->begin);
	}
	CHECK(names_unique(h));
	for (size_t i = 0; i < h->nmeta; i++) {
		size_t bad;
		unsigned bad_len;

		CHECK(h->meta[i].key && h->meta[i].val &&
		      h->meta[i].key[h->meta[i].key_len] == '\0');
		/* __metadata__.json must be valid JSON: text, or JSON
		 * text, of valid UTF-8 */
		CHECK(h->meta[i].val[h->meta[i].val_len] == '\0');
		CHECK(text_utf8_check(h->meta[i].val, h->meta[i].val_len, &bad,
				      &bad_len) == 0);
	}
}

static void
check_err(const struct err *e)
{
	CHECK(e->code > ERR_OK && e->code < ERR__COUNT);
	CHECK(memchr(e->where, '\0', sizeof(e->where)) != NULL);
	CHECK(memchr(e->detail, '\0', sizeof(e->detail)) != NULL);
	CHECK(err_name(e->code) != NULL);
}

/* Everything an accepted header promises its users. */
static void
check_header(const struct header *h, uint64_t n, uint64_t file_size)
{
	uint64_t pos = 0;
	size_t i, j;

	CHECK(h->header_len == n);
	CHECK(h->data_start == 8 + n);
	CHECK(h->file_size == file_size);
	CHECK(h->ntensors == 0 || h->tensors != NULL);
	for (i = 0; i < h->ntensors; i++) {
		const struct tensor *t = &h->tensors[i];
		const struct dtype_info *di;
		unsigned __int128 numel = 1, bits;

		/* contiguous from 0, in file order */
		CHECK(t->begin == pos);
		CHECK(t->end >= t->begin);
		pos = t->end;

		CHECK((unsigned)t->dtype < DTYPE__COUNT);
		di = dtype_info(t->dtype);
		CHECK(di && di->bits > 0);
		CHECK(t->rank == 0 || t->shape != NULL);
		for (j = 0; j < t->rank; j++) {
			numel *= t->shape[j];
			/* the reference fails on the first overflow of the
			 * running product, so the prefix must fit */
			CHECK(numel <= UINT64_MAX);
		}
		CHECK(numel == t->numel);
		bits = numel * di->bits;
		CHECK(bits <= UINT64_MAX);
		CHECK(bits % 8 == 0);
		CHECK(bits / 8 == t->end - t->begin);

		CHECK(t->name != NULL);
		CHECK(t->name[t->name_len] == '\0');
	}
	CHECK(h->data_len == pos);
	CHECK(h->data_start + h->data_len == file_size);
	CHECK(h->nmeta == 0 || h->meta != NULL);
	CHECK(h->has_metadata || h->nmeta == 0);
	for (i = 0; i < h->nmeta; i++) {
		const struct meta_pair *p = &h->meta[i];

		CHECK(p->key && p->key[p->key_len] == '\0');
		CHECK(p->val && p->val[p->val_len] == '\0');
	}
	CHECK(names_unique(h));
}

/* A reader backed by memory: `head` holds the first head_len bytes of a
 * file of `size` bytes; the rest reads as zeros.  Records how far into the
 * file any read reached. */
struct mem {
	const uint8_t *head;
	uint64_t head_len;
	uint64_t size;
	uint64_t max_end;	/* highest offset+len requested */
};

static int
mem_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct mem *m = ctx;
	uint64_t end = off + len;
	uint64_t i;

	if (end < off || end > m->size)
		return -5;	/* -EIO: never short */
	if (end > m->max_end)
		m->max_end = end;
	/* copy the stored head, zero the virtual rest */
	for (i = 0; i < len; i++) {
		uint64_t at = off + i;

		((uint8_t *)buf)[i] = at < m->head_len ? m->head[at] : 0;
	}
	return 0;
}

static struct reader
mem_reader(struct mem *m, const uint8_t *head, uint64_t head_len,
	   uint64_t size)
{
	m->head = head;
	m->head_len = head_len;
	m->size = size;
	m->max_end = 0;
	return (struct reader){ mem_pread, m, size, "fuzz" };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct header *ha = NULL, *hb = NULL, *hc = NULL;
	struct err ea, eb, ec;
	struct reader r;
	struct mem mem;
	uint64_t x, n, file_size;
	int ra, rb;

	if (size < 8)
		return 0;
	x = le64(data);
	n = size - 8;
	if (x >> 63)
		file_size = x & ~(1ULL << 63);
	else
		file_size = 8 + n + x;	/* x < 2^63: no wrap */

	/* A: the parser itself */
	err_clear(&ea);
	ra = header_parse((const char *)data + 8, (size_t)n, file_size, &ha,
			  &ea);
	if (ra == 0) {
		CHECK(ha != NULL);
		check_header(ha, n, file_size);
	} else {
		CHECK(ra == -1);
		check_err(&ea);
	}

	/* B: the same header read from a file through a source */
	if (file_size >= 8 + n) {
		uint8_t *file = malloc(size);

		CHECK(file != NULL);
		memcpy(file, data, size);
		for (int i = 0; i < 8; i++)
			file[i] = (uint8_t)(n >> (8 * i));
		r = mem_reader(&mem, file, size, file_size);
		err_clear(&eb);
		rb = header_read(&r, &hb, &eb);
		CHECK(mem.max_end <= 8 + n);
		if (n <= HEADER_MAX_LEN) {
			/* same verdict and same kind of error as A */
			CHECK(rb == ra);
			if (rb)
				CHECK(eb.code == ea.code);
		}
		if (rb == 0)
			check_header(hb, n, file_size);
		else
			check_err(&eb);
		container_free(hb);
		free(file);
	}

	/* C: the raw input as a whole file, prefix and all, through the
	 * container table and, when refused, sniff.c's explanation */
	r = mem_reader(&mem, data, size, size);
	err_clear(&ec);
	if (container_open(&r, &hc, &ec) == 0) {
		/* a safetensors table's data starts after its 8 + n bytes;
		 * GGUF's tables are fuzz_gguf's */
		if (hc->data_start == 0)
			check_torch(hc, size);
		else if (strcmp(hc->format, "safetensors") == 0)
			check_header(hc, le64(data), size);
		container_free(hc);
	} else {
		check_err(&ec);
	}

	container_free(ha);
	return 0;
}
