/* inspect_open.c - open one SOURCE as a model for a mode of stfs-inspect
 * (inspect.h), printing its one-line error.  Below inspect.c and the
 * mode files, which call it: nothing here calls back into them.
 *
 * A SOURCE that takes more than a second to open (a sharded set over a
 * slow link, a large hf:// repository) says what it waits for on a
 * terminal, as stfs does while it mounts (cli/progress.h), and the line is
 * erased before anything is printed.  Not with --quiet, and not with
 * --json when standard output is not a terminal: a program reads that
 * answer, and whoever runs it may not be watching.
 */
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "base/meter.h"
#include "cli/inspect.h"
#include "cli/progress.h"
#include "model/catalog.h"
#include "model/display.h"
#include "model/model.h"
#include "model/quant_model.h"

struct opening {
	struct progress line;
	struct meter meter;
	char *shown;		/* SOURCE without a URL's secrets */
};

static struct meter *
opening_start(struct opening *op, const struct inspect_opts *o,
	      const char *source)
{
	int quiet = o->quiet || (o->json && !isatty(STDOUT_FILENO));

	op->shown = display_name(source);
	progress_start(&op->line, "stfs-inspect",
		       op->shown ? op->shown : source, quiet, 1000);
	meter_init(&op->meter, progress_meter, &op->line);
	return &op->meter;
}

static void
opening_end(struct opening *op)
{
	progress_end(&op->line, 0);
	progress_destroy(&op->line);
	meter_destroy(&op->meter);
	free(op->shown);
}

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
	struct opening op;
	struct err e = { 0 };
	int rc;

	rc = model_open(source, opening_start(&op, o, source), out, &e);
	opening_end(&op);
	if (rc)
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
	struct opening op;
	struct catalog_opts co = { 0 };
	struct err e = { 0 };
	size_t k;
	int rc;

	co.meter = opening_start(&op, o, source);
	rc = catalog_open(source, &co, out, &e);
	opening_end(&op);
	if (rc)
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
