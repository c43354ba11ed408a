/* torch_scan.c - the imports and calls of a file's pickles (torch_scan.h).
 */
#include "format/torch/torch_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/torch/pickle.h"
#include "format/torch/torch_unsafe.h"
#include "format/torch/torch_value.h"
#include "format/torch/torch_zip.h"

/* torch's magic number 0x1950a86a20f9469cfc6c as LONG1 keeps it: little
 * endian, no byte that only repeats the sign (pickle_value.h). */
static const unsigned char magic[] = {
	0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19,
};

/* The bytes of r from pos on, in order. */
struct cursor {
	const struct reader *r;
	uint64_t pos;
};

static int
cursor_read(void *ctx, void *buf, size_t n, struct err *e)
{
	struct cursor *c = ctx;
	int rc = reader_pread(c->r, buf, n, c->pos);

	if (rc)
		return err_set(e, ERR_IO, "reading %zu bytes at %llu: %s", n,
			       (unsigned long long)c->pos, strerror(-rc));
	c->pos += n;
	return 0;
}

static int
stream_read(void *ctx, void *buf, size_t n, struct err *e)
{
	return torch_zip_stream_read(ctx, buf, n, e);
}

/* Read one pickle from src into part (its uses), named name; *p the
 * pickle (freed by the caller), *used its bytes.  0; 1 when it broke off
 * (out->broke says why, part holds what came before); -1 with *e (I/O,
 * memory). */
static int
scan_one(const struct pickle_source *src, const char *name,
	 struct torch_scan *out, struct pickle **p, size_t *used,
	 struct err *e)
{
	struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
	struct torch_scan_part *part = &out->part[out->nparts++];
	char why[ERR_DETAIL_MAX];
	int rc;

	snprintf(part->name, sizeof(part->name), "%s", name);
	lim.str_kept = TORCH_VALUE_STR_SHOWN;
	lim.bytes_kept = TORCH_VALUE_BYTES_SHOWN;
	lim.seq_kept = TORCH_VALUE_ITEMS_KEPT;
	*p = NULL;
	rc = pickle_scan(src, &lim, p, used, e);
	if (rc && (e->code == ERR_IO || e->code == ERR_NO_MEMORY))
		return -1;
	if (rc) {
		memcpy(why, e->detail, sizeof(why));
		err_clear(e);
		err_set(&out->broke, ERR_INVALID_PICKLE, "%s: %.400s", name,
			why);
	}
	if (*p && torch_unsafe_list(*p, &part->use, &part->n, &part->total,
				    e))
		return -1;
	out->total += part->total;
	return rc ? 1 : 0;
}

static int
scan_zip(const struct reader *r, struct torch_scan *out, struct err *e)
{
	struct pickle_source src = { stream_read, NULL, 0, 0, NULL };
	struct torch_zip_stream *s;
	struct torch_zip *z;
	struct pickle *p;
	char name[64];
	uint64_t n;
	size_t used;
	int rc;

	if (torch_zip_open(r, &z, e)) {
		if (e->code == ERR_IO || e->code == ERR_NO_MEMORY)
			return -1;
		out->what = "a zip archive";
		memcpy(&out->broke, e, sizeof(*e));
		err_clear(e);
		return 0;
	}
	if (!torch_zip_folder(z)) {
		out->what = "a zip archive without data.pkl, which torch.load "
			    "refuses before it unpickles anything";
		torch_zip_free(z);
		return 0;
	}
	out->what = "a PyTorch checkpoint";
	snprintf(name, sizeof(name), "%.50s/data.pkl", torch_zip_folder(z));
	if (torch_zip_stream_open(z, "data.pkl", &s, &n, e)) {
		torch_zip_free(z);
		if (e->code == ERR_IO || e->code == ERR_NO_MEMORY)
			return -1;
		memcpy(&out->broke, e, sizeof(*e));
		err_clear(e);
		return 0;
	}
	src.ctx = s;
	src.len = n > SIZE_MAX ? SIZE_MAX : (size_t)n;
	rc = scan_one(&src, name, out, &p, &used, e);
	pickle_free(p);
	torch_zip_stream_close(s);
	torch_zip_free(z);
	return rc < 0 ? -1 : 0;
}

/* 1 when p's root is torch's magic number: the legacy format. */
static int
is_magic(const struct pickle *p)
{
	const struct pickle_value *v = p ? pickle_root(p) : NULL;

	return v && v->kind == PICKLE_LONG && v->str.len == sizeof(magic) &&
	       memcmp(v->str.p, magic, sizeof(magic)) == 0;
}

/* The pickles at the start of a file that is no zip: the first, and after
 * torch's magic number the others of the legacy format. */
static int
scan_pickles(const struct reader *r, int maybe, struct torch_scan *out,
	     struct err *e)
{
	struct cursor c = { r, 0 };
	struct pickle_source src = { cursor_read, &c, 0, 0, NULL };
	struct pickle *p;
	char name[64];
	size_t used;
	int rc = 0;

	out->what = "a pickle";
	for (size_t k = 0; k < TORCH_SCAN_PICKLES && c.pos < r->size; k++) {
		uint64_t start = c.pos;

		src.len = r->size - start > SIZE_MAX ? SIZE_MAX :
			  (size_t)(r->size - start);
		if (k)
			snprintf(name, sizeof(name), "pickle %zu of the "
				 "legacy format", k + 1);
		else
			snprintf(name, sizeof(name), "its pickle");
		rc = scan_one(&src, name, out, &p, &used, e);
		if (rc == 0 && k == 0 && is_magic(p))
			out->what = "a PyTorch checkpoint in the legacy "
				    "format (torch.save before 1.6)";
		if (rc == 0 && k == 0 && !is_magic(p)) {
			/* torch.load stops after a first pickle that is
			 * not the magic number */
			pickle_free(p);
			break;
		}
		pickle_free(p);
		if (rc)
			break;
		c.pos = start + used;
	}
	if (rc < 0)
		return -1;
	if (rc == 1 && maybe && out->total == 0) {
		/* no pickle: nothing a load would make */
		out->what = "not a pickle";
		err_clear(&out->broke);
		out->nparts = 0;
	}
	return 0;
}

int
torch_scan(const struct reader *r, int maybe, struct torch_scan *out,
	   struct err *e)
{
	unsigned char head[4] = { 0 };
	size_t n = r->size < 4 ? (size_t)r->size : 4;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = n ? reader_pread(r, head, n, 0) : 0;
	if (rc)
		return err_set(e, ERR_IO, "reading the first bytes: %s",
			       strerror(-rc));
	if (n == 4 && memcmp(head, "PK\003\004", 4) == 0)
		return scan_zip(r, out, e);
	if (r->size == 0) {
		out->what = "an empty file";
		return 0;
	}
	return scan_pickles(r, maybe && head[0] != 0x80, out, e);
}

void
torch_scan_free(struct torch_scan *s)
{
	for (size_t i = 0; i < s->nparts; i++)
		free(s->part[i].use);
	memset(s, 0, sizeof(*s));
}
