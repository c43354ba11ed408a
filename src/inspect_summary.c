/* inspect_summary.c - the default mode: validate SOURCE and print its
 * summary (text or --json), optionally with every tensor (--tensors,
 * --sort) and the per-module breakdown (--group).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "inspect.h"
#include "model.h"
#include "summary.h"

static int
print_json(const struct inspect_opts *o, const struct model *m)
{
	char *text = summary_json(m, 0);
	json_t *root = text ? json_loads(text, JSON_ALLOW_NUL, NULL) : NULL;

	free(text);
	if (!root || inspect_add_json(o, m, root)) {
		json_decref(root);
		return -1;
	}
	text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(2));
	json_decref(root);
	if (!text)
		return -1;
	puts(text);
	free(text);
	return 0;
}

int
inspect_summary(const struct inspect_opts *o)
{
	struct model *m;
	int rc;

	if (o->nsources != 1) {
		fputs("stfs-inspect: expected exactly one SOURCE "
		      "(try --help)\n", stderr);
		return 2;
	}
	rc = inspect_open(o, o->sources[0], &m);
	if (rc)
		return rc;
	if (o->quiet) {
		rc = 0;
	} else if (o->json) {
		rc = print_json(o, m);
	} else {
		summary_print_text(stdout, m, 0);
		rc = 0;
		if (o->tensors)
			rc = inspect_print_tensors(o, m);
		if (!rc && o->group)
			rc = inspect_print_groups(o, m);
	}
	model_free(m);
	if (rc) {
		fputs("stfs-inspect: out of memory\n", stderr);
		return 2;
	}
	return 0;
}
