/* torch_unsafe.c - the uses of a pickle as table.h's list
 * (torch_unsafe.h).
 *
 * The strings are written into one buffer first (as offsets), then the
 * array and the buffer are copied into one allocation and the offsets
 * become pointers, so the table frees the list with one free().
 */
#include "format/torch/torch_unsafe.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "format/torch/pickle_unsafe.h"
#include "format/torch/torch_value.h"

/* Values looked at rendering the arguments of one use, and the bytes
 * of text rendered before they are cut. */
#define VISITS_MAX ((uint64_t)1 << 16)
#define ARGS_RENDERED (64u << 10)

/* Offsets into the strings, while they are made. */
struct line {
	size_t callable, how, args, where, op;	/* where: SIZE_MAX, none */
	uint64_t at;
};

/* Append the NUL-terminated text of s; its offset. */
static size_t
put(struct buf *b, const char *s, size_t n, int *bad)
{
	size_t at = b->len;

	*bad |= buf_add(b, s, n) || buf_add(b, "", 1);
	return at;
}

/* What is called: a global's name, or the root global of a call whose
 * result is called, with "(...)" per call ("builtins.getattr(...)"). */
static size_t
callable_text(struct buf *b, const struct pickle_value *c, int *bad)
{
	struct buf t = BUF_INIT;
	unsigned calls = 0;
	size_t at;

	while (c->kind == PICKLE_CALL && calls < 64) {
		c = c->call.callee;
		calls++;
	}
	/* as Python 3 imports it: protocol 2's __builtin__ is builtins */
	if (c->kind == PICKLE_GLOBAL)
		*bad |= buf_addf(&t, "%s.%s",
				 strcmp(c->global.module, "__builtin__") ?
				 c->global.module : "builtins", c->global.name);
	else
		*bad |= buf_adds(&t, "?");
	while (calls--)
		*bad |= buf_adds(&t, "(...)");
	at = put(b, t.data ? t.data : "", t.len, bad);
	buf_free(&t);
	return at;
}

/* The arguments as JSON: a list, with the keyword arguments as a last
 * object {"**": {...}} when there are any; cut at a UTF-8 boundary past
 * TORCH_UNSAFE_ARGS_SHOWN bytes, "..." after. */
static int
args_text(struct buf *b, const struct pickle_unsafe_use *u, size_t *at,
	  struct err *e)
{
	struct buf t = BUF_INIT;
	uint64_t visits = 0;
	/* rendered whole up to 64 KiB (a long string: its start), then
	 * cut */
	struct torch_value j = { e, &visits, VISITS_MAX, ARGS_RENDERED };
	int rc, bad = 0, cut;

	rc = torch_value_json(&j, u->args, &t);
	if (rc == 0 && u->kwargs) {
		/* ..."]" becomes ..., {"**": {...}}] */
		struct buf k = BUF_INIT;

		j.left = ARGS_RENDERED;
		rc = torch_value_json(&j, u->kwargs, &k);
		if (t.len && rc != -1) {
			t.len--;
			bad |= buf_adds(&t, t.len > 1 ? ", {\"**\": " :
					"{\"**\": ");
			bad |= buf_add(&t, k.data ? k.data : "", k.len);
			bad |= buf_adds(&t, "}]");
		}
		buf_free(&k);
	}
	if (rc < 0) {
		/* too much to look at: say so */
		err_clear(e);
		t.len = 0;
		rc = 2;
	}
	cut = rc != 0 || t.len > TORCH_UNSAFE_ARGS_SHOWN;
	if (t.len > TORCH_UNSAFE_ARGS_SHOWN) {
		t.len = TORCH_UNSAFE_ARGS_SHOWN;
		while (t.len && ((unsigned char)t.data[t.len] & 0xc0) == 0x80)
			t.len--;
	}
	if (cut)
		bad |= buf_adds(&t, "...");
	*at = put(b, t.data ? t.data : "", t.len, &bad);
	buf_free(&t);
	return bad ? err_set(e, ERR_NO_MEMORY, "out of memory") : 0;
}

/* Where the tree holds what u made, as a name; SIZE_MAX: nowhere. */
static int
where_text(struct buf *b, const struct pickle_unsafe_use *u, size_t *at,
	   struct err *e)
{
	struct buf t = BUF_INIT;
	uint64_t visits = 0;
	struct torch_value j = { e, &visits, VISITS_MAX, 4096 };
	int rc, bad = 0;

	*at = SIZE_MAX;
	if (!u->reached)
		return 0;
	rc = torch_value_path(&j, u->path, &t);
	if (rc < 0) {
		err_clear(e);
		rc = 2;
	}
	if (rc)
		bad |= buf_adds(&t, "...");
	*at = put(b, t.data ? t.data : "", t.len, &bad);
	buf_free(&t);
	return bad ? err_set(e, ERR_NO_MEMORY, "out of memory") : 0;
}

/* 1 when a kept call calls global g or takes it as an argument (the
 * factory of defaultdict(list)): its line shows g already. */
static int
used_by_call(const struct pickle_unsafe *pu, const struct pickle_value *g)
{
	for (size_t i = 0; i < pu->n; i++) {
		const struct pickle_value *a = pu->use[i].args;

		if (!a)
			continue;
		if (pu->use[i].callable == g)
			return 1;
		for (size_t k = 0; k < a->seq.n; k++)
			if (a->seq.items[k] == g)
				return 1;
	}
	return 0;
}

/* 1 when an import of the same name is listed already. */
static int
listed_import(const struct pickle_unsafe *pu, size_t i)
{
	const struct pickle_value *g = pu->use[i].callable;

	for (size_t k = 0; k < i; k++) {
		const struct pickle_value *o = pu->use[k].callable;

		if (!pu->use[k].args && o->kind == PICKLE_GLOBAL &&
		    strcmp(o->global.module, g->global.module) == 0 &&
		    strcmp(o->global.name, g->global.name) == 0 &&
		    !used_by_call(pu, o))
			return 1;
	}
	return 0;
}

int
torch_unsafe_list(const struct pickle *p, struct unsafe_use **out, size_t *n,
		  uint64_t *total, struct err *e)
{
	const struct pickle_unsafe *pu = pickle_unsafe_of(p);
	struct line *lines = NULL;
	struct buf b = BUF_INIT;
	struct unsafe_use *list;
	size_t k = 0;
	int bad = 0;
	char *text;

	*out = NULL;
	*n = 0;
	*total = 0;
	if (!pu->n)
		return 0;
	lines = calloc(pu->n, sizeof(*lines));
	if (!lines)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (size_t i = 0; i < pu->n && !bad; i++) {
		const struct pickle_unsafe_use *u = &pu->use[i];
		struct line *l = &lines[k];

		if (!u->args && (used_by_call(pu, u->callable) ||
				 listed_import(pu, i)))
			continue;
		l->callable = callable_text(&b, u->callable, &bad);
		l->how = put(&b, u->newobj ? "new" : u->args ? "call" :
			     "import", u->newobj ? 3 : u->args ? 4 : 6, &bad);
		l->op = put(&b, u->op, strlen(u->op), &bad);
		l->at = u->at;
		if (u->args) {
			if (args_text(&b, u, &l->args, e))
				goto fail;
		} else {
			l->args = put(&b, "", 0, &bad);
		}
		if (where_text(&b, u, &l->where, e))
			goto fail;
		k++;
	}
	if (bad)
		goto oom;
	if (!k) {
		free(lines);
		buf_free(&b);
		*total = pu->total - pu->n;
		return 0;
	}
	list = malloc(k * sizeof(*list) + b.len);
	if (!list)
		goto oom;
	text = (char *)(list + k);
	memcpy(text, b.data, b.len);
	for (size_t i = 0; i < k; i++) {
		list[i].callable = text + lines[i].callable;
		list[i].how = text + lines[i].how;
		list[i].args = text + lines[i].args;
		list[i].where = lines[i].where == SIZE_MAX ? NULL :
				text + lines[i].where;
		list[i].op = text + lines[i].op;
		list[i].at = lines[i].at;
	}
	free(lines);
	buf_free(&b);
	*out = list;
	*n = k;
	*total = k + (pu->total - pu->n);
	return 0;
oom:
	err_set(e, ERR_NO_MEMORY, "out of memory");
fail:
	free(lines);
	buf_free(&b);
	return -1;
}
