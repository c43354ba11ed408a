/* value_hist.c - the histogram's bins (see value_hist.h). */
#include "view/value_hist.h"

#include <math.h>
#include <string.h>

void
value_hist_init(struct value_hist *h, double min, double max)
{
	memset(h, 0, sizeof(*h));
	if (min == max) {
		min -= 0.5;
		max += 0.5;
	}
	h->lo = min;
	h->hi = max;
}

int
value_hist_bin(const struct value_hist *h, double v)
{
	double f;

	if (!isfinite(v) || v < h->lo || v > h->hi || !(h->hi > h->lo))
		return -1;
	/* halves: hi - lo may be past the largest double; the same
	 * numbers otherwise (halving is exact above the subnormals) */
	f = floor((v * 0.5 - h->lo * 0.5) *
		  (VALUE_HIST_BINS / (h->hi * 0.5 - h->lo * 0.5)));
	if (!(f < VALUE_HIST_BINS))	/* hi itself, or rounding */
		return VALUE_HIST_BINS - 1;
	return f < 0 ? 0 : (int)f;
}

void
value_hist_add(struct value_hist *h, double v, uint64_t count)
{
	int k = value_hist_bin(h, v);

	if (k >= 0)
		h->n[k] += count;
}
