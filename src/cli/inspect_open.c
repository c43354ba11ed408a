/* inspect_open.c - open one SOURCE as a model for a mode of stfs-inspect
 * (inspect.h), printing its one-line error.  Below inspect.c and the
 * mode files, which call it: nothing here calls back into them.
 */
#include "base/error.h"
#include "cli/inspect.h"
#include "model/model.h"

int
inspect_open(const struct inspect_opts *o, const char *source,
	     struct model **out)
{
	struct err e = { 0 };

	if (model_open(source, out, &e)) {
		err_at(&e, source);
		if (!o->quiet)
			err_print("stfs-inspect", &e);
		return err_exit_status(e.code);
	}
	return 0;
}
