/* ollama_store.h - Ollama's model store on disk (ollama_store.c): what
 * catalog_scan.c needs to mount it, and the ollama: SOURCE.
 *
 *   MODELS/manifests/REGISTRY/NAMESPACE/MODEL/TAG   a JSON manifest whose
 *       layers name blobs by digest; the model's weights are the layer of
 *       mediaType application/vnd.ollama.image.model (a GGUF file), or
 *       the layers of that type (the parts of a GGUF split set)
 *   MODELS/blobs/sha256-HEX                         the blobs
 *
 * MODELS is $OLLAMA_MODELS, by default ~/.ollama/models.  A model is named
 * as `ollama list` names it: MODEL:TAG for registry.ollama.ai/library,
 * NAMESPACE/MODEL:TAG for other namespaces there, REGISTRY/NAMESPACE/
 * MODEL:TAG for other registries.
 *
 * The SOURCE ollama: names the store, ollama:NAME one of its models
 * (provider.c's line, model/ollama_tree.h): both become the local path
 * they stand for.
 */
#ifndef STFS_OLLAMA_STORE_H
#define STFS_OLLAMA_STORE_H

#include <stddef.h>

struct err;

#define OLLAMA_MODEL_MEDIA_TYPE "application/vnd.ollama.image.model"
#define OLLAMA_MANIFEST_MAX (1u << 20)	/* bytes; real ones are < 2 KiB */
#define OLLAMA_MODELS_MAX 100000

/* 1 when path holds manifests/ and blobs/ directories. */
int ollama_is_root(const char *path);

struct ollama_model {
	char *name;		/* "llama3:8b", "NS/MODEL:TAG", ... */
	char **blobs;		/* "sha256-HEX", in the root's blobs/: the */
	size_t nblobs;		/* model layers, in the manifest's order */
};

/* The models of the store at root, sorted by name; manifests without a
 * model layer (or not JSON) are left out, a model layer whose digest is
 * not sha256:<64 hex digits> is an error.  0 or -1 with *e. */
int ollama_models(const char *root, struct ollama_model **out, size_t *n,
		  struct err *e);
void ollama_models_free(struct ollama_model *v, size_t n);

/* When path is a blob of an Ollama store (ROOT/blobs/sha256-HEX) that a
 * manifest lists among two or more model layers (a GGUF split set, as
 * Ollama keeps one): the paths of those layers' blobs, in the manifest's
 * order, in *out (*n of them; free each and the array).  *n is 0 when
 * path is no such blob.  0, or -1 with *e. */
int ollama_split_blobs(const char *path, char ***out, size_t *n,
		       struct err *e);

/* The SOURCE "ollama:" (the store) or "ollama:NAME" (one model, by its
 * `ollama list` name; ":latest" when NAME has no tag) as a local path:
 * the store's root ($OLLAMA_MODELS, else $HOME/.ollama/models) or the
 * model's blob.  Malloc'd, or NULL with *e. */
#define OLLAMA_SCHEME "ollama:"
char *ollama_store_path(const char *source, struct err *e);

#endif
