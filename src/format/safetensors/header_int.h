/* header_int.h - what header.c (parsing) and header_index.c (validation
 * and the index) share: the parser state and a few helpers.  Private to
 * those two files.
 */
#ifndef STFS_HEADER_INT_H
#define STFS_HEADER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "format/dtype.h"
#include "base/error.h"
#include "format/safetensors/header.h"
#include "format/safetensors/jscan.h"
#include "base/nametab.h"

#define QUOTE_MAX 160		/* bytes of a quoted name inside a message */
#define NUMTEXT_MAX 40		/* bytes of a number's text inside a message */

enum { OK = 0, SCHEMA = 1, FATAL = -1 };

enum field { F_DTYPE, F_SHAPE, F_OFFSETS, F__COUNT };

static const char *const field_name[F__COUNT] = {
	"dtype", "shape", "data_offsets"
};

/* A string in the arena, with its keyed hash (nametab.h). */
struct sref {
	uint64_t hash;
	uint32_t off;
	uint32_t len;
};

struct ptensor {		/* a tensor while parsing */
	struct sref name;
	uint64_t begin, end;
	uint32_t shape_off;
	uint32_t rank;
	uint32_t pos;		/* header byte of its key, for messages */
	uint8_t dtype;
	uint8_t shadowed;	/* a later entry has the same name */
};

struct pmeta {			/* a __metadata__ pair while parsing */
	struct sref key;
	uint32_t voff, vlen;
};

struct hindex {			/* what header->priv points to */
	char *arena;
	uint64_t *pool;
};

struct parser {
	struct jscan js;
	struct jscan_tok tok;
	struct err *e;

	char *arena;		/* capacity n + 1: every decoded string plus its
				   NUL fits in the bytes of its JSON literal */
	size_t alen, acap;
	uint64_t *pool;
	size_t plen, pcap;
	struct ptensor *pt;
	size_t npt, ptcap;
	struct pmeta *pm;
	size_t npm, pmcap;
	struct nametab keys;	/* __metadata__ keys, for duplicates */

	int meta_seen;		/* "__metadata__" key seen (even if null) */
	int has_meta;		/* ... and not null */

	struct {		/* recent shapes in the pool, by hash: models */
		uint32_t off;	/* repeat a few shapes in every layer, so */
		uint32_t rank;	/* most shapes are stored once */
	} shapes[64];

	const char *dt_text;	/* the last dtype string seen, raw, and its */
	size_t dt_len;		/* value: the writer groups tensors by dtype */
	enum dtype dt_last;

	size_t cur;		/* tensor being parsed (index into pt) */
	int deferred;		/* a tensor schema error is held in dmsg */
	char dmsg[ERR_DETAIL_MAX];

	int dup_tensor;		/* first duplicate tensor name: index, pos */
	size_t dup_tensor_idx;
	int dup_meta;		/* first duplicate __metadata__ key */
	size_t dup_meta_idx, dup_meta_pos;
};


/* header.c */
const char *hdr_quote(char *buf, const char *s, size_t len);
int hdr_no_memory(struct parser *p);

/* header_index.c: validate the parsed tensors in the reference's order and
 * build the immutable index.  OK, or FATAL with p->e set. */
int hdr_finish(struct parser *p, uint64_t n, uint64_t file_size,
	       struct header **out);
void hdr_index_free(struct hindex *x);

#endif
