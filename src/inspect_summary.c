/* inspect_summary.c - the default mode: validate SOURCE and print its
 * summary (text or --json), optionally with every tensor.
 */
#include <stdio.h>
#include <stdlib.h>

#include "inspect.h"
#include "model.h"
#include "summary.h"

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
	if (o->json && !o->quiet) {
		char *text = summary_json_ex(m, 1, o->tensors);

		if (!text) {
			fputs("stfs-inspect: out of memory\n", stderr);
			model_free(m);
			return 2;
		}
		fputs(text, stdout);
		free(text);
	} else if (!o->quiet) {
		summary_print_text(stdout, m, o->tensors);
	}
	model_free(m);
	return 0;
}
