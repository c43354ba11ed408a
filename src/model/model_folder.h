/* model_folder.h - which folder a model's files are in (m->files,
 * model/model_files.h: what MNT/.files/ shows beside its own files).
 *
 * A local model found in a folder, or named by its index, has that
 * folder, read when first looked at; a model named by its URL (http(s)://,
 * an s3:// object) has the names probed beside its URL, and its index; a
 * model of a listing (hf://, s3://) the files the listing gave
 * (catalog_listing.c).  A file named alone (a local path, an hf:// path
 * to one file, an Ollama blob) has none: only itself.
 */
#ifndef STFS_MODEL_FOLDER_H
#define STFS_MODEL_FOLDER_H

struct err;
struct model;
struct source_opener;

/* The local model m opened from path (a file or an index, which names the
 * folder: its directory) gets its folder, read through files (the
 * provider's opener, which must outlive the model), unless path's name
 * is no model's (a blob of an Ollama store: only its own).  0, or -1
 * with *e (ERR_NO_MEMORY). */
int model_folder_local(struct model *m, const struct source_opener *files,
		       const char *path, struct err *e);

/* The model m named by url (a file or an index) gets the names a loader
 * reads beside url probed, and its index, opened through files.  0, or
 * -1 with *e (ERR_NO_MEMORY). */
int model_folder_url(struct model *m, const struct source_opener *files,
		     const char *url, struct err *e);

#endif
