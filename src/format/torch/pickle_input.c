/* pickle_input.c - a pickle's bytes in order through a window
 * (pickle_input.h).
 *
 * The window holds buf[0..fill), the bytes of the pickle from offset
 * start; the next byte is at pos, inside it or just past its end.  To
 * make room it is compacted (the bytes from pos moved to its start) and
 * then filled as far as it goes; it grows only when one argument needs
 * more than it holds (a line, a few bytes past a small window).  From
 * memory, the window is the whole pickle and nothing is ever read.
 */
#include "format/torch/pickle_input.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/torch/pickle_names.h"

void
pickle_input_memory(struct pickle_input *in, const void *p, size_t n,
		    struct err *e)
{
	memset(in, 0, sizeof(*in));
	in->mem = p;
	in->fill = n;
	in->len = n;
	in->e = e;
}

void
pickle_input_stream(struct pickle_input *in, const struct pickle_source *src,
		    struct err *e)
{
	memset(in, 0, sizeof(*in));
	in->src = src;
	in->len = src->len;
	in->e = e;
}

void
pickle_input_free(struct pickle_input *in)
{
	free(in->buf);
	in->buf = NULL;
}

static const unsigned char *
window(const struct pickle_input *in)
{
	return in->src ? in->buf : in->mem;
}

/* Bytes from pos to the end of the window. */
static size_t
held(const struct pickle_input *in)
{
	return in->start + in->fill - in->pos;
}

static int
no_memory(struct pickle_input *in)
{
	return err_set(in->e, ERR_NO_MEMORY, "out of memory reading a pickle");
}

/* Room for need bytes in the window: at least the source's window, and
 * doubled until they fit. */
static int
grow(struct pickle_input *in, size_t need)
{
	size_t cap = in->src->window ? in->src->window : PICKLE_INPUT_WINDOW;
	unsigned char *p;

	if (cap < PICKLE_INPUT_WINDOW_MIN)
		cap = PICKLE_INPUT_WINDOW_MIN;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
	p = realloc(in->buf, cap);
	if (!p)
		return no_memory(in);
	in->buf = p;
	in->cap = cap;
	return 0;
}

/* Make the window hold the need bytes from pos (need <= len - pos, as
 * pickle_input_need checked): the bytes held moved to its start, then as
 * many more read as fit. */
static int
hold(struct pickle_input *in, size_t need)
{
	size_t keep = held(in), want;

	if (keep >= need)
		return 0;
	if (need > in->cap && grow(in, need) < 0)
		return -1;
	memmove(in->buf, in->buf + (in->pos - in->start), keep);
	in->start = in->pos;
	in->fill = keep;
	want = in->cap - in->fill;
	if (want > in->len - (in->start + in->fill))
		want = in->len - (in->start + in->fill);
	if (in->src->read(in->src->ctx, in->buf + in->fill, want, in->e) < 0)
		return -1;
	in->fill += want;
	return 0;
}

static const char *
op_name(const struct pickle_input *in)
{
	return pickle_names_op(in->op);
}

int
pickle_input_op(struct pickle_input *in)
{
	if (!held(in) && hold(in, 1) < 0)
		return -1;
	in->at = in->pos;
	in->op = window(in)[in->pos++ - in->start];
	return 0;
}

int
pickle_input_need(struct pickle_input *in, uint64_t n)
{
	if (n > in->len - in->pos)
		return err_set(in->e, ERR_INVALID_PICKLE, "%s at byte %zu "
			       "needs %llu bytes and %zu are left (truncated?)",
			       op_name(in), in->at, (unsigned long long)n,
			       in->len - in->pos);
	return 0;
}

int
pickle_input_bytes(struct pickle_input *in, size_t n, const unsigned char **p)
{
	if (held(in) < n && (pickle_input_need(in, n) < 0 || hold(in, n) < 0))
		return -1;
	*p = window(in) + (in->pos - in->start);
	in->pos += n;
	return 0;
}

int
pickle_input_uint(struct pickle_input *in, unsigned n, uint64_t *out)
{
	const unsigned char *p;
	uint64_t v = 0;

	if (pickle_input_bytes(in, n, &p) < 0)
		return -1;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	*out = v;
	return 0;
}

int
pickle_input_line(struct pickle_input *in, size_t skip, const char **p,
		  size_t *n)
{
	size_t seen = 0;	/* bytes of the line known to hold no '\n' */

	for (;;) {
		size_t have = held(in) > skip ? held(in) - skip : 0, more;
		const unsigned char *s = pickle_input_next(in) + skip;
		const unsigned char *nl = have > seen ?
			memchr(s + seen, '\n', have - seen) : NULL;

		if (nl) {
			*p = (const char *)s;
			*n = (size_t)(nl - s);
			return 0;
		}
		seen = have;
		more = in->len - in->pos - skip - seen;
		if (!in->src || !more)
			return err_set(in->e, ERR_INVALID_PICKLE, "%s at byte "
				       "%zu is not a line (truncated?)",
				       op_name(in), in->at);
		/* at least as much again: a long line is read in time
		 * linear in its length */
		if (more > seen + PICKLE_INPUT_WINDOW_MIN)
			more = seen + PICKLE_INPUT_WINDOW_MIN;
		if (hold(in, skip + seen + more) < 0)
			return -1;
	}
}

const unsigned char *
pickle_input_next(const struct pickle_input *in)
{
	return window(in) + (in->pos - in->start);
}

void
pickle_input_skip(struct pickle_input *in, size_t n)
{
	in->pos += n;
}

int
pickle_input_copy(struct pickle_input *in, void *dst, size_t n)
{
	size_t have = held(in) < n ? held(in) : n;

	memcpy(dst, pickle_input_next(in), have);
	in->pos += have;
	if (have == n)
		return 0;
	/* the rest straight into dst: the window is empty at pos */
	if (in->src->read(in->src->ctx, (char *)dst + have, n - have,
			  in->e) < 0)
		return -1;
	in->pos += n - have;
	in->start = in->pos;
	in->fill = 0;
	return 0;
}

int
pickle_input_pass(struct pickle_input *in, size_t n,
		  long (*visit)(void *ctx, const unsigned char *p, size_t len,
				int last),
		  void *ctx)
{
	while (n) {
		size_t cap = in->cap > PICKLE_INPUT_WINDOW_MIN ? in->cap :
			     PICKLE_INPUT_WINDOW_MIN;
		size_t have;
		long took;

		if (in->src && hold(in, n < cap ? n : cap) < 0)
			return -1;
		have = held(in) < n ? held(in) : n;
		took = visit(ctx, pickle_input_next(in), have, have == n);
		if (took < 0)
			return -1;
		in->pos += (size_t)took;
		n -= (size_t)took;
	}
	return 0;
}
