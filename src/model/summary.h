/* summary.h - the summary object printed by `stfs-inspect --json` and
 * served as __summary__.json: one definition for both.
 */
#ifndef STFS_SUMMARY_H
#define STFS_SUMMARY_H

#include <stdio.h>

struct model;

/* JSON text (NUL-terminated, malloc'd, trailing newline) of:
 *   {"source", "format": "safetensors", "tensors", "bytes", "header_bytes",
 *    "parameters": {dtype: elements}, "parameters_total", "dtypes": {dtype:
 *    tensors}, "metadata", "shards": [...] (sharded only)}
 * pretty != 0 indents with 2 spaces.  NULL on allocation failure. */
char *summary_json(const struct model *m, int pretty);

/* The same with, when tensors != 0, a "tensor_list" array: one object
 * per tensor (name, dtype, shape, data_offsets, offset[, shard]). */
char *summary_json_ex(const struct model *m, int pretty, int tensors);

/* Human-readable summary; with tensors != 0 one line per tensor. */
void summary_print_text(FILE *out, const struct model *m, int tensors);

/* 1 when config.json in the model's directory says
 * "tie_word_embeddings": true (local sources only); the summary then has
 * "tie_word_embeddings": true and the text a "tied:" line. */
int summary_tied(const struct model *m);

/* Print a tensor name for a terminal: as is, or as a JSON string literal
 * with controls escaped when it holds anything that would break a
 * line-per-tensor listing (controls, quotes, spaces, backslashes). */
void summary_print_name(FILE *out, const char *s, size_t len);

#endif
