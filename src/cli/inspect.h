/* inspect.h - stfs-inspect's modes.  inspect.c parses the command line
 * into struct inspect_opts and calls one mode; each mode lives in a file
 * of its own (inspect_summary.c, inspect_diff.c, ...), so adding one is a
 * new file, a field or two here, and a line in inspect.c's tables.
 */
#ifndef STFS_INSPECT_H
#define STFS_INSPECT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "format/dtype.h"

struct model;

/* --sort keys */
enum {
	INSPECT_SORT_OFFSET,	/* default: shard, then file order */
	INSPECT_SORT_NAME,	/* bytewise */
	INSPECT_SORT_SIZE,	/* largest first, then by name */
};

/* --format: how --tensors and --group print their table */
enum {
	INSPECT_FORMAT_TEXT,	/* aligned, for people (the default) */
	INSPECT_FORMAT_TSV,	/* a header row, tab-separated, \-escaped */
	INSPECT_FORMAT_CSV,	/* RFC 4180 */
};

struct inspect_opts {
	int json;		/* --json */
	int tensors;		/* --tensors */
	int format;		/* --format=text|tsv|csv: INSPECT_FORMAT_* */
	int quiet;		/* --quiet */
	int sort;		/* --sort=KEY: INSPECT_SORT_* */
	int group;		/* --group[=DEPTH] given */
	int group_depth;	/* DEPTH; 0: by module (name minus last part) */
	const char *extract;	/* --extract PREFIX (inspect_merge.c) */
	int strip;		/* --strip */
	const char *output;	/* -o OUT */
	int force;		/* --force: -o may replace an existing file */
	int tolerant;		/* --atol or --rtol given (inspect_diff.c) */
	double atol, rtol;	/* values close when |a - b| <= atol +
				   rtol |b| (numpy's allclose) */
	const char *png;	/* --png NAME, or with --diff a directory
				   (inspect_png.c) */
	int histogram;		/* --histogram: --png writes it */
	int dequant;		/* --dequant 1, --no-dequant 0, else -1:
				   the mode's default (inspect_catalog) */
	int nsources;		/* operands after the options */
	char **sources;
};

/* inspect_open.c, below inspect.c and the modes: open SOURCE as a model,
 * printing the one-line error unless quiet.
 * 0, or the exit status to return (1 invalid, 2 I/O or usage). */
int inspect_open(const struct inspect_opts *o, const char *source,
		 struct model **out);

/* The same for a SOURCE that may name a tree of models (catalog.h).
 * Each model is replaced by its dequantized form (model/quant_model.h)
 * when o->dequant is 1, or when it is unset and dflt is 1 (the modes
 * that look at values: --stats, --diff). */
struct catalog;
int inspect_catalog(const struct inspect_opts *o, const char *source,
		    int dflt, struct catalog **out);

/* Modes: each returns the process's exit status. */
int inspect_summary(const struct inspect_opts *o);
int inspect_merge(const struct inspect_opts *o);	/* --merge, --extract */
int inspect_stats(const struct inspect_opts *o);	/* inspect_stats.c */
int inspect_diff(const struct inspect_opts *o);		/* inspect_diff.c */
int inspect_png(const struct inspect_opts *o);		/* inspect_png.c */
int inspect_scan(const struct inspect_opts *o);		/* inspect_scan.c */

/* inspect_png.c: with --diff --png DIR, the heatmap of |a - b| of a
 * tensor that differs (name[0..len) as --diff names it) as
 * DIR/NAME.png; nothing when the values are not decoded or the shapes
 * differ.  0, or 2 with the message printed. */
struct model;
struct model_tensor;
int inspect_png_diff(const struct inspect_opts *o, const struct model *ma,
		     const struct model_tensor *a, const struct model *mb,
		     const struct model_tensor *b, const char *name,
		     size_t len);

/* inspect_values.c: the error between two tensors' values (--diff). */
struct model_tensor;
struct inspect_values {
	uint64_t count;		/* pairs compared */
	uint64_t differ;	/* pairs not equal */
	uint64_t nonfinite;	/* pairs with a NaN or an infinity that
				   differ (left out of the two below) */
	double max_abs;		/* largest |a - b| */
	double sum_sq;		/* sum of (a - b)^2 */
	uint64_t far;		/* pairs not close: |a - b| > atol + rtol |b|,
				   a NaN, or infinities that differ (numpy's
				   isclose with equal_nan=False) */
};
/* 1 when tensors of dtype d are compared as numbers. */
int inspect_values_float(enum dtype d);
/* a and b have the same shape; atol and rtol say which pairs are close
 * (out->far).  0, or -errno (a read failed). */
int inspect_values_diff(const struct model *ma, const struct model_tensor *a,
			const struct model *mb, const struct model_tensor *b,
			double atol, double rtol, struct inspect_values *out);
/* The root of the mean squared error over the finite pairs. */
double inspect_values_rms(const struct inspect_values *v);

/* inspect_tensors.c: INSPECT_SORT_* of "offset", "name", "size"; -1. */
int inspect_parse_sort(const char *s);
/* The --tensors listing and the --group table on stdout; 0 or -1 (out of
 * memory). */
int inspect_print_tensors(const struct inspect_opts *o, const struct model *m);
int inspect_print_groups(const struct inspect_opts *o, const struct model *m);
/* --format tsv|csv: the table of --group, else of every tensor, with a
 * header row when header is 1 and a first column "model" holding path
 * when it is not NULL (a SOURCE of several models); 0 or -1 (out of
 * memory). */
int inspect_print_table(const struct inspect_opts *o, const struct model *m,
			const char *path, int header);
/* Add "tensor_list" (--tensors) and "groups" (--group) to a summary
 * object; 0 or -1. */
int inspect_add_json(const struct inspect_opts *o, const struct model *m,
		     json_t *root);

#endif
