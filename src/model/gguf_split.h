/* gguf_split.h - GGUF split sets (llama.cpp's gguf-split):
 * NAME-00001-of-00003.gguf ... NAME-00003-of-00003.gguf as one model.
 *
 * Every part is a GGUF file of its own; each says split.no (0-based) and
 * split.count in its metadata, the first holds the model's metadata.  The
 * parts' tensors are merged in part order; a name in two parts, a part
 * missing, or a part whose split.no / split.count disagree with its name
 * is refused in one line naming the part.
 *
 * A part is never a model alone: a GGUF file whose split.count is 2 or
 * more, but is not named as a part (renamed, an Ollama blob), is refused
 * saying which part it is and how to mount the set (gguf_split_whole),
 * unless its siblings are known for sure: an Ollama manifest listing the
 * parts as its model layers (model_open.c) opens them as the set
 * (gguf_split_open_parts).
 */
#ifndef STFS_GGUF_SPLIT_H
#define STFS_GGUF_SPLIT_H

#include <stddef.h>

struct err;
struct model;
struct source_opener;

/* Open the split set path belongs to (any of its parts: which names are
 * split sets is format/naming.h's), every part through op.  arg names the
 * model in messages and the summary.  0 with *out set, or -1 with *e. */
int gguf_split_open(const struct source_opener *op, const char *arg,
		    const char *path, struct model **out, struct err *e);

/* The same for the n >= 2 parts at paths, whatever their names, in any
 * order: each part's split.no places it, and its split.count must be n. */
int gguf_split_open_parts(const struct source_opener *op, const char *arg,
			  const char *const *paths, size_t n,
			  struct model **out, struct err *e);

/* 1 when the table h is a part of a GGUF split set (its split.count is 2
 * or more), else 0. */
struct header;
int gguf_split_part(const struct header *h);

/* 0 when h is a whole model (not a part); else -1 with *e
 * (ERR_INVALID_GGUF) saying which part of how many it is and how to mount
 * the set. */
int gguf_split_whole(const struct header *h, struct err *e);

#endif
