/* bench_stats.c - throughput of tensor_stats over in-memory data (for
 * scripts/bench-stats; not a test, asserts nothing).  Prints, per dtype,
 * the bytes per second of CPU time of one thread: tensor_stats_feed() in 4 MiB
 * chunks as stfs-inspect --stats and .stats/ use it, then tensor_stats_finish().
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "view/npy.h"
#include "view/tensor_stats.h"

#define CHUNK (TENSOR_STATS_GRAIN * 87381)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Roughly normal values: the sum of four uniforms, centred. */
static float
normalish(void)
{
	double s = 0;
	int k;

	for (k = 0; k < 4; k++)
		s += (double)(rnd() >> 11) / 9007199254740992.0;
	return (float)((s - 2.0) * 1.7);
}

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
bench(const char *label, enum dtype d, const uint8_t *buf, size_t len,
      int runs)
{
	double best = INFINITY;
	int r;

	for (r = 0; r < runs; r++) {
		struct tensor_stats_acc a;
		struct tensor_stats s;
		size_t off;
		double t0;

		if (tensor_stats_init(&a, d))
			exit(2);
		t0 = cpu_seconds();
		for (off = 0; off < len; off += CHUNK)
			tensor_stats_feed(&a, buf + off,
				    len - off < CHUNK ? len - off : CHUNK);
		tensor_stats_finish(&a, &s);
		t0 = cpu_seconds() - t0;
		if (t0 < best)
			best = t0;
		if (r == 0 && s.finite == 0)
			printf("(no finite value?)\n");
	}
	printf("%-8s %7.0f MiB  %6.3f s  %6.2f GB/s per core (best of %d)\n",
	       label, (double)len / 1048576.0, best, (double)len / best / 1e9,
	       runs);
}

int
main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	size_t len = mib << 20, i;
	uint8_t *f32 = malloc(len), *half = malloc(len), *b8 = malloc(len);

	if (!f32 || !half || !b8 || !mib || runs < 1) {
		fprintf(stderr, "usage: bench-stats [MiB [RUNS]]\n");
		return 2;
	}
	for (i = 0; i < len / 4; i++) {
		float f = normalish();
		uint32_t b = npy_f32_bits(f);

		memcpy(f32 + 4 * i, &f, 4);
		if (2 * i + 1 < len) {
			half[2 * i] = (uint8_t)(b >> 16);
			half[2 * i + 1] = (uint8_t)(b >> 24);
		}
	}
	/* the upper half of the 16-bit buffer: more BF16 values */
	memcpy(half + len / 2, half, len / 2);
	for (i = 0; i < len; i++)
		b8[i] = (uint8_t)rnd();
	bench("F32", DTYPE_F32, f32, len, runs);
	bench("BF16", DTYPE_BF16, half, len, runs);
	bench("F16", DTYPE_F16, half, len, runs);
	bench("F8_E4M3", DTYPE_F8_E4M3, b8, len, runs);
	bench("F4", DTYPE_F4, b8, len, runs);
	bench("F6_E3M2", DTYPE_F6_E3M2, b8, len - len % 3, runs);
	bench("F64", DTYPE_F64, f32, len, runs);
	bench("I32", DTYPE_I32, f32, len, runs);
	free(f32);
	free(half);
	free(b8);
	return 0;
}
