/* hub_catalog.c - an hf:// URI as a catalog (catalog.h): every model of
 * the pinned commit under SUBDIR, each in its own directory. */
#include "source/hub/hub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "base/error.h"
#include "model/model.h"

/* Escape each '/'-separated component as catalog.c escapes names. */
static char *
escape_dir(const char *dir)
{
	size_t cap = 4 * strlen(dir) + 16, n = 0;
	char *out = malloc(cap), comp[1024];

	if (!out)
		return NULL;
	out[0] = '\0';
	while (*dir) {
		size_t len = strcspn(dir, "/");
		char *name = strndup(dir, len);

		if (!name || catalog_escape(name, comp, sizeof(comp)) != 0 ||
		    n + strlen(comp) + 2 > cap) {
			free(name);
			free(out);
			return NULL;
		}
		free(name);
		n += (size_t)sprintf(out + n, "%s%s", n ? "/" : "", comp);
		dir += len;
		if (*dir == '/')
			dir++;
	}
	return out;
}

int
hub_catalog(const char *uri, struct catalog **out, struct err *e)
{
	struct hub_tree *t;
	struct catalog *c;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (hub_open(uri, &t, e))
		return -1;
	c = catalog_new(t->label);
	if (!c) {
		hub_tree_free(t);
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	for (i = 0; i < t->n && rc == 0; i++) {
		char *dir = escape_dir(t->models[i].dir);
		struct model *m = t->models[i].model;

		t->models[i].model = NULL;	/* catalog_add takes it */
		if (!dir) {
			model_free(m);
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			break;
		}
		rc = catalog_add(c, dir, t->models[i].label, m, e);
		free(dir);
	}
	if (rc == 0)
		rc = catalog_finish(c, e);
	hub_tree_free(t);
	if (rc) {
		catalog_free(c);
		return -1;
	}
	*out = c;
	return 0;
}
