/* model.h - what a SOURCE argument names: one safetensors file, or a
 * sharded set (model.safetensors.index.json, or a directory holding one),
 * merged into one table of tensors.  Everything is validated before
 * model_open() returns; nothing is mounted by this layer.
 */
#ifndef STFS_MODEL_H
#define STFS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "format/safetensors/header.h"
#include "format/tensor_size.h"
#include "source/source.h"

struct err;

struct shard {
	char *name;		/* file name as in the index (or the basename) */
	struct source *src;
	struct header *hdr;
	int borrowed;		/* src is another model's (a derived model,
				   model/quant_model.h): not closed here */
};

/* A config beside a model of a listing, fetched at mount
 * (model/model_beside.h). */
struct model_beside {
	struct model_beside *next;
	char *name;		/* "config.json", "quantize_config.json" */
	char *text;		/* its bytes */
	size_t len;
};

struct model_tensor {
	const struct tensor *t;	/* owned by shards[shard].hdr */
	uint32_t shard;
};

struct model {
	char *arg;		/* SOURCE as given */
	int sharded;		/* 1 when opened through an index */
	char *index_path;	/* the index file (sharded only) */

	size_t nshards;
	struct shard *shards;

	size_t ntensors;
	struct model_tensor *tensors;	/* shard order, then file order */

	/* The __metadata__.json content: the file's __metadata__ object
	 * ("{}" when absent) or, for a sharded set, the index's "metadata". */
	char *metadata_json;

	/* listed: a model of a listing (hf://, s3://), whose configs are
	 * beside, fetched at mount, and nothing else (model_beside.h). */
	int listed;
	struct model_beside *beside;

	/* The files of its folder (model/model_files.h: MNT/.files/), a
	 * reference; NULL: it has only its own (a file named alone). */
	struct model_files *files;
	uint64_t index_size;	/* the index file's bytes (sharded only) */
};

/* Open SOURCE: a .safetensors file, an index file, or a directory holding
 * an index (or exactly one .safetensors file), a URL of one, an hf:// or
 * s3:// SOURCE holding one model (each through its provider,
 * model/provider.h), the shards' headers counted on meter (may be NULL;
 * base/meter.h).  0 or -1 with *e.  Defined in provider.c, the one place
 * that dispatches on a SOURCE's scheme. */
struct meter;
int model_open(const char *source, struct meter *meter, struct model **out,
	       struct err *e);

/* A local path (a .safetensors file, an index, a directory holding an
 * index or one file) or a URL of a file or an index, as one model; files
 * opens the files they name (model_open.c). */
int model_open_path(const struct source_opener *files, const char *path,
		    struct model **out, struct err *e);
int model_open_url(const struct source_opener *files, const char *url,
		   struct model **out, struct err *e);

/* One file as a model, opened through op (a provider's opener, or a
 * listing's), its format sniffed (format/sniff.h).  0 or -1 with *e
 * naming name. */
struct source_opener;
int model_open_file(const struct source_opener *op, const char *name,
		    struct model **out, struct err *e);

/* Pretty JSON object of a header's metadata pairs, in header order (GGUF's
 * typed values as their JSON, table.h); NULL when out of memory. */
char *model_render_metadata(const struct header *h);

/* The header of one shard of a set (container_open() on src, the server
 * blamed when it is at fault), counted on meter (may be NULL) with the
 * bytes it took to read: a set of many shards over a slow link says how
 * far it has got (base/meter.h).  0 or -1 with *e. */
int model_read_header(struct source *src, struct meter *meter,
		      struct header **out, struct err *e);

/* Wrap an already parsed single file (takes ownership of src and h). */
int model_from_single(const char *arg, struct source *src, struct header *h,
		      struct model **out, struct err *e);

/* Absolute byte offset of a tensor in its shard's source. */
static inline uint64_t
model_tensor_offset(const struct model *m, const struct model_tensor *mt)
{
	return m->shards[mt->shard].hdr->data_start + mt->t->begin;
}

/* Bytes of the tensor's file: its byte range, or for a strided view
 * (table.h) its elements gathered in C order (format/tensor_size.h: no
 * more than 2^62, checked when the file was opened). */
static inline uint64_t
model_tensor_nbytes(const struct model_tensor *mt)
{
	return tensor_size_bytes(mt->t);
}

/* Bytes [off, off + len) of the tensor's file (model_tensor_nbytes) into
 * dst, gathered for a strided view (model/tensor_render.h); all of them,
 * or -errno.  Does not verify the source (source_verify). */
int model_tensor_read(const struct model *m, const struct model_tensor *mt,
		      uint64_t off, size_t len, void *dst);

/* A tensor of a model, as the arg of the two read callbacks below (both
 * of the shape tensor_render_read_fn: 0 or -errno). */
struct model_tensor_at {
	const struct model *m;
	const struct model_tensor *mt;
};

/* Bytes [off, off + len) of the tensor's stored range (as rendered views
 * read it: tensor_render_read), off counted from its first byte. */
int model_tensor_read_stored(void *at, uint64_t off, size_t len, void *dst);

/* Bytes [off, off + len) of the tensor's file (model_tensor_read). */
int model_tensor_read_file(void *at, uint64_t off, size_t len, void *dst);

struct nametab;

/* Fill m->tensors from its shards' tables, in shard order, each name put
 * in tab (left initialised for the caller, who frees it).  0; -1 out of
 * memory (ERR_NO_MEMORY in *e); -2 more than NAMETAB_ID_MAX tensors (*e
 * untouched); 1 when a name is in two shards: m->tensors[m->ntensors] is
 * the second one, *first the index of the earlier (*e untouched, so the
 * caller words it: an index or a split set). */
int model_merge_shards(struct model *m, struct nametab *tab, size_t *first,
		       struct err *e);

/* Watch every shard's source with w (NULL: nobody), and the files of its
 * folder opened later; source.h. */
void model_watch(const struct model *m, const struct source_watch *w);

void model_free(struct model *m);

#endif
