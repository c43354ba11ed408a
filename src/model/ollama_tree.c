/* ollama_tree.c - the ollama: SOURCE as a model or a tree of models
 * (ollama_tree.h). */
#include "model/ollama_tree.h"

#include <stdlib.h>

#include "model/catalog.h"
#include "model/model.h"
#include "model/ollama_store.h"

int
ollama_open_model(const struct source_opener *files, const char *name,
		  struct model **out, struct err *e)
{
	char *path = ollama_store_path(name, e);
	int rc;

	if (!path)
		return -1;
	rc = model_open_path(files, path, out, e);
	free(path);
	return rc;
}

int
ollama_open_tree(const struct source_opener *files, const char *name,
		 const struct catalog_opts *o, struct catalog **out,
		 struct err *e)
{
	char *path = ollama_store_path(name, e);
	int rc;

	if (!path)
		return -1;
	rc = catalog_open_path(files, path, o, out, e);
	free(path);
	return rc;
}
