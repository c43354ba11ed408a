/* torch_zip.c - a checkpoint's zip archive through libzip (torch_zip.h). */
#include "format/torch/torch_zip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "base/error.h"
#include "base/nametab.h"

#define LOCAL_HEADER 30		/* fixed part of a zip local file header */
#define ENTRIES_MAX (1u << 22)	/* far above any checkpoint's storages */

/* The zip_source libzip reads through: a cursor over the reader, and the
 * offset of the first read since `first` was reset (how an entry's local
 * header is found, torch_zip.h). */
struct zsrc {
	const struct reader *r;
	uint64_t pos;
	uint64_t first;		/* UINT64_MAX: nothing read since reset */
	uint64_t last;
	int io;			/* -errno of a failed read, else 0 */
	zip_error_t err;
};

struct torch_zip {
	struct zsrc src;
	zip_t *za;
	size_t n;
	char **names;		/* entry names, libzip's index order */
	struct nametab tab;	/* name -> index */
	char *folder;		/* NULL when there is no FOLDER/data.pkl */
};

static zip_int64_t
zsrc_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
	struct zsrc *s = ud;
	zip_int64_t off;
	int rc;

	switch (cmd) {
	case ZIP_SOURCE_OPEN:
		s->pos = 0;
		return 0;
	case ZIP_SOURCE_READ:
		if (s->pos >= s->r->size)
			return 0;
		if (len > s->r->size - s->pos)
			len = s->r->size - s->pos;
		if (len > ((zip_uint64_t)1 << 30))
			len = (zip_uint64_t)1 << 30;
		rc = reader_pread(s->r, data, (size_t)len, s->pos);
		if (rc) {
			s->io = rc;
			zip_error_set(&s->err, ZIP_ER_READ, -rc);
			return -1;
		}
		if (s->first == UINT64_MAX)
			s->first = s->pos;
		s->last = s->pos;
		s->pos += len;
		return (zip_int64_t)len;
	case ZIP_SOURCE_CLOSE:
		return 0;
	case ZIP_SOURCE_STAT: {
		zip_stat_t *st = data;

		if (len < sizeof(*st))
			return -1;
		zip_stat_init(st);
		st->size = s->r->size;
		st->comp_size = s->r->size;
		st->comp_method = ZIP_CM_STORE;
		st->encryption_method = ZIP_EM_NONE;
		st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
			    ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
		return sizeof(*st);
	}
	case ZIP_SOURCE_SEEK:
		off = zip_source_seek_compute_offset(s->pos, s->r->size, data,
						     len, &s->err);
		if (off < 0)
			return -1;
		s->pos = (uint64_t)off;
		return 0;
	case ZIP_SOURCE_TELL:
		return (zip_int64_t)s->pos;
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&s->err, data, len);
	case ZIP_SOURCE_FREE:
		return 0;
	case ZIP_SOURCE_SUPPORTS:
		return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN,
			ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
			ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK,
			ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS, -1);
	default:
		zip_error_set(&s->err, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

static int
name_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct torch_zip *z = ctx;

	return strlen(z->names[id]) == k->len &&
	       memcmp(z->names[id], k->name, k->len) == 0;
}

static long
find(const struct torch_zip *z, const char *name, size_t len)
{
	struct nametab_key k;

	nametab_key(&k, 0, name, len);
	return nametab_find(&z->tab, &k);
}

/* A libzip failure as one line, or the reader's I/O error. */
static int
zip_fail(struct torch_zip *z, zip_error_t *ze, const char *doing,
	 struct err *e)
{
	if (z->src.io)
		return err_set(e, ERR_IO, "%s: %s", doing,
			       strerror(-z->src.io));
	return err_set(e, ERR_INVALID_CHECKPOINT, "a damaged PyTorch "
		       "checkpoint: a zip archive (what torch.save writes) "
		       "that libzip cannot read (%s: %s): an incomplete "
		       "download? fetch it again", doing,
		       zip_error_strerror(ze));
}

/* Names, the name table and the folder of FOLDER/data.pkl. */
static int
list_entries(struct torch_zip *z, struct err *e)
{
	zip_int64_t n = zip_get_num_entries(z->za, 0);
	size_t i;

	if (n < 0 || (uint64_t)n > ENTRIES_MAX)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the archive has "
			       "%lld entries, more than the %u a checkpoint "
			       "may have", (long long)n, ENTRIES_MAX);
	z->names = calloc((size_t)n + 1, sizeof(*z->names));
	if (!z->names || nametab_init(&z->tab, (size_t)n + 1, name_eq, z))
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < (size_t)n; i++) {
		const char *name = zip_get_name(z->za, i, ZIP_FL_ENC_RAW);
		struct nametab_key k;
		size_t len;
		long had;

		if (!name)
			return zip_fail(z, zip_get_error(z->za), "reading the "
					"central directory", e);
		if (!(z->names[i] = strdup(name)))
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		z->n = i + 1;
		len = strlen(name);
		nametab_key(&k, 0, name, len);
		had = nametab_put(&z->tab, &k, (uint32_t)i);
		if (had == -2)
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		if (had >= 0)
			return err_set(e, ERR_INVALID_CHECKPOINT, "the archive "
				       "holds `%.200s` twice", name);
		if (len > 9 && strcmp(name + len - 9, "/data.pkl") == 0 &&
		    !memchr(name, '/', len - 9)) {
			if (z->folder)
				return err_set(e, ERR_INVALID_CHECKPOINT,
					       "the archive holds two pickles "
					       "(%s/data.pkl and %.200s)",
					       z->folder, name);
			if (!(z->folder = strndup(name, len - 9)))
				return err_set(e, ERR_NO_MEMORY, "out of "
					       "memory");
		}
	}
	return 0;
}

int
torch_zip_open(const struct reader *r, struct torch_zip **out,
	       struct err *e)
{
	struct torch_zip *z = calloc(1, sizeof(*z));
	zip_source_t *src;
	zip_error_t ze;

	*out = NULL;
	if (!z)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	z->src.r = r;
	z->src.first = UINT64_MAX;
	zip_error_init(&z->src.err);
	zip_error_init(&ze);
	src = zip_source_function_create(zsrc_cb, &z->src, &ze);
	if (!src) {
		zip_error_fini(&ze);
		torch_zip_free(z);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	z->za = zip_open_from_source(src, ZIP_RDONLY, &ze);
	if (!z->za) {
		zip_fail(z, &ze, "reading the zip directory", e);
		zip_source_free(src);
		zip_error_fini(&ze);
		torch_zip_free(z);
		return -1;
	}
	zip_error_fini(&ze);
	if (list_entries(z, e)) {
		torch_zip_free(z);
		return -1;
	}
	*out = z;
	return 0;
}

void
torch_zip_free(struct torch_zip *z)
{
	size_t i;

	if (!z)
		return;
	if (z->za)
		zip_discard(z->za);
	for (i = 0; i < z->n; i++)
		free(z->names[i]);
	free(z->names);
	if (z->tab.slot)
		nametab_free(&z->tab);
	free(z->folder);
	zip_error_fini(&z->src.err);
	free(z);
}

const char *
torch_zip_folder(const struct torch_zip *z)
{
	return z->folder;
}

static uint32_t
le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/* Check the local header at lh for entry idx, stored or compressed by
 * method; the data start in *data. */
static int
check_local(struct torch_zip *z, zip_uint64_t idx, unsigned method,
	    uint64_t lh, uint64_t *data, struct err *e)
{
	const char *name = z->names[idx];
	size_t nlen = strlen(name);
	unsigned char h[LOCAL_HEADER];
	char got[512];
	int rc;

	if (lh > z->src.r->size || z->src.r->size - lh < LOCAL_HEADER + nlen)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the local header "
			       "of `%.200s` is past the end of the file "
			       "(truncated?)", name);
	rc = reader_pread(z->src.r, h, sizeof(h), lh);
	if (rc)
		return err_set(e, ERR_IO, "reading the zip entry `%.200s`: %s",
			       name, strerror(-rc));
	if (memcmp(h, "PK\003\004", 4) != 0 || le16(h + 8) != method ||
	    le16(h + 26) != nlen || nlen > sizeof(got))
		return err_set(e, ERR_INVALID_CHECKPOINT, "the local header "
			       "of `%.200s` does not match the central "
			       "directory (a damaged archive?)", name);
	rc = reader_pread(z->src.r, got, nlen, lh + LOCAL_HEADER);
	if (rc)
		return err_set(e, ERR_IO, "reading the zip entry `%.200s`: %s",
			       name, strerror(-rc));
	if (memcmp(got, name, nlen) != 0)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the local header "
			       "of `%.200s` names another file (a damaged "
			       "archive?)", name);
	*data = lh + LOCAL_HEADER + nlen + le16(h + 28);
	return 0;
}

/* Where entry idx's data starts: libzip opens the entry (reading its
 * local header's lengths, 26 bytes in, through zsrc_cb), the local header
 * is checked here, and a one-byte read through libzip must land on the
 * data start found. */
static int
data_start(struct torch_zip *z, zip_uint64_t idx, unsigned method,
	   uint64_t *data, struct err *e)
{
	zip_file_t *f;
	unsigned char byte;
	uint64_t lh;

	z->src.first = UINT64_MAX;
	f = zip_fopen_index(z->za, idx, 0);
	if (!f)
		return zip_fail(z, zip_get_error(z->za), "opening a zip entry",
				e);
	lh = z->src.first;
	if (lh == UINT64_MAX || lh < 26 ||
	    check_local(z, idx, method, lh - 26, data, e)) {
		zip_fclose(f);
		return err_set(e, ERR_INVALID_CHECKPOINT, "cannot find where "
			       "`%.200s` starts in the archive",
			       z->names[idx]);
	}
	if (zip_fread(f, &byte, 1) != 1 || z->src.last != *data) {
		zip_fclose(f);
		if (z->src.io)
			return zip_fail(z, NULL, "reading a zip entry", e);
		return err_set(e, ERR_INVALID_CHECKPOINT, "the data of "
			       "`%.200s` is not where its local header says "
			       "(a damaged archive?)", z->names[idx]);
	}
	zip_fclose(f);
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

/* Entry NAME (FOLDER/name, into full): its index and libzip's stat. */
static long
entry(struct torch_zip *z, const char *name, char *full, size_t cap,
      zip_stat_t *st, struct err *e)
{
	size_t n = full_name(z, name, full, cap);
	long idx;

	if (!n || (idx = find(z, full, n)) < 0)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the archive has no "
			       "entry `%.200s`", full);
	if (zip_stat_index(z->za, (zip_uint64_t)idx, 0, st) != 0)
		return zip_fail(z, zip_get_error(z->za), "reading a zip entry",
				e);
	return idx;
}

/* Where the data of entry idx (full), not empty, starts: its local
 * header checked, its bytes (as stored) inside the file. */
static int
placed(struct torch_zip *z, long idx, const char *full, const zip_stat_t *st,
       uint64_t *off, struct err *e)
{
	if (data_start(z, (zip_uint64_t)idx, st->comp_method, off, e))
		return -1;
	if (*off > z->src.r->size || st->comp_size > z->src.r->size - *off)
		return err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` ends past "
			       "the end of the file (truncated?)", full);
	return 0;
}

int
torch_zip_locate(struct torch_zip *z, const char *name, uint64_t *off,
		 uint64_t *len, struct err *e)
{
	char full[1024];
	zip_stat_t st;
	long idx = entry(z, name, full, sizeof(full), &st, e);

	if (idx < 0)
		return -1;
	if (st.comp_method != ZIP_CM_STORE || st.encryption_method !=
	    ZIP_EM_NONE || st.comp_size != st.size)
		return err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` is "
			       "compressed or encrypted in the archive (stfs "
			       "reads stored entries in place): save the "
			       "checkpoint again with torch.save, which stores "
			       "them", full);
	*off = 0;
	*len = 0;
	/* An empty entry has no bytes to find (libzip does not even read
	 * its local header). */
	if (st.size == 0)
		return 0;
	if (placed(z, idx, full, &st, off, e))
		return -1;
	*len = st.size;
	return 0;
}

struct torch_zip_stream {
	struct torch_zip *z;
	zip_file_t *f;		/* NULL for an empty entry */
	char full[1024];	/* FOLDER/name */
};

int
torch_zip_stream_open(struct torch_zip *z, const char *name,
		      struct torch_zip_stream **out, uint64_t *len,
		      struct err *e)
{
	struct torch_zip_stream *s = calloc(1, sizeof(*s));
	zip_stat_t st;
	uint64_t off;
	long idx;

	*out = NULL;
	if (!s)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	s->z = z;
	idx = entry(z, name, s->full, sizeof(s->full), &st, e);
	if (idx < 0)
		goto fail;
	/* what torch.load reads: stored or deflated, not encrypted */
	if ((st.comp_method != ZIP_CM_STORE &&
	     st.comp_method != ZIP_CM_DEFLATE) ||
	    st.encryption_method != ZIP_EM_NONE) {
		err_set(e, ERR_INVALID_CHECKPOINT, "`%.200s` is encrypted, or "
			"compressed other than by deflate, in the archive "
			"(torch.load reads neither): save the checkpoint again "
			"with torch.save", s->full);
		goto fail;
	}
	*len = st.size;
	if (st.size == 0) {
		*out = s;
		return 0;
	}
	if (placed(z, idx, s->full, &st, &off, e))
		goto fail;
	s->f = zip_fopen_index(z->za, (zip_uint64_t)idx, 0);
	if (!s->f) {
		zip_fail(z, zip_get_error(z->za), "opening a zip entry", e);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	free(s);
	return -1;
}

int
torch_zip_stream_read(struct torch_zip_stream *s, void *buf, size_t n,
		      struct err *e)
{
	while (n) {
		zip_int64_t got = s->f ? zip_fread(s->f, buf, n) : 0;

		if (got < 0)
			return zip_fail(s->z, zip_file_get_error(s->f),
					"reading the entry", e);
		if (got == 0)
			return err_set(e, ERR_INVALID_CHECKPOINT, "the entry "
				       "ends before the size the archive gives "
				       "it (a damaged archive?)");
		buf = (char *)buf + got;
		n -= (size_t)got;
	}
	return 0;
}

void
torch_zip_stream_close(struct torch_zip_stream *s)
{
	if (!s)
		return;
	if (s->f)
		zip_fclose(s->f);
	free(s);
}
