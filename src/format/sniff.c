/* sniff.c - recognize foreign files and truncated downloads (see sniff.h). */
#include "format/sniff.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/jsonmem.h"

#define SNIFF_BYTES 512

static int
starts(const unsigned char *p, size_t n, const char *magic, size_t len)
{
	return n >= len && memcmp(p, magic, len) == 0;
}

static uint64_t
le(const unsigned char *p, int k)
{
	uint64_t v = 0;

	while (k--)
		v = v << 8 | p[k];
	return v;
}

/* Printable text (UTF-8 bytes allowed): no control bytes but tab, CR, LF,
 * form feed. */
static int
is_text(const unsigned char *p, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if ((p[i] < 0x20 && (!p[i] || !strchr("\t\r\n\f", p[i]))) ||
		    p[i] == 0x7f)
			return 0;
	return 1;
}

/* The first line, at most 40 bytes, non-ASCII shown as '?'. */
static void
first_line(const unsigned char *p, size_t n, char *out, size_t cap)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 1 < cap && k < 40; i++) {
		if (p[i] == '\n' || p[i] == '\r')
			break;
		out[k++] = (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '`') ?
			   (char)p[i] : '?';
	}
	out[k] = '\0';
}

static int
sniff_zip(const unsigned char *p, size_t n, char *out, size_t cap)
{
	size_t len = n >= 30 ? (size_t)le(p + 26, 2) : 0;
	const char *name = (const char *)p + 30;
	const char *what = "a zip archive";
	const char *how = "for PyTorch, safetensors.torch.save_file";

	if (len && 30 + len <= n) {
		if (len >= 4 && memcmp(name + len - 4, ".npy", 4) == 0) {
			what = "a NumPy .npz archive";
			how = "safetensors.numpy.save_file";
		}
	}
	snprintf(out, cap, "%s, not safetensors: convert it (%s) or mount "
		 "the model's .safetensors files", what, how);
	return 0;
}

/* What to give instead, when no format's name is claimed. */
#define GIVE_SAFETENSORS "give the .safetensors file, its index or its " \
			 "directory"

static int
sniff_text(const unsigned char *p, size_t n, const char *give, char *out,
	   size_t cap)
{
	size_t i = 0;
	char line[48];

	if (starts(p, n, "version https://git-lfs", 23)) {
		const unsigned char *s = memmem(p, n, "\nsize ", 6);
		const unsigned char *end = p + n;
		unsigned long long real = 0;
		int digits = 0;

		/* p is not NUL-terminated: no sscanf, digits within n */
		for (s = s ? s + 6 : end; s < end && *s >= '0' && *s <= '9' &&
		     digits < 19; s++, digits++)
			real = real * 10 + (unsigned)(*s - '0');
		if (digits)
			snprintf(out, cap, "a Git LFS pointer, not the file "
				 "(%llu bytes): the repository was cloned "
				 "without git-lfs; run `git lfs pull` in it",
				 real);
		else
			snprintf(out, cap, "a Git LFS pointer, not the file: "
				 "the repository was cloned without git-lfs; "
				 "run `git lfs pull` in it");
		return 0;
	}
	while (i < n && strchr(" \t\r\n", p[i]))
		i++;
	if (i < n && p[i] == '<' &&
	    (memmem(p, n, "html", 4) || memmem(p, n, "HTML", 4))) {
		snprintf(out, cap, "an HTML page, not a model (an error or "
			 "login page saved instead of the file?): download it "
			 "again");
		return 0;
	}
	if (i < n && (p[i] == '{' || p[i] == '[')) {
		if (memmem(p, n, "\"weight_map\"", 12))
			snprintf(out, cap, "a safetensors index (JSON): give "
				 "it a name ending in .safetensors.index.json, "
				 "or mount its directory");
		else
			snprintf(out, cap, "a JSON file, not a model: %s",
				 give);
		return 0;
	}
	first_line(p, n, line, sizeof(line));
	snprintf(out, cap, "a text file, not a model (it starts `%s`): %s",
		 line, give);
	return 0;
}

/* What the first n bytes of a file of size bytes are, as a sentence,
 * written to out (cap bytes); 0 when recognized, -1 when they look like
 * nothing known.  give: what to give instead of text.  torch: the file
 * was read as a PyTorch checkpoint, whose own containers (a zip, a
 * pickle) it has judged already.  Truncation is judged by
 * sniff_truncated. */
static int
sniff_bytes(const unsigned char *p, size_t n, uint64_t size,
	    const char *give, int torch, char *out, size_t cap)
{
	int zip = starts(p, n, "PK\003\004", 4) || starts(p, n, "PK\005\006", 4);
	int pickle = n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5;

	if (size == 0) {
		snprintf(out, cap, "an empty file: an interrupted download? "
			 "fetch it again");
		return 0;
	}
	if (torch && (zip || pickle))
		return -1;
	if (size < 8) {
		snprintf(out, cap, "a file of %u byte%s, too short for any "
			 "model: an interrupted download? fetch it again",
			 (unsigned)size, size == 1 ? "" : "s");
		return 0;
	}
	if (zip)
		return sniff_zip(p, n, out, cap);
	if (starts(p, n, "\211HDF\r\n\032\n", 8)) {
		snprintf(out, cap, "an HDF5 file (Keras .h5?), not "
			 "safetensors: convert it, or mount the model's "
			 ".safetensors files");
		return 0;
	}
	if (starts(p, n, "\223NUMPY", 6)) {
		snprintf(out, cap, "a NumPy .npy file, not safetensors: "
			 "convert it (safetensors.numpy.save_file)");
		return 0;
	}
	if (pickle) {
		snprintf(out, cap, "a Python pickle (PyTorch's legacy .bin/.pt?), "
			 "not safetensors: convert it where you trust it; "
			 "never unpickle a file you do not");
		return 0;
	}
	if (starts(p, n, "\037\213", 2)) {
		snprintf(out, cap, "a gzip file: unpack it first");
		return 0;
	}
	if (is_text(p, n))
		return sniff_text(p, n, give, out, cap);
	return -1;
}

/* Bytes the header says the file has: 8 + n + the largest end offset;
 * 0 when the header does not parse as JSON. */
static uint64_t
wanted_size(const struct reader *r, uint64_t n)
{
	unsigned long jf = jsonmem_failures();
	uint64_t end = 0;
	const char *key;
	json_t *root, *v;
	char *buf;

	buf = malloc(n ? n : 1);
	if (!buf || reader_pread(r, buf, n, 8) != 0) {
		free(buf);
		return 0;
	}
	root = json_loadb(buf, n, 0, NULL);
	free(buf);
	/* a parse short of memory may drop a byte (jsonmem.h) */
	if (!json_is_object(root) || jsonmem_failures() != jf) {
		json_decref(root);
		return 0;
	}
	json_object_foreach(root, key, v) {
		json_t *off = json_object_get(v, "data_offsets");
		json_t *e = json_array_get(off, 1);

		if (json_is_integer(e) && json_integer_value(e) > 0 &&
		    (uint64_t)json_integer_value(e) > end)
			end = (uint64_t)json_integer_value(e);
	}
	json_decref(root);
	return 8 + n + end;
}

/* A header that starts like JSON but the file is shorter than it says. */
static int
sniff_truncated(const struct reader *r, const unsigned char *p, size_t got,
		enum err_code code, char *out, size_t cap)
{
	uint64_t n = got >= 8 ? le(p, 8) : 0, want;

	if (got < 9 || p[8] != '{')
		return -1;
	if (code == ERR_INVALID_HEADER_LENGTH && n > r->size - 8) {
		snprintf(out, cap, "%" PRIu64 " of at least %" PRIu64 " bytes:"
			 " incomplete download? fetch it again", r->size,
			 8 + n);
		return 0;
	}
	if (code != ERR_METADATA_INCOMPLETE_BUFFER)
		return -1;
	want = wanted_size(r, n);
	if (want <= r->size)
		return -1;
	snprintf(out, cap, "%" PRIu64 " of %" PRIu64 " bytes: incomplete "
		 "download? fetch it again", r->size, want);
	return 0;
}

void
sniff_explain(const struct reader *r, struct err *e)
{
	unsigned char p[SNIFF_BYTES];
	char what[400], old[ERR_DETAIL_MAX];
	size_t n = r->size < SNIFF_BYTES ? (size_t)r->size : SNIFF_BYTES;
	/* the format its name or bytes claim (GGUF, PyTorch: the error is
	 * theirs, container.h) leads, and says what to give */
	const char *claim = NULL, *give = GIVE_SAFETENSORS;
	int k;

	if (e->code == ERR_INVALID_GGUF) {
		claim = "not a GGUF file: ";
		give = "give the .gguf file itself";
	} else if (e->code == ERR_INVALID_CHECKPOINT) {
		claim = "not a PyTorch checkpoint: ";
		give = "give the checkpoint itself";
	} else if (e->code < ERR_HEADER_TOO_SMALL ||
		   e->code > ERR_METADATA_INCOMPLETE_BUFFER) {
		return;
	}
	if (n && reader_pread(r, p, n, 0) != 0)
		return;
	k = claim ? snprintf(what, sizeof(what), "%s", claim) : 0;
	/* (a safetensors header cut short is safetensors' own finding) */
	if ((claim || sniff_truncated(r, p, n, e->code, what,
				      sizeof(what)) != 0) &&
	    sniff_bytes(p, n, r->size, give, e->code == ERR_INVALID_CHECKPOINT,
			what + k, sizeof(what) - (size_t)k) != 0)
		return;
	/* What the file is first, the reference's finding after it (cut to
	 * fit: the sentence about the file matters more); the claim once. */
	k = claim && strncmp(e->detail, claim, strlen(claim)) == 0 ?
	    (int)strlen(claim) : 0;
	memcpy(old, e->detail + k, sizeof(old) - (size_t)k);
	old[sizeof(old) - 1 - (size_t)k] = '\0';
	n = strlen(what);
	err_replace(e, e->code, "%s (%.*s)", what,
		    (int)(sizeof(e->detail) - n - 4), old);
}
