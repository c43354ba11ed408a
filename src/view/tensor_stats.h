/* tensor_stats.h - numerical health of a tensor: statistics over its decoded
 * values.  No FUSE; used by stfs-inspect --stats and the .stats/ view.
 *
 * Floats (F64, F32, F16, BF16, the five F8 formats, F6_E2M3, F6_E3M2, F4;
 * C64 as its real and imaginary float32 parts): min, max, mean and std
 * (population, ddof 0) over the finite values, and counts of nan, +inf,
 * -inf, zeros (either sign) and subnormals.  Subnormal means in the
 * format's own sense: non-zero and smaller in magnitude than the format's
 * smallest normal number (2^(1 - bias)); F8_E8M0 has none.  Every value
 * is decoded exactly as the .npy view decodes it (npy_code_f32()).
 * GGUF's quantized types that format/dequant.h decodes: their float32
 * values, counted like F32 (subnormals in float32's sense).  Integers
 * (and BOOL, as its byte values): exact min and max, mean and std, zeros.
 *
 * Accumulation is in float64.  Formats of 16 bits and less are counted in
 * a histogram of codes and the statistics computed from it in two passes
 * over the distinct values; wider ones are streamed in chunks, each
 * reduced in two passes (sum, then squared deviations from the chunk's
 * mean), and the chunks merged with Chan et al.'s pairwise update.
 */
#ifndef STFS_TSTATS_H
#define STFS_TSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct tensor;

enum tensor_stats_kind {
	TENSOR_STATS_FLOAT,
	TENSOR_STATS_SIGNED,
	TENSOR_STATS_UNSIGNED,
};

struct tensor_stats {
	enum dtype dtype;
	enum tensor_stats_kind kind;
	uint64_t count;		/* values (C64: two per element) */
	uint64_t finite;	/* values min..std are over */
	uint64_t nan, pinf, ninf, zeros, subnormals;
	double min, max, mean, std;	/* NaN when finite == 0 */
	int64_t imin, imax;	/* TENSOR_STATS_SIGNED: exact extremes */
	uint64_t umin, umax;	/* TENSOR_STATS_UNSIGNED */
};

/* The running state of one tensor's statistics. */
struct tensor_stats_acc {
	enum dtype dtype;
	uint64_t *hist;		/* codes of formats of 16 bits and less */
	size_t nhist;
	/* wide formats: merged chunk results */
	uint64_t count, n, nan, pinf, ninf, zeros, subnormals;
	double mean, m2, min, max;
	int64_t imin, imax;
	uint64_t umin, umax;
};

/* Bytes a chunk given to tensor_stats_feed() must be a multiple of (3 for F6,
 * 8 for C64, ...): any multiple of TENSOR_STATS_GRAIN works for every dtype
 * of safetensors; quantized types take whole blocks
 * (dequant_block_bytes()). */
#define TENSOR_STATS_GRAIN 48

/* The chunk tensor_stats_compute() reads (just under 4 MiB): wide formats'
 * results depend on where chunks end, so whoever must give the same
 * numbers feeds the same chunks (whole blocks for quantized types). */
#define TENSOR_STATS_CHUNK (TENSOR_STATS_GRAIN * 87381)

/* 0, or -1 when out of memory. */
int tensor_stats_init(struct tensor_stats_acc *a, enum dtype d);

/* Add len bytes of the tensor's data (a whole number of packing groups,
 * e.g. a multiple of TENSOR_STATS_GRAIN, except for the tensor's last chunk). */
void tensor_stats_feed(struct tensor_stats_acc *a, const uint8_t *buf, size_t len);

/* The result; frees the state. */
void tensor_stats_finish(struct tensor_stats_acc *a, struct tensor_stats *out);

/* Discard a state without a result. */
void tensor_stats_drop(struct tensor_stats_acc *a);

/* The value of code c of a dtype counted by codes (16 bits and less): the
 * value the statistics give it, for whoever reads the histogram. */
double tensor_stats_code_value(enum dtype d, unsigned c);

/* Statistics of tensor t with its bytes read through read(arg, off, len,
 * dst), in chunks of about 4 MiB: off is relative to the tensor's first
 * byte; 0 or -errno.  progress, when not NULL, is called after each chunk
 * with the bytes done.  0, or -errno (read error), -ENOMEM, or
 * -EOPNOTSUPP for a quantized type stfs does not decode. */
typedef int (*tensor_stats_read_fn)(void *arg, uint64_t off, size_t len, void *dst);
int tensor_stats_compute(const struct tensor *t, tensor_stats_read_fn read, void *arg,
		   struct tensor_stats *out,
		   void (*progress)(void *arg, uint64_t done), void *parg);

/* 1 when the statistics hold a NaN or an infinity. */
int tensor_stats_bad(const struct tensor_stats *s);

/* The JSON object (pretty, 2-space indent, trailing newline; malloc'd):
 *   {"name", "dtype", "count", "min", "max", "mean", "std", "zeros",
 *    and for floats "finite", "nan", "+inf", "-inf", "subnormals"}
 * min..std are null when no value is finite; integers' min and max are
 * exact integers.  NULL when out of memory. */
char *tensor_stats_json(const struct tensor_stats *s, const char *name, size_t name_len);

/* The size of every .stats/ file of a tensor with this name: the widest
 * tensor_stats_json() can be, so that stat() needs no computation (and no
 * memory: it never fails). */
size_t tensor_stats_json_size(const char *name, size_t name_len);

/* tensor_stats_json() padded with spaces before its final newline to exactly
 * tensor_stats_json_size() bytes (*len); still valid JSON.  NULL when out of
 * memory. */
char *tensor_stats_json_padded(const struct tensor_stats *s, const char *name,
			 size_t name_len, size_t *len);

#endif
