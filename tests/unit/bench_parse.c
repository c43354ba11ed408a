/* bench_parse.c - time header_parse() on a safetensors file's header and
 * measure the memory the index keeps (driven by scripts/bench-parse).
 *
 *   bench-parse FILE [RUNS]
 *
 * Reads the 8-byte prefix and the header into memory once, then parses it
 * RUNS times (default 7).  Prints one line of key=value pairs:
 *   header_bytes tensors runs median_ms min_ms
 *   index_rss_kib  resident memory held after parsing once, with the header
 *                  text freed (what a mounted filesystem keeps)
 *   peak_rss_kib   VmHWM growth during load + one parse (text + index)
 * The memory figures come from a fresh parse before any timing run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "format/container.h"
#include "format/safetensors/header.h"

/* VmRSS or VmHWM from /proc/self/status, in KiB. */
static long
status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t klen = strlen(key);
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static char *
load_header(const char *path, size_t *n, uint64_t *file_size)
{
	unsigned char prefix[8];
	struct stat st;
	uint64_t len = 0;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || pread(fd, prefix, 8, 0) != 8) {
		perror(path);
		exit(2);
	}
	for (int i = 7; i >= 0; i--)
		len = len << 8 | prefix[i];
	if (len > HEADER_MAX_LEN || len + 8 > (uint64_t)st.st_size) {
		fprintf(stderr, "%s: bad header length\n", path);
		exit(2);
	}
	buf = malloc(len ? len : 1);
	if (!buf || pread(fd, buf, len, 8) != (ssize_t)len) {
		perror(path);
		exit(2);
	}
	close(fd);
	*n = len;
	*file_size = (uint64_t)st.st_size;
	return buf;
}

static struct header *
parse_or_die(const char *buf, size_t n, uint64_t file_size)
{
	struct header *h;
	struct err e = { 0 };

	if (header_parse(buf, n, file_size, &h, &e) < 0) {
		err_print("bench-parse", &e);
		exit(1);
	}
	return h;
}

int
main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	long rss0, hwm0, index_kib, peak_kib;
	double *ms;
	uint64_t file_size;
	size_t n, ntensors;
	struct header *h;
	char *buf;

	if (argc < 2 || runs < 1) {
		fprintf(stderr, "usage: bench-parse FILE [RUNS]\n");
		return 2;
	}
	rss0 = status_kib("VmRSS");
	hwm0 = status_kib("VmHWM");
	buf = load_header(argv[1], &n, &file_size);

	/* memory: one parse, then drop the text */
	h = parse_or_die(buf, n, file_size);
	ntensors = h->ntensors;
	peak_kib = status_kib("VmHWM") - hwm0;
	free(buf);
	index_kib = status_kib("VmRSS") - rss0;
	container_free(h);

	buf = load_header(argv[1], &n, &file_size);
	ms = calloc((size_t)runs, sizeof(*ms));
	if (!ms)
		return 1;
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms();

		h = parse_or_die(buf, n, file_size);
		ms[i] = now_ms() - t0;
		container_free(h);
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
	printf("header_bytes=%zu tensors=%zu runs=%d median_ms=%.3f "
	       "min_ms=%.3f index_rss_kib=%ld peak_rss_kib=%ld\n", n, ntensors,
	       runs, ms[runs / 2], ms[0], index_kib, peak_kib);
	free(ms);
	free(buf);
	return 0;
}
