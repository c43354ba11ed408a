/* inspect_tensors.c - the tensor listing of stfs-inspect (--tensors, with
 * bytes, in --sort order) and the per-module breakdown (--group[=DEPTH]):
 * tensors, parameters and bytes summed by dotted-name prefix.  Each as
 * text for people, or (--format) as a table for programs: TSV or CSV.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/count.h"
#include "cli/inspect.h"
#include "model/model.h"
#include "model/summary.h"

int
inspect_parse_sort(const char *s)
{
	if (!strcmp(s, "offset"))
		return INSPECT_SORT_OFFSET;
	if (!strcmp(s, "name"))
		return INSPECT_SORT_NAME;
	if (!strcmp(s, "size"))
		return INSPECT_SORT_SIZE;
	return -1;
}

static int
cmp_bytes(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}

/* qsort has no context argument; the listing is single-threaded. */
static const struct model *sort_model;
static int sort_key;

static int
cmp_offset(const struct model_tensor *a, const struct model_tensor *b)
{
	if (a->shard != b->shard)
		return a->shard < b->shard ? -1 : 1;
	if (a->t->begin != b->t->begin)
		return a->t->begin < b->t->begin ? -1 : 1;
	/* zero-length tensors share an offset: keep the order stable */
	return a < b ? -1 : a > b;
}

static int
cmp_tensor(const void *pa, const void *pb)
{
	const struct model_tensor *a = &sort_model->tensors[*(const size_t *)pa];
	const struct model_tensor *b = &sort_model->tensors[*(const size_t *)pb];
	int c;

	if (sort_key == INSPECT_SORT_SIZE) {
		uint64_t x = model_tensor_nbytes(a), y = model_tensor_nbytes(b);

		if (x != y)
			return x > y ? -1 : 1;
	}
	if (sort_key != INSPECT_SORT_OFFSET) {
		c = cmp_bytes(a->t->name, a->t->name_len, b->t->name,
			      b->t->name_len);
		if (c)
			return c;
	}
	return cmp_offset(a, b);
}

/* Indices of m's tensors in the order asked for; NULL when out of memory. */
static size_t *
tensor_order(const struct model *m, int key)
{
	size_t *ix = malloc((m->ntensors ? m->ntensors : 1) * sizeof(*ix));
	size_t i;

	if (!ix)
		return NULL;
	for (i = 0; i < m->ntensors; i++)
		ix[i] = i;
	sort_model = m;
	sort_key = key;
	qsort(ix, m->ntensors, sizeof(*ix), cmp_tensor);
	return ix;
}

/* ---- groups ------------------------------------------------------------ */

struct group {
	const char *key;	/* points into the first member's name */
	size_t key_len;
	uint64_t tensors, params, bytes;
	const struct model_tensor *first;	/* lowest (shard, offset) */
};

/* The group of a name: its first DEPTH dotted components, but never the
 * whole name when it has more than one (a tensor belongs to its module:
 * "model.norm.weight" at depth 4 is "model.norm"); depth 0 means the
 * whole module path, i.e. the name without its last component. */
static size_t
group_key_len(const char *name, size_t len, int depth)
{
	size_t i, last = 0, cut = 0;
	int k = 0;

	for (i = 0; i < len; i++)
		if (name[i] == '.') {
			last = i;
			if (++k == depth)
				cut = i;
		}
	if (!k)
		return len;	/* no dot: a top-level tensor is its own group */
	if (depth > 0 && depth < k)
		return cut;
	return last;
}

static int
cmp_tensor_key(const void *pa, const void *pb)
{
	const struct model_tensor *a = &sort_model->tensors[*(const size_t *)pa];
	const struct model_tensor *b = &sort_model->tensors[*(const size_t *)pb];
	size_t ka = group_key_len(a->t->name, a->t->name_len, sort_key);
	size_t kb = group_key_len(b->t->name, b->t->name_len, sort_key);
	int c = cmp_bytes(a->t->name, ka, b->t->name, kb);

	return c ? c : cmp_offset(a, b);
}

static int
cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (sort_key == INSPECT_SORT_SIZE && a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (sort_key == INSPECT_SORT_OFFSET)
		return cmp_offset(a->first, b->first);
	return cmp_bytes(a->key, a->key_len, b->key, b->key_len);
}

/* The groups of m at depth, in the order of key; *n set.  NULL when out
 * of memory (or when m has no tensor: *n is then 0). */
static struct group *
make_groups(const struct model *m, int depth, int key, size_t *n)
{
	size_t *ix, i, ng = 0;
	struct group *g;

	*n = 0;
	if (!m->ntensors)
		return NULL;
	ix = tensor_order(m, INSPECT_SORT_NAME);
	g = calloc(m->ntensors, sizeof(*g));
	if (!ix || !g) {
		free(ix);
		free(g);
		return NULL;
	}
	sort_model = m;
	sort_key = depth;
	qsort(ix, m->ntensors, sizeof(*ix), cmp_tensor_key);
	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[ix[i]];
		size_t kl = group_key_len(mt->t->name, mt->t->name_len, depth);

		if (!ng || cmp_bytes(g[ng - 1].key, g[ng - 1].key_len,
				     mt->t->name, kl)) {
			g[ng].key = mt->t->name;
			g[ng].key_len = kl;
			g[ng].first = mt;
			ng++;
		}
		g[ng - 1].tensors++;
		g[ng - 1].params = count_add(g[ng - 1].params, mt->t->numel);
		g[ng - 1].bytes = count_add(g[ng - 1].bytes,
					    model_tensor_nbytes(mt));
		if (cmp_offset(mt, g[ng - 1].first) < 0)
			g[ng - 1].first = mt;
	}
	free(ix);
	sort_key = key;
	qsort(g, ng, sizeof(*g), cmp_group);
	*n = ng;
	return g;
}

/* ---- output -------------------------------------------------------------- */

static const char *
sort_name(int key)
{
	return key == INSPECT_SORT_SIZE ? "size" :
		key == INSPECT_SORT_NAME ? "name" : "offset";
}

int
inspect_print_tensors(const struct inspect_opts *o, const struct model *m)
{
	size_t *ix = tensor_order(m, o->sort);
	size_t i;

	if (!ix)
		return -1;
	fprintf(stdout, "tensors (name dtype shape data_offsets bytes%s; by %s):\n",
		m->sharded ? " shard" : "", sort_name(o->sort));
	for (i = 0; i < m->ntensors; i++) {
		const struct model_tensor *mt = &m->tensors[ix[i]];
		const struct tensor *t = mt->t;
		uint32_t k;

		summary_print_name(stdout, t->name, t->name_len);
		printf(" %s [", dtype_info(t->dtype)->name);
		for (k = 0; k < t->rank; k++)
			printf("%s%" PRIu64, k ? ", " : "", t->shape[k]);
		printf("] [%" PRIu64 ", %" PRIu64 "] %" PRIu64, t->begin,
		       t->end, model_tensor_nbytes(mt));
		if (m->sharded)
			printf(" %s", m->shards[mt->shard].name);
		putchar('\n');
	}
	free(ix);
	return 0;
}

static const char *
grouped(char *buf, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, k = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = tmp[i];
	}
	buf[k] = '\0';
	return buf;
}

int
inspect_print_groups(const struct inspect_opts *o, const struct model *m)
{
	size_t n, i;
	struct group *g = make_groups(m, o->group_depth, o->sort, &n);
	char a[32], b[32], c[32];
	uint64_t tt = 0, tp = 0, tb = 0;

	if (!g && m->ntensors)
		return -1;
	if (o->group_depth > 0)
		printf("groups (depth %d; by %s):\n", o->group_depth,
		       sort_name(o->sort));
	else
		printf("groups (by module; by %s):\n", sort_name(o->sort));
	printf("%9s %17s %19s  %s\n", "tensors", "parameters", "bytes", "group");
	for (i = 0; i < n; i++) {
		printf("%9s %17s %19s  ", grouped(a, g[i].tensors),
		       grouped(b, g[i].params), grouped(c, g[i].bytes));
		summary_print_name(stdout, g[i].key, g[i].key_len);
		putchar('\n');
		tt += g[i].tensors;
		tp = count_add(tp, g[i].params);
		tb = count_add(tb, g[i].bytes);
	}
	printf("%9s %17s %19s  (total)\n", grouped(a, tt), grouped(b, tp),
	       grouped(c, tb));
	free(g);
	return 0;
}

static json_t *
tensor_json(const struct model *m, const struct model_tensor *mt)
{
	const struct tensor *t = mt->t;
	json_t *shape = json_array(), *j;
	uint32_t k;

	for (k = 0; shape && k < t->rank; k++)
		json_array_append_new(shape, json_integer((json_int_t)t->shape[k]));
	j = json_pack("{s:s%, s:s, s:o, s:[I,I], s:I, s:I}",
		      "name", t->name, (size_t)t->name_len,
		      "dtype", dtype_info(t->dtype)->name,
		      "shape", shape,
		      "data_offsets", (json_int_t)t->begin, (json_int_t)t->end,
		      "offset", (json_int_t)model_tensor_offset(m, mt),
		      "bytes", (json_int_t)model_tensor_nbytes(mt));
	if (j && m->sharded)
		json_object_set_new(j, "shard",
				    json_string(m->shards[mt->shard].name));
	return j;
}

int
inspect_add_json(const struct inspect_opts *o, const struct model *m,
		 json_t *root)
{
	size_t i, n;

	if (o->tensors) {
		size_t *ix = tensor_order(m, o->sort);
		json_t *a = json_array();

		if (!ix || !a) {
			free(ix);
			json_decref(a);
			return -1;
		}
		for (i = 0; i < m->ntensors; i++)
			if (json_array_append_new(a, tensor_json(m,
						  &m->tensors[ix[i]]))) {
				free(ix);
				json_decref(a);
				return -1;
			}
		free(ix);
		json_object_set_new(root, "tensor_list", a);
	}
	if (o->group) {
		struct group *g = make_groups(m, o->group_depth, o->sort, &n);
		json_t *a = json_array();

		if ((!g && m->ntensors) || !a) {
			free(g);
			json_decref(a);
			return -1;
		}
		for (i = 0; i < n; i++)
			json_array_append_new(a, json_pack(
				"{s:s%, s:I, s:o, s:o}",
				"group", g[i].key, g[i].key_len,
				"tensors", (json_int_t)g[i].tensors,
				"parameters", summary_count_json(g[i].params),
				"bytes", summary_count_json(g[i].bytes)));
		free(g);
		json_object_set_new(root, "groups", a);
		if (o->group_depth > 0)
			json_object_set_new(root, "group_depth",
					    json_integer(o->group_depth));
	}
	return 0;
}

/* ---- --format tsv|csv ------------------------------------------------------
 * One table, a header row first, plain numbers.  TSV: fields separated by
 * a tab; a tab, newline, carriage return or backslash in a name written
 * \t \n \r \\ (the convention of PostgreSQL's COPY and of "linear TSV"),
 * so every row is one line.  CSV: RFC 4180, a field with a comma, quote
 * or line break quoted and its quotes doubled (lines end in \n). */

static void
put_field(const struct inspect_opts *o, const char *s, size_t n, int first)
{
	size_t i;

	if (!first)
		putchar(o->format == INSPECT_FORMAT_CSV ? ',' : '\t');
	if (o->format == INSPECT_FORMAT_CSV) {
		if (!memchr(s, ',', n) && !memchr(s, '"', n) &&
		    !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
			fwrite(s, 1, n, stdout);
			return;
		}
		putchar('"');
		for (i = 0; i < n; i++) {
			if (s[i] == '"')
				putchar('"');
			putchar(s[i]);
		}
		putchar('"');
		return;
	}
	for (i = 0; i < n; i++)
		switch (s[i]) {
		case '\t': fputs("\\t", stdout); break;
		case '\n': fputs("\\n", stdout); break;
		case '\r': fputs("\\r", stdout); break;
		case '\\': fputs("\\\\", stdout); break;
		default: putchar(s[i]);
		}
}

static void
put_str(const struct inspect_opts *o, const char *s, int first)
{
	put_field(o, s, strlen(s), first);
}

static void
put_u64(const struct inspect_opts *o, uint64_t v)
{
	char n[32];

	snprintf(n, sizeof(n), "%" PRIu64, v);
	put_str(o, n, 0);
}

/* [d0,d1,...] as in the sidecars' JSON. */
static void
put_shape(const struct inspect_opts *o, const struct tensor *t)
{
	char buf[32];
	uint32_t k;

	putchar(o->format == INSPECT_FORMAT_CSV ? ',' : '\t');
	if (o->format == INSPECT_FORMAT_CSV && t->rank > 1)
		putchar('"');
	putchar('[');
	for (k = 0; k < t->rank; k++) {
		snprintf(buf, sizeof(buf), "%s%" PRIu64, k ? "," : "",
			 t->shape[k]);
		fputs(buf, stdout);
	}
	putchar(']');
	if (o->format == INSPECT_FORMAT_CSV && t->rank > 1)
		putchar('"');
}

static void
put_header(const struct inspect_opts *o, const char *const *cols, int path)
{
	int i;

	if (path)
		put_str(o, "model", 1);
	for (i = 0; cols[i]; i++)
		put_str(o, cols[i], !path && i == 0);
	putchar('\n');
}

int
inspect_print_table(const struct inspect_opts *o, const struct model *m,
		    const char *path, int header)
{
	static const char *const tcols[] = { "name", "dtype", "shape",
		"parameters", "bytes", "offset", "data_begin", "data_end",
		"shard", NULL };
	static const char *const gcols[] = { "group", "tensors", "parameters",
		"bytes", NULL };
	size_t i, n;

	if (o->group) {
		struct group *g = make_groups(m, o->group_depth, o->sort, &n);

		if (!g && m->ntensors)
			return -1;
		if (header)
			put_header(o, gcols, path != NULL);
		for (i = 0; i < n; i++) {
			if (path)
				put_str(o, path, 1);
			put_field(o, g[i].key, g[i].key_len, !path);
			put_u64(o, g[i].tensors);
			put_u64(o, g[i].params);
			put_u64(o, g[i].bytes);
			putchar('\n');
		}
		free(g);
		return 0;
	}
	{
		size_t *ix = tensor_order(m, o->sort);

		if (!ix)
			return -1;
		if (header)
			put_header(o, tcols, path != NULL);
		for (i = 0; i < m->ntensors; i++) {
			const struct model_tensor *mt = &m->tensors[ix[i]];
			const struct tensor *t = mt->t;

			if (path)
				put_str(o, path, 1);
			put_field(o, t->name, t->name_len, !path);
			put_str(o, dtype_info(t->dtype)->name, 0);
			put_shape(o, t);
			put_u64(o, t->numel);
			put_u64(o, model_tensor_nbytes(mt));
			put_u64(o, model_tensor_offset(m, mt));
			put_u64(o, t->begin);
			put_u64(o, t->end);
			put_str(o, m->sharded ? m->shards[mt->shard].name : "",
				0);
			putchar('\n');
		}
		free(ix);
	}
	return 0;
}
