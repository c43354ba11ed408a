/* progress.h - the one progress line of the front ends (stfs and
 * stfs-inspect while a model opens, stfs-inspect --stats, --diff, --merge,
 * --extract).
 *
 * On a terminal it says how far long work has got, at what rate and how
 * long it has left, as curl, rsync --info=progress2 and pv do: redrawn in
 * place at most five times a second, cut to the terminal's width (the
 * label, a path or URL, gives way before the figures do), and
 * erased (or, for work that leaves a result, kept) when the work is done.
 * Nothing at all when stderr is not a terminal or the user asked for
 * quiet, so logs and pipes never see it.
 *
 * The rate is that of the last few seconds (a window of samples), so it
 * follows a link that speeds up or stalls; the time left is what remains
 * at that rate.
 */
#ifndef STFS_PROGRESS_H
#define STFS_PROGRESS_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

struct meter;

#define PROGRESS_SAMPLES 16	/* a window of about four seconds */

struct progress {
	pthread_mutex_t lock;	/* steps may come from several threads, a
				   message from yet another (progress_clear) */
	int on;			/* stderr is a terminal and not quiet */
	const char *prog;	/* the line's first word: "stfs" */
	const char *label;	/* what the work is about (a SOURCE), or NULL */
	long delay_ms;		/* nothing drawn before this long */
	int drawn;		/* a line is on the screen */
	struct timespec start;
	double last;		/* s after start of the last draw; -1 none */
	double t0;		/* s after start the phase began */
	/* what the samples count, and the last state shown */
	const char *what;
	int items;		/* done/total count items, not bytes */
	uint64_t done, total, bytes;
	struct progress_sample {
		double t;
		uint64_t done, bytes;
	} s[PROGRESS_SAMPLES];
	unsigned ns;		/* samples held, oldest first */
};

/* Start timing; draw only when stderr is a terminal and quiet is 0, and
 * not before delay_ms have passed (a mount says nothing unless it takes
 * more than a second). */
void progress_start(struct progress *p, const char *prog, const char *label,
		    int quiet, long delay_ms);

/* done of total bytes: "PROG: WHAT: 12.0 of 40.0 MiB (30%), 2.0 MiB/s,
 * 0:14 left". */
void progress_bytes(struct progress *p, const char *what, uint64_t done,
		    uint64_t total);

/* done of total items that read bytes so far (0: not known): "PROG:
 * LABEL: WHAT: 37 of 163, 4.6 MiB, 1.2 MiB/s, 0:05 left". */
void progress_items(struct progress *p, const char *what, uint64_t done,
		    uint64_t total, uint64_t bytes);

/* A struct meter's show (base/meter.h), arg the struct progress: what the
 * model layer reports while a SOURCE opens, as progress_items(). */
void progress_meter(void *arg, const struct meter *m);

/* Done: erase the line, or with keep redraw its last state with the
 * average rate and end it with a newline (a file written: its size stays
 * on the screen). */
void progress_end(struct progress *p, int keep);

/* Erase the line for a moment (a message or a row is printed); the next
 * call draws it again.  Any thread may call it. */
void progress_clear(struct progress *p);

/* Done with p (after progress_end). */
void progress_destroy(struct progress *p);

#endif
