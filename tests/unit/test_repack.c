/* test_repack.c - virtual safetensors files (src/model/repack.c): the prefix table
 * against a brute-force one, sizes against rendered bytes, every file
 * accepted by header_parse() with the expected tensors, and reads at
 * random offsets equal to the concatenation built here tensor by tensor.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "format/container.h"
#include "format/safetensors/header.h"
#include "model/model.h"
#include "source/source.h"
#include "model/repack.h"
#include "suites.h"

static char tmpdir[256];

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/stfs-repack-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

struct spec {
	const char *name;	/* NUL-terminated here for simplicity */
	size_t nbytes;		/* U8, shape [nbytes] */
};

/* Write a file whose tensors are stored in the order given (not name
 * order), with meta (a JSON fragment like "\"k\":\"v\"" or NULL). */
static void
write_st(const char *file, const struct spec *t, size_t n, const char *meta,
	 unsigned seed)
{
	char path[512], *json;
	size_t cap = 4096 + n * 300, len = 0, i, data = 0, pad;
	FILE *f;

	json = malloc(cap);
	ck_assert_ptr_nonnull(json);
	len += (size_t)snprintf(json + len, cap - len, "{");
	if (meta)
		len += (size_t)snprintf(json + len, cap - len,
					"\"__metadata__\":{%s}%s", meta,
					n ? "," : "");
	for (i = 0; i < n; i++) {
		len += (size_t)snprintf(json + len, cap - len,
			"%s\"%s\":{\"dtype\":\"U8\",\"shape\":[%zu],"
			"\"data_offsets\":[%zu,%zu]}", i ? "," : "",
			t[i].name, t[i].nbytes, data, data + t[i].nbytes);
		data += t[i].nbytes;
	}
	len += (size_t)snprintf(json + len, cap - len, "}");
	pad = (8 - len % 8) % 8;
	snprintf(path, sizeof(path), "%s/%s", tmpdir, file);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < 8; i++)
		fputc((int)(((uint64_t)(len + pad) >> (8 * i)) & 0xff), f);
	fwrite(json, 1, len, f);
	for (i = 0; i < pad; i++)
		fputc(' ', f);
	for (i = 0; i < data; i++)
		fputc((int)((i * 131 + seed * 17 + i / 7) & 0xff), f);
	fclose(f);
	free(json);
}

static struct model *
open_model(const char *file)
{
	char path[512];
	struct model *m;
	struct err e = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmpdir, file);
	ck_assert_msg(model_open(path, NULL, &m, &e) == 0, "%s", e.detail);
	return m;
}

/* Read all of virtual file (id, strip) through repack_file_map in pieces of
 * at most step bytes and nseg segments. */
static char *
read_virtual(struct repack *v, size_t id, int strip, uint64_t off, uint64_t len,
	     size_t nseg)
{
	const struct model *m = repack_model(v);
	struct repack_file *f;
	struct repack_seg segs[8];
	struct err e = { 0 };
	char *out = malloc(len ? len : 1);
	uint64_t done = 0;

	ck_assert_ptr_nonnull(out);
	ck_assert_msg(repack_file_get(v, id, strip, &f, &e) == 0, "%s",
		      e.detail);
	while (done < len) {
		uint64_t covered, got = 0;
		size_t k, i;

		k = repack_file_map(f, off + done, len - done, segs, nseg,
				 &covered);
		ck_assert_uint_gt(k, 0);
		for (i = 0; i < k; i++) {
			if (segs[i].mem)
				memcpy(out + done + got, segs[i].mem,
				       segs[i].len);
			else
				ck_assert_int_eq(source_pread(
					m->shards[segs[i].shard].src,
					out + done + got, segs[i].len,
					segs[i].off), 0);
			got += segs[i].len;
		}
		ck_assert_uint_eq(got, covered);
		done += covered;
	}
	repack_file_put(v, f);
	return out;
}

/* The expected data section of a file: its tensors' bytes in model order,
 * read tensor by tensor. */
static char *
expected_data(const struct model *m, const char *prefix, size_t *len)
{
	size_t i, plen = prefix ? strlen(prefix) : 0, n = 0;
	char *out = NULL;

	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[i];
		uint64_t nb = model_tensor_nbytes(mt);

		if (prefix && !(mt->t->name_len > plen &&
				memcmp(mt->t->name, prefix, plen) == 0 &&
				mt->t->name[plen] == '.'))
			continue;
		out = realloc(out, n + nb + 1);
		ck_assert_ptr_nonnull(out);
		ck_assert_int_eq(source_pread(m->shards[mt->shard].src,
			out + n, nb, model_tensor_offset(m, mt)), 0);
		n += nb;
	}
	*len = n;
	return out ? out : calloc(1, 1);
}

/* One file: size before rendering == rendered size, header accepted by
 * header_parse with the expected names in model order, data equal to the
 * concatenation, random reads equal to slices of the whole. */
static void
check_file(struct repack *v, size_t id, int strip)
{
	const struct model *m = repack_model(v);
	const char *prefix = NULL, *hdr;
	char pbuf[512], *whole, *exp;
	struct repack_file *f;
	struct header *h;
	struct err e = { 0 };
	uint64_t size, n;
	size_t plen = 0, hlen, dlen, i, k = 0;

	if (id != REPACK_WHOLE) {
		prefix = repack_prefix(v, id, &plen);
		ck_assert_uint_lt(plen, sizeof(pbuf));
		memcpy(pbuf, prefix, plen);
		pbuf[plen] = '\0';
		prefix = pbuf;
	}
	ck_assert_msg(repack_size(v, id, strip, &size, &e) == 0, "%s", e.detail);
	ck_assert_int_eq(repack_file_get(v, id, strip, &f, &e), 0);
	ck_assert_uint_eq(repack_file_size(f), size);
	hdr = repack_file_header(f, &hlen);
	ck_assert_uint_eq(hlen % 8, 0);
	n = 0;
	for (i = 0; i < 8; i++)
		n |= (uint64_t)(unsigned char)hdr[i] << (8 * i);
	ck_assert_uint_eq(n + 8, hlen);
	ck_assert_msg(header_parse(hdr + 8, hlen - 8, size, &h, &e) == 0,
		      "%s: %s", err_name(e.code), e.detail);
	ck_assert_uint_eq(h->ntensors, repack_ntensors(v, id));
	for (i = 0; i < m->ntensors; i++) {
		const struct tensor *t = m->tensors[i].t;
		const struct tensor *ht;

		if (prefix && !(t->name_len > plen &&
				memcmp(t->name, prefix, plen) == 0 &&
				t->name[plen] == '.'))
			continue;
		/* h's tensors are in data order: ours keep model order */
		ht = &h->tensors[k++];
		if (strip) {
			ck_assert_uint_eq(ht->name_len, t->name_len - plen - 1);
			ck_assert(memcmp(ht->name, t->name + plen + 1,
					 ht->name_len) == 0);
		} else {
			ck_assert_uint_eq(ht->name_len, t->name_len);
			ck_assert(memcmp(ht->name, t->name, t->name_len) == 0);
		}
		ck_assert_int_eq(ht->dtype, t->dtype);
		ck_assert_uint_eq(ht->end - ht->begin, t->end - t->begin);
	}
	ck_assert_uint_eq(k, h->ntensors);
	/* the rest of the header is spaces */
	ck_assert_ptr_nonnull(memchr(hdr + 8, '}', hlen - 8));
	for (i = hlen; i > 8 && hdr[i - 1] != '}'; i--)
		ck_assert_int_eq(hdr[i - 1], ' ');
	ck_assert_uint_lt(hlen - i, 8);

	exp = expected_data(m, prefix, &dlen);
	ck_assert_uint_eq(hlen + dlen, size);
	whole = read_virtual(v, id, strip, 0, size, 8);
	ck_assert(memcmp(whole, hdr, hlen) == 0);
	ck_assert(memcmp(whole + hlen, exp, dlen) == 0);
	for (i = 0; i < 50; i++) {
		uint64_t off = (uint64_t)rand() % (size + 1);
		uint64_t len = (uint64_t)rand() % (size - off + 1);
		char *part = read_virtual(v, id, strip, off, len,
					  1 + (size_t)rand() % 3);

		ck_assert(memcmp(part, whole + off, len) == 0);
		free(part);
	}
	{
		/* past the end: nothing; straddling: clipped */
		struct repack_seg s[4];
		uint64_t cov;

		ck_assert_uint_eq(repack_file_map(f, size, 10, s, 4, &cov), 0);
		ck_assert_uint_eq(cov, 0);
		repack_file_map(f, size - 1, 10, s, 4, &cov);
		ck_assert_uint_eq(cov, 1);
	}
	container_free(h);
	free(exp);
	free(whole);
	repack_file_put(v, f);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every prefix by brute force: each name cut before each of its dots. */
static void
check_prefixes(struct repack *v, const struct spec *t, size_t n)
{
	char **all = NULL;
	size_t na = 0, i, j, u = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; t[i].name[j]; j++) {
			if (t[i].name[j] != '.')
				continue;
			all = realloc(all, (na + 1) * sizeof(*all));
			all[na++] = strndup(t[i].name, j);
		}
	}
	qsort(all, na, sizeof(*all), cmp_str);
	for (i = 0; i < na; i++) {
		size_t plen, cnt = 0;
		const char *p;

		if (i && strcmp(all[i], all[i - 1]) == 0)
			continue;
		u++;
		p = repack_prefix(v, u, &plen);
		ck_assert_uint_eq(plen, strlen(all[i]));
		ck_assert(memcmp(p, all[i], plen) == 0);
		ck_assert_uint_eq(repack_find(v, all[i], plen), u);
		for (j = 0; j < n; j++)
			if (strncmp(t[j].name, all[i], plen) == 0 &&
			    t[j].name[plen] == '.')
				cnt++;
		ck_assert_uint_gt(cnt, 0);
		ck_assert_uint_eq(repack_ntensors(v, u), cnt);
	}
	ck_assert_uint_eq(repack_nprefixes(v), u);
	for (i = 0; i < na; i++)
		free(all[i]);
	free(all);
}

static const struct spec sd[] = {
	/* stored out of name order, nested prefixes, a leaf that is also
	 * a prefix, empty components, a zero-byte tensor */
	{ "model.layers.1.mlp.weight", 24 },
	{ "first_stage_model.decoder.conv.weight", 13 },
	{ "model.layers.0.mlp.weight", 24 },
	{ "model.layers.0.attn.q", 7 },
	{ "lm_head.weight", 5 },
	{ "first_stage_model.encoder.conv.bias", 3 },
	{ "a.b", 2 },
	{ "a.b.c", 9 },
	{ "a..x", 1 },
	{ ".lead", 4 },
	{ "trail.", 6 },
	{ "model-x.y", 3 },
	{ "empty.t", 0 },
	{ "noprefix", 11 },
	{ "q\\\"uote.t", 2 },
};
#define NSD (sizeof(sd) / sizeof(sd[0]))

START_TEST(test_single_file)
{
	struct model *m;
	struct repack *v;
	struct err e = { 0 };
	size_t id, plen;
	const char *p;

	write_st("sd.safetensors", sd, NSD, "\"format\":\"pt\",\"z\":\"\\n\"",
		 1);
	m = open_model("sd.safetensors");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_uint_eq(repack_ntensors(v, REPACK_WHOLE), NSD);
	/* the spec names hold a JSON escape: compare decoded prefixes */
	ck_assert_uint_eq(repack_find(v, "model", 5) != 0, 1);
	ck_assert_uint_eq(repack_ntensors(v, repack_find(v, "model", 5)), 3);
	ck_assert_uint_eq(repack_ntensors(v, repack_find(v, "model.layers.0", 14)),
			  2);
	ck_assert_uint_eq(repack_ntensors(v, repack_find(v, "first_stage_model",
						    17)), 2);
	ck_assert_uint_eq(repack_ntensors(v, repack_find(v, "a", 1)), 3);
	ck_assert_uint_eq(repack_ntensors(v, repack_find(v, "a.", 2)), 1);
	ck_assert_uint_eq(repack_find(v, "", 0) != 0, 1);	/* ".lead" */
	ck_assert_uint_eq(repack_find(v, "noprefix", 8), 0);
	ck_assert_uint_eq(repack_find(v, "model.layers.0.mlp.weight", 25), 0);
	ck_assert_uint_eq(repack_find(v, "mode", 4), 0);
	ck_assert_uint_eq(repack_find(v, "q\\\"uote", 7), 0);
	ck_assert_uint_ne(repack_find(v, "q\"uote", 6), 0);
	p = repack_prefix(v, REPACK_WHOLE, &plen);
	ck_assert_ptr_null(p);
	/* ids follow byte order */
	for (id = 2; id <= repack_nprefixes(v); id++) {
		size_t al, bl;
		const char *a = repack_prefix(v, id - 1, &al);
		const char *b = repack_prefix(v, id, &bl);
		int c = memcmp(a, b, al < bl ? al : bl);

		ck_assert(c < 0 || (c == 0 && al < bl));
	}
	check_file(v, REPACK_WHOLE, 0);
	for (id = 1; id <= repack_nprefixes(v); id++) {
		check_file(v, id, 0);
		check_file(v, id, 1);
	}
	/* the whole single file is one run: a read is 2 segments */
	{
		struct repack_file *f;
		struct repack_seg s[4];
		uint64_t cov;

		ck_assert_int_eq(repack_file_get(v, REPACK_WHOLE, 0, &f, &e), 0);
		ck_assert_uint_eq(repack_file_map(f, 0, UINT64_MAX, s, 4, &cov),
				  2);
		ck_assert_uint_eq(cov, repack_file_size(f));
		ck_assert_ptr_null(s[1].mem);
		ck_assert_uint_eq(s[1].off, m->shards[0].hdr->data_start);
		repack_file_put(v, f);
	}
	/* the header carries the file's __metadata__ first */
	{
		struct repack_file *f;
		const char *h;
		size_t hl;
		static const char want[] = "{\"__metadata__\":{\"format\":"
			"\"pt\",\"z\":\"\\n\"},\"model.layers.1.mlp.weight\":"
			"{\"dtype\":\"U8\",\"shape\":[24],\"data_offsets\":"
			"[0,24]},";

		ck_assert_int_eq(repack_file_get(v, REPACK_WHOLE, 0, &f, &e), 0);
		h = repack_file_header(f, &hl);
		ck_assert(memcmp(h + 8, want, sizeof(want) - 1) == 0);
		repack_file_put(v, f);
	}
	repack_free(v);
	model_free(m);
}
END_TEST

START_TEST(test_brute_force_prefixes)
{
	static const char alpha[] = "ab.";
	struct spec t[300];
	char names[300][16];
	struct model *m;
	struct repack *v;
	struct err e = { 0 };
	size_t n = 0, i, j;

	srand(7);
	/* random names over {a,b,.}: many shared and empty components */
	while (n < 300) {
		size_t len = 1 + (size_t)rand() % 12, k;

		for (j = 0; j < len; j++)
			names[n][j] = alpha[rand() % 3];
		names[n][len] = '\0';
		for (k = 0; k < n; k++)
			if (strcmp(names[k], names[n]) == 0)
				break;
		if (k < n || strcmp(names[n], "__metadata__") == 0)
			continue;
		t[n].name = names[n];
		t[n].nbytes = (size_t)rand() % 5;
		n++;
	}
	write_st("rnd.safetensors", t, n, NULL, 3);
	m = open_model("rnd.safetensors");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	check_prefixes(v, t, n);
	check_file(v, REPACK_WHOLE, 0);
	for (i = 1; i <= repack_nprefixes(v); i += 7) {
		check_file(v, i, 0);
		check_file(v, i, 1);
	}
	repack_free(v);
	model_free(m);
}
END_TEST

START_TEST(test_no_metadata_and_strip_clash)
{
	static const struct spec t[] = {
		{ "x.__metadata__", 4 },
		{ "x.w", 4 },
	};
	struct model *m;
	struct repack *v;
	struct repack_file *f;
	struct err e = { 0 };
	uint64_t size;
	size_t id, hl;
	const char *h;

	write_st("c.safetensors", t, 2, NULL, 5);
	m = open_model("c.safetensors");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	id = repack_find(v, "x", 1);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(repack_offered(v, id, 0), 1);
	ck_assert_int_eq(repack_offered(v, id, 1), 0);
	ck_assert_int_eq(repack_size(v, id, 1, &size, &e), -1);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(repack_file_get(v, id, 1, &f, &e), -1);
	check_file(v, id, 0);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(repack_file_get(v, REPACK_WHOLE, 0, &f, &e), 0);
	h = repack_file_header(f, &hl);
	ck_assert(memcmp(h + 8, "{\"x.__metadata__\":", 18) == 0);
	repack_file_put(v, f);
	repack_free(v);
	model_free(m);
}
END_TEST

START_TEST(test_empty_model)
{
	struct model *m;
	struct repack *v;
	struct err e = { 0 };
	uint64_t size;

	write_st("e.safetensors", NULL, 0, "\"k\":\"v\"", 0);
	m = open_model("e.safetensors");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_uint_eq(repack_nprefixes(v), 0);
	ck_assert_int_eq(repack_size(v, REPACK_WHOLE, 0, &size, &e), 0);
	ck_assert_uint_eq(size, 8 + 32);	/* {"__metadata__":{"k":"v"}} */
	check_file(v, REPACK_WHOLE, 0);
	repack_free(v);
	model_free(m);
}
END_TEST

/* Tensors each far below the limit of one (format/tensor_size.h) whose
 * sum does not fit a file: four of 2^62 bytes, whose offsets wrapped to 0
 * (a file of a few bytes claiming [0, 2^62], ...).  The table is written
 * over after opening, as a remote server may claim such sizes. */
START_TEST(test_data_too_big)
{
	static const struct spec t[] = {
		{ "a.x", 1 }, { "b.x", 1 }, { "c.x", 1 }, { "d.x", 1 },
	};
	struct header *h;
	struct model *m;
	struct repack *v;
	struct repack_file *f;
	struct err e = { 0 };
	const char *hdr, *want = "{\"x\":{\"dtype\":\"U8\",\"shape\":[1],"
				 "\"data_offsets\":[0,4611686018427387904]}}";
	uint64_t size;
	size_t i, hl;

	write_st("big.safetensors", t, 4, NULL, 0);
	m = open_model("big.safetensors");
	h = m->shards[0].hdr;
	for (i = 0; i < h->ntensors; i++) {
		h->tensors[i].begin = (uint64_t)i << 62;
		h->tensors[i].end = h->tensors[i].begin + (1ull << 62);
	}
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_int_eq(repack_size(v, REPACK_WHOLE, 0, &size, &e), -1);
	ck_assert_int_eq(e.code, ERR_VALIDATION_OVERFLOW);
	ck_assert_msg(strstr(e.detail, "4611686018427387904"), "%s", e.detail);
	err_clear(&e);
	ck_assert_int_eq(repack_file_get(v, REPACK_WHOLE, 0, &f, &e), -1);
	ck_assert_int_eq(e.code, ERR_VALIDATION_OVERFLOW);
	/* one of them alone is at the limit: a file */
	err_clear(&e);
	ck_assert_int_eq(repack_size(v, repack_find(v, "c", 1), 1, &size, &e),
			 0);
	ck_assert_int_eq(repack_file_get(v, repack_find(v, "c", 1), 1, &f,
					 &e), 0);
	ck_assert_uint_eq(repack_file_size(f), size);
	hdr = repack_file_header(f, &hl);
	ck_assert_uint_eq(size, hl + (1ull << 62));
	ck_assert_ptr_nonnull(memmem(hdr, hl, want, strlen(want)));
	repack_file_put(v, f);
	repack_free(v);
	model_free(m);
}
END_TEST

/* A tensor named "__metadata__" (a GGUF file may have one): the whole
 * file would be unreadable (its metadata's key), so it is refused; the
 * prefix files are not touched.  It was written as a second
 * "__metadata__" entry (fuzz_render). */
START_TEST(test_tensor_named_metadata)
{
	static const struct spec t[] = { { "a.x", 2 }, { "b", 3 } };
	struct model *m;
	struct repack *v;
	struct repack_file *f;
	struct err e = { 0 };
	uint64_t size;
	size_t i;

	write_st("meta.safetensors", t, 2, NULL, 0);
	m = open_model("meta.safetensors");
	for (i = 0; i < m->ntensors; i++) {
		struct tensor *x = &m->shards[0].hdr->tensors[i];

		if (x->name_len == 1) {
			x->name = "__metadata__";
			x->name_len = 12;
		}
	}
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_int_eq(repack_offered(v, REPACK_WHOLE, 0), 0);
	ck_assert_int_eq(repack_size(v, REPACK_WHOLE, 0, &size, &e), -1);
	ck_assert_msg(strstr(e.detail, "\"__metadata__\""), "%s", e.detail);
	err_clear(&e);
	ck_assert_int_eq(repack_file_get(v, REPACK_WHOLE, 0, &f, &e), -1);
	err_clear(&e);
	ck_assert_int_eq(repack_size(v, repack_find(v, "a", 1), 0, &size, &e),
			 0);
	check_file(v, repack_find(v, "a", 1), 0);
	repack_free(v);
	model_free(m);
}
END_TEST

static void
write_index(const char *json)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/model.safetensors.index.json",
		 tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(json, f);
	fclose(f);
}

static const struct spec s1[] = {
	{ "model.layers.1.w", 10 }, { "model.embed", 6 }, { "b.x", 3 },
};
static const struct spec s2[] = {
	{ "model.layers.0.w", 10 }, { "lm_head.w", 5 }, { "b.y", 2 },
};
#define IDX "{\"metadata\":{\"total_size\":36,\"note\":\"n\"},\"weight_map\":{" \
	"\"model.layers.1.w\":\"s1.safetensors\"," \
	"\"model.embed\":\"s1.safetensors\",\"b.x\":\"s1.safetensors\"," \
	"\"model.layers.0.w\":\"s2.safetensors\"," \
	"\"lm_head.w\":\"s2.safetensors\",\"b.y\":\"s2.safetensors\"}}"

static const char *
meta_of(struct repack *v, char *out, size_t cap)
{
	struct repack_file *f;
	struct err e = { 0 };
	const char *h, *end;
	size_t hl;

	ck_assert_int_eq(repack_file_get(v, REPACK_WHOLE, 0, &f, &e), 0);
	h = repack_file_header(f, &hl);
	end = memchr(h + 8, '}', hl - 8);
	ck_assert_ptr_nonnull(end);
	snprintf(out, cap, "%.*s", (int)(end + 1 - (h + 8)), h + 8);
	repack_file_put(v, f);
	return out;
}

START_TEST(test_sharded)
{
	struct model *m;
	struct repack *v;
	struct err e = { 0 };
	char meta[256];
	size_t id;

	/* shards agree (same pairs, other order): the first shard's */
	write_st("s1.safetensors", s1, 3, "\"format\":\"pt\",\"a\":\"1\"", 1);
	write_st("s2.safetensors", s2, 3, "\"a\":\"1\",\"format\":\"pt\"", 2);
	write_index(IDX);
	m = open_model("model.safetensors.index.json");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_str_eq(meta_of(v, meta, sizeof(meta)),
			 "{\"__metadata__\":{\"format\":\"pt\",\"a\":\"1\"}");
	check_file(v, REPACK_WHOLE, 0);
	for (id = 1; id <= repack_nprefixes(v); id++) {
		check_file(v, id, 0);
		check_file(v, id, 1);
	}
	/* "b" spans both shards: one run in each */
	{
		struct repack_file *f;
		struct repack_seg s[4];
		uint64_t cov;

		id = repack_find(v, "b", 1);
		ck_assert_int_eq(repack_file_get(v, id, 1, &f, &e), 0);
		ck_assert_uint_eq(repack_file_map(f, 0, UINT64_MAX, s, 4, &cov),
				  3);
		ck_assert_uint_eq(s[1].shard, 0);
		ck_assert_uint_eq(s[2].shard, 1);
		ck_assert_uint_eq(s[1].len, 3);
		ck_assert_uint_eq(s[2].len, 2);
		repack_file_put(v, f);
	}
	repack_free(v);
	model_free(m);

	/* shards disagree: the index's metadata, numbers as text */
	write_st("s2.safetensors", s2, 3, "\"format\":\"np\"", 2);
	m = open_model("model.safetensors.index.json");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_str_eq(meta_of(v, meta, sizeof(meta)),
			 "{\"__metadata__\":{\"total_size\":\"36\","
			 "\"note\":\"n\"}");
	check_file(v, REPACK_WHOLE, 0);
	repack_free(v);
	model_free(m);

	/* one shard without __metadata__: disagree; no index metadata */
	write_st("s2.safetensors", s2, 3, NULL, 2);
	write_index("{\"weight_map\":{"
		    "\"model.layers.1.w\":\"s1.safetensors\","
		    "\"model.embed\":\"s1.safetensors\",\"b.x\":\"s1.safetensors\","
		    "\"model.layers.0.w\":\"s2.safetensors\","
		    "\"lm_head.w\":\"s2.safetensors\",\"b.y\":\"s2.safetensors\"}}");
	m = open_model("model.safetensors.index.json");
	ck_assert_int_eq(repack_open(m, &v, &e), 0);
	ck_assert_str_eq(meta_of(v, meta, sizeof(meta)),
			 "{\"model.layers.1.w\":{\"dtype\":\"U8\",\"shape\":"
			 "[10],\"data_offsets\":[0,10]}");
	check_file(v, REPACK_WHOLE, 0);
	repack_free(v);
	model_free(m);
}
END_TEST

/* Many threads getting and putting files: the cache stays consistent
 * (run under valgrind/ASan by CI). */
static struct repack *tv;

static void *
hammer(void *arg)
{
	size_t i, np = repack_nprefixes(tv);
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (i = 0; i < 200; i++) {
		struct repack_file *f;
		struct err e = { 0 };
		size_t id = (size_t)rand_r(&seed) % (np + 1);

		ck_assert_int_eq(repack_file_get(tv, id, 0, &f, &e), 0);
		ck_assert_uint_gt(repack_file_size(f), 8);
		repack_file_put(tv, f);
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct model *m;
	struct err e = { 0 };
	pthread_t th[4];
	size_t i;

	write_st("sd.safetensors", sd, NSD, NULL, 1);
	m = open_model("sd.safetensors");
	ck_assert_int_eq(repack_open(m, &tv, &e), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, hammer,
						(void *)(uintptr_t)i), 0);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	repack_free(tv);
	model_free(m);
}
END_TEST

Suite *
repack_suite(void)
{
	Suite *s = suite_create("repack");
	TCase *tc = tcase_create("repack");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_single_file);
	tcase_add_test(tc, test_brute_force_prefixes);
	tcase_add_test(tc, test_no_metadata_and_strip_clash);
	tcase_add_test(tc, test_empty_model);
	tcase_add_test(tc, test_data_too_big);
	tcase_add_test(tc, test_tensor_named_metadata);
	tcase_add_test(tc, test_sharded);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}
