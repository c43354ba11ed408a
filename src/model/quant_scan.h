/* quant_scan.h - one pass of recognising a model's quantized weights
 * (model/quant.h): its state and the steps the schemes' matchers share
 * (quant_float.h, quant_packed.h, quant_bnb.h): looking a sibling up by
 * name, claiming parts, adding a weight, refusing a candidate with its
 * reason.  Not for other modules.
 */
#ifndef STFS_QUANT_SCAN_H
#define STFS_QUANT_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/nametab.h"
#include "model/quant_config.h"
#include "model/quant_weight.h"

struct model;
struct tensor;

struct quant_scan {
	const struct model *m;
	int count;		/* quant_count(): names, dtypes, shapes and
				   the config only, no tensor read but
				   compressed-tensors' weight_shape;
				   weights counted in counted, not kept */
	int found;		/* a candidate was seen */
	struct quant_count counted;
	struct quant_weight scratch;	/* what counting adds */
	struct quant_config cfg;
	struct nametab tab;	/* tensor names -> model indexes */
	uint8_t *claimed;	/* per model tensor */
	struct quant *q;
	size_t cap;
	struct buf names;	/* logical names, NUL-separated */
	int oom;
};

/* A scan of m (count: quant_count()'s): its names in the table, its
 * config read, an empty f->q.  0, or -1 out of memory (then
 * quant_scan_free()). */
int quant_scan_init(struct quant_scan *f, const struct model *m, int count);

/* What the scan holds but f->q (the caller's). */
void quant_scan_free(struct quant_scan *f);

/* Model tensor i. */
const struct tensor *quant_scan_tensor(const struct quant_scan *f, size_t i);

/* The tensor named a[0..alen) + b (b NUL-terminated), or QUANT_ABSENT. */
size_t quant_scan_lookup(const struct quant_scan *f, const char *a,
			 size_t alen, const char *b);

/* 1 when t's name ends with suffix; *base the length before it. */
int quant_scan_ends_with(const struct tensor *t, const char *suffix,
			 size_t *base);

/* Note why the candidate named name[0..len) stays as stored. */
void quant_scan_refuse(struct quant_scan *f, const char *name, size_t len,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A new weight named a[0..alen) + b, parts all absent (when counting, one
 * that is not kept); NULL when out of memory. */
struct quant_weight *quant_scan_add(struct quant_scan *f,
				    enum quant_scheme s, const char *label,
				    const char *a, size_t alen, const char *b);

/* 1 when none of parts[0..n) (QUANT_ABSENT ones aside) is claimed
 * already. */
int quant_scan_parts_free(const struct quant_scan *f, const size_t *parts,
			  size_t n);

/* w's parts are w's: no other candidate takes them (and w is counted). */
void quant_scan_claim(struct quant_scan *f, const struct quant_weight *w);

/* The logical name a[0..alen) + b is free: no stored tensor has it, or
 * only the part it replaces. */
int quant_scan_name_free(const struct quant_scan *f, const char *a,
			 size_t alen, const char *b, size_t replaces);

static inline uint64_t
quant_scan_ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

#endif
