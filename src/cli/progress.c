/* progress.c - the front ends' progress line (progress.h). */
#include "cli/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/meter.h"

#define REDRAW_S 0.2		/* at most five draws a second */
#define SAMPLE_S 0.25		/* one sample per quarter second */

static double
elapsed(const struct progress *p)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - p->start.tv_sec) +
	       (double)(now.tv_nsec - p->start.tv_nsec) / 1e9;
}

void
progress_start(struct progress *p, const char *prog, const char *label,
	       int quiet, long delay_ms)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->on = !quiet && isatty(STDERR_FILENO);
	p->prog = prog;
	p->label = label;
	p->delay_ms = delay_ms;
	p->last = -1;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
}

/* "12.3 MiB" */
static void
human(char *out, size_t cap, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (v >= 1024.0 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(out, cap, "%.0f B", v);
	else
		snprintf(out, cap, "%.1f %s", v, unit[u]);
}

/* "0:14" or "1:02:03" */
static void
clock_text(char *out, size_t cap, double s)
{
	unsigned long t = s > 359999.0 ? 359999UL : (unsigned long)(s + 0.5);

	if (t >= 3600)
		snprintf(out, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60,
			 t % 60);
	else
		snprintf(out, cap, "%lu:%02lu", t / 60, t % 60);
}

/* Keep a sample of (t, done, bytes) for the rate, at most one per
 * SAMPLE_S, the oldest dropped when the window is full. */
static void
sample(struct progress *p, double t)
{
	if (p->ns && t - p->s[p->ns - 1].t < SAMPLE_S)
		return;
	if (p->ns == PROGRESS_SAMPLES) {
		memmove(p->s, p->s + 1, (PROGRESS_SAMPLES - 1) * sizeof(p->s[0]));
		p->ns--;
	}
	p->s[p->ns].t = t;
	p->s[p->ns].done = p->done;
	p->s[p->ns].bytes = p->bytes;
	p->ns++;
}

/* Items (or bytes) and bytes per second over the window of samples, or
 * with average over the whole phase; 0 when not known yet (too soon). */
static int
rate(const struct progress *p, double t, int average, double *items,
     double *bytes)
{
	double t0 = average || !p->ns ? p->t0 : p->s[0].t;
	uint64_t d0 = average || !p->ns ? 0 : p->s[0].done;
	uint64_t b0 = average || !p->ns ? 0 : p->s[0].bytes;

	if (t - t0 < SAMPLE_S)
		return 0;
	*items = (double)(p->done - d0) / (t - t0);
	*bytes = (double)(p->bytes - b0) / (t - t0);
	return 1;
}

/* The figures: "37 of 163, 4.6 MiB, 1.2 MiB/s, 0:05 left". */
static void
figures(const struct progress *p, double t, int average, char *out,
	size_t cap)
{
	char a[32], b[32], left[32];
	double ir = 0, br = 0;
	int known = rate(p, t, average, &ir, &br);
	size_t n = 0;

#define ADD(...) do { \
		int k_ = snprintf(out + n, cap - n, __VA_ARGS__); \
		if (k_ > 0) \
			n += (size_t)k_ < cap - n ? (size_t)k_ : cap - n - 1; \
	} while (0)
	if (p->items) {
		ADD("%" PRIu64 " of %" PRIu64, p->done, p->total);
		if (p->bytes) {
			human(a, sizeof(a), (double)p->bytes);
			ADD(", %s", a);
		}
	} else {
		human(a, sizeof(a), (double)p->done);
		human(b, sizeof(b), (double)p->total);
		ADD("%s of %s (%d%%)", a, b, p->total ?
		    (int)((double)p->done * 100.0 / (double)p->total) : 100);
	}
	if (known && (!p->items || p->bytes)) {
		human(a, sizeof(a), br);
		ADD(", %s/s", a);
	} else if (known) {
		ADD(", %.1f/s", ir);
	}
	if (known && ir > 0 && p->total > p->done) {
		clock_text(left, sizeof(left), (double)(p->total - p->done) / ir);
		ADD(", %s left", left);
	}
#undef ADD
}

/* "PROG: LABEL: WHAT: FIGURES", cut to the terminal's width: the label
 * loses its head first (a URL's end names the file), and goes when not
 * even LABEL_MIN bytes of it fit, so that the rate and the time left
 * stay (an 80-column terminal has no room for a path next to them);
 * then the line loses its end (not inside a UTF-8 sequence). */
#define LABEL_MIN 8

static void
draw(struct progress *p, double t, int average, const char *end)
{
	char fig[160], line[1024];
	size_t fixed, cols = 80, n, ll = p->label ? strlen(p->label) : 0;
	const char *label = p->label;
	struct winsize ws;
	int cut = 0;

	figures(p, t, average, fig, sizeof(fig));
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		cols = ws.ws_col;
	fixed = strlen(p->prog) + 2 + strlen(p->what) + 2 + strlen(fig);
	if (label && fixed + ll + 2 > cols - 1) {
		if (cols - 1 < fixed + 2 + 3 + LABEL_MIN) {
			label = NULL;
		} else {
			label += ll - (cols - 1 - fixed - 2 - 3);
			while (*label && ((unsigned char)*label & 0xc0) == 0x80)
				label++;
			cut = 1;
		}
	}
	snprintf(line, sizeof(line), "%s: %s%s%s%s: %s", p->prog,
		 cut ? "..." : "", label ? label : "",
		 label ? ": " : "", p->what, fig);
	n = strlen(line);
	if (n > cols - 1) {
		n = cols - 1;
		while (n && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--;
	}
	fprintf(stderr, "\r%.*s\033[K%s", (int)n, line, end);
	p->drawn = !*end;
	p->last = t;
}

static void
update(struct progress *p, const char *what, int items, uint64_t done,
       uint64_t total, uint64_t bytes)
{
	double t;

	if (!p->on)
		return;
	pthread_mutex_lock(&p->lock);
	t = elapsed(p);
	if (!p->what || strcmp(what, p->what) != 0 || items != p->items ||
	    done < p->done) {
		p->ns = 0;	/* a new phase: its own rate */
		p->t0 = t;
	}
	p->what = what;
	p->items = items;
	p->done = done;
	p->total = total;
	p->bytes = bytes;
	sample(p, t);
	if (t * 1000.0 >= (double)p->delay_ms &&
	    (p->last < 0 || t - p->last >= REDRAW_S))
		draw(p, t, 0, "");
	pthread_mutex_unlock(&p->lock);
}

void
progress_bytes(struct progress *p, const char *what, uint64_t done,
	       uint64_t total)
{
	update(p, what, 0, done, total, done);
}

void
progress_items(struct progress *p, const char *what, uint64_t done,
	       uint64_t total, uint64_t bytes)
{
	update(p, what, 1, done, total, bytes);
}

void
progress_meter(void *arg, const struct meter *m)
{
	progress_items(arg, m->what, m->done, m->total, m->bytes);
}

static void
erase(struct progress *p)
{
	if (p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = 0;
}

void
progress_clear(struct progress *p)
{
	if (!p->on)
		return;
	pthread_mutex_lock(&p->lock);
	erase(p);
	pthread_mutex_unlock(&p->lock);
}

void
progress_end(struct progress *p, int keep)
{
	if (!p->on)
		return;
	pthread_mutex_lock(&p->lock);
	if (keep && p->what)
		draw(p, elapsed(p), 1, "\n");
	else
		erase(p);
	p->on = 0;	/* nothing more, whoever calls */
	pthread_mutex_unlock(&p->lock);
}

void
progress_destroy(struct progress *p)
{
	pthread_mutex_destroy(&p->lock);
}
