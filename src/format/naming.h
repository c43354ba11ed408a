/* naming.h - what a file's name says it is, by the formats' naming
 * conventions: the one rule for which files are models, wherever models
 * are found (a local folder, a hub cache, an hf:// or s3:// listing, an
 * s3:// URL that names an object or a prefix).
 *
 * A file's bytes decide its format (container.h); its name decides its
 * role among the files beside it:
 *
 *   *.safetensors               a model (a shard, when an index names it)
 *   *.safetensors.index.json    an index: the model its shards make
 *   *.gguf                      a model; of a split set
 *                               NAME-0000K-of-0000N.gguf the first part
 *                               (which opens the others), the rest parts
 *   pytorch_model*.bin          a model that yields (below)
 *   *.bin.index.json            an index that yields
 *   other *.bin, *.pt, *.pth,   a checkpoint: a model when named, never
 *   *.ckpt                      one of a folder (optimizer.pt,
 *                               training_args.bin: some are no state dict;
 *                               Lightning's epoch=3-step=60.ckpt)
 *
 * Models that yield (PyTorch weights) are models of a folder only when it
 * holds no model that does not: a Hub repository that ships both formats
 * is its safetensors files.  A new format adds its names to the table in
 * naming.c, and every place that finds models follows (and
 * container_open(), for a file whose bytes no format claims).
 */
#ifndef STFS_NAMING_H
#define STFS_NAMING_H

#include <stddef.h>

enum naming_role {
	NAMING_NONE = 0,	/* no format's name */
	NAMING_MODEL,		/* a model of its own */
	NAMING_INDEX,		/* names the shards beside it */
	NAMING_PART,		/* a later part of a GGUF split set */
	NAMING_CHECKPOINT,	/* a model only when named by its path */
};

struct naming {
	enum naming_role role;
	int yields;		/* 1: a model of a folder only where no model
				   that does not yield is (see above) */
	size_t suffix;		/* bytes at the end of the name a model's
				   directory leaves out (".safetensors",
				   "-00001-of-00003.gguf") */
	unsigned part, parts;	/* a GGUF split set's K and N, else 0 */
	const char *reader;	/* the format (container.c's name) that
				   reads a file so named when no format
				   claims its bytes, so that a damaged magic
				   number gets its error; NULL: the first */
};

/* container.c's name of the format that reads PyTorch's names. */
#define NAMING_TORCH "PyTorch checkpoint"

/* What the last component of path (a file name, a path, a URL, an object
 * key) says; *out filled, its role returned. */
enum naming_role naming_of(const char *path, struct naming *out);

/* 1 when a listing of files (hf://, s3://) keeps the file at path: a
 * model, an index or a split set's part (opened by its first part), or
 * a config beside models (naming_config). */
int naming_listed(const char *path);

/* 1 when the last component of path is a file beside models that says
 * how to read their tensors: config.json (its quantization_config,
 * tie_word_embeddings) or quantize_config.json (AutoGPTQ's, AutoAWQ's).
 * Never a model itself. */
int naming_config(const char *path);

/* 1 when a folder shows the file name as a model (or an index): a model
 * or an index that does not yield, or one that yields in a folder
 * without strong models (strong: naming_strong() of the folder's file
 * names).  The one rule of local folders and listings alike. */
int naming_shown(const char *name, int strong);

/* 1 when some name of names[0..n) is shown even beside a model that does
 * not yield: the folder holds a model that does not yield. */
int naming_strong(const char *const *names, size_t n);

/* The names of models, for messages: "no model (NAMING_WHAT) under ...". */
#define NAMING_WHAT "*.safetensors, *.gguf, pytorch_model*.bin or " \
		    "*.index.json"

#endif
