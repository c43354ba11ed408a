/* bench_srcpool.c - what the descriptor pool costs concurrent readers
 * (issue 22.5; for scripts/bench-readers, not a test, asserts nothing).
 *
 *   bench-srcpool FILE THREADS MILLISECONDS [BLOCK]
 *
 * THREADS threads each pin FILE's descriptor (srcpool_get), pread BLOCK
 * bytes (default 4096; 0: no read, the pool alone) at a varying offset,
 * and unpin it (srcpool_put), as every spliced local read of the mount
 * does, for MILLISECONDS; prints "THREADS OPS_PER_SECOND".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "source/srcpool.h"

static struct srcpool_ent *ent;
static size_t block;
static off_t span;
static int stop;

static void *
reader(void *p)
{
	unsigned long long *ops = p;
	char *buf = malloc(block ? block : 1);
	off_t off = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int fd = srcpool_get(ent);

		if (fd >= 0 && block && pread(fd, buf, block, off) < 0)
			perror("pread");
		srcpool_put(ent);
		off = (off + 65536) % span;
		(*ops)++;
	}
	free(buf);
	return NULL;
}

int
main(int argc, char **argv)
{
	unsigned long long ops[256] = { 0 }, total = 0;
	pthread_t th[256];
	struct timespec ts;
	struct stat st;
	int n, ms, fd, i;

	if (argc < 4) {
		fprintf(stderr, "usage: bench-srcpool FILE THREADS MS [BLOCK]\n");
		return 2;
	}
	n = atoi(argv[2]);
	ms = atoi(argv[3]);
	block = argc > 4 ? (size_t)atol(argv[4]) : 4096;
	if (n < 1 || n > 256 || ms < 1)
		return 2;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= (off_t)block) {
		perror(argv[1]);
		return 2;
	}
	span = st.st_size - (off_t)block;
	ent = srcpool_add(argv[1], fd, &st);
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, reader, &ops[i]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += ops[i];
	}
	printf("%d %.0f\n", n, (double)total * 1000.0 / ms);
	srcpool_remove(ent);
	return 0;
}
