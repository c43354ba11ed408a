/* bench_read.c - the timed reader of scripts/bench.
 *
 * Compiled by scripts/bench with cc into a temporary directory, so the
 * reader is the same C code (1 MiB reads into a pre-touched buffer) for
 * the source, stfs and the peers, and the tool is never the bottleneck.
 *
 *   bench_read seq  FILE OFF LEN BS FLAGS          -> "BYTES SECONDS"
 *   bench_read rand FILE OFF LEN BS COUNT PROCS SEED DROP
 *                                                  -> "BYTES SECONDS"
 *   bench_read sum  FILE OFF LEN                   -> "HASH"
 *   bench_read resident FILE                       -> "CACHED TOTAL" pages
 *   bench_read pin FILE...                         -> "pinned", then waits
 *
 * DROP (FLAGS bit 1) first drops FILE's page cache with
 * posix_fadvise(DONTNEED): on a FUSE file that makes every read go to the
 * daemon, while the source the daemon reads from stays cached.  FLAGS bit
 * 2 then says POSIX_FADV_SEQUENTIAL, as cat and cp do (it doubles the
 * kernel's readahead window).  Only the read loop is timed.  A short
 * read is an error: it would make a fast number out of missing bytes.
 *
 * pin maps and mlocks the files until its stdin closes, so that "the
 * source is page-cached" stays true: reclaim (and DAMON's pageout scheme
 * on some VMs, which takes idle unmapped page cache) leaves them alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void
die(const char *what)
{
	fprintf(stderr, "bench_read: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
open_file(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	if (flags & 1) {
		errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (errno)
			die("posix_fadvise");
	}
	if (flags & 2) {
		errno = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		if (errno)
			die("posix_fadvise");
	}
	return fd;
}

static char *
big_buffer(size_t bs)
{
	void *p;

	if (posix_memalign(&p, 4096, bs) != 0)
		die("posix_memalign");
	memset(p, 0, bs);	/* fault it in before the clock starts */
	return p;
}

/* Read exactly n bytes at pos; a short read or error kills the run. */
static void
read_full(int fd, char *buf, size_t n, uint64_t pos)
{
	ssize_t r;

	while (n) {
		r = pread(fd, buf, n, (off_t)pos);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("pread");
		if (r == 0) {
			fprintf(stderr, "bench_read: short read at %" PRIu64
				"\n", pos);
			exit(3);
		}
		buf += r;
		n -= (size_t)r;
		pos += (uint64_t)r;
	}
}

static int
cmd_seq(const char *path, uint64_t off, uint64_t len, size_t bs, int flags)
{
	int fd = open_file(path, flags);
	char *buf = big_buffer(bs);
	uint64_t done = 0;
	double t0, t1;
	size_t n;

	t0 = now();
	while (done < len) {
		n = len - done < bs ? (size_t)(len - done) : bs;
		read_full(fd, buf, n, off + done);
		done += n;
	}
	t1 = now();
	printf("%" PRIu64 " %.9f\n", done, t1 - t0);
	return 0;
}

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* PROCS processes, each with its own descriptor (and so its own
 * readahead state), read COUNT blocks of BS bytes at random 4 KiB-aligned
 * offsets of [OFF, OFF+LEN).  The clock runs from releasing them all at
 * once to the last one finishing. */
static int
cmd_rand(const char *path, uint64_t off, uint64_t len, size_t bs,
	 long count, int procs, uint64_t seed, int drop)
{
	int ready[2], go[2], status, i, fail = 0;
	uint64_t slots;
	double t0, t1;
	char c;

	if (len < bs)
		return fprintf(stderr, "bench_read: range < block\n"), 2;
	slots = (len - bs) / 4096 + 1;
	close(open_file(path, drop));
	if (pipe(ready) || pipe(go))
		die("pipe");
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			uint64_t s = seed * 1000003u + (uint64_t)i + 1;
			int fd = open_file(path, 0);
			char *buf = big_buffer(bs);
			long k;

			close(ready[0]);
			close(go[1]);
			if (write(ready[1], "r", 1) != 1)
				die("write");
			if (read(go[0], &c, 1) < 0)
				die("read");
			for (k = 0; k < count; k++)
				read_full(fd, buf, bs, off + 4096 *
					  (xorshift(&s) % slots));
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < procs; i++)
		if (read(ready[0], &c, 1) != 1)
			die("barrier");
	t0 = now();
	close(go[1]);		/* EOF releases every reader */
	for (i = 0; i < procs; i++) {
		if (wait(&status) < 0)
			die("wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail = 1;
	}
	t1 = now();
	if (fail)
		return fprintf(stderr, "bench_read: a reader failed\n"), 3;
	printf("%" PRIu64 " %.9f\n", (uint64_t)bs * (uint64_t)count *
	       (uint64_t)procs, t1 - t0);
	return 0;
}

/* A position-dependent hash of the range, to check that every reader
 * gets the same bytes (not timed). */
static int
cmd_sum(const char *path, uint64_t off, uint64_t len)
{
	const size_t bs = 1 << 20;
	int fd = open_file(path, 0);
	char *buf = big_buffer(bs);
	uint64_t h[4] = { 1, 2, 3, 4 }, done = 0, w;
	size_t n, j;

	while (done < len) {
		n = len - done < bs ? (size_t)(len - done) : bs;
		read_full(fd, buf, n, off + done);
		memset(buf + n, 0, (8 - n % 8) % 8);
		for (j = 0; j < n; j += 8) {
			memcpy(&w, buf + j, 8);
			h[(j >> 3) & 3] = ((h[(j >> 3) & 3] << 1) |
					   (h[(j >> 3) & 3] >> 63)) ^ w;
		}
		done += n;
	}
	printf("%016" PRIx64 "\n", h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7));
	return 0;
}

static int
cmd_resident(const char *path)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t total, cached = 0, i;
	unsigned char *vec;
	struct stat st;
	void *p;
	int fd = open_file(path, 0);

	if (fstat(fd, &st) != 0)
		die("fstat");
	if (st.st_size == 0)
		return printf("0 0\n"), 0;
	total = ((uint64_t)st.st_size + (uint64_t)pg - 1) / (uint64_t)pg;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	vec = malloc(total);
	if (!vec || mincore(p, (size_t)st.st_size, vec) != 0)
		die("mincore");
	for (i = 0; i < total; i++)
		cached += vec[i] & 1;
	printf("%" PRIu64 " %" PRIu64 "\n", cached, total);
	return 0;
}

static int
cmd_pin(int n, char **paths)
{
	struct stat st;
	char c;
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = open_file(paths[i], 0);
		if (fstat(fd, &st) != 0)
			die("fstat");
		/* Mapped is enough to be spared by DAMON's filter; locked
		 * also keeps ordinary reclaim away, if allowed. */
		if (st.st_size > 0 &&
		    mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED |
			 MAP_POPULATE | MAP_LOCKED, fd, 0) == MAP_FAILED &&
		    mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED |
			 MAP_POPULATE, fd, 0) == MAP_FAILED)
			die(paths[i]);
		close(fd);
	}
	printf("pinned\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "seq") == 0)
		return cmd_seq(argv[2], strtoull(argv[3], NULL, 0),
			       strtoull(argv[4], NULL, 0),
			       strtoull(argv[5], NULL, 0), atoi(argv[6]));
	if (argc == 10 && strcmp(argv[1], "rand") == 0)
		return cmd_rand(argv[2], strtoull(argv[3], NULL, 0),
				strtoull(argv[4], NULL, 0),
				strtoull(argv[5], NULL, 0), atol(argv[6]),
				atoi(argv[7]), strtoull(argv[8], NULL, 0),
				atoi(argv[9]));
	if (argc == 5 && strcmp(argv[1], "sum") == 0)
		return cmd_sum(argv[2], strtoull(argv[3], NULL, 0),
			       strtoull(argv[4], NULL, 0));
	if (argc == 3 && strcmp(argv[1], "resident") == 0)
		return cmd_resident(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "pin") == 0)
		return cmd_pin(argc - 2, argv + 2);
	fprintf(stderr, "usage: see the comment at the top of bench_read.c\n");
	return 2;
}
