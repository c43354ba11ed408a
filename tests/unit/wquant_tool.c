/* wquant_tool.c - the decoders of src/format/quant/ timed, for
 * scripts/bench-quant.  Not a test itself.
 *
 *   wquant-tool bench SCHEME MIB RUNS   float32 output per second of one
 *                                       thread: MIB MiB of output from
 *                                       random parts, best of RUNS, CPU
 *                                       time
 *
 * SCHEME: fp8-block (E4M3, F32 scales per 128 x 128), fp8-channel (E4M3,
 * a BF16 scale per row), mxfp4 (transformers' blocks, gpt-oss's
 * gate_up_proj experts: 5760 x 2880), gptq4 (act-order g_idx, F16 scales,
 * groups of 128), gptq3, gptq8, awq (groups of 128), nf4 (blocks of 64),
 * nf4-nested, nvfp4 (compressed-tensors': an F8_E4M3 scale per 16
 * values, an F32 global one), torch-tensor (PyTorch's quint8 per tensor),
 * torch-channel (qint8 per output channel, F64 scales, I64 zero
 * points).  Linear weights have 4096 inputs.  The parts are laid out
 * as the mount hands them to the decoders (model/quant_render.c: a tile
 * of about 2 MiB of output at a time, a band of the parts gathered for
 * it), and only the decoding is timed, not the reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/quant/bnb4.h"
#include "format/quant/fp8_scaled.h"
#include "format/quant/int_packed.h"
#include "format/quant/mxfp4_hf.h"
#include "format/quant/nvfp4_st.h"
#include "format/quant/torch_affine.h"

#define TILE (512u << 10)	/* output elements per tile, about */
#define IN 4096			/* inputs of the linear weights */
#define MX_R 5760		/* MXFP4: rows (outputs) of an expert */
#define MX_C 2880		/* MXFP4: 32 G */

struct bench {
	const char *scheme;
	uint64_t elems;		/* output elements */
	uint64_t per;		/* units per tile */
	uint8_t *a, *b, *c, *d;	/* the parts, scheme by scheme */
	float *f;
	struct fp8_scaled fp8;
	struct int_packed ip;
	struct nvfp4_st nv;
	struct torch_affine ta;
};

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *
random_bytes(uint64_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	uint64_t i;

	for (i = 0; p && i < n; i++)
		p[i] = (uint8_t)(rand() >> 7);
	return p;
}

/* n scales of sz bytes: moderate positive numbers (F32, F16 or BF16) */
static uint8_t *
scales(uint64_t n, unsigned sz)
{
	uint8_t *p = malloc(n * sz + 1);
	uint64_t i;

	for (i = 0; p && i < n; i++) {
		if (sz == 4) {
			float v = 0.001f * (float)(1 + i % 97);

			memcpy(p + 4 * i, &v, 4);
		} else {
			p[2 * i] = (uint8_t)rand();
			p[2 * i + 1] = sz == 2 ? 0x20 : 0x3c;
		}
	}
	return p;
}

static int
setup(struct bench *b)
{
	const char *s = b->scheme;
	uint64_t i, n;

	if (!strcmp(s, "fp8-block") || !strcmp(s, "fp8-channel")) {
		int chan = s[4] == 'c';
		struct fp8_scaled p = { DTYPE_F8_E4M3,
					chan ? DTYPE_BF16 : DTYPE_F32,
					b->elems / IN, IN, chan ? 1 : 128,
					chan ? IN : 128, 0 };

		b->fp8 = p;
		b->per = TILE / IN;
		b->a = random_bytes(b->elems);
		for (i = 0; b->a && i < b->elems; i++)
			if ((b->a[i] & 0x7f) == 0x7f)
				b->a[i] = 0x38;	/* no NaN */
		b->b = scales(fp8_scaled_grid_rows(&p) *
			      fp8_scaled_grid_cols(&p), chan ? 2 : 4);
		return b->a && b->b ? 0 : -1;
	}
	if (!strcmp(s, "mxfp4")) {
		b->per = TILE / MX_R / 32 * 32;
		b->a = random_bytes(b->elems / 2);
		b->b = malloc(b->elems / 32);
		b->f = malloc(MX_R * sizeof(*b->f));
		for (i = 0; b->b && i < b->elems / 32; i++)
			b->b[i] = (uint8_t)(120 + i % 15);
		return b->a && b->b && b->f ? 0 : -1;
	}
	if (!strncmp(s, "gptq", 4) || !strcmp(s, "awq")) {
		int awq = s[0] == 'a';
		struct int_packed p = { awq ? INT_PACKED_AWQ : INT_PACKED_GPTQ,
					awq ? 4 : (unsigned)atoi(s + 4), IN,
					b->elems / IN, IN / 128, 128, !awq,
					DTYPE_F16, 0 };

		if (p.bits != 2 && p.bits != 3 && p.bits != 4 && p.bits != 8)
			return -1;
		b->ip = p;
		b->per = TILE / IN / 32 * 32;
		/* every packed word and zero of the weight, band by band */
		b->a = random_bytes(b->elems * p.bits / 8);
		b->b = random_bytes(p.groups * p.out * p.bits / 8 + 64);
		b->c = scales(p.groups * p.out, 2);
		if (!awq) {
			b->d = malloc(IN * 4);
			for (i = 0; b->d && i < IN; i++) {
				uint32_t g = (uint32_t)rand() % IN / 128;

				memcpy(b->d + 4 * i, &g, 4);
			}
		}
		return b->a && b->b && b->c && (awq || b->d) ? 0 : -1;
	}
	if (!strcmp(s, "nvfp4")) {
		struct nvfp4_st p = { b->elems / IN, IN, 0 };

		b->nv = p;
		b->per = TILE;
		b->a = random_bytes(b->elems / 2);
		b->b = malloc(b->elems / NVFP4_ST_BLOCK);
		for (i = 0; b->b && i < b->elems / NVFP4_ST_BLOCK; i++)
			b->b[i] = (uint8_t)(0x20 + i % 0x50);	/* no NaN */
		return b->a && b->b ? 0 : -1;
	}
	if (!strcmp(s, "torch-tensor") || !strcmp(s, "torch-channel")) {
		int chan = s[6] == 'c';
		struct torch_affine p = { chan ? DTYPE_I8 : DTYPE_U8, chan,
					  0.05, 3, 0, b->elems / IN, IN,
					  DTYPE_F64, DTYPE_I64 };

		b->ta = p;
		b->per = TILE;
		b->a = random_bytes(b->elems);
		b->b = malloc(p.channels * 8 + 1);
		b->c = malloc(p.channels * 8 + 1);
		for (i = 0; b->b && b->c && i < p.channels; i++) {
			double sc = 0.001 * (double)(1 + i % 97);
			int64_t z = (int64_t)(i % 11) - 5;

			memcpy(b->b + 8 * i, &sc, 8);	/* little-endian */
			memcpy(b->c + 8 * i, &z, 8);
		}
		return b->a && b->b && b->c ? 0 : -1;
	}
	if (!strcmp(s, "nf4") || !strcmp(s, "nf4-nested")) {
		n = b->elems / 64;
		b->per = TILE;
		b->a = random_bytes(b->elems / 2);
		b->b = random_bytes(n);
		b->c = malloc((n / 256 + 1) * sizeof(float));
		b->f = malloc(n * sizeof(float));
		for (i = 0; b->f && i < n; i++)
			b->f[i] = 0.01f * (float)(1 + i % 7);
		for (i = 0; b->c && i <= n / 256; i++)
			memcpy(b->c + 4 * i, &(float){ 0.5f }, 4);
		return b->a && b->b && b->c && b->f ? 0 : -1;
	}
	return -1;
}

/* Decode the whole weight, tile by tile, into out. */
static int
decode(struct bench *b, float *out)
{
	uint64_t u, n, ntiles, t;
	float code[16], code2[256];
	int k;

	if (b->scheme[0] == 'f') {
		uint64_t gcols = fp8_scaled_grid_cols(&b->fp8);
		unsigned sz = b->fp8.sdtype == DTYPE_F32 ? 4 : 2;

		/* tiles of per rows: the mount's are TILE elements */
		for (u = 0; u < b->fp8.rows; u += b->per) {
			n = b->fp8.rows - u < b->per ? b->fp8.rows - u : b->per;
			fp8_scaled_range(&b->fp8, b->a + u * IN, b->b + u /
					 b->fp8.brow * gcols * sz, u * IN,
					 (u + n) * IN, out + u * IN);
		}
		return 0;
	}
	if (b->scheme[0] == 'm') {
		/* tiles of per rows c of an expert: R x per / 2 bytes of
		 * blocks and R x per / 32 scales each */
		ntiles = b->elems / (MX_R * b->per);
		for (t = 0; t < ntiles; t++)
			mxfp4_hf_rows(b->a + t * MX_R * b->per / 2,
				      b->b + t * MX_R * b->per / 32, MX_R, 0,
				      b->per, b->f, out + t * MX_R * b->per);
		return 0;
	}
	if (b->scheme[0] == 'g' || b->scheme[0] == 'a') {
		struct int_packed *p = &b->ip;
		uint64_t qf, qn, zf, zn, qrows, qcols, zcols;

		int_packed_shapes(p, &qrows, &qcols, &zcols);
		int_packed_band_words(p, 0, b->per, &qf, &qn, &zf, &zn);
		for (u = 0; u + b->per <= p->out; u += b->per)
			if (int_packed_rows(p, b->a + u / b->per * qrows * qn * 4,
					    b->b + u / b->per * p->groups * zn * 4,
					    b->c + u * p->groups * 2, b->d, 0,
					    b->per, out + u * IN))
				return -1;
		return 0;
	}
	if (b->scheme[0] == 't') {
		uint64_t c0, nc;

		for (u = 0; u + TILE <= b->elems; u += TILE) {
			c0 = 0;
			if (b->ta.per_channel)
				torch_affine_channels(&b->ta, u, u + TILE, &c0,
						      &nc);
			torch_affine_range(&b->ta, b->a + u, b->b + 8 * c0,
					   b->c + 8 * c0, u, u + TILE,
					   out + u);
		}
		return 0;
	}
	if (b->scheme[1] == 'v') {
		for (u = 0; u + TILE <= b->elems; u += TILE)
			nvfp4_st_range(&b->nv, b->a + u / 2, b->b + u /
				       NVFP4_ST_BLOCK, 2.5f, u, u + TILE,
				       out + u);
		return 0;
	}
	for (k = 0; k < 16; k++)
		code[k] = (float)k / 8 - 1;
	for (k = 0; k < 256; k++)
		code2[k] = (float)k / 128 - 1;
	for (u = 0; u + TILE <= b->elems; u += TILE) {
		if (b->scheme[3] == '-')
			bnb4_absmax(code2, b->b + u / 64, (float *)b->c +
				    u / 64 / 256, 256, 0.01f, u / 64,
				    (u + TILE) / 64, b->f + u / 64);
		bnb4_run(code, b->a + u / 2, b->f + u / 64, 64, u, u + TILE,
			 out + u);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct bench b;
	double best = 1e30, t0, t;
	unsigned runs, k;
	float *out;

	if (argc != 5 || strcmp(argv[1], "bench")) {
		fprintf(stderr, "usage: wquant-tool bench SCHEME MIB RUNS\n");
		return 2;
	}
	memset(&b, 0, sizeof(b));
	b.scheme = argv[2];
	runs = (unsigned)atoi(argv[4]);
	/* whole tiles: MXFP4's are bands of 64 of an expert's rows c, the
	 * others 512 Ki elements */
	b.elems = ((uint64_t)atoi(argv[3]) << 20) / 4;
	b.elems -= b.elems % (strcmp(b.scheme, "mxfp4") ? TILE : MX_R * 64);
	if (b.elems == 0) {
		fprintf(stderr, "wquant-tool: at least 2 MiB\n");
		return 2;
	}
	srand(1);
	out = malloc(b.elems * sizeof(*out));
	if (!out || setup(&b)) {
		fprintf(stderr, "wquant-tool: %s: unknown scheme or out of "
			"memory\n", b.scheme);
		return 1;
	}
	for (k = 0; k < runs; k++) {
		t0 = cpu_now();
		if (decode(&b, out))
			return 1;
		t = cpu_now() - t0;
		if (t < best)
			best = t;
	}
	printf("%-11s %6.2f GB/s of float32 output (%.0f MiB, best of %u, "
	       "one thread, CPU time)\n", b.scheme,
	       (double)(b.elems * 4) / best / 1e9,
	       (double)(b.elems * 4) / (1 << 20), runs);
	free(out);
	free(b.a);
	free(b.b);
	free(b.c);
	free(b.d);
	free(b.f);
	return 0;
}
