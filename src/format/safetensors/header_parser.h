/* header_parser.h - the state header.c (parsing) fills and hands to
 * header_index.c (validation and the table).  Private to those two files;
 * calls go one way only: header.c calls header_index_build() once the JSON
 * is read, header_index.c calls nothing of header.c.
 */
#ifndef STFS_HEADER_PARSER_H
#define STFS_HEADER_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"
#include "base/error.h"
#include "format/safetensors/header.h"
#include "format/safetensors/jscan.h"
#include "base/nametab.h"

#define QUOTE_MAX 160		/* bytes of a quoted name inside a message */

/* A string in the arena, with its keyed hash (nametab.h). */
struct arena_span {
	uint64_t hash;
	uint32_t off;
	uint32_t len;
};

struct parsed_tensor {		/* a tensor while parsing */
	struct arena_span name;
	uint64_t begin, end;
	uint32_t shape_off;
	uint32_t rank;
	uint32_t pos;		/* header byte of its key, for messages */
	uint8_t dtype;
	uint8_t shadowed;	/* a later entry has the same name */
};

struct parsed_meta {			/* a __metadata__ pair while parsing */
	struct arena_span key;
	uint32_t voff, vlen;
};

struct header_parser {
	struct jscan js;
	struct jscan_tok tok;
	struct err *e;

	char *arena;		/* capacity n + 1: every decoded string plus its
				   NUL fits in the bytes of its JSON literal */
	size_t arena_len, arena_cap;
	uint64_t *pool;		/* every shape's dimensions */
	size_t pool_len, pool_cap;
	struct parsed_tensor *tensors;	/* in header order */
	size_t ntensors, tensors_cap;
	struct parsed_meta *meta;	/* __metadata__ pairs, in header order */
	size_t nmeta, meta_cap;
	struct nametab keys;	/* __metadata__ keys, for duplicates */

	int meta_seen;		/* "__metadata__" key seen (even if null) */
	int has_meta;		/* ... and not null */

	struct {		/* recent shapes in the pool, by hash: models */
		uint32_t off;	/* repeat a few shapes in every layer, so */
		uint32_t rank;	/* most shapes are stored once */
	} shapes[64];

	const char *last_dtype_text;	/* the last dtype string seen, raw, */
	size_t last_dtype_len;		/* and its value: the writer groups */
	enum dtype last_dtype;		/* tensors by dtype */

	size_t cur;		/* tensor being parsed (index into tensors) */
	int deferred;		/* a tensor schema error is held back: */
	char deferred_msg[ERR_DETAIL_MAX];

	int dup_tensor;		/* first duplicate tensor name: index, pos */
	size_t dup_tensor_idx;
	int dup_meta;		/* first duplicate __metadata__ key */
	size_t dup_meta_idx, dup_meta_pos;
};

/* A tensor name or key, quoted for a message, in buf (QUOTE_MAX bytes;
 * err_quote never writes past its cap). */
static inline const char *
quote_name(char *buf, const char *s, size_t len)
{
	return err_quote(buf, QUOTE_MAX, s, len);
}

/* Validate the parsed tensors in the reference's order and build the
 * table, taking over the arena and the shape pool.  0, or -1 with p->e
 * set. */
int header_index_build(struct header_parser *p, uint64_t n,
		       uint64_t file_size, struct header **out);

#endif
