/* fuzz_index.c - libFuzzer target for the sharded index reader.
 *
 * One temporary directory per process holds two small valid shards,
 * model-00001-of-00002.safetensors and model-00002-of-00002.safetensors.
 * Each input is written there as model.safetensors.index.json and the
 * directory is opened with model_open(), as `stfs DIR` would.  An accepted
 * model must be consistent with its shards; every outcome must leave no
 * descriptor open (checked by the number the next open() returns) and no
 * memory behind (LeakSanitizer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "format/safetensors/header.h"
#include "model/model.h"
#include "base/nametab.h"
#include "source/source.h"
#include "model/summary.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_index: %s:%d: invariant failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

#define SHARD1 "model-00001-of-00002.safetensors"
#define SHARD2 "model-00002-of-00002.safetensors"
#define INDEX "model.safetensors.index.json"

/* Shard 1 holds a, b; shard 2 holds c, x/y and a name with a NUL byte, so
 * that escapes in the index's keys matter.  Three more files give an index
 * something to go wrong with: dup.safetensors (valid, but holds "a" again
 * and "z"), bad.safetensors (its data is one byte short) and
 * escape.safetensors (a symlink to /dev/null: not a regular file). */
static const char hdr1[] =
	"{\"__metadata__\":{\"format\":\"pt\"},"
	"\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
	"\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[8,11]}}";
static const size_t data1 = 11;
static const char hdr2[] =
	"{\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
	"\"x/y\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[8,16]},"
	"\"nul\\u0000z\":{\"dtype\":\"BOOL\",\"shape\":[1],"
	"\"data_offsets\":[16,17]}}";
static const size_t data2 = 17;
static const char hdr_dup[] =
	"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
	"\"z\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[1,3]}}";

static char dir[4096];
static char index_path[4200];
static int base_fd = -1;

static void
put_file(const char *name, const void *p, size_t len)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || (len && fwrite(p, 1, len, f) != len) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A safetensors file: prefix, header padded with spaces to 8, data
 * (ndata bytes of which are written, the header may claim more). */
static void
put_shard(const char *name, const char *hdr, size_t ndata)
{
	size_t n = strlen(hdr), padded = (n + 7) & ~(size_t)7, i;
	unsigned char *file = calloc(1, 8 + padded + ndata + 1);

	if (!file)
		exit(1);
	for (i = 0; i < 8; i++)
		file[i] = (unsigned char)((uint64_t)padded >> (8 * i));
	memcpy(file + 8, hdr, n);
	memset(file + 8 + n, ' ', padded - n);
	for (i = 0; i < ndata; i++)
		file[8 + padded + i] = (unsigned char)(i * 37 + 1);
	put_file(name, file, 8 + padded + ndata);
	free(file);
}

static void
cleanup(void)
{
	const char *names[] = { SHARD1, SHARD2, INDEX, "dup.safetensors",
				"bad.safetensors", "escape.safetensors" };
	char path[4200];
	size_t i;

	if (!dir[0])
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	(void)argc;
	(void)argv;
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/stfs-fuzz-index.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(1);
	}
	atexit(cleanup);
	put_shard(SHARD1, hdr1, data1);
	put_shard(SHARD2, hdr2, data2);
	put_shard("dup.safetensors", hdr_dup, 3);
	put_shard("bad.safetensors", hdr_dup, 2);
	snprintf(index_path, sizeof(index_path), "%s/escape.safetensors", dir);
	if (symlink("/dev/null", index_path) != 0) {
		perror(index_path);
		exit(1);
	}
	snprintf(index_path, sizeof(index_path), "%s/%s", dir, INDEX);

	/* the lowest free descriptor: each run must give it back */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	base_fd = fd;
	close(fd);
	return 0;
}

/* nametab callback over m->tensors */
static int
mtensor_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct tensor *t = ((const struct model *)ctx)->tensors[id].t;

	return t->name_len == k->len && memcmp(t->name, k->name, k->len) == 0;
}

/* No name is in two shards of an accepted set. */
static int
names_unique(const struct model *m)
{
	struct nametab tab;
	struct nametab_key k;
	int ok = 1;

	if (nametab_init(&tab, m->ntensors, mtensor_eq, m) < 0)
		return 1;
	for (size_t i = 0; ok && i < m->ntensors; i++) {
		nametab_key(&k, 0, m->tensors[i].t->name,
			    m->tensors[i].t->name_len);
		ok = nametab_put(&tab, &k, (uint32_t)i) == -1;
	}
	nametab_free(&tab);
	return ok;
}

static void
check_model(const struct model *m)
{
	size_t i, total = 0;
	char *s;

	CHECK(m->sharded == 1);
	/* an empty weight_map is an empty model: no shard opened */
	CHECK(m->nshards <= 3);
	CHECK(m->metadata_json != NULL);
	for (i = 0; i < m->nshards; i++) {
		const struct shard *sh = &m->shards[i];

		CHECK(sh->name && sh->src && sh->hdr);
		/* only the valid files inside the directory can be shards */
		CHECK(strcmp(sh->name, SHARD1) == 0 ||
		      strcmp(sh->name, SHARD2) == 0 ||
		      strcmp(sh->name, "dup.safetensors") == 0);
		CHECK(i == 0 || strcmp(m->shards[i - 1].name, sh->name) != 0);
		total += sh->hdr->ntensors;
	}
	CHECK(m->ntensors == total);
	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[i];
		const struct source *src;

		CHECK(mt->shard < m->nshards);
		src = m->shards[mt->shard].src;
		CHECK(model_tensor_offset(m, mt) + model_tensor_nbytes(mt) <=
		      src->size);
	}
	CHECK(names_unique(m));
	s = summary_json(m, 1);
	CHECK(s != NULL);
	free(s);
}

/* The lowest free descriptor moved.  A descriptor our code leaked points
 * into the directory (a shard, the index, the directory itself): abort.
 * Anything else belongs to the fuzzing machinery (LeakSanitizer's
 * /proc/self/task scan runs between inputs), so take the new number as
 * the baseline and say so once. */
static void
check_fds(int fd)
{
	static int noted;
	char link[64], target[4200];
	int leaked = 0, i;
	ssize_t n;

	for (i = 0; i < 1024; i++) {
		if (i == fd)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", i);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, dir, strlen(dir)) == 0) {
			fprintf(stderr, "fuzz_index: descriptor %d left open on "
				"%s\n", i, target);
			leaked = 1;
		} else if (i >= base_fd && !noted) {
			fprintf(stderr, "fuzz_index: note: descriptor %d (%s) is "
				"not ours\n", i, target);
		}
	}
	CHECK(!leaked);
	if (!noted++)
		fprintf(stderr, "fuzz_index: note: lowest free descriptor "
			"now %d (was %d)\n", fd, base_fd);
	base_fd = fd;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m = NULL;
	struct err e;
	int fd;

	put_file(INDEX, data, size);
	err_clear(&e);
	if (model_open(dir, NULL, &m, &e) == 0) {
		CHECK(m != NULL);
		check_model(m);
		model_free(m);
	} else {
		CHECK(m == NULL);
		CHECK(e.code > ERR_OK && e.code < ERR__COUNT);
		CHECK(memchr(e.where, '\0', sizeof(e.where)) != NULL);
		CHECK(memchr(e.detail, '\0', sizeof(e.detail)) != NULL);
	}

	/* the index named directly takes the same path minus the directory
	 * scan; both must agree */
	{
		struct model *m2 = NULL;
		struct err e2;
		int r2;

		err_clear(&e2);
		r2 = model_open(index_path, NULL, &m2, &e2);
		CHECK((r2 == 0) == (e.code == ERR_OK));
		if (r2 == 0) {
			check_model(m2);
			model_free(m2);
		}
	}

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd != base_fd)
		check_fds(fd);
	close(fd);
	return 0;
}
