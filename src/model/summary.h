/* summary.h - the summary object printed by `stfs-inspect --json` and
 * served as __summary__.json: one definition for both.
 */
#ifndef STFS_SUMMARY_H
#define STFS_SUMMARY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct model;

/* JSON text (NUL-terminated, malloc'd, trailing newline) of:
 *   {"source", "format": "safetensors", "tensors", "bytes", "header_bytes",
 *    "parameters": {dtype: elements}, "parameters_total", "dtypes": {dtype:
 *    tensors}, "metadata", "shards": [...] (sharded only)}
 * and "tie_word_embeddings": true when config.json beside the model
 * says so (model/model_beside.h: a local folder, an hf:// or s3://
 * listing; the text then has a "tied:" line).  pretty != 0 indents with 2 spaces.  NULL on allocation
 * failure. */
char *summary_json(const struct model *m, int pretty);

/* The same as a JSON value (NULL when out of memory), for a caller that
 * adds to it: text would not parse back when a GGUF metadata key holds
 * a NUL byte, which JSON can write (\u0000) but jansson does not read in
 * a key. */
json_t *summary_value(const struct model *m);

/* The model's __metadata__ as a JSON object, from its header's pairs
 * (a NUL in a key kept) or a sharded set's index; empty when it has
 * none, NULL when out of memory. */
json_t *summary_metadata(const struct model *m);

/* The same, pretty, with "source" saying source (NULL: m->arg). */
char *summary_json_source(const struct model *m, const char *source);

/* The pretty JSON text (trailing newline) of the summary's "shards" entry
 * of shard i of a sharded set: its own totals, "name" and the
 * __metadata__ of its header.  NULL on allocation failure. */
char *summary_shard_json(const struct model *m, size_t shard);

/* A count or a size as JSON: an integer, or past the 2^63 - 1 a JSON
 * integer holds here (only sums over a crafted file's tensors get there;
 * they stop at 2^64 - 1, base/count.h) a number written in floating
 * point, which is not exact.  NULL when out of memory. */
json_t *summary_count_json(uint64_t n);

/* One line (malloc'd) saying what a PyTorch checkpoint's pickle would
 * import and call beyond torch.load(weights_only=True): the first few,
 * where the tree holds them, how many in all; NULL when there are none
 * (or out of memory).  For the mount's warning. */
char *summary_unsafe_warning(const struct model *m);

/* One line for a use (format/table.h): "call posix.system("ls") at
 * payload (REDUCE, byte 45)", in (NULL: none) naming the pickle or shard
 * before the opcode. */
struct unsafe_use;
void summary_print_unsafe_use(FILE *out, const struct unsafe_use *u,
			      const char *in);

/* The same as an object: callable, how, args, where (null: nowhere),
 * opcode, byte; NULL when out of memory. */
json_t *summary_unsafe_use_json(const struct unsafe_use *u);

/* A line per setting that m's quantized weights took without a config
 * (model/quant_model.h: quant_model_assumed(), the weights named
 * "PREFIX." of a derived model when prefix is not NULL), each after
 * lead: "assumed: block [128, 128] for 62 weights (config.json does not
 * say)"; nothing when none took any.  The summary's text has the same
 * lines, aligned. */
void summary_print_assumed(FILE *out, const char *lead, const struct model *m,
			   const char *prefix);

/* Human-readable summary (the --tensors listing is inspect_tensors.c's). */
void summary_print_text(FILE *out, const struct model *m);

/* Print a tensor name for a terminal: as is, or as a JSON string literal
 * with controls escaped when it holds anything that would break a
 * line-per-tensor listing (controls, quotes, spaces, backslashes). */
void summary_print_name(FILE *out, const char *s, size_t len);

/* The same for text whose spaces, quotes and backslashes are its own (a
 * metadata key, a value): a JSON string literal only when it holds a
 * control character, a NUL byte included. */
void summary_print_value(FILE *out, const char *s, size_t len);

#endif
