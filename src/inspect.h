/* inspect.h - stfs-inspect's modes.  inspect.c parses the command line
 * into struct inspect_opts and calls one mode; each mode lives in a file
 * of its own (inspect_summary.c, inspect_diff.c, ...), so adding one is a
 * new file, a field or two here, and a line in inspect.c's tables.
 */
#ifndef STFS_INSPECT_H
#define STFS_INSPECT_H

#include <stdio.h>

struct model;

struct inspect_opts {
	int json;		/* --json */
	int tensors;		/* --tensors */
	int quiet;		/* --quiet */
	int nsources;		/* operands after the options */
	char **sources;
};

/* Open SOURCE as a model, printing the one-line error unless quiet.
 * 0, or the exit status to return (1 invalid, 2 I/O or usage). */
int inspect_open(const struct inspect_opts *o, const char *source,
		 struct model **out);

/* Modes: each returns the process's exit status. */
int inspect_summary(const struct inspect_opts *o);

#endif
