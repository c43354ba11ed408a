/* summary.c - the summary object shared by stfs-inspect and the mount. */
#include "model/summary.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/count.h"
#include "base/jsonmem.h"
#include "format/dtype.h"
#include "format/gguf/gguf.h"
#include "model/model.h"
#include "model/model_beside.h"
#include "model/quant_model.h"

struct totals {
	uint64_t tensors, bytes, header_bytes, file_bytes, params;
	uint64_t params_by[DTYPE__COUNT];
	uint64_t count_by[DTYPE__COUNT];
};

static void
add_shard(struct totals *tt, const struct shard *sh)
{
	size_t i;

	/* bytes and parameters saturate (base/count.h): tensors that share
	 * a storage (PyTorch) or pack many elements in a byte (GGUF's
	 * i-quants) may sum past 2^64 */
	uint64_t reached = 0;

	tt->header_bytes = count_add(tt->header_bytes, sh->hdr->header_len);
	tt->file_bytes = count_add(tt->file_bytes, sh->hdr->file_size);
	for (i = 0; i < sh->hdr->ntensors; i++) {
		const struct tensor *t = &sh->hdr->tensors[i];

		tt->tensors++;
		/* the bytes of the file the tensors lie in, each once: views
		 * of one storage (tied weights) overlap, and the table is in
		 * file order */
		if (t->end > reached) {
			tt->bytes = count_add(tt->bytes, t->end -
					      (t->begin > reached ? t->begin :
					       reached));
			reached = t->end;
		}
		tt->params = count_add(tt->params, t->numel);
		tt->params_by[t->dtype] = count_add(tt->params_by[t->dtype],
						    t->numel);
		tt->count_by[t->dtype]++;
	}
}

/* {dtype: n} for the dtypes present, widest first like the writer. */
static json_t *
per_dtype(const uint64_t *v, const uint64_t *present)
{
	json_t *o = json_object();
	int d;

	for (d = DTYPE__COUNT - 1; o && d >= 0; d--)
		if (present[d])
			json_object_set_new(o, dtype_info((enum dtype)d)->name,
					    summary_count_json(v[d]));
	return o;
}

/* A JSON value (GGUF's, table.h) parsed; one of more than
 * SUMMARY_JSON_MAX bytes (a tokenizer's 150k-entry arrays) is named, not
 * copied: __metadata__.json has it. */
#define SUMMARY_JSON_MAX 4096

static json_t *
meta_json(const struct meta_pair *p)
{
	if (p->val_len > SUMMARY_JSON_MAX)
		return json_sprintf("(%u bytes of JSON: see __metadata__.json)",
				    p->val_len);
	return json_loadb(p->val, p->val_len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
			  NULL);
}

static json_t *
header_metadata(const struct header *h)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; o && i < h->nmeta; i++)
		json_object_setn_new(o, h->meta[i].key, h->meta[i].key_len,
				     h->meta[i].json ? meta_json(&h->meta[i]) :
				     json_stringn(h->meta[i].val,
						  h->meta[i].val_len));
	return o;
}

static int
is_gguf(const struct header *h)
{
	return h->format && strcmp(h->format, "gguf") == 0;
}

static int
is_torch(const struct header *h)
{
	return h->format && strcmp(h->format, "PyTorch checkpoint") == 0;
}

/* "format": the first shard's, "-sharded" for a set (GGUF's "-split") */
static const char *
format_name(const struct model *m)
{
	const struct header *h = m->nshards ? m->shards[0].hdr : NULL;

	if (h && is_gguf(h))
		return m->sharded ? "gguf-split" : "gguf";
	if (h && is_torch(h))
		return m->sharded ? "pytorch-sharded" : "pytorch";
	return m->sharded ? "safetensors-sharded" : "safetensors";
}

#define UNSAFE_LISTED 64	/* uses listed in the summary */

json_t *
summary_unsafe_use_json(const struct unsafe_use *x)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:I}", "callable",
			 x->callable, "how", x->how, "args", x->args, "where",
			 x->where ? json_string(x->where) : json_null(),
			 "opcode", x->op, "byte", (json_int_t)x->at);
}

/* What "unsafe" says was checked, per kind of file. */
static const char *
unsafe_checked(const struct model *m, uint64_t count)
{
	const struct header *h = m->nshards ? m->shards[0].hdr : NULL;

	if (h && is_torch(h))
		return count ? "imports and calls of the pickle that "
		       "torch.load(weights_only=True) refuses: a plain "
		       "torch.load (weights_only=False) makes them" :
		       "every import and call of the pickle is one "
		       "torch.load(weights_only=True) allows";
	if (h && is_gguf(h))
		return "none by construction: a GGUF file holds typed "
		       "metadata and tensor bytes, no code";
	return "none by construction: a safetensors file holds a JSON "
	       "header and tensor bytes, no code";
}

/* "unsafe": {"count", "checked", "list": [{callable, how, args, where,
 * opcode, byte, shard}]}, the first UNSAFE_LISTED of every shard's. */
static json_t *
unsafe_object(const struct model *m)
{
	json_t *o = json_object(), *list = json_array(), *u;
	uint64_t count = 0;

	for (size_t i = 0; i < m->nshards; i++) {
		const struct header *h = m->shards[i].hdr;

		count = count_add(count, h->unsafe_total);
		for (size_t k = 0; k < h->nunsafe; k++) {
			const struct unsafe_use *x = &h->unsafe[k];

			if (json_array_size(list) == UNSAFE_LISTED)
				break;
			u = summary_unsafe_use_json(x);
			if (u && m->sharded)
				json_object_set_new(u, "shard",
					json_string(m->shards[i].name));
			json_array_append_new(list, u);
		}
	}
	json_object_set_new(o, "count", summary_count_json(count));
	json_object_set_new(o, "checked", json_string(unsafe_checked(m,
								     count)));
	if (count)
		json_object_set_new(o, "list", list);
	else
		json_decref(list);
	return o;
}

#define SHARED_GROUPS_MAX 64	/* groups of names listed */
#define SHARED_NAMES_MAX 64	/* names per group listed */

/* The groups of tensors that view one storage (PyTorch's tied weights:
 * lm_head.weight and the embeddings), each a list of names; NULL when
 * there are none.  A storage is one run of its shard and the tensors
 * are in file order: a group's tensors are neighbours.  *ngroups: how
 * many there are (the list stops at SHARED_GROUPS_MAX). */
static json_t *
shared_storage(const struct model *m, uint64_t *ngroups)
{
	json_t *all = NULL, *g;
	size_t i = 0, j;

	*ngroups = 0;
	while (i < m->ntensors) {
		const struct model_tensor *a = &m->tensors[i];

		for (j = i + 1; j < m->ntensors && a->t->storage &&
		     m->tensors[j].t->storage == a->t->storage &&
		     m->tensors[j].shard == a->shard; j++)
			;
		if (j - i > 1 && ++*ngroups <= SHARED_GROUPS_MAX) {
			if (!all)
				all = json_array();
			g = json_array();
			for (size_t k = i; g && k < j && k < i +
			     SHARED_NAMES_MAX; k++)
				json_array_append_new(g, json_stringn(
					m->tensors[k].t->name,
					m->tensors[k].t->name_len));
			json_array_append_new(all, g);
		}
		i = j;
	}
	return all;
}

/* A GGUF model (a sharded index may have no shard at all). */
static int
model_is_gguf(const struct model *m)
{
	return m->nshards > 0 && is_gguf(m->shards[0].hdr);
}

/* The value of metadata key k in h, parsed; NULL when absent. */
static json_t *
meta_value(const struct header *h, const char *k)
{
	size_t i;

	for (i = 0; i < h->nmeta; i++) {
		const struct meta_pair *p = &h->meta[i];

		if (p->key_len == strlen(k) && memcmp(p->key, k, p->key_len) == 0)
			return p->json ? json_loadb(p->val, p->val_len,
						    JSON_DECODE_ANY |
						    JSON_ALLOW_NUL, NULL) :
			       json_stringn(p->val, p->val_len);
	}
	return NULL;
}

/* A GGUF file's architecture, quantization (general.file_type, named as
 * llama.cpp names it) and alignment. */
static json_t *
gguf_object(const struct header *h)
{
	json_t *o = json_object(), *v;
	const char *name;

	if (!o)
		return NULL;
	v = meta_value(h, "general.architecture");
	json_object_set_new(o, "architecture", v ? v : json_null());
	v = meta_value(h, "general.file_type");
	name = json_is_integer(v) && json_integer_value(v) >= 0 ?
	       gguf_file_type_name((uint64_t)json_integer_value(v)) : NULL;
	json_object_set_new(o, "file_type", v ? v : json_null());
	json_object_set_new(o, "quantization",
			    name ? json_string(name) : json_null());
	v = meta_value(h, "general.alignment");
	json_object_set_new(o, "alignment",
			    v ? v : json_integer(GGUF_DEFAULT_ALIGNMENT));
	return o;
}

json_t *
summary_count_json(uint64_t n)
{
	if (n > (uint64_t)INT64_MAX)
		return json_real((double)n);
	return json_integer((json_int_t)n);
}

static json_t *
totals_json(const struct totals *tt)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "tensors", summary_count_json(tt->tensors),
			 "bytes", summary_count_json(tt->bytes),
			 "header_bytes", summary_count_json(tt->header_bytes),
			 "file_bytes", summary_count_json(tt->file_bytes),
			 "parameters", per_dtype(tt->params_by, tt->count_by),
			 "parameters_total", summary_count_json(tt->params),
			 "dtypes", per_dtype(tt->count_by, tt->count_by));
}

/* 1 when config.json beside the model (model_beside.h) says
 * "tie_word_embeddings": true: the file then stores the input embeddings
 * once and loaders re-tie lm_head to them.  A missing, unreadable or odd
 * config says nothing. */
static int
summary_tied(const struct model *m)
{
	json_t *cfg;
	int tied;

	if (model_beside_json(m, "config.json", &cfg))
		return -1;
	tied = json_is_true(json_object_get(cfg, "tie_word_embeddings"));
	json_decref(cfg);
	return tied;
}

/* One shard's entry: its own totals, name and header __metadata__. */
static json_t *
shard_object(const struct model *m, size_t i)
{
	unsigned long jf = jsonmem_failures();
	struct totals one;
	json_t *s;

	memset(&one, 0, sizeof(one));
	add_shard(&one, &m->shards[i]);
	s = totals_json(&one);
	if (!s)
		return NULL;
	json_object_set_new(s, "name", json_string(m->shards[i].name));
	json_object_set_new(s, "metadata", header_metadata(m->shards[i].hdr));
	if (jsonmem_failures() != jf) {
		json_decref(s);
		return NULL;
	}
	return s;
}

json_t *
summary_metadata(const struct model *m)
{
	json_t *o;

	/* a header's pairs are set from their bytes: a GGUF key may hold
	 * a NUL, which jansson keeps but will not parse back */
	if (m->nshards && (!m->sharded || model_is_gguf(m)))
		return header_metadata(m->shards[0].hdr);
	o = json_loads(m->metadata_json ? m->metadata_json : "{}",
		       JSON_ALLOW_NUL, NULL);
	if (json_is_object(o))
		return o;
	json_decref(o);
	return json_object();
}

static json_t *
summary_object(const struct model *m, const char *source)
{
	unsigned long jf = jsonmem_failures();
	struct totals all;
	json_t *root, *meta, *shards = NULL, *quant;
	size_t i;
	int tied, quant_bad;

	memset(&all, 0, sizeof(all));
	for (i = 0; i < m->nshards; i++)
		add_shard(&all, &m->shards[i]);
	root = totals_json(&all);
	if (!root)
		return NULL;
	meta = summary_metadata(m);
	json_object_set_new(root, "metadata", meta ? meta : json_object());
	json_object_set_new(root, "source", json_string(source));
	if (model_is_gguf(m)) {
		json_object_set_new(root, "format", json_string(
			m->sharded ? "gguf-split" : "gguf"));
		json_object_set_new(root, "gguf",
				    gguf_object(m->shards[0].hdr));
	} else {
		uint64_t n;
		json_t *shared = shared_storage(m, &n);

		json_object_set_new(root, "format", json_string(
			format_name(m)));
		if (shared) {
			json_object_set_new(root, "shared_storage", shared);
			json_object_set_new(root, "shared_storage_count",
					    summary_count_json(n));
		}
	}
	tied = summary_tied(m);
	if (tied > 0)
		json_object_set_new(root, "tie_word_embeddings", json_true());
	json_object_set_new(root, "unsafe", unsafe_object(m));
	quant_bad = quant_model_summary(m, (void **)&quant);
	if (quant)
		json_object_set_new(root, "quantization", quant);
	if (m->sharded) {
		shards = json_array();
		for (i = 0; shards && i < m->nshards; i++)
			json_array_append_new(shards, shard_object(m, i));
		json_object_set_new(root, "shards", shards);
	}
	/* short of memory, jansson leaves keys out without a word
	 * (jsonmem.h): no summary rather than another one (nor one
	 * whose config or quantized weights are unknown) */
	if (tied < 0 || quant_bad || jsonmem_failures() != jf) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static char *
dump_root(json_t *root, int pretty)
{
	unsigned long jf = jsonmem_failures();
	char *text, *out;
	size_t n;

	if (!root)
		return NULL;
	text = json_dumps(root, JSON_PRESERVE_ORDER |
			  (pretty ? JSON_INDENT(2) : JSON_COMPACT));
	json_decref(root);
	if (text && jsonmem_failures() != jf) {
		free(text);
		return NULL;
	}
	if (!text)
		return NULL;
	n = strlen(text);
	out = realloc(text, n + 2);
	if (!out) {
		free(text);
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = '\0';
	return out;
}

json_t *
summary_value(const struct model *m)
{
	return summary_object(m, m->arg);
}

char *
summary_json(const struct model *m, int pretty)
{
	return dump_root(summary_object(m, m->arg), pretty);
}

char *
summary_json_source(const struct model *m, const char *source)
{
	return dump_root(summary_object(m, source ? source : m->arg), 1);
}

char *
summary_shard_json(const struct model *m, size_t shard)
{
	return dump_root(shard_object(m, shard), 1);
}

/* 1234567 -> "1,234,567" */
static const char *
grouped(char *buf, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* 1 for bytes that would move the cursor or start an escape sequence on a
 * terminal: C0 controls, DEL, and the C1 controls U+0080-U+009F (UTF-8
 * 0xC2 0x80-0x9F, which also covers CSI U+009B). */
static size_t
control_len(const unsigned char *p, size_t left)
{
	if (p[0] < 0x20 || p[0] == 0x7f)
		return 1;
	if (p[0] == 0xc2 && left > 1 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

/* s as is, or as a JSON string literal with every control character
 * escaped when it holds one, or (strict) a quote, space or backslash. */
static void
print_text(FILE *out, const char *s, size_t len, int strict)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, k;

	for (i = 0; i < len; i++)
		if (control_len(p + i, len - i) || (strict &&
		    (p[i] == '"' || p[i] == ' ' || p[i] == '\\')))
			break;
	if (i == len && len > 0) {
		fwrite(s, 1, len, out);
		return;
	}
	fputc('"', out);
	for (i = 0; i < len; i += k ? k : 1) {
		k = control_len(p + i, len - i);
		if (k == 2)
			fprintf(out, "\\u%04x", p[i + 1]);
		else if (k == 1)
			fprintf(out, "\\u%04x", p[i]);
		else if (p[i] == '"' || p[i] == '\\')
			fprintf(out, "\\%c", p[i]);
		else
			fputc(p[i], out);
	}
	fputc('"', out);
}

void
summary_print_name(FILE *out, const char *s, size_t len)
{
	print_text(out, s, len, 1);
}

void
summary_print_value(FILE *out, const char *s, size_t len)
{
	print_text(out, s, len, 0);
}

/* "metadata:" then one "  key: value" line per entry (values as JSON
 * when they are not strings, as in a sharded index). */
static void
print_metadata(FILE *out, const struct model *m)
{
	json_t *o = summary_metadata(m);
	const char *key;
	size_t key_len;
	json_t *v;

	if (!json_is_object(o) || json_object_size(o) == 0) {
		fputs("metadata:    (none)\n", out);
		json_decref(o);
		return;
	}
	fputs("metadata:\n", out);
	json_object_keylen_foreach(o, key, key_len, v) {
		char *text = json_is_string(v) ? NULL :
			json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

		fputs("  ", out);
		summary_print_name(out, key, key_len);
		fputs(": ", out);
		if (json_is_array(v) && json_array_size(v) > 8)
			fprintf(out, "[%zu values]", json_array_size(v));
		else if (json_is_string(v))
			summary_print_name(out, json_string_value(v),
					   json_string_length(v));
		else
			fputs(text ? text : "?", out);
		fputc('\n', out);
		free(text);
	}
	json_decref(o);
}

#define WARNING_NAMED 4	/* uses named in the warning line */

char *
summary_unsafe_warning(const struct model *m)
{
	struct buf b = BUF_INIT;
	uint64_t n = 0;
	size_t named = 0;
	int bad = 0;

	for (size_t i = 0; i < m->nshards; i++)
		n = count_add(n, m->shards[i].hdr->unsafe_total);
	if (!n)
		return NULL;
	bad |= buf_addf(&b, "its pickle imports and calls what "
			"torch.load(weights_only=True) refuses, which a plain "
			"torch.load runs: ");
	for (size_t i = 0; i < m->nshards; i++) {
		const struct header *h = m->shards[i].hdr;

		for (size_t k = 0; k < h->nunsafe && named < WARNING_NAMED;
		     k++, named++) {
			const struct unsafe_use *u = &h->unsafe[k];

			bad |= buf_addf(&b, "%s%s%s", named ? ", " : "",
					strcmp(u->how, "import") ? "" :
					"import of ", u->callable);
			if (u->where)
				bad |= buf_addf(&b, " at `%.80s%s`", u->where,
						strlen(u->where) > 80 ? "..." :
						"");
		}
	}
	bad |= buf_addf(&b, " (%" PRIu64 " in all; stfs runs none of them: "
			"stfs-inspect lists them; load the file with "
			"weights_only=True or not at all)", n);
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	for (size_t i = 0; i < b.len; i++)	/* one line, whatever names */
		if ((unsigned char)b.data[i] < 0x20 || b.data[i] == 0x7f)
			b.data[i] = '?';
	return buf_steal(&b);
}

void
summary_print_unsafe_use(FILE *out, const struct unsafe_use *u,
			 const char *in)
{
	size_t n = strlen(u->args);

	fprintf(out, "%s %s", u->how, u->callable);
	if (strcmp(u->how, "import")) {
		/* the JSON list of arguments as a call's parentheses */
		const char *a = u->args + (n && u->args[0] == '[');
		size_t k = strlen(a);

		if (k && a[k - 1] == ']')
			k--;
		fputc('(', out);
		if (k)
			summary_print_value(out, a, k);
		fputc(')', out);
	}
	if (u->where && !u->where[0]) {
		fputs(" as the root of the tree", out);
	} else if (u->where) {
		fputs(" at ", out);
		summary_print_name(out, u->where, strlen(u->where));
	} else {
		fputs(" (kept nowhere in the tree)", out);
	}
	fprintf(out, " (%s%s%s, byte %" PRIu64 ")\n", in ? in : "",
		in ? ": " : "", u->op, u->at);
}

/* A PyTorch checkpoint's "unsafe:" line, and a line per use listed. */
static void
print_unsafe(FILE *out, const struct model *m)
{
	uint64_t n = 0, listed = 0;

	if (!m->nshards || !is_torch(m->shards[0].hdr))
		return;
	for (size_t i = 0; i < m->nshards; i++)
		n = count_add(n, m->shards[i].hdr->unsafe_total);
	if (!n) {
		fputs("unsafe:      none: every import and call of the pickle "
		      "is one torch.load(weights_only=True) allows\n", out);
		return;
	}
	fprintf(out, "unsafe:      %" PRIu64 " import%s and call%s that "
		"torch.load(weights_only=True) refuses; a plain torch.load "
		"makes them:\n", n, n == 1 ? "" : "s", n == 1 ? "" : "s");
	for (size_t i = 0; i < m->nshards; i++) {
		const struct header *h = m->shards[i].hdr;

		for (size_t k = 0; k < h->nunsafe && listed < UNSAFE_LISTED;
		     k++, listed++) {
			fputs("             ", out);
			summary_print_unsafe_use(out, &h->unsafe[k],
						 m->sharded ?
						 m->shards[i].name : NULL);
		}
	}
	if (listed < n)
		fprintf(out, "             ... %" PRIu64 " in all "
			"(stfs-inspect --json lists %d)\n", n, UNSAFE_LISTED);
}

/* The storages several tensors view (tied weights), a line each. */
static void
print_shared(FILE *out, const struct model *m)
{
	uint64_t n;
	json_t *all = shared_storage(m, &n), *g, *name;
	size_t i, k;

	json_array_foreach(all, i, g) {
		if (i == 4) {
			fprintf(out, "             ... %" PRIu64 " storages "
				"in all (stfs-inspect --json: "
				"shared_storage)\n", n);
			break;
		}
		fputs(i ? "             " : "shared:      ", out);
		json_array_foreach(g, k, name) {
			fputs(k ? " = " : "", out);
			summary_print_name(out, json_string_value(name),
					   json_string_length(name));
		}
		fputs(" (one storage)\n", out);
	}
	json_decref(all);
}

/* A line per setting that weights took without a config, from the keys
 * "assumed" and "assumed_why" of o (quant_model_assumed()'s), each
 * after lead, "assumed:" and pad. */
static void
print_assumed(FILE *out, const char *lead, const char *pad, json_t *o)
{
	const char *why = json_string_value(json_object_get(o, "assumed_why"));
	const char *key;
	json_t *v;

	json_object_foreach(json_object_get(o, "assumed"), key, v) {
		json_int_t n = json_integer_value(v);

		fprintf(out, "%sassumed:%s%s for %" JSON_INTEGER_FORMAT
			" weight%s (%s)\n", lead, pad, key, n, n == 1 ? "" : "s",
			why ? why : "?");
	}
}

void
summary_print_assumed(FILE *out, const char *lead, const struct model *m,
		      const char *prefix)
{
	json_t *a;

	if (quant_model_assumed(m, prefix, (void **)&a) || !a)
		return;
	print_assumed(out, lead, " ", a);
	json_decref(a);
}

/* The quantized weights, by scheme, and where their values are; the
 * settings they took without a config (a derived model: those only). */
static void
print_quantized(FILE *out, const struct model *m)
{
	json_t *q, *v;
	const char *key, *sep = "";
	json_int_t n, refused;

	if (quant_model_summary(m, (void **)&q) || !q)
		return;
	if (!json_object_get(q, "dequant")) {
		print_assumed(out, "", "     ", q);
		json_decref(q);
		return;
	}
	n = json_integer_value(json_object_get(q, "weights"));
	refused = json_integer_value(json_object_get(q, "refused"));
	fprintf(out, "quantized:   %" JSON_INTEGER_FORMAT " weights", n);
	json_object_foreach(json_object_get(q, "schemes"), key, v) {
		fprintf(out, "%s%s %" JSON_INTEGER_FORMAT, *sep ? sep : " (",
			key, json_integer_value(v));
		sep = ", ";
	}
	fputs(*sep ? ")" : "", out);
	if (refused)
		fprintf(out, ", %" JSON_INTEGER_FORMAT " refused (left as "
			"stored; why: stfs-inspect --dequant --json, a "
			"mount's .dequant/__summary__.json)", refused);
	if (n)
		fputs("\n             their values: stfs-inspect --dequant, "
		      "a mount's .dequant/", out);
	fputc('\n', out);
	print_assumed(out, "", "     ", q);
	json_decref(q);
}

void
summary_print_text(FILE *out, const struct model *m)
{
	struct totals tt;
	char a[32], b[32];
	size_t i;
	int d;

	memset(&tt, 0, sizeof(tt));
	for (i = 0; i < m->nshards; i++)
		add_shard(&tt, &m->shards[i]);
	fprintf(out, "source:      %s\n", m->arg ? m->arg : "?");
	if (m->sharded)
		fprintf(out, "shards:      %zu\n", m->nshards);
	fprintf(out, "tensors:     %s\n", grouped(a, tt.tensors));
	fprintf(out, "data bytes:  %s\n", grouped(a, tt.bytes));
	fprintf(out, "header:      %s bytes\n", grouped(a, tt.header_bytes));
	fprintf(out, "parameters:  %s\n", grouped(a, tt.params));
	for (d = DTYPE__COUNT - 1; d >= 0; d--)
		if (tt.count_by[d])
			fprintf(out, "  %-12s %s in %s tensor%s\n",
				dtype_info((enum dtype)d)->name,
				grouped(a, tt.params_by[d]),
				grouped(b, tt.count_by[d]),
				tt.count_by[d] == 1 ? "" : "s");
	if (model_is_gguf(m)) {
		json_t *g = gguf_object(m->shards[0].hdr);
		json_t *a = json_object_get(g, "architecture");
		json_t *q = json_object_get(g, "quantization");

		fputs("gguf:        architecture ", out);
		if (json_is_string(a))
			summary_print_value(out, json_string_value(a),
					    json_string_length(a));
		else
			fputc('?', out);
		fprintf(out, ", quantization %s, alignment %"
			JSON_INTEGER_FORMAT "\n",
			json_is_string(q) ? json_string_value(q) : "?",
			json_integer_value(json_object_get(g, "alignment")));
		json_decref(g);
	}
	print_metadata(out, m);
	print_shared(out, m);
	print_unsafe(out, m);
	print_quantized(out, m);
	if (summary_tied(m) > 0)
		fputs("tied:        config.json says tie_word_embeddings: the "
		      "output layer (lm_head)\n"
		      "             shares the input embeddings, stored once; "
		      "loaders re-tie it\n", out);
}
