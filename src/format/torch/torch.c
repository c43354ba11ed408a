/* torch.c - PyTorch checkpoints as a container format (torch.h). */
#include "format/torch/torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/naming.h"
#include "format/torch/pickle.h"
#include "format/torch/torch_fold.h"
#include "format/torch/torch_tree.h"
#include "format/torch/torch_unsafe.h"
#include "format/torch/torch_value.h"
#include "format/torch/torch_zip.h"

#define PICKLE_MAX_BYTES (256u << 20)	/* far above any state dict's */
/* What reading a pickle of n bytes may hold at once: 16 MiB, and three
 * bytes for each of its own.  A state dict's values, folded, take about
 * 2.2 (100,000 tensors: 25 MB for 11.5 MB of pickle); a pickle of 4
 * million values of a byte or two each, which took 320 MB (issue 38), is
 * refused at 36 to 48 MB. */
#define PICKLE_MEMORY(n) (((size_t)16 << 20) + 3 * (n))

/* The legacy format starts with the pickle of torch's magic number
 * 0x1950a86a20f9469cfc6c: PROTO (2 to 5, torch.save's pickle_protocol),
 * from protocol 4 a FRAME, then LONG1 of 10 bytes. */
static const unsigned char legacy_magic[] = {
	0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19,
};

#define LEGACY_HEAD (2 + 9 + sizeof(legacy_magic))	/* PROTO FRAME LONG1 */

static int
is_legacy(const unsigned char *head, size_t n)
{
	size_t at = 2;

	if (n < 2 || head[0] != 0x80 || head[1] < 2 || head[1] > 5)
		return 0;
	if (n > at && head[at] == 0x95)		/* FRAME and its length */
		at += 9;
	return n >= at + sizeof(legacy_magic) &&
	       memcmp(head + at, legacy_magic, sizeof(legacy_magic)) == 0;
}

int
torch_claims(const unsigned char *head, size_t n, uint64_t size)
{
	(void)size;
	if (n >= 4 && memcmp(head, "PK\003\004", 4) == 0)
		return 1;
	return is_legacy(head, n);
}

/* Read a small entry whole (byteorder) into buf, at most cap bytes. */
static int
read_entry(const struct reader *r, struct torch_zip *z, const char *name,
	   char *buf, size_t cap, size_t *len, struct err *e)
{
	uint64_t off, n;
	int rc;

	*len = 0;
	if (torch_zip_locate(z, name, &off, &n, e))
		return -1;
	if (n > cap)
		return err_set(e, ERR_INVALID_CHECKPOINT, "%s is %llu bytes, "
			       "more than the %zu stfs reads", name,
			       (unsigned long long)n, cap);
	rc = n ? reader_pread(r, buf, (size_t)n, off) : 0;
	if (rc)
		return err_set(e, ERR_IO, "reading %s: %s", name,
			       strerror(-rc));
	*len = (size_t)n;
	return 0;
}

/* torch 2.1 and later write the byte order; older ones wrote the
 * machine's, little-endian everywhere they ran. */
static int
check_byteorder(const struct reader *r, struct torch_zip *z, struct err *e)
{
	char text[16];
	size_t len;

	if (!torch_zip_has(z, "byteorder"))
		return 0;
	if (read_entry(r, z, "byteorder", text, sizeof(text), &len, e))
		return -1;
	if (len == 3 && memcmp(text, "big", 3) == 0)
		return err_set(e, ERR_INVALID_CHECKPOINT, "the checkpoint was "
			       "written big-endian: stfs serves little-endian "
			       "bytes only; load and save it again on a "
			       "little-endian machine");
	if (len != 6 || memcmp(text, "little", 6) != 0)
		return err_set(e, ERR_INVALID_CHECKPOINT, "byteorder says "
			       "neither little nor big");
	return 0;
}

/* data.pkl as it is read: its entry, opened again to be read again. */
struct pickle_entry {
	struct torch_zip *z;
	struct torch_zip_stream *s;
};

static int
read_pickle(void *ctx, void *buf, size_t n, struct err *e)
{
	struct pickle_entry *pe = ctx;

	return torch_zip_stream_read(pe->s, buf, n, e);
}

static int
rewind_pickle(void *ctx, struct err *e)
{
	struct pickle_entry *pe = ctx;
	uint64_t n;

	torch_zip_stream_close(pe->s);
	pe->s = NULL;
	return torch_zip_stream_open(pe->z, "data.pkl", &pe->s, &n, e);
}

/* data.pkl, read in order from the zip and never held whole: a value the
 * metadata would not show is passed by (pickle.h), a tensor's call is
 * folded as it is read (torch_fold.h), and the memo holds what is read
 * back, so memory follows what is kept, not the pickle's size.  What the
 * load may hold at once is bounded (PICKLE_MEMORY), so that a pickle made
 * to spend memory is refused before it has. */
static int
load_pickle(struct torch_zip *z, struct pickle **p, size_t *len,
	    size_t *folded, struct err *e)
{
	struct pickle_limits lim = PICKLE_LIMITS_DEFAULT;
	struct pickle_entry pe = { z, NULL };
	struct pickle_source src = { read_pickle, &pe, 0, 0, rewind_pickle };
	uint64_t n;
	int rc;

	if (torch_zip_stream_open(z, "data.pkl", &pe.s, &n, e))
		return -1;
	if (n > PICKLE_MAX_BYTES) {
		torch_zip_stream_close(pe.s);
		return err_set(e, ERR_INVALID_CHECKPOINT, "data.pkl is %llu "
			       "bytes, more than the %u stfs reads",
			       (unsigned long long)n, PICKLE_MAX_BYTES);
	}
	lim.str_kept = TORCH_VALUE_STR_SHOWN;
	lim.bytes_kept = TORCH_VALUE_BYTES_SHOWN;
	lim.seq_kept = TORCH_VALUE_ITEMS_KEPT;
	lim.memory = PICKLE_MEMORY((size_t)n);
	lim.fold = torch_fold_call;
	lim.fold_ctx = folded;
	src.len = (size_t)n;
	*len = (size_t)n;
	rc = pickle_read(&src, &lim, p, e);
	torch_zip_stream_close(pe.s);
	if (rc) {
		char why[ERR_DETAIL_MAX];

		memcpy(why, e->detail, sizeof(why));
		err_replace(e, e->code, "%s/data.pkl: %.400s",
			    torch_zip_folder(z), why);
	}
	return rc;
}

/* 1 when the name says a PyTorch checkpoint (naming.h): a zip without
 * a pickle is then PyTorch's to refuse, not another format's. */
static int
named_torch(const char *name)
{
	struct naming nm;

	return name && naming_of(name, &nm) != NAMING_NONE && nm.reader &&
	       strcmp(nm.reader, NAMING_TORCH) == 0;
}

static int
open_zip(const struct reader *r, struct header **out, struct err *e)
{
	struct torch_tree_budget budget;
	struct unsafe_use *unsafe;
	struct pickle *p = NULL;
	size_t nunsafe;
	uint64_t total;
	struct torch_zip *z;
	size_t len = 0, folded = 0;
	int rc = -1;

	if (torch_zip_open(r, &z, e))
		return err_at(e, r->name);
	if (!torch_zip_folder(z) && !named_torch(r->name)) {
		torch_zip_free(z);
		return TORCH_NOT_MINE;
	}
	if (!torch_zip_folder(z)) {
		torch_zip_free(z);
		err_set(e, ERR_INVALID_CHECKPOINT, "not a PyTorch checkpoint: "
			"a zip archive without FOLDER/data.pkl, which "
			"torch.save writes (convert what it holds where you "
			"trust it: safetensors.torch.save_file)");
		return err_at(e, r->name);
	}
	if (check_byteorder(r, z, e) || load_pickle(z, &p, &len, &folded,
						     e))
		goto out;
	budget = torch_tree_budget_for(len);
	budget.tensors = folded;
	if (torch_unsafe_list(p, &unsafe, &nunsafe, &total, e))
		goto out;
	rc = torch_tree_table(&p, z, r->size, &budget, out, e);
	if (rc == 0) {
		(*out)->header_len = len;	/* the pickle: the index */
		(*out)->unsafe = unsafe;
		(*out)->nunsafe = nunsafe;
		(*out)->unsafe_total = total;
	} else {
		free(unsafe);
	}
out:
	pickle_free(p);
	torch_zip_free(z);
	return rc ? err_at(e, r->name) : 0;
}

/* A file its name says is PyTorch's whose bytes are neither format. */
static int
not_torch(const struct reader *r, const unsigned char *head, size_t n,
	  struct err *e)
{
	char hex[3 * 8 + 1];
	size_t i, k = 0;

	if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) {
		err_set(e, ERR_INVALID_CHECKPOINT, "not a PyTorch checkpoint: "
			"a Python pickle without torch's magic number, not the "
			"zip archive torch.save writes nor its legacy format: "
			"save what it holds with torch.save where you trust "
			"it; never unpickle a file you do not");
		return err_at(e, r->name);
	}
	hex[0] = '\0';
	for (i = 0; i < n && i < 8; i++)
		k += (size_t)snprintf(hex + k, sizeof(hex) - k, "%s%02x",
				      i ? " " : "", head[i]);
	if (n == 0)
		err_set(e, ERR_INVALID_CHECKPOINT, "not a PyTorch checkpoint: "
			"the file is empty");
	else
		err_set(e, ERR_INVALID_CHECKPOINT, "not a PyTorch checkpoint: "
			"its %s %zu byte%s %s %s (torch.save writes a zip "
			"archive, its legacy format a pickle of torch's magic "
			"number): a damaged file? fetch it again",
			n < 8 ? "only" : "first", i, i == 1 ? "" : "s",
			i == 1 ? "is" : "are", hex);
	return err_at(e, r->name);
}

int
torch_open(const struct reader *r, struct header **out, struct err *e)
{
	unsigned char head[LEGACY_HEAD] = { 0 };
	size_t n = r->size < sizeof(head) ? (size_t)r->size : sizeof(head);
	int got;

	*out = NULL;
	got = n == 0 || reader_pread(r, head, n, 0) == 0;
	if (got && !torch_claims(head, n, r->size))
		return not_torch(r, head, n, e);
	if (got && is_legacy(head, n)) {
		err_set(e, ERR_INVALID_CHECKPOINT, "a PyTorch checkpoint in "
			"the legacy format (torch.save before 1.6, or with "
			"_use_new_zipfile_serialization=False), which stfs "
			"does not read: save it again with torch.save in a "
			"recent torch, where you trust the file");
		return err_at(e, r->name);
	}
	return open_zip(r, out, e);
}
