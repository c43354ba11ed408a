/* value_hist.h - the histogram of a tensor's values drawn in .png/
 * (NAME.hist.png): VALUE_HIST_BINS bins of equal width from the least to
 * the largest finite value; value v is in bin floor((v - lo) * (BINS /
 * (hi - lo))), the largest value in the last bin.  When every finite
 * value is the same, the range is that value -0.5 to +0.5 (as numpy's
 * histogram does).  NaN and infinities are counted apart (.stats/). */
#ifndef STFS_VALUE_HIST_H
#define STFS_VALUE_HIST_H

#include <stdint.h>

#define VALUE_HIST_BINS 100

struct value_hist {
	double lo, hi;
	uint64_t n[VALUE_HIST_BINS];
};

/* Bins over the finite values from min to max. */
void value_hist_init(struct value_hist *h, double min, double max);

/* The bin of finite value v (-1 for a value outside [lo, hi] or not
 * finite). */
int value_hist_bin(const struct value_hist *h, double v);

/* Count v `count` times (nothing for a value without a bin). */
void value_hist_add(struct value_hist *h, double v, uint64_t count);

#endif
