/* view_segs.h - the answer to a read of a view file (view_read(), view.h).
 *
 * view_read() answers a read with a short list of segments whose lengths
 * add up to the reply: either bytes [off, off + len) of a source (the FUSE
 * adapter splices them when the source has a descriptor, else preads
 * them, and checks source_verify() afterwards), or bytes in memory
 * (borrowed from the view, or rendered into segs->mem).  An NPY file of a
 * raw dtype is its rendered header followed by a range of the source; a
 * virtual file may be a rendered header followed by ranges of several
 * sources. */
#ifndef STFS_VIEW_SEGS_H
#define STFS_VIEW_SEGS_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct source;

enum view_seg_kind {
	VIEW_SEG_SOURCE,
	VIEW_SEG_MEM,
};

struct view_seg {
	enum view_seg_kind kind;
	size_t len;
	struct source *src;	/* SOURCE */
	uint64_t off;		/* SOURCE: absolute offset in src; MEM with
				   ptr NULL: offset in the segs' mem */
	const char *ptr;	/* MEM: bytes that live as long as the view,
				   or NULL for rendered bytes */
};

struct view_segs {
	struct view_seg *seg;
	size_t n, cap;
	uint64_t len;		/* sum of the segments' lengths */
	struct buf *mem;	/* rendered bytes (owned) */
};

#define VIEW_SEGS_INIT { NULL, 0, 0, 0, NULL }

/* Forget the segments, keep the memory for the next read. */
void view_segs_reset(struct view_segs *s);
void view_segs_free(struct view_segs *s);

/* Append a segment; 0, or -ENOMEM.  len 0 adds nothing. */
int view_segs_add_source(struct view_segs *s, struct source *src,
			 uint64_t off, size_t len);
int view_segs_add_mem(struct view_segs *s, const char *p, size_t len);

/* Append a rendered segment of len bytes and return where to write them
 * (valid until the next call on s), or NULL when out of memory. */
char *view_segs_render(struct view_segs *s, size_t len);

/* Append a copy of bytes [off, off + size) of a file whose whole content
 * is data[0..len) (the read of a file rendered whole): what of that range
 * is there, nothing past its end.  0, or -ENOMEM. */
int view_segs_add_copy(struct view_segs *s, const char *data, size_t len,
		       uint64_t off, size_t size);

/* The buffer rendered segments live in (allocated on first use; NULL
 * when out of memory), for a renderer that appends to a struct buf: it
 * appends at its end, then adds a segment of part of what it appended
 * with view_segs_add_rendered(). */
struct buf *view_segs_mem(struct view_segs *s);

/* Append a segment of len bytes at offset at of view_segs_mem(s); 0, or
 * -ENOMEM. */
int view_segs_add_rendered(struct view_segs *s, size_t at, size_t len);

/* Shorten the last (rendered) segment to len bytes. */
void view_segs_trim(struct view_segs *s, size_t len);

/* The bytes of a MEM segment. */
const char *view_seg_mem(const struct view_segs *s, const struct view_seg *g);

#endif
