/* table.h - the table any tensor container yields (container.h): the
 * tensors' names, dtypes, shapes and byte ranges, and the metadata.
 * Immutable once built; freed with container_free().  Types only.
 */
#ifndef STFS_TABLE_H
#define STFS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"

struct tensor {
	const char *name;	/* unescaped UTF-8; may contain NUL; also
				   NUL-terminated for convenience */
	uint32_t name_len;
	enum dtype dtype;
	uint32_t rank;
	/* A PyTorch quantized tensor (its integers): 1 + the index in the
	 * header's meta[] of its NAME.__quantizer__; else 0. */
	uint32_t quantizer;
	const uint64_t *shape;	/* rank entries */
	uint64_t begin, end;	/* byte range, relative to data_start */
	uint64_t numel;		/* product of shape (1 for rank 0) */
	/* A view of a storage other tensors may share (PyTorch; tied
	 * weights share one): the storage's key (NUL-terminated; one pointer
	 * per storage, so tensors of one storage have equal pointers) and
	 * the view's first element, in elements.  NULL and 0 for formats
	 * without storages. */
	const char *storage;
	uint64_t storage_offset;
	/* NULL: [begin, end) holds the tensor's bytes in C order.  Else a
	 * strided view (a transpose, a slice with a step): rank strides in
	 * elements, [begin, end) the run of the storage it reaches from its
	 * first element on, and its bytes (numel elements) are gathered from
	 * it in C order when served (model/tensor_render.h). */
	const uint64_t *strides;
};

struct meta_pair {		/* metadata, as text */
	const char *key;	/* NUL-terminated, may contain NUL */
	uint32_t key_len;
	const char *val;
	uint32_t val_len;
	int json;		/* 1: val is JSON text (GGUF's numbers,
				   booleans, arrays), 0: a string */
};

/* What loading the file in Python would import or call beyond what
 * torch.load(weights_only=True) allows: PyTorch's pickles only
 * (format/torch/pickle_unsafe.h); safetensors and GGUF hold no code. */
struct unsafe_use {
	const char *callable;	/* "posix.system"; "builtins.getattr(...)"
				   for what a call returned */
	const char *how;	/* "call" (REDUCE, OBJ, INST: callable(*args)),
				   "new" (NEWOBJ: cls.__new__(cls, *args)),
				   "import" (a global never called) */
	const char *args;	/* the arguments as JSON, cut with "..." past
				   a few hundred bytes; "" for an import */
	const char *where;	/* the name where the tree holds what it
				   made, as the flattened names and
				   {"__ref__": ...} write them ("" the root);
				   NULL: nowhere (dropped, or the pickle
				   broke off) */
	const char *op;		/* its opcode: "REDUCE", "NEWOBJ", ... */
	uint64_t at;		/* the opcode's byte in the pickle */
};

/* The table any container yields (the name is safetensors' own: there
 * the table is the file's header). */
struct header {
	uint64_t header_len;	/* safetensors: n, the 8-byte little-endian
				   prefix; other formats: bytes before the
				   data section */
	uint64_t data_start;	/* where the tensors' ranges count from */
	uint64_t file_size;
	uint64_t data_len;	/* end of the last tensor */

	size_t ntensors;
	struct tensor *tensors;	/* sorted by byte range: file order */

	int has_metadata;	/* the file has a metadata section */
	size_t nmeta;
	struct meta_pair *meta;	/* in file order */

	const char *format;	/* the format's name in container.c's table:
				   "safetensors", "gguf" (container_open) */
	/* PyTorch: what its pickle imports and calls beyond the weights only
	 * mode (the first nunsafe of unsafe_total met; one allocation,
	 * array and strings, freed with free()) */
	size_t nunsafe;
	struct unsafe_use *unsafe;
	uint64_t unsafe_total;
	void *priv;		/* the format's storage for names and shapes */
	void (*free_priv)(void *priv);
};

#endif
