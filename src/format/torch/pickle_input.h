/* pickle_input.h - the bytes of a pickle, read in order through a window
 * of bounded size: from memory (the window is the whole buffer), or from
 * a source that hands over the next bytes (a checkpoint's data.pkl as
 * torch_zip.h reads it, stored or deflated).
 *
 * The pickle machine (pickle.c) reads each opcode, its fixed-size
 * arguments, its lines (protocols 0 and 1) and its counted arguments
 * through here.  A counted argument (a string, bytes, a wide int) is
 * either copied into the value's own allocation or passed by, chunk by
 * chunk, without being held (pickle_input_pass): what a pickle costs is
 * what is kept of it, plus the window.  A line is held whole (the window
 * grows to the longest line read, at most the pickle's size).
 *
 * Lengths are checked against the bytes left before anything is read or
 * allocated; the messages name the opcode being read and the byte it
 * starts at, as the machine's own do.
 */
#ifndef STFS_PICKLE_INPUT_H
#define STFS_PICKLE_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct err;

/* Bytes read from a source at a time, unless it says otherwise. */
#define PICKLE_INPUT_WINDOW ((size_t)1 << 20)

/* The smallest window: room for any fixed-size argument and for a
 * partial UTF-8 sequence left over from one chunk to the next. */
#define PICKLE_INPUT_WINDOW_MIN 8

/* Where a streamed pickle comes from. */
struct pickle_source {
	/* Read exactly n bytes, the next ones, into buf (n never passes
	 * what is left of len): 0, or -1 with *e. */
	int (*read)(void *ctx, void *buf, size_t n, struct err *e);
	void *ctx;
	size_t len;		/* the pickle's bytes in all */
	size_t window;		/* bytes read at a time; 0: PICKLE_INPUT_WINDOW
				 * (at least PICKLE_INPUT_WINDOW_MIN) */
	/* Start again from the first byte: 0, or -1 with *e.  NULL: the
	 * source is read once (then the memo holds every index it is
	 * given: pickle_memo.h). */
	int (*rewind)(void *ctx, struct err *e);
};

struct pickle_input {
	const struct pickle_source *src;	/* NULL: all in memory */
	const unsigned char *mem;	/* the pickle, or NULL */
	unsigned char *buf;		/* the window of a source */
	size_t cap;			/* bytes allocated at buf */
	size_t start;			/* the offset of buf[0] */
	size_t fill;			/* bytes read into buf */
	size_t len;			/* the pickle's bytes in all */
	size_t pos;			/* the offset of the next byte */
	size_t at;			/* where the current opcode starts */
	unsigned char op;		/* the current opcode */
	struct err *e;
};

/* Read the n bytes at p (kept by the caller until the input is done). */
void pickle_input_memory(struct pickle_input *in, const void *p, size_t n,
			 struct err *e);

/* Read src (kept by the caller until the input is done); the window is
 * allocated at the first read. */
void pickle_input_stream(struct pickle_input *in,
			 const struct pickle_source *src, struct err *e);

void pickle_input_free(struct pickle_input *in);

/* The next opcode into in->op (in->at its offset); the caller has made
 * sure a byte is left.  0, or -1 with *e (the source's). */
int pickle_input_op(struct pickle_input *in);

/* 0 when n more bytes are there, else -1 with ERR_INVALID_PICKLE ("OP at
 * byte N needs n bytes and M are left (truncated?)"). */
int pickle_input_need(struct pickle_input *in, uint64_t n);

/* An n-byte (1 to 8) little-endian unsigned argument. */
int pickle_input_uint(struct pickle_input *in, unsigned n, uint64_t *out);

/* The next n bytes at *p, valid until the next call: a fixed-size
 * argument, or an int of no more bytes than the load keeps (the window
 * grows to hold them). */
int pickle_input_bytes(struct pickle_input *in, size_t n,
		       const unsigned char **p);

/* The line (without its '\n') that starts skip bytes after the next
 * byte, at *p and *n; nothing is consumed (a GLOBAL's two lines are
 * looked at before they are taken).  *p is valid until the next call,
 * and pickle_input_next() gives the line that starts at the next byte
 * again after a later one.  -1 with ERR_INVALID_PICKLE ("OP at byte N is
 * not a line (truncated?)") when no '\n' follows. */
int pickle_input_line(struct pickle_input *in, size_t skip, const char **p,
		      size_t *n);

/* Where the next byte is in the window (after pickle_input_line, which
 * holds what it found there). */
const unsigned char *pickle_input_next(const struct pickle_input *in);

/* Consume n bytes pickle_input_line has looked at. */
void pickle_input_skip(struct pickle_input *in, size_t n);

/* Copy the next n bytes (pickle_input_need checked them) to dst. */
int pickle_input_copy(struct pickle_input *in, void *dst, size_t n);

/* Pass the next n bytes (pickle_input_need checked them) to visit, a
 * chunk at a time: visit(ctx, p, len, last) returns how many of the len
 * bytes it took (when !last it may leave up to 3, a sequence the next
 * chunk completes, which come again at the start of the next chunk; when
 * last, all) or -1 with *e. */
int pickle_input_pass(struct pickle_input *in, size_t n,
		      long (*visit)(void *ctx, const unsigned char *p,
				    size_t len, int last),
		      void *ctx);

#endif
