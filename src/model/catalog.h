/* catalog.h - what a SOURCE names: one model, or a tree of models.
 *
 * A SOURCE is a .safetensors file, an index, a directory, a Hugging Face
 * hub cache (its root, a models--ORG--NAME repo, or a snapshot), an
 * http(s):// URL, an hf:// repository or an s3:// prefix (the last two
 * listed by their providers and placed by the same rules,
 * catalog_add_listing).  catalog_open() finds every model it holds, opens and
 * validates each (nothing is returned until all passed) and says where
 * each goes in the mount.  The rules (docs/design.md, "Model trees"):
 *
 * - Which files are models is format/naming.h's one rule, the same for
 *   local folders, hub caches and the listings of hf:// and s3://.
 * - A directory that holds exactly one model (one .safetensors file, or
 *   one *.safetensors.index.json set) and no subdirectory with models IS
 *   that model: one entry with dir "".
 * - Otherwise every model becomes a subdirectory named after its file
 *   without ".safetensors" (an index set: after the index without
 *   ".safetensors.index.json"), and every subdirectory holding models is
 *   mirrored by the same rule.  Shards named by an index never appear on
 *   their own; directories without models and names starting with '.' do
 *   not appear.
 * - Names are escaped as tensor names are: '%', control bytes, a leading
 *   '.', the first '_' of a leading "__" become %XX, the empty name "%".
 *   When two siblings still get the same name, the models among them use
 *   their whole file name ("a.safetensors", "m.safetensors.index.json";
 *   directories keep theirs), and a name still taken gets "%1", "%2", ...
 *   Every model directory's __summary__.json names its file ("source").
 * - A hub cache root (a directory holding models--* repos) is a tree
 *   ORG/NAME/ with the snapshot each repo's refs/main names (or its only
 *   snapshot); repos without models (safetensors, GGUF, PyTorch
 *   weights), datasets--*, spaces--* and .locks/ are left out.  A repo
 *   directory is its refs/main snapshot.
 * - GGUF files are models as .safetensors files are (named without
 *   ".gguf"); of a split set only the first part is, named without
 *   "-00001-of-0000N.gguf" (model/gguf_split.h).
 * - An Ollama store (manifests/ and blobs/, model/ollama_store.h) is a
 *   tree MODEL:TAG/ (NAMESPACE/MODEL:TAG/, REGISTRY/NAMESPACE/MODEL:TAG/)
 *   of the blobs its manifests name as models.
 * - PyTorch weights (pytorch_model*.bin, *.bin.index.json sets) are
 *   models of a directory (local or listed) that holds no safetensors or
 *   GGUF model (naming_shown, format/naming.h; docs/pytorch.md), named
 *   without ".bin" / ".bin.index.json".
 */
#ifndef STFS_CATALOG_H
#define STFS_CATALOG_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct model;
struct model_files;

struct catalog_entry {
	char *dir;		/* mount-relative directory of this model, "" for
				   the root, components joined by '/', each
				   already a valid file name */
	char *label;		/* what the model's __summary__.json "source"
				   says: absolute path of the file or index, or
				   the redacted URL */
	struct model *model;	/* owned */
};

struct catalog {
	char *label;		/* absolute path / redacted URL of SOURCE, for
				   fsname & summary */
	size_t n;
	struct catalog_entry *entries;	/* sorted by dir; n == 1 && dir ==
					   "" : one model */
	/* A tree's folder (model/model_files.h, a tree's): what the root's
	 * MNT/.files/ shows, every file of a local folder, a hub cache
	 * repo's snapshot, an hf:// or s3:// listing; NULL for one model
	 * (its own .files/ is its folder) and where the root is no folder
	 * of models (a hub cache root, an Ollama store). */
	struct model_files *files;
};

struct meter;
struct catalog_opts {
	/* Most models a tree may hold (0: no limit of our own). */
	size_t max_models;
	/* Told how far opening has got (base/meter.h; NULL: nobody): the
	 * files of a listing opened ahead, a sharded set's shards. */
	struct meter *meter;
};

/* 0 with *out set, or -1 with *e naming the file at fault.  o may be
 * NULL.  Defined in provider.c, the one place that dispatches on a
 * SOURCE's scheme. */
int catalog_open(const char *source, const struct catalog_opts *o,
		 struct catalog **out, struct err *e);

/* Watch every source of every model with w (NULL: nobody; source.h):
 * what a mount does for the time it serves them. */
struct source_watch;
void catalog_watch(const struct catalog *c, const struct source_watch *w);

void catalog_free(struct catalog *c);

/* For producers of their own (hf://, s3://): an empty catalog, then one
 * entry at a time (takes ownership of m, also on failure), then sort. */
struct catalog *catalog_new(const char *label);
int catalog_add(struct catalog *c, const char *dir, const char *label,
		struct model *m, struct err *e);
/* Sort by dir and refuse a dir that is another's or below another's
 * model (ERR_USAGE naming both). */
int catalog_finish(struct catalog *c, struct err *e);

/* A local path (file, index, directory tree, hub cache) or a URL of a file
 * or an index as a catalog; files opens the files they name (catalog.c). */
struct source_opener;
int catalog_open_path(const struct source_opener *files, const char *path,
		      const struct catalog_opts *o, struct catalog **out,
		      struct err *e);
int catalog_open_url(const struct source_opener *files, const char *url,
		     const struct catalog_opts *o, struct catalog **out,
		     struct err *e);

/* For sources that list their files (hf://, s3://, model/provider.h):
 * the files below SOURCE, each by its path (relative, '/'-separated;
 * format/naming.h's naming_listed() keeps the ones that matter) and the
 * name op opens it by.  Which are models and where each goes follow the
 * rules above, as for a local directory; every file the tree needs is
 * handed to open_ahead (op's arg; NULL: none) at once, with the configs
 * beside its models (format/naming.h's naming_config), each file it
 * opens counted on op's meter (may be NULL), then every model is opened
 * through op, given its configs (model/model_beside.h) and its folder's
 * files (model/model_files.h: those of its folder and of the folders
 * below it that hold no model file, one folder object shared by the
 * models of a folder) and added to c (then catalog_finish); when they
 * are a tree and l->files is set, c->files is every listed file.  0 or
 * -1 with *e. */
struct catalog_listing {
	size_t n;
	const char *const *rel;
	const char *const *url;
	const struct source_opener *op;
	int (*open_ahead)(void *arg, const char *const *url, size_t n,
			  struct meter *meter, struct err *e);
	/* For MNT/.files/ (model/model_files.h): each file's size (NULL or
	 * UINT64_MAX: not listed) and ETag (NULL: none), and the opener
	 * that opens them later, after the listing is gone (the
	 * provider's; NULL: the models get no folder). */
	const uint64_t *size;
	const char *const *etag;
	const struct source_opener *files;
};
int catalog_add_listing(struct catalog *c, const struct catalog_listing *l,
			const struct catalog_opts *o, struct err *e);

/* Escape one path component as the catalog does (see above) into out
 * (cap bytes; 0, or -1 when it does not fit). */
int catalog_escape(const char *name, char *out, size_t cap);

#endif
