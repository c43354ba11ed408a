/* inspect_open.c - open one SOURCE as a model for a mode of stfs-inspect
 * (inspect.h), printing its one-line error.  Below inspect.c and the
 * mode files, which call it: nothing here calls back into them.
 */
#include <stddef.h>

#include "base/error.h"
#include "cli/inspect.h"
#include "model/catalog.h"
#include "model/model.h"
#include "model/quant_model.h"

static int
fail(const struct inspect_opts *o, const char *source, struct err *e)
{
	err_at(e, source);
	if (!o->quiet)
		err_print("stfs-inspect", e);
	return err_exit_status(e->code);
}

int
inspect_open(const struct inspect_opts *o, const char *source,
	     struct model **out)
{
	struct err e = { 0 };

	if (model_open(source, NULL, out, &e))
		return fail(o, source, &e);
	if (o->dequant == 1 && quant_model_take(out, &e)) {
		model_free(*out);
		return fail(o, source, &e);
	}
	return 0;
}

int
inspect_catalog(const struct inspect_opts *o, const char *source, int dflt,
		struct catalog **out)
{
	struct err e = { 0 };
	size_t k;

	if (catalog_open(source, NULL, out, &e))
		return fail(o, source, &e);
	if (o->dequant == 0 || (o->dequant < 0 && !dflt))
		return 0;
	for (k = 0; k < (*out)->n; k++)
		if (quant_model_take(&(*out)->entries[k].model, &e)) {
			catalog_free(*out);
			return fail(o, source, &e);
		}
	return 0;
}
