/* model_beside.h - the small files beside a model that say how to read
 * its tensors (format/naming.h's naming_config: config.json,
 * quantize_config.json), for those who read them (model/quant_config.h,
 * the tied embeddings of model/summary.h).
 *
 * A local model's are read from its folder (the folder of its first file
 * or of its index) when asked for.  A model of a listing (hf://, s3://)
 * has no folder to read later: the listing's configs beside it are
 * fetched at mount with its files (catalog_listing.c hands them to the
 * provider's open-ahead: one small GET each, in the same round as the
 * headers) and kept in the model (struct model's beside, a few KiB).  A
 * model named by its URL (http(s)://, an s3:// object, an hf:// file) has
 * no folder stfs can list: its configs are unknown.
 */
#ifndef STFS_MODEL_BESIDE_H
#define STFS_MODEL_BESIDE_H

#include <stddef.h>

struct err;
struct json_t;
struct model;
struct source_opener;

/* A config is a few KiB: a larger file is not loaded by mistake. */
#define MODEL_BESIDE_MAX (1u << 24)

/* The JSON object of the config called name beside m (a jansson json_t,
 * the caller's reference) in *out, or NULL: none, unreadable, not an
 * object, larger than MODEL_BESIDE_MAX.  0, or -1 when out of memory:
 * then what the config says is unknown, not absent (*out NULL). */
int model_beside_json(const struct model *m, const char *name,
		      struct json_t **out);

/* 1 when m's configs can be known (a local model, a model of a listing),
 * 0 for a model named by its URL. */
int model_beside_known(const struct model *m);

/* For a model of a listing: from now on its configs are the ones fetched
 * here, nothing else.  The config called name is read through op by url
 * (NULL: the listing has none) and kept in m; one that cannot be read is
 * kept as absent.  The source op hands out is given back (another model
 * of the folder reads it again without a request).  0, or -1 with *e
 * (ERR_NO_MEMORY). */
int model_beside_fetch(struct model *m, const struct source_opener *op,
		       const char *name, const char *url, struct err *e);

/* The configs of m kept in d too (a model derived from m, quant_model.h).
 * 0, or -1 with *e (ERR_NO_MEMORY). */
int model_beside_copy(struct model *d, const struct model *m,
		      struct err *e);

#endif
