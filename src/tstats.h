/* tstats.h - numerical health of a tensor: statistics over its decoded
 * values.  No FUSE; used by stfs-inspect --stats and the .stats/ view.
 *
 * Floats (F64, F32, F16, BF16, the five F8 formats, F6_E2M3, F6_E3M2, F4;
 * C64 as its real and imaginary float32 parts): min, max, mean and std
 * (population, ddof 0) over the finite values, and counts of nan, +inf,
 * -inf, zeros (either sign) and subnormals.  Subnormal means in the
 * format's own sense: non-zero and smaller in magnitude than the format's
 * smallest normal number (2^(1 - bias)); F8_E8M0 has none.  Every value
 * is decoded exactly as the .npy view decodes it (npy_code_f32()).
 * Integers (and BOOL, as its byte values): exact min and max, mean and
 * std, zeros.
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

#include "dtype.h"

struct source;
struct tensor;

enum tstats_kind {
	TSTATS_FLOAT,
	TSTATS_SIGNED,
	TSTATS_UNSIGNED,
};

struct tstats {
	enum dtype dtype;
	enum tstats_kind kind;
	uint64_t count;		/* values (C64: two per element) */
	uint64_t finite;	/* values min..std are over */
	uint64_t nan, pinf, ninf, zeros, subnormals;
	double min, max, mean, std;	/* NaN when finite == 0 */
	int64_t imin, imax;	/* TSTATS_SIGNED: exact extremes */
	uint64_t umin, umax;	/* TSTATS_UNSIGNED */
};

/* The running state of one tensor's statistics. */
struct tstats_acc {
	enum dtype dtype;
	uint64_t *hist;		/* codes of formats of 16 bits and less */
	size_t nhist;
	/* wide formats: merged chunk results */
	uint64_t count, n, nan, pinf, ninf, zeros, subnormals;
	double mean, m2, min, max;
	int64_t imin, imax;
	uint64_t umin, umax;
};

/* Bytes a chunk given to tstats_feed() must be a multiple of (3 for F6,
 * 8 for C64, ...): any multiple of TSTATS_GRAIN works for every dtype. */
#define TSTATS_GRAIN 48

/* 0, or -1 when out of memory. */
int tstats_init(struct tstats_acc *a, enum dtype d);

/* Add len bytes of the tensor's data (a whole number of packing groups,
 * e.g. a multiple of TSTATS_GRAIN, except for the tensor's last chunk). */
void tstats_feed(struct tstats_acc *a, const uint8_t *buf, size_t len);

/* The result; frees the state. */
void tstats_finish(struct tstats_acc *a, struct tstats *out);

/* Discard a state without a result. */
void tstats_drop(struct tstats_acc *a);

/* Statistics of tensor t whose first byte is at absolute offset off of
 * src, read in chunks of about 4 MiB.  progress, when not NULL, is called
 * after each chunk with the bytes done.  0, or -errno (read error) or
 * -ENOMEM. */
int tstats_tensor(struct source *src, uint64_t off, const struct tensor *t,
		  struct tstats *out,
		  void (*progress)(void *arg, uint64_t done), void *arg);

/* The same with the bytes read through read(arg, off, len, dst): off is
 * relative to the tensor's first byte; 0 or -errno. */
typedef int (*tstats_read_fn)(void *arg, uint64_t off, size_t len, void *dst);
int tstats_compute(const struct tensor *t, tstats_read_fn read, void *arg,
		   struct tstats *out,
		   void (*progress)(void *arg, uint64_t done), void *parg);

/* 1 when the statistics hold a NaN or an infinity. */
int tstats_bad(const struct tstats *s);

/* The JSON object (pretty, 2-space indent, trailing newline; malloc'd):
 *   {"name", "dtype", "count", "min", "max", "mean", "std", "zeros",
 *    and for floats "finite", "nan", "+inf", "-inf", "subnormals"}
 * min..std are null when no value is finite; integers' min and max are
 * exact integers.  NULL when out of memory. */
char *tstats_json(const struct tstats *s, const char *name, size_t name_len);

/* The size of every .stats/ file of a tensor with this name: the widest
 * tstats_json() can be, so that stat() needs no computation; 0 when out
 * of memory. */
size_t tstats_json_size(const char *name, size_t name_len);

/* tstats_json() padded with spaces before its final newline to exactly
 * tstats_json_size() bytes (*len); still valid JSON.  NULL when out of
 * memory. */
char *tstats_json_padded(const struct tstats *s, const char *name,
			 size_t name_len, size_t *len);

#endif
