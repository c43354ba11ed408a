/* dequant_tool.c - src/format/dequant.c from the command line, for
 * tests/test_dequant.py (compared with tests/gguf_dequant_ref.py) and
 * scripts/bench-dequant.  Not a test itself.
 *
 *   dequant-tool decode TYPE          whole blocks on stdin -> float32
 *   dequant-tool window TYPE OFF LEN  bytes [OFF, OFF+LEN) of the float32
 *                                     decoding of the blocks on stdin,
 *                                     through dequant_src_range/_window
 *   dequant-tool bench TYPE MIB RUNS  float32 output per second of one
 *                                     thread: MIB MiB of output from
 *                                     random blocks, best of RUNS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/dequant.h"
#include "format/dtype.h"

static unsigned char *
slurp(size_t *n)
{
	size_t cap = 1 << 16, len = 0, r;
	unsigned char *p = malloc(cap);

	while (p && (r = fread(p + len, 1, cap - len, stdin)) > 0) {
		len += r;
		if (len == cap) {
			unsigned char *q = realloc(p, cap *= 2);

			if (!q) {
				free(p);
				return NULL;
			}
			p = q;
		}
	}
	*n = len;
	return p;
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
bench(enum dtype d, unsigned mib, unsigned runs)
{
	size_t bb = dequant_block_bytes(d), be = dequant_block(d);
	size_t nb = ((size_t)mib << 20) / (4 * be), i;
	unsigned char *src = malloc(nb * bb);
	float *out = malloc(nb * be * 4);
	double best = 1e30;
	unsigned r;

	if (!src || !out)
		return 1;
	srand(1);
	for (i = 0; i < nb * bb; i++)
		src[i] = (unsigned char)rand();
	/* finite scales: a random half may be NaN or inf, which costs
	 * nothing more but says less */
	for (r = 0; r < runs; r++) {
		double t0 = cpu_now(), t;

		dequant_blocks(d, src, nb, out);
		t = cpu_now() - t0;
		if (t < best)
			best = t;
	}
	printf("%-7s %6.2f GB/s of float32 output (%u MiB, best of %u, "
	       "one thread, CPU time)\n", dtype_info(d)->name,
	       (double)(nb * be * 4) / best / 1e9, mib, runs);
	free(src);
	free(out);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned char *in, *out;
	uint64_t so, sl, off, len;
	enum dtype d;
	size_t n, bb;

	if (argc < 3 || dtype_from_any_name(argv[2], strlen(argv[2]), &d) ||
	    !dequant_has(d)) {
		fprintf(stderr, "usage: dequant-tool decode|window|bench TYPE "
			"...  (TYPE: a decoded dtype)\n");
		return 2;
	}
	if (strcmp(argv[1], "bench") == 0 && argc == 5)
		return bench(d, (unsigned)atoi(argv[3]),
			     (unsigned)atoi(argv[4]));
	in = slurp(&n);
	bb = dequant_block_bytes(d);
	if (!in || n % bb) {
		fprintf(stderr, "dequant-tool: input is not whole blocks\n");
		return 1;
	}
	if (strcmp(argv[1], "decode") == 0) {
		len = n / bb * dequant_block(d) * 4;
		out = malloc(len ? len : 1);
		if (!out)
			return 1;
		dequant_blocks(d, in, n / bb, out);
	} else if (strcmp(argv[1], "window") == 0 && argc == 5) {
		off = strtoull(argv[3], NULL, 10);
		len = strtoull(argv[4], NULL, 10);
		dequant_src_range(d, off, len, &so, &sl);
		if (so + sl > n) {
			fprintf(stderr, "dequant-tool: window past the end\n");
			return 1;
		}
		/* odd address: the unaligned path */
		out = malloc(len + 1);
		if (!out)
			return 1;
		dequant_window(d, in + so, off, (size_t)len, out + 1);
		memmove(out, out + 1, len);
	} else {
		fprintf(stderr, "dequant-tool: unknown mode\n");
		return 2;
	}
	fwrite(out, 1, len, stdout);
	free(in);
	free(out);
	return 0;
}
