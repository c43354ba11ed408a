/* http_disk.c - the persistent disk cache of remote blocks (see
 * http_disk.h for what it promises). */
#include "source/http/http_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "source/http/http_conf.h"
#include "source/http/http_options.h"

/* Blocks are kept EXTENT_BLOCKS to a file, "e" and the extent's number:
 * block k of the extent at k MiB (page aligned), then, after the
 * extent's last block, one tag per block (magic, then the block's 64-bit
 * checksum).  One file per block cost an ext4 inode allocation each: as
 * much CPU as writing the data, and with it the writers fell behind a
 * 32 MB/s-per-connection load.  The tags go after the data, not in a
 * page before it: with that head page (a 16-byte write to page 0 after
 * the megabyte behind it) a load under a 125 MB/s cap on all
 * connections took 11.5 s instead of 10.4 (scripts/bench-load
 * --aggregate 125M; the cause in ext4 was not pinned down).  An older
 * stfs's files (one per block, named by its number; STFSBLK1 and
 * STFSBLK2) are never read: the least recently used, they go first when
 * the cache is trimmed. */
#define TRAILER_MAGIC	"STFSEXT1"
#define TRAILER_LEN	16		/* magic + 64-bit checksum */
#define EXTENT_BLOCKS	16u
#define IDENT_MAX	4096
#define TOUCH_S		60		/* LRU time resolution, seconds */

struct http_disk {
	const struct http_conf *conf;	/* disk_on, disk_dir, disk_max, log */
	int broken;			/* atomic: off after a failure */
	uint64_t written;		/* atomic: bytes since the last trim */
	int trimmed;			/* atomic: trimmed at the first open */
	unsigned seq;			/* atomic: temporary file names */
};

struct http_disk_object {
	struct http_disk *dc;
	int dfd;			/* DIR/v1/KK/KEY */
	/* What is on disk, as far as this process knows (http_disk_has()),
	 * atomic bits: per block "on disk", per extent "its tags read". */
	uint64_t nblocks;
	uint64_t *have;
	uint64_t *seen;
};

static void
bit_set(uint64_t *bits, uint64_t i)
{
	__atomic_or_fetch(&bits[i / 64], 1ull << (i % 64), __ATOMIC_RELAXED);
}

static void
bit_clear(uint64_t *bits, uint64_t i)
{
	__atomic_and_fetch(&bits[i / 64], ~(1ull << (i % 64)),
			   __ATOMIC_RELAXED);
}

static int
bit_get(const uint64_t *bits, uint64_t i)
{
	return (__atomic_load_n(&bits[i / 64], __ATOMIC_RELAXED) >>
		(i % 64)) & 1;
}

struct http_disk *
http_disk_new(const struct http_conf *conf)
{
	struct http_disk *dc = calloc(1, sizeof(*dc));

	if (dc)
		dc->conf = conf;
	return dc;
}

void
http_disk_free(struct http_disk *dc)
{
	free(dc);
}

/* A block's checksum, against torn or damaged files (not against an
 * adversary: the files are the user's own, mode 0600).  XXH3 runs at
 * memory speed (~20 GB/s here, 3x the multiply chain it replaced), which
 * matters because every hit of a second mount verifies a whole block. */
static uint64_t
block_sum(const char *p, size_t n, uint64_t idx)
{
	return XXH3_64bits_withSeed(p, n, idx);
}

static void
off_with_warning(struct http_disk *dc, const char *what, int err)
{
	if (!__atomic_exchange_n(&dc->broken, 1, __ATOMIC_RELAXED))
		http_conf_log(dc->conf, HTTP_LOG_WARNING, "disk cache %s: %s "
			      "(%s); blocks are not cached on disk any more in "
			      "this process", dc->conf->disk_dir ?
			      dc->conf->disk_dir : "?", what, strerror(err));
}

/* mkdir -p, 0700 for what is made here. */
static int
make_dirs(const char *path)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (!p)
		return -1;
	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				rc = -1;
			*s = c;
			if (!c || rc)
				break;
		}
	}
	free(p);
	return rc;
}

/* Write buf to dfd/name through a temporary file and a rename. */
static int
write_file(struct http_disk *dc, int dfd, const char *name, const char *a,
	   size_t alen, const char *b, size_t blen)
{
	char tmp[96];
	int fd, saved;

	snprintf(tmp, sizeof(tmp), ".tmp.%ld.%p.%u", (long)getpid(),
		 (void *)dc, __atomic_add_fetch(&dc->seq, 1,
						__ATOMIC_RELAXED));
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, a, alen) != (ssize_t)alen ||
	    (blen && write(fd, b, blen) != (ssize_t)blen) || close(fd) < 0) {
		saved = errno ? errno : ENOSPC;	/* a short write: full */
		unlinkat(dfd, tmp, 0);
		errno = saved;
		return -1;
	}
	if (renameat(dfd, tmp, dfd, name) < 0) {
		saved = errno;
		unlinkat(dfd, tmp, 0);
		errno = saved;
		return -1;
	}
	return 0;
}

/* The object's identity in its directory: the hash names it, the file
 * "ident" proves it (a hash collision is a miss, never wrong bytes). */
static int
check_ident(struct http_disk *dc, int dfd, const char *ident)
{
	char buf[IDENT_MAX + 1];
	size_t n = strlen(ident);
	ssize_t got;
	int fd = openat(dfd, "ident", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return write_file(dc, dfd, "ident", ident, n, NULL, 0);
	got = read(fd, buf, sizeof(buf));
	close(fd);
	return got == (ssize_t)n && memcmp(buf, ident, n) == 0 ? 0 : -1;
}

struct http_disk_object *
http_disk_open(struct http_disk *dc, const char *url, const char *etag,
	       uint64_t size)
{
	struct http_disk_object *d;
	char *ident = NULL, *dir = NULL;
	XXH128_hash_t h;
	int dfd;

	if (!dc->conf->disk_on || !dc->conf->disk_dir ||
	    __atomic_load_n(&dc->broken, __ATOMIC_RELAXED) || !etag || !*etag ||
	    strncmp(etag, "W/", 2) == 0)
		return NULL;
	if (asprintf(&ident, "stfs disk cache v1\n%s\n%s\n%llu\n", url, etag,
		     (unsigned long long)size) < 0)
		return NULL;
	if (strlen(ident) > IDENT_MAX) {
		free(ident);
		return NULL;
	}
	h = XXH3_128bits(ident, strlen(ident));
	if (asprintf(&dir, "%s/v1/%02x/%016llx%016llx", dc->conf->disk_dir,
		     (unsigned)(h.high64 >> 56), (unsigned long long)h.high64,
		     (unsigned long long)h.low64) < 0) {
		free(ident);
		return NULL;
	}
	d = NULL;
	/* The limit may be lower than last time: enforce it once. */
	if (!__atomic_exchange_n(&dc->trimmed, 1, __ATOMIC_RELAXED))
		http_disk_trim(dc, dc->conf->disk_max);
	if (make_dirs(dir) < 0) {
		off_with_warning(dc, "cannot make the directory", errno);
	} else if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		uint64_t nb = (size + HTTP_BLOCK_BYTES - 1) / HTTP_BLOCK_BYTES;
		uint64_t ne = (nb + EXTENT_BLOCKS - 1) / EXTENT_BLOCKS;

		if (check_ident(dc, dfd, ident) == 0 &&
		    (d = calloc(1, sizeof(*d))) &&
		    (d->have = calloc((size_t)(nb / 64 + 1), 8)) &&
		    (d->seen = calloc((size_t)(ne / 64 + 1), 8))) {
			d->dc = dc;
			d->dfd = dfd;
			d->nblocks = nb;
		} else {
			if (d) {
				free(d->have);
				free(d);
				d = NULL;
			}
			close(dfd);
		}
	}
	free(ident);
	free(dir);
	return d;
}

void
http_disk_close(struct http_disk_object *d)
{
	struct http_disk *dc;

	if (!d)
		return;
	dc = d->dc;
	close(d->dfd);
	free(d->have);
	free(d->seen);
	free(d);
	/* Blocks written since the last trim, e.g. while another thread's
	 * trim held the lock and skipped ours: the limit holds once the
	 * object is closed, so the next mount starts within it. */
	if (__atomic_exchange_n(&dc->written, 0, __ATOMIC_RELAXED) > 0)
		http_disk_trim(dc, dc->conf->disk_max);
}

/* Used within the last TOUCH_S seconds already?  A hit touches the file
 * (the LRU order across mounts) only when not: one metadata write per
 * block a minute rather than one per read. */
static int
recently_used(const struct stat *st)
{
	struct timespec now;

	return clock_gettime(CLOCK_REALTIME, &now) == 0 &&
	       st->st_mtim.tv_sec <= now.tv_sec &&
	       now.tv_sec - st->st_mtim.tv_sec < TOUCH_S;
}

/* Can buf/len go to or from the disk directly (O_DIRECT: DMA, no copy
 * through the page cache)?  Full blocks in the cache's arena can. */
static int
direct_ok(const char *buf, size_t len)
{
	return len == HTTP_BLOCK_BYTES && ((uintptr_t)buf & 4095) == 0;
}

/* pread/pwrite of a block's bytes, directly when the file system lets
 * it (fd's O_DIRECT set for the call), else through the page cache. */
static ssize_t
block_io(int fd, char *buf, size_t len, off_t at, int write)
{
	int fl = fcntl(fd, F_GETFL);
	ssize_t n = -1;

	if (fl >= 0 && direct_ok(buf, len) &&
	    fcntl(fd, F_SETFL, fl | O_DIRECT) == 0) {
		int err;

		n = write ? pwrite(fd, buf, len, at) : pread(fd, buf, len, at);
		err = errno;
		fcntl(fd, F_SETFL, fl);
		errno = err;
		if (n >= 0 || err != EINVAL)
			return n;
	}
	return write ? pwrite(fd, buf, len, at) : pread(fd, buf, len, at);
}

/* Where block idx lives: its extent file's name, its tag's and its
 * bytes' offsets in it. */
static void
place(uint64_t idx, char name[32], off_t *tag, off_t *data)
{
	uint64_t k = idx % EXTENT_BLOCKS;

	snprintf(name, 32, "e%llu", (unsigned long long)(idx / EXTENT_BLOCKS));
	*tag = (off_t)((uint64_t)EXTENT_BLOCKS * HTTP_BLOCK_BYTES +
		       k * TRAILER_LEN);
	*data = (off_t)(k * HTTP_BLOCK_BYTES);
}

int
http_disk_get(struct http_disk_object *d, uint64_t idx, char *buf, size_t len)
{
	char name[32], tag[TRAILER_LEN];
	off_t tag_at, data_at;
	struct stat st;
	uint64_t sum;
	int fd, ok = 0;

	if (!d || __atomic_load_n(&d->dc->broken, __ATOMIC_RELAXED))
		return 0;
	place(idx, name, &tag_at, &data_at);
	fd = openat(d->dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* A block never written reads as a zero tag or a short read; a
	 * torn or damaged one fails its checksum.  Either is a miss, and
	 * the block, fetched again, is written over it. */
	if (pread(fd, tag, TRAILER_LEN, tag_at) == TRAILER_LEN &&
	    memcmp(tag, TRAILER_MAGIC, 8) == 0 &&
	    block_io(fd, buf, len, data_at, 0) == (ssize_t)len) {
		memcpy(&sum, tag + 8, 8);
		ok = sum == block_sum(buf, len, idx);
	}
	if (ok && fstat(fd, &st) == 0 && !recently_used(&st))
		futimens(fd, NULL);	/* recently used: evicted last */
	close(fd);
	if (idx < d->nblocks) {
		if (ok)
			bit_set(d->have, idx);
		else
			bit_clear(d->have, idx);
	}
	return ok;
}

/* The tags of extent e's blocks, read once: each tagged one is likely on
 * disk (a get checks it). */
static void
read_tags(struct http_disk_object *d, uint64_t e)
{
	char name[32], tags[EXTENT_BLOCKS * TRAILER_LEN];
	off_t tag_at, data_at;
	ssize_t n;
	uint64_t k;
	int fd;

	place(e * EXTENT_BLOCKS, name, &tag_at, &data_at);
	fd = openat(d->dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, tags, sizeof(tags), tag_at);
		for (k = 0; n > 0 && k < EXTENT_BLOCKS &&
		     (k + 1) * TRAILER_LEN <= (uint64_t)n; k++)
			if (memcmp(tags + k * TRAILER_LEN, TRAILER_MAGIC,
				   8) == 0 &&
			    e * EXTENT_BLOCKS + k < d->nblocks)
				bit_set(d->have, e * EXTENT_BLOCKS + k);
		close(fd);
	}
	bit_set(d->seen, e);
}

int
http_disk_has(struct http_disk_object *d, uint64_t idx)
{
	if (!d || idx >= d->nblocks ||
	    __atomic_load_n(&d->dc->broken, __ATOMIC_RELAXED))
		return 0;
	if (!bit_get(d->seen, idx / EXTENT_BLOCKS))
		read_tags(d, idx / EXTENT_BLOCKS);
	return bit_get(d->have, idx);
}

int
http_disk_usable(const struct http_disk_object *d)
{
	return d && !__atomic_load_n(&d->dc->broken, __ATOMIC_RELAXED);
}

void
http_disk_put(struct http_disk_object *d, uint64_t idx, const char *buf,
	      size_t len)
{
	char name[32], tag[TRAILER_LEN];
	off_t tag_at, data_at;
	uint64_t sum;
	int fd, err = 0;

	if (!d || __atomic_load_n(&d->dc->broken, __ATOMIC_RELAXED))
		return;
	sum = block_sum(buf, len, idx);
	memcpy(tag, TRAILER_MAGIC, 8);
	memcpy(tag + 8, &sum, 8);
	place(idx, name, &tag_at, &data_at);
	/* No temporary file and rename: the bytes, then the tag that
	 * vouches for them (a reader between the two, here or in another
	 * mount, finds no tag or a checksum that fails: a miss). */
	errno = 0;
	fd = openat(d->dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 ||
	    block_io(fd, (char *)buf, len, data_at, 1) != (ssize_t)len ||
	    pwrite(fd, tag, TRAILER_LEN, tag_at) != TRAILER_LEN)
		err = errno ? errno : ENOSPC;	/* a short write: full */
	if (fd >= 0 && close(fd) < 0 && !err)
		err = errno;
	if (err) {
		off_with_warning(d->dc, "cannot write a block", err);
		return;
	}
	if (idx < d->nblocks)
		bit_set(d->have, idx);
	if (__atomic_add_fetch(&d->dc->written, len, __ATOMIC_RELAXED) >=
	    d->dc->conf->disk_max / 16) {
		__atomic_store_n(&d->dc->written, 0, __ATOMIC_RELAXED);
		http_disk_trim(d->dc, d->dc->conf->disk_max);
	}
}

/* ---- eviction ----------------------------------------------------------- */

struct entry {
	struct timespec mtime;
	uint64_t size;
	char *path;
};

struct entries {
	struct entry *v;
	size_t n, cap;
	uint64_t total;
};

static int
add_entry(struct entries *es, const char *path, const struct stat *st)
{
	/* an extent with blocks not written yet is sparse: count what it
	 * holds on disk */
	uint64_t size = (uint64_t)st->st_size;

	if ((uint64_t)st->st_blocks * 512 < size)
		size = (uint64_t)st->st_blocks * 512;
	if (es->n == es->cap) {
		size_t cap = es->cap ? es->cap * 2 : 1024;
		struct entry *v = realloc(es->v, cap * sizeof(*v));

		if (!v)
			return -1;
		es->v = v;
		es->cap = cap;
	}
	es->v[es->n].mtime = st->st_mtim;
	es->v[es->n].size = size;
	es->v[es->n].path = strdup(path);
	if (!es->v[es->n].path)
		return -1;
	es->total += size;
	es->n++;
	return 0;
}

/* Every block file under dir, depth levels down. */
static void
walk(const char *dir, int depth, struct entries *es)
{
	DIR *dp = opendir(dir);
	struct dirent *de;

	if (!dp)
		return;
	while ((de = readdir(dp)) != NULL) {
		char *p;
		struct stat st;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "ident") == 0)
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			break;
		if (lstat(p, &st) == 0) {
			if (depth > 0 && S_ISDIR(st.st_mode))
				walk(p, depth - 1, es);
			else if (depth == 0 && S_ISREG(st.st_mode))
				add_entry(es, p, &st);
		}
		free(p);
	}
	closedir(dp);
}

static int
older(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return 0;
}

uint64_t
http_disk_trim(struct http_disk *dc, uint64_t max)
{
	const char *dir = dc->conf->disk_dir;
	struct entries es = { 0 };
	char *root = NULL, *lock = NULL;
	uint64_t total;
	size_t i;
	int lfd;

	if (!dir || asprintf(&root, "%s/v1", dir) < 0)
		return 0;
	if (asprintf(&lock, "%s/lock", dir) < 0) {
		free(root);
		return 0;
	}
	/* One trimmer at a time across mounts; a busy one does our work. */
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		if (lfd >= 0)
			close(lfd);
		free(root);
		free(lock);
		return 0;
	}
	walk(root, 2, &es);
	total = es.total;
	if (total > max) {
		uint64_t goal = max - max / 10;	/* some room before the next */

		qsort(es.v, es.n, sizeof(*es.v), older);
		for (i = 0; i < es.n && total > goal; i++)
			if (unlink(es.v[i].path) == 0 || errno == ENOENT)
				total -= es.v[i].size;
	}
	for (i = 0; i < es.n; i++)
		free(es.v[i].path);
	free(es.v);
	close(lfd);
	free(root);
	free(lock);
	return total;
}
