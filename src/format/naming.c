/* naming.c - the table of model file names (naming.h). */
#include "format/naming.h"

#include <string.h>

#define SPLIT_LEN 20	/* "-00001-of-00003.gguf" */

enum { YIELDS = 1, SPLIT = 2 };

/* One line per name; the first that matches wins, so a longer suffix
 * comes before the shorter one it ends with. */
static const struct rule {
	const char *suffix;
	const char *prefix;	/* the name must also start with it */
	enum naming_role role;
	unsigned flags;
	const char *reader;	/* struct naming's */
} rules[] = {
	{ ".safetensors.index.json", NULL, NAMING_INDEX, 0, NULL },
	{ ".safetensors", NULL, NAMING_MODEL, 0, NULL },
	{ ".gguf", NULL, NAMING_MODEL, SPLIT, "gguf" },
	{ ".bin.index.json", NULL, NAMING_INDEX, YIELDS, NULL },
	{ ".bin", "pytorch_model", NAMING_MODEL, YIELDS, NAMING_TORCH },
	{ ".bin", NULL, NAMING_CHECKPOINT, 0, NAMING_TORCH },
	{ ".pt", NULL, NAMING_CHECKPOINT, 0, NAMING_TORCH },
	{ ".pth", NULL, NAMING_CHECKPOINT, 0, NAMING_TORCH },
	{ ".ckpt", NULL, NAMING_CHECKPOINT, 0, NAMING_TORCH },
};

static int
digits5(const char *s, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 5; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10 + (unsigned)(s[i] - '0');
	}
	return 1;
}

/* NAME-KKKKK-of-NNNNN.gguf (5 digits each, 1 <= K <= N, NAME not empty):
 * out's part and parts, the suffix the whole "-KKKKK-of-NNNNN.gguf". */
static void
split_set(const char *base, size_t len, struct naming *out)
{
	const char *s = base + len - SPLIT_LEN;
	unsigned k, n;

	if (len <= SPLIT_LEN || s[0] != '-' || memcmp(s + 6, "-of-", 4) != 0 ||
	    !digits5(s + 1, &k) || !digits5(s + 10, &n) || k < 1 || k > n)
		return;
	out->part = k;
	out->parts = n;
	out->suffix = SPLIT_LEN;
	if (k > 1)
		out->role = NAMING_PART;
}

enum naming_role
naming_of(const char *path, struct naming *out)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t len = strlen(base), i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		size_t n = strlen(r->suffix);

		/* the name is more than its suffix */
		if (len <= n || strcmp(base + len - n, r->suffix) != 0 ||
		    (r->prefix && strncmp(base, r->prefix,
					  strlen(r->prefix)) != 0))
			continue;
		out->role = r->role;
		out->yields = (r->flags & YIELDS) != 0;
		out->suffix = n;
		out->reader = r->reader;
		if (r->flags & SPLIT)
			split_set(base, len, out);
		break;
	}
	return out->role;
}

int
naming_config(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	return strcmp(base, "config.json") == 0 ||
	       strcmp(base, "quantize_config.json") == 0;
}

int
naming_listed(const char *path)
{
	struct naming n;
	enum naming_role r = naming_of(path, &n);

	return r == NAMING_MODEL || r == NAMING_INDEX || r == NAMING_PART ||
	       naming_config(path);
}

int
naming_shown(const char *name, int strong)
{
	struct naming nm;
	enum naming_role r = naming_of(name, &nm);

	return (r == NAMING_MODEL || r == NAMING_INDEX) &&
	       !(strong && nm.yields);
}

int
naming_strong(const char *const *names, size_t n)
{
	size_t i;

	/* a model that shows even beside a strong one does not yield */
	for (i = 0; i < n; i++)
		if (naming_shown(names[i], 1))
			return 1;
	return 0;
}
