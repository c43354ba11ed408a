/* ollama_tree.h - provider.h's open_model and open_tree for the
 * ollama: SOURCE (model/ollama_store.h): the local path it stands for,
 * opened as any local path.
 */
#ifndef STFS_OLLAMA_TREE_H
#define STFS_OLLAMA_TREE_H

struct catalog;
struct catalog_opts;
struct err;
struct model;
struct source_opener;

int ollama_open_model(const struct source_opener *files, const char *name,
		      struct model **out, struct err *e);
int ollama_open_tree(const struct source_opener *files, const char *name,
		     const struct catalog_opts *o, struct catalog **out,
		     struct err *e);

#endif
