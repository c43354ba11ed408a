/* torch_zip.c - a checkpoint's zip archive (torch_zip.h). */
#include "format/torch/torch_zip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/error.h"
#include "base/nametab.h"
#include "format/le.h"

#define LOCAL_HEADER 30		/* fixed part of a local file header */
#define CENTRAL_HEADER 46	/* fixed part of a central directory header */
#define EOCD 22			/* end of central directory record */
#define EOCD64_LOCATOR 20
#define EOCD64 56
#define COMMENT_MAX 65535
#define ENTRIES_MAX (1u << 22)	/* far above any checkpoint's storages */
#define WINDOW (1u << 18)	/* central directory bytes read at a time */
#define INFLATE_IN (1u << 16)	/* compressed bytes read at a time */
#define U32_MAX 0xffffffffu
#define FLAG_ENCRYPTED 1u
#define METHOD_STORE 0
#define METHOD_DEFLATE 8

/* What the central directory says of an entry: 40 bytes, its name in the
 * archive's name arena.  (libzip kept about 260 bytes an entry: 26 MB of
 * a checkpoint of 100,000 tensors, issue 38.) */
struct entry {
	uint64_t lh;		/* offset of its local header */
	uint64_t csize, size;	/* stored and real bytes */
	uint32_t crc;
	uint32_t name;		/* offset of its name in names */
	uint16_t nlen, method, flags;
};

struct torch_zip {
	const struct reader *r;
	struct entry *e;
	size_t n, cap;
	char *names;		/* each name NUL-terminated */
	size_t names_len, names_cap;
	struct nametab tab;	/* name -> entry */
	char *folder;		/* NULL when there is no FOLDER/data.pkl */
};

static uint64_t
le_u64(const uint8_t *p)
{
	return (uint64_t)le_u32(p) | (uint64_t)le_u32(p + 4) << 32;
}

static const char *
name_of(const struct torch_zip *z, const struct entry *x)
{
	return z->names + x->name;
}

static int
name_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct torch_zip *z = ctx;
	const struct entry *x = &z->e[id];

	return x->nlen == k->len && memcmp(name_of(z, x), k->name,
					   k->len) == 0;
}

static long
find(const struct torch_zip *z, const char *name, size_t len)
{
	struct nametab_key k;

	nametab_key(&k, 0, name, len);
	return nametab_find(&z->tab, &k);
}

static int
damaged(struct err *e, const char *what)
{
	return err_set(e, ERR_INVALID_CHECKPOINT, "a damaged PyTorch "
		       "checkpoint: a zip archive (what torch.save writes) "
		       "that stfs cannot read (%s): an incomplete download? "
		       "fetch it again", what);
}

static int
io(struct err *e, const char *doing, int rc)
{
	return err_set(e, ERR_IO, "%s: %s", doing, strerror(-rc));
}

/* --- the end of the central directory ----------------------------------- */

/* Where the central directory is and how many entries it has: the end of
 * central directory record, found from the end of the file (after it
 * only its comment), and its zip64 record when it points to one. */
static int
directory(struct torch_zip *z, uint64_t *off, uint64_t *len, uint64_t *n,
	  struct err *e)
{
	uint64_t size = z->r->size, from, at, loc;
	unsigned char buf[EOCD + COMMENT_MAX], l[EOCD64_LOCATOR], r[EOCD64];
	size_t got;
	int rc;

	if (size < EOCD)
		return damaged(e, "no end of central directory");
	from = size > sizeof(buf) ? size - sizeof(buf) : 0;
	got = (size_t)(size - from);
	rc = reader_pread(z->r, buf, got, from);
	if (rc)
		return io(e, "reading the zip directory", rc);
	for (at = got - EOCD + 1; at-- > 0;)
		if (memcmp(buf + at, "PK\005\006", 4) == 0 &&
		    at + EOCD + le_u16(buf + at + 20) == got)
			break;
	if (at == (uint64_t)-1)
		return damaged(e, "no end of central directory");
	if (le_u16(buf + at + 4) || le_u16(buf + at + 6))
		return damaged(e, "an archive split over several disks");
	*n = le_u16(buf + at + 10);
	*len = le_u32(buf + at + 12);
	*off = le_u32(buf + at + 16);
	at += from;
	/* zip64: the locator just before, pointing to its record (Python's
	 * zipfile and torch.save write one past 65,535 entries) */
	if (at >= EOCD64_LOCATOR &&
	    reader_pread(z->r, l, sizeof(l), at - EOCD64_LOCATOR) == 0 &&
	    memcmp(l, "PK\006\007", 4) == 0) {
		loc = le_u64(l + 8);
		if (loc > at - EOCD64_LOCATOR || at - EOCD64_LOCATOR - loc <
		    EOCD64)
			return damaged(e, "a zip64 locator past its record");
		rc = reader_pread(z->r, r, sizeof(r), loc);
		if (rc)
			return io(e, "reading the zip directory", rc);
		if (memcmp(r, "PK\006\006", 4) != 0)
			return damaged(e, "no zip64 end of central directory");
		if (le_u32(r + 16) || le_u32(r + 20))
			return damaged(e, "an archive split over several "
				       "disks");
		*n = le_u64(r + 32);
		*len = le_u64(r + 40);
		*off = le_u64(r + 48);
		at = loc;
	}
	if (*off > at || *len > at - *off)
		return damaged(e, "a central directory past its end");
	if (*n > ENTRIES_MAX)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the archive has "
			       "%llu entries, more than the %u a checkpoint "
			       "may have", (unsigned long long)*n,
			       ENTRIES_MAX);
	return 0;
}

/* --- the central directory ------------------------------------------------ */

/* The zip64 extra field of a header whose 32-bit fields say so. */
static int
zip64_extra(struct entry *x, const unsigned char *p, size_t n, int need_size,
	    int need_csize, int need_lh, struct err *e)
{
	while (n >= 4) {
		unsigned id = le_u16(p), len = le_u16(p + 2);
		const unsigned char *q = p + 4;
		size_t want = 8u * ((size_t)need_size + (size_t)need_csize +
				    (size_t)need_lh);

		if (len > n - 4)
			break;
		if (id == 1) {
			if (len < want)
				return damaged(e, "a short zip64 field");
			if (need_size) {
				x->size = le_u64(q);
				q += 8;
			}
			if (need_csize) {
				x->csize = le_u64(q);
				q += 8;
			}
			if (need_lh)
				x->lh = le_u64(q);
			return 0;
		}
		p += 4 + len;
		n -= 4 + len;
	}
	return damaged(e, "a size or offset past 4 GiB without its zip64 "
		       "field");
}

/* Keep one central directory header h (its name and extra follow it). */
static int
add_entry(struct torch_zip *z, const unsigned char *h, struct err *e)
{
	unsigned nlen = le_u16(h + 28), xlen = le_u16(h + 30);
	const char *name = (const char *)h + CENTRAL_HEADER;
	struct nametab_key k;
	struct entry x = { 0 };
	size_t len = nlen;
	long had;

	x.flags = (uint16_t)le_u16(h + 8);
	x.method = (uint16_t)le_u16(h + 10);
	x.crc = le_u32(h + 16);
	x.csize = le_u32(h + 20);
	x.size = le_u32(h + 24);
	x.lh = le_u32(h + 42);
	if (le_u16(h + 34))
		return damaged(e, "an entry on another disk");
	if ((x.size == U32_MAX || x.csize == U32_MAX || x.lh == U32_MAX) &&
	    zip64_extra(&x, h + CENTRAL_HEADER + nlen, xlen,
			x.size == U32_MAX, x.csize == U32_MAX,
			x.lh == U32_MAX, e))
		return -1;
	if (!nlen || memchr(name, '\0', nlen))
		return damaged(e, "an entry without a name");
	if (z->n == z->cap) {
		size_t cap = z->cap ? 2 * z->cap : 64;
		struct entry *q = realloc(z->e, cap * sizeof(*q));

		if (!q)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		z->e = q;
		z->cap = cap;
	}
	if (z->names_len + len + 1 > z->names_cap) {
		size_t cap = z->names_cap ? 2 * z->names_cap : 4096;
		char *q;

		while (cap < z->names_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return damaged(e, "names longer than 4 GiB together");
		q = realloc(z->names, cap);
		if (!q)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		z->names = q;
		z->names_cap = cap;
	}
	x.name = (uint32_t)z->names_len;
	x.nlen = (uint16_t)nlen;
	memcpy(z->names + z->names_len, name, len);
	z->names[z->names_len + len] = '\0';
	nametab_key(&k, 0, name, len);
	had = nametab_put(&z->tab, &k, (uint32_t)z->n);
	if (had == -2)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	if (had >= 0)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the archive holds "
			       "`%.200s` twice", z->names + z->names_len);
	z->names_len += len + 1;
	z->e[z->n++] = x;
	/* FOLDER/data.pkl, FOLDER without a '/' */
	if (len > 9 && memcmp(name + len - 9, "/data.pkl", 9) == 0 &&
	    !memchr(name, '/', len - 9)) {
		if (z->folder)
			return err_set(e, ERR_INVALID_CHECKPOINT, "the archive "
				       "holds two pickles (%s/data.pkl and "
				       "%.200s)", z->folder,
				       z->names + x.name);
		if (!(z->folder = strndup(name, len - 9)))
			return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	return 0;
}

/* Every header of the central directory, len bytes at off, read through
 * a window (never whole: 100,000 entries are 8 MB of it). */
static int
read_directory(struct torch_zip *z, uint64_t off, uint64_t len, uint64_t n,
	       struct err *e)
{
	unsigned char *buf = malloc(WINDOW);
	size_t have = 0, at = 0;
	uint64_t next = off, end = off + len, i;
	int rc = 0;

	if (!buf)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	/* room for what the directory can hold, at once: a header is 46
	 * bytes and its name, a name at most all of it */
	z->cap = (size_t)(n < len / CENTRAL_HEADER ? n : len / CENTRAL_HEADER);
	z->names_cap = len < UINT32_MAX ? (size_t)len + 1 : UINT32_MAX;
	z->e = z->cap ? malloc(z->cap * sizeof(*z->e)) : NULL;
	z->names = malloc(z->names_cap);
	if ((z->cap && !z->e) || !z->names) {
		free(buf);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	for (i = 0; rc == 0 && i < n; i++) {
		size_t whole;

		/* a header (at most 46 + 3 * 65535 bytes) whole in the
		 * window: move what is left to the front, read more */
		if (have - at < CENTRAL_HEADER ||
		    have - at < CENTRAL_HEADER + (size_t)le_u16(buf + at + 28) +
		    le_u16(buf + at + 30) + le_u16(buf + at + 32)) {
			size_t keep = have - at, more = WINDOW - keep;

			memmove(buf, buf + at, keep);
			if (more > end - next)
				more = (size_t)(end - next);
			rc = more ? reader_pread(z->r, buf + keep, more, next) :
			     0;
			if (rc) {
				rc = io(e, "reading the zip directory", rc);
				break;
			}
			next += more;
			have = keep + more;
			at = 0;
		}
		if (have - at < CENTRAL_HEADER ||
		    memcmp(buf + at, "PK\001\002", 4) != 0) {
			rc = damaged(e, "a central directory shorter than its "
				     "entries");
			break;
		}
		whole = CENTRAL_HEADER + le_u16(buf + at + 28) +
			le_u16(buf + at + 30) + le_u16(buf + at + 32);
		if (have - at < whole) {
			rc = damaged(e, "a central directory shorter than its "
				     "entries");
			break;
		}
		rc = add_entry(z, buf + at, e);
		at += whole;
	}
	free(buf);
	return rc;
}

/* *p, of *cap items of size bytes, cut to n items (kept as it is when
 * realloc cannot). */
static void
shrink(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n == 0 || n >= *cap)
		return;
	q = realloc(*p, n * size);
	if (q) {
		*p = q;
		*cap = n;
	}
}

int
torch_zip_open(const struct reader *r, struct torch_zip **out,
	       struct err *e)
{
	struct torch_zip *z = calloc(1, sizeof(*z));
	uint64_t off, len, n;

	*out = NULL;
	if (!z)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	z->r = r;
	if (directory(z, &off, &len, &n, e))
		goto fail;
	if (nametab_init(&z->tab, (size_t)n + 1, name_eq, z)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto fail;
	}
	if (read_directory(z, off, len, n, e))
		goto fail;
	/* what the directory held: the room its size promised goes back */
	shrink((void **)&z->e, &z->cap, z->n, sizeof(*z->e));
	shrink((void **)&z->names, &z->names_cap, z->names_len, 1);
	*out = z;
	return 0;
fail:
	torch_zip_free(z);
	return -1;
}

void
torch_zip_free(struct torch_zip *z)
{
	if (!z)
		return;
	free(z->e);
	free(z->names);
	if (z->tab.slot)
		nametab_free(&z->tab);
	free(z->folder);
	free(z);
}

const char *
torch_zip_folder(const struct torch_zip *z)
{
	return z->folder;
}

/* --- an entry's bytes ---------------------------------------------------- */

/* Check x's local header (its signature, method and name) and find where
 * its data starts: *data. */
static int
check_local(struct torch_zip *z, const struct entry *x, uint64_t *data,
	    struct err *e)
{
	const char *name = name_of(z, x);
	unsigned char h[LOCAL_HEADER];
	char got[512];
	int rc;

	if (x->lh > z->r->size ||
	    z->r->size - x->lh < (uint64_t)LOCAL_HEADER + x->nlen)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the local header "
			       "of `%.200s` is past the end of the file "
			       "(truncated?)", name);
	rc = reader_pread(z->r, h, sizeof(h), x->lh);
	if (rc)
		return err_set(e, ERR_IO, "reading the zip entry `%.200s`: %s",
			       name, strerror(-rc));
	if (memcmp(h, "PK\003\004", 4) != 0 || le_u16(h + 8) != x->method ||
	    le_u16(h + 26) != x->nlen || x->nlen > sizeof(got))
		return err_set(e, ERR_INVALID_CHECKPOINT, "the local header "
			       "of `%.200s` does not match the central "
			       "directory (a damaged archive?)", name);
	rc = reader_pread(z->r, got, x->nlen, x->lh + LOCAL_HEADER);
	if (rc)
		return err_set(e, ERR_IO, "reading the zip entry `%.200s`: %s",
			       name, strerror(-rc));
	if (memcmp(got, name, x->nlen) != 0)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the local header "
			       "of `%.200s` names another file (a damaged "
			       "archive?)", name);
	*data = x->lh + LOCAL_HEADER + x->nlen + le_u16(h + 28);
	if (*data > z->r->size || x->csize > z->r->size - *data)
		return err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` ends past "
			       "the end of the file (truncated?)", name);
	return 0;
}

/* FOLDER/name into full (cap bytes): its length, or 0 when it does not
 * fit. */
static size_t
full_name(const struct torch_zip *z, const char *name, char *full,
	  size_t cap)
{
	int n = snprintf(full, cap, "%s/%s", z->folder ? z->folder : "",
			 name);

	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

int
torch_zip_has(const struct torch_zip *z, const char *name)
{
	char full[1024];
	size_t n = full_name(z, name, full, sizeof(full));

	return n && find(z, full, n) >= 0;
}

/* Entry FOLDER/name (the full name into full). */
static const struct entry *
entry(struct torch_zip *z, const char *name, char *full, size_t cap,
      struct err *e)
{
	size_t n = full_name(z, name, full, cap);
	long idx;

	if (!n || (idx = find(z, full, n)) < 0) {
		err_set(e, ERR_INVALID_CHECKPOINT, "the archive has no entry "
			"`%.200s`", full);
		return NULL;
	}
	return &z->e[idx];
}

int
torch_zip_locate(struct torch_zip *z, const char *name, uint64_t *off,
		 uint64_t *len, struct err *e)
{
	char full[1024];
	const struct entry *x = entry(z, name, full, sizeof(full), e);

	if (!x)
		return -1;
	if (x->method != METHOD_STORE || (x->flags & FLAG_ENCRYPTED) ||
	    x->csize != x->size)
		return err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` is "
			       "compressed or encrypted in the archive (stfs "
			       "reads stored entries in place): save the "
			       "checkpoint again with torch.save, which stores "
			       "them", full);
	*off = 0;
	*len = 0;
	/* an empty entry has no bytes to find */
	if (x->size == 0)
		return 0;
	if (check_local(z, x, off, e))
		return -1;
	*len = x->size;
	return 0;
}

struct torch_zip_stream {
	struct torch_zip *z;
	const struct entry *x;
	uint64_t data;		/* where its stored bytes start */
	uint64_t in_pos;	/* stored bytes read */
	uint64_t left;		/* real bytes not handed out yet */
	uint32_t crc;		/* of the bytes handed out */
	int deflated;
	z_stream zs;
	unsigned char *in;	/* INFLATE_IN compressed bytes */
};

int
torch_zip_stream_open(struct torch_zip *z, const char *name,
		      struct torch_zip_stream **out, uint64_t *len,
		      struct err *e)
{
	struct torch_zip_stream *s = calloc(1, sizeof(*s));
	char full[1024];

	*out = NULL;
	if (!s)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	s->z = z;
	s->x = entry(z, name, full, sizeof(full), e);
	if (!s->x)
		goto fail;
	/* what torch.load reads: stored or deflated, not encrypted */
	if ((s->x->method != METHOD_STORE && s->x->method != METHOD_DEFLATE) ||
	    (s->x->flags & FLAG_ENCRYPTED)) {
		err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` is encrypted, or "
			"compressed other than by deflate, in the archive "
			"(torch.load reads neither): save the checkpoint again "
			"with torch.save", full);
		goto fail;
	}
	if (s->x->method == METHOD_STORE && s->x->csize != s->x->size) {
		err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` is stored with "
			"two sizes in the archive (a damaged archive?)", full);
		goto fail;
	}
	*len = s->left = s->x->size;
	s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	if (s->x->size == 0) {
		*out = s;
		return 0;
	}
	if (check_local(z, s->x, &s->data, e))
		goto fail;
	if (s->x->method == METHOD_DEFLATE) {
		s->in = malloc(INFLATE_IN);
		if (!s->in || inflateInit2(&s->zs, -MAX_WBITS) != Z_OK) {
			free(s->in);
			err_set(e, ERR_NO_MEMORY, "out of memory");
			goto fail;
		}
		s->deflated = 1;
	}
	*out = s;
	return 0;
fail:
	free(s);
	return -1;
}

/* The next n stored bytes into buf. */
static int
read_stored(struct torch_zip_stream *s, void *buf, size_t n, struct err *e)
{
	int rc;

	if (n > s->x->csize - s->in_pos)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the entry ends "
			       "before the size the archive gives it (a "
			       "damaged archive?)");
	rc = reader_pread(s->z->r, buf, n, s->data + s->in_pos);
	if (rc)
		return io(e, "reading the entry", rc);
	s->in_pos += n;
	return 0;
}

/* The next n inflated bytes into buf. */
static int
read_deflated(struct torch_zip_stream *s, void *buf, size_t n, struct err *e)
{
	s->zs.next_out = buf;
	s->zs.avail_out = (uInt)n;
	while (s->zs.avail_out) {
		int z;

		if (s->zs.avail_in == 0) {
			uint64_t m = s->x->csize - s->in_pos;

			if (m == 0)
				return err_set(e, ERR_INVALID_CHECKPOINT, "the "
					       "entry ends before the size "
					       "the archive gives it (a "
					       "damaged archive?)");
			if (m > INFLATE_IN)
				m = INFLATE_IN;
			if (read_stored(s, s->in, (size_t)m, e))
				return -1;
			s->zs.next_in = s->in;
			s->zs.avail_in = (uInt)m;
		}
		z = inflate(&s->zs, Z_NO_FLUSH);
		if (z == Z_MEM_ERROR)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		if (z == Z_STREAM_END && s->zs.avail_out)
			return err_set(e, ERR_INVALID_CHECKPOINT, "the entry "
				       "inflates to fewer bytes than the size "
				       "the archive gives it (a damaged "
				       "archive?)");
		if (z != Z_OK && z != Z_STREAM_END)
			return err_set(e, ERR_INVALID_CHECKPOINT, "the entry's "
				       "deflated bytes are damaged (%s)",
				       s->zs.msg ? s->zs.msg : "zlib");
	}
	return 0;
}

int
torch_zip_stream_read(struct torch_zip_stream *s, void *buf, size_t n,
		      struct err *e)
{
	unsigned char *p = buf;

	while (n) {
		/* zlib counts in uInt */
		size_t k = n < (1u << 30) ? n : (1u << 30);

		if (k > s->left)
			return err_set(e, ERR_INVALID_CHECKPOINT, "the entry "
				       "ends before the size the archive gives "
				       "it (a damaged archive?)");
		if (s->deflated ? read_deflated(s, p, k, e) :
		    read_stored(s, p, k, e))
			return -1;
		s->crc = (uint32_t)crc32(s->crc, p, (uInt)k);
		s->left -= k;
		p += k;
		n -= k;
	}
	/* all of it: its bytes must be the ones the archive summed */
	if (s->left == 0 && s->crc != s->x->crc)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the entry's bytes "
			       "do not match their CRC-32 in the archive (a "
			       "damaged archive?)");
	return 0;
}

void
torch_zip_stream_close(struct torch_zip_stream *s)
{
	if (!s)
		return;
	if (s->deflated)
		inflateEnd(&s->zs);
	free(s->in);
	free(s);
}
