/* weight_map.c - reading a sharded model's index (weight_map.h). */
#include "model/weight_map.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonmem.h"
#include "base/text.h"
#include "format/safetensors/jscan.h"

/* One reading's state. */
struct reading {
	struct weight_map *w;
	const char *text;
	struct jscan j;
	size_t used;		/* arena bytes taken */
	size_t cap;		/* entries allocated */
	char **found;		/* file names in order of appearance */
	size_t nfound, capfound;
	struct nametab byfile;	/* file name -> index into found */
	struct err *e;
};

static int
invalid(struct err *e, const char *fmt, const char *a)
{
	return err_set(e, ERR_INVALID_INDEX, fmt, a);
}

/* The scanner's complaint, with the line and column jansson gave. */
static int
syntax(struct reading *r)
{
	size_t line = 1, col = 1, i;

	for (i = 0; i < r->j.err_pos; i++) {
		col++;
		if (r->text[i] == '\n') {
			line++;
			col = 1;
		}
	}
	return err_set(r->e, ERR_INVALID_INDEX, "not valid JSON: %s (line %zu, "
		       "column %zu)", r->j.err_msg, line, col);
}

/* A string token decoded into the arena, NUL-terminated: each string's
 * decoded bytes and NUL fit in its quoted form, so the arena of the
 * text's size never fills. */
static const char *
keep(struct reading *r, const struct jscan_tok *t, size_t *len)
{
	char *out = r->w->arena + r->used;

	if (t->escaped) {
		*len = jscan_unescape(t->s, t->len, out, t->len);
	} else {
		memcpy(out, t->s, t->len);
		*len = t->len;
	}
	out[*len] = '\0';
	r->used += *len + 1;
	return out;
}

static int
entry_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct weight_map *w = ctx;
	const struct weight_map_entry *x = &w->entries[id];

	return x->len == k->len && memcmp(x->name, k->name, k->len) == 0;
}

static int
file_eq(const void *ctx, uint32_t id, const struct nametab_key *k)
{
	const struct reading *r = ctx;
	const char *f = r->found[id];

	return strlen(f) == k->len && memcmp(f, k->name, k->len) == 0;
}

/* The index of file name f among the files seen, added when new; -1
 * without memory. */
static long
file_id(struct reading *r, const char *f, size_t len)
{
	struct nametab_key k;
	long id;

	nametab_key(&k, 0, f, len);
	id = nametab_find(&r->byfile, &k);
	if (id >= 0)
		return id;
	if (r->nfound == r->capfound) {
		size_t cap = r->capfound ? 2 * r->capfound : 64;
		char **v = realloc(r->found, cap * sizeof(*v));

		if (!v)
			return -1;
		r->found = v;
		r->capfound = cap;
	}
	r->found[r->nfound] = (char *)f;
	if (nametab_put(&r->byfile, &k, (uint32_t)r->nfound) == -2)
		return -1;
	return (long)r->nfound++;
}

/* The members of "weight_map", the scanner past its '{'. */
static int
read_map(struct reading *r)
{
	struct weight_map *w = r->w;
	struct jscan_tok t;
	char q[160];

	while (jscan_next(&r->j, &t) == JSCAN_KEY) {
		struct weight_map_entry *x;
		struct nametab_key k;
		const char *file;
		size_t flen;
		long id;

		if (w->n == r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 1024;

			/* fewer than NAMETAB_ID_MAX: the text is at most
			 * INDEX_MAX_BYTES (shards.c) */
			x = realloc(w->entries, cap * sizeof(*x));
			if (!x)
				return err_set(r->e, ERR_NO_MEMORY,
					       "out of memory");
			w->entries = x;
			r->cap = cap;
		}
		x = &w->entries[w->n];
		x->name = keep(r, &t, &x->len);
		err_quote(q, sizeof(q), x->name, x->len);
		if (jscan_next(&r->j, &t) == JSCAN_ERROR)
			return syntax(r);
		file = t.type == JSCAN_STRING ? keep(r, &t, &flen) : NULL;
		if (!file || strlen(file) != flen)	/* not a string, a NUL */
			return invalid(r->e, "weight_map value of %s is not a "
				       "file name", q);
		id = file_id(r, file, flen);
		nametab_key(&k, 0, x->name, x->len);
		if (id < 0)
			return err_set(r->e, ERR_NO_MEMORY, "out of memory");
		switch (nametab_put(&w->byname, &k, (uint32_t)w->n)) {
		case -2:
			return err_set(r->e, ERR_NO_MEMORY, "out of memory");
		case -1:
			break;
		default:
			return invalid(r->e, "weight_map lists %s twice (not "
				       "valid JSON for an index: its keys must "
				       "be unique)", q);
		}
		x->file = (uint32_t)id;
		w->n++;
	}
	return t.type == JSCAN_OBJECT_END ? 0 : syntax(r);
}

/* "metadata", the scanner at its value: an object is rendered as
 * before (jansson, keys in their order, 2-space indent), null or absent
 * is {}. */
static int
read_metadata(struct reading *r, const struct jscan_tok *t)
{
	unsigned long jf = jsonmem_failures();
	struct buf b = BUF_INIT;
	json_error_t je;
	json_t *meta;
	char *text;

	if (t->type == JSCAN_NULL)
		return 0;
	if (t->type != JSCAN_OBJECT)
		return invalid(r->e, "\"metadata\" is not an object%s", "");
	if (jscan_skip_to(&r->j, 1))
		return syntax(r);
	/* jansson refuses what the scanner let through: a key given twice,
	 * a NUL in a key */
	meta = json_loadb(r->text + t->pos, r->j.pos - t->pos,
			  JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	/* short of memory, jansson may fail or drop a byte (jsonmem.h) */
	if (!meta && jsonmem_failures() == jf)
		return invalid(r->e, "not valid JSON in \"metadata\": %s",
			       je.text);
	text = meta ? json_dumps(meta, JSON_INDENT(2) |
				 JSON_PRESERVE_ORDER) : NULL;
	json_decref(meta);
	free(r->w->metadata_json);
	r->w->metadata_json = NULL;
	if (!text || jsonmem_failures() != jf || buf_adds(&b, text) ||
	    buf_adds(&b, "\n")) {
		free(text);
		buf_free(&b);
		return err_set(r->e, ERR_NO_MEMORY, "out of memory");
	}
	free(text);
	r->w->metadata_json = buf_steal(&b);
	return 0;
}

static int
key_is(const struct jscan_tok *t, const char *name)
{
	char tmp[16];
	size_t n = strlen(name);

	if (!t->escaped)
		return t->len == n && memcmp(t->s, name, n) == 0;
	return t->len < 64 && jscan_unescape(t->s, t->len, tmp, sizeof(tmp)) ==
	       n && memcmp(tmp, name, n) == 0;
}

/* The top object's members, the scanner past its '{'. */
static int
read_members(struct reading *r)
{
	struct jscan_tok t;
	int seen_map = 0, seen_meta = 0;

	while (jscan_next(&r->j, &t) == JSCAN_KEY) {
		int map = key_is(&t, "weight_map");
		int meta = !map && key_is(&t, "metadata");

		if ((map && seen_map++) || (meta && seen_meta++))
			return invalid(r->e, "not valid JSON for an index: "
				       "\"%s\" given twice", map ?
				       "weight_map" : "metadata");
		if (jscan_next(&r->j, &t) == JSCAN_ERROR)
			return syntax(r);
		if (map && t.type != JSCAN_OBJECT)
			return invalid(r->e, "no \"weight_map\" object: not a "
				       "safetensors index%s", "");
		if (map ? read_map(r) : meta ? read_metadata(r, &t) :
		    jscan_skip_to(&r->j, 1) ? syntax(r) : 0)
			return -1;
	}
	if (t.type == JSCAN_ERROR || jscan_next(&r->j, &t) != JSCAN_END)
		return syntax(r);
	if (!seen_map)
		return invalid(r->e, "no \"weight_map\" object: not a "
			       "safetensors index%s", "");
	return 0;
}

static int
cmp_found(const void *a, const void *b, void *found)
{
	char *const *f = found;

	return strcmp(f[*(const uint32_t *)a], f[*(const uint32_t *)b]);
}

/* The files sorted, the entries renumbered to match. */
static int
sort_files(struct reading *r)
{
	struct weight_map *w = r->w;
	uint32_t *order = malloc((r->nfound + 1) * sizeof(*order));
	uint32_t *rank = malloc((r->nfound + 1) * sizeof(*rank));
	size_t i;

	w->files = malloc((r->nfound + 1) * sizeof(*w->files));
	if (!order || !rank || !w->files) {
		free(order);
		free(rank);
		return err_set(r->e, ERR_NO_MEMORY, "out of memory");
	}
	for (i = 0; i < r->nfound; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, r->nfound, sizeof(*order), cmp_found, r->found);
	for (i = 0; i < r->nfound; i++) {
		w->files[i] = r->found[order[i]];
		rank[order[i]] = (uint32_t)i;
	}
	w->nfiles = r->nfound;
	for (i = 0; i < w->n; i++)
		w->entries[i].file = rank[w->entries[i].file];
	free(order);
	free(rank);
	return 0;
}

int
weight_map_read(const char *text, size_t len, struct weight_map *w,
		struct err *e)
{
	struct reading r = { .w = w, .text = text, .e = e };
	struct jscan_tok t;
	size_t bad;
	unsigned bad_len;
	int rc = -1;

	memset(w, 0, sizeof(*w));
	if (text_utf8_check(text, len, &bad, &bad_len) != 0) {
		err_set(e, ERR_INVALID_INDEX, "not valid JSON: invalid UTF-8 "
			"at byte %zu", bad);
		return -1;
	}
	w->arena = malloc(len + 1);
	w->metadata_json = strdup("{}\n");
	if (!w->arena || !w->metadata_json ||
	    nametab_init(&w->byname, len / 64 + 16, entry_eq, w) ||
	    nametab_init(&r.byfile, 64, file_eq, &r)) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	jscan_init(&r.j, text, len, JSCAN_MAX_DEPTH);
	switch (jscan_next(&r.j, &t)) {
	case JSCAN_OBJECT:
		rc = read_members(&r);
		break;
	case JSCAN_ERROR:
		rc = syntax(&r);
		break;
	default:
		rc = jscan_skip_to(&r.j, 0) || jscan_next(&r.j, &t) !=
		     JSCAN_END ? syntax(&r) : invalid(e, "no \"weight_map\" "
		     "object: not a safetensors index%s", "");
	}
	if (rc == 0)
		rc = sort_files(&r);
out:
	if (r.byfile.slot)
		nametab_free(&r.byfile);
	free(r.found);
	if (rc)
		weight_map_free(w);
	return rc;
}

const struct weight_map_entry *
weight_map_find(const struct weight_map *w, const char *name, size_t len)
{
	struct nametab_key k;
	long id;

	if (!w->byname.slot)
		return NULL;
	nametab_key(&k, 0, name, len);
	id = nametab_find(&w->byname, &k);
	return id < 0 ? NULL : &w->entries[id];
}

void
weight_map_free(struct weight_map *w)
{
	if (w->byname.slot)
		nametab_free(&w->byname);
	free(w->entries);
	free(w->files);
	free(w->metadata_json);
	free(w->arena);
	memset(w, 0, sizeof(*w));
}
