/* model_files.h - the files of a model's folder as they are at the
 * source: what MNT/.files/ shows (view/view_files.c, issue 36).
 *
 * A folder holds files, each by its path below the folder ('/'-separated,
 * no empty, "." or ".." component, no component starting with '.'), with
 * its size, whether it is a model file (naming_shown() in its folder, or
 * a split set's later part: the view shows those only as a model's own)
 * and where its bytes are: in memory (a config fetched at mount,
 * model_beside.h) or in a source opened on the first read through the
 * folder's opener (the provider's, which outlives the mount's opening: a
 * local path, a URL, an object pinned to the ETag its listing gave).
 * Three kinds:
 *
 *   local    a directory, scanned on the first use (a mount costs
 *            nothing): its files, and those of its subdirectories that
 *            hold no model file at any depth (they are other models'
 *            folders), symlinks followed (a hub cache snapshot links
 *            into blobs/), names starting with '.' left out, at most
 *            MODEL_FILES_MAX files and MODEL_FILES_DEPTH levels
 *   listed   the files a listing gave at mount (hf://, s3://), each with
 *            its size
 *   probed   the folder of a model named by its URL, which nobody can
 *            list: the names a loader reads beside a model (config.json,
 *            generation_config.json, the tokenizer's files), each there
 *            or not as an open of it says, on the first look at it (a
 *            name that cannot be opened then is absent for the mount's
 *            life), plus the files added (the index the URL names)
 *
 * A tree's folder (model_files_set_tree: the root of a mount that holds
 * several models, a diffusers pipeline's) is all of it: a local scan
 * keeps the subdirectories that hold models too, and it shows its model
 * files (model_files_is_tree), within the same bounds.
 *
 * A folder is shared by the models found in it (model_files_ref).  The
 * list is fixed once built; a file's source is opened once, by the first
 * reader, and kept; a source that is not the size listed is refused
 * (-EIO: the file changed since it was listed).  Thread-safe: building
 * takes the folder's lock, an open the lock of its stripe.  Knows no
 * model: the catalog says which folder a model is in, the view which of
 * its files a model shows.
 */
#ifndef STFS_MODEL_FILES_H
#define STFS_MODEL_FILES_H

#include <stddef.h>
#include <stdint.h>

struct source;
struct source_opener;
struct source_watch;

#define MODEL_FILES_MAX		100000
#define MODEL_FILES_DEPTH	64
#define MODEL_FILES_UNKNOWN	UINT64_MAX	/* a size not listed */

enum model_files_kind {
	MODEL_FILES_LOCAL,
	MODEL_FILES_LISTED,
	MODEL_FILES_PROBED,
};

struct model_files;

/* A folder of kind k: where is a local folder's path, or the URL of a
 * probed folder (ending in '/'; NULL for a listed one), op the opener of
 * its files (copied without its meter: it must outlive the folder).
 * NULL when out of memory. */
struct model_files *model_files_new(enum model_files_kind k, const char *where,
				    const struct source_opener *op);

/* Make f a tree's folder (see above), before its first use; 1 when it
 * is one. */
void model_files_set_tree(struct model_files *f);
int model_files_is_tree(const struct model_files *f);

/* Add a file to a listed or probed folder before its first use: its path
 * rel, its bytes text[0..len) (copied) when text is not NULL, else the
 * name op opens it by, pinned to etag (NULL: none), of size bytes
 * (MODEL_FILES_UNKNOWN: learned when it is opened).  model: 1 when a
 * model is made of it.  A path that is not valid (see above) is left
 * out.  0, or -1 when out of memory. */
int model_files_add(struct model_files *f, const char *rel, const char *name,
		    const char *etag, uint64_t size, const char *text,
		    size_t len, int model);

/* 1 when rel is a path a folder may show: components of 1 to 255 bytes,
 * none empty or starting with '.'. */
int model_files_path_ok(const char *rel);

/* One more user of f (returned), and one less (freed with the last). */
struct model_files *model_files_ref(struct model_files *f);
void model_files_unref(struct model_files *f);

/* Watch the sources opened from now on with w (source.h). */
void model_files_watch(struct model_files *f, const struct source_watch *w);

/* The files, sorted by path (strcmp): the list built on the first call
 * (a local folder scanned).  0 with *n, or -ENOMEM (the next call tries
 * again). */
int model_files_list(struct model_files *f, size_t *n);

/* Of file i < n, once listed: its path; 1 when it is a model file; 1
 * when it is a probed name (there or not: model_files_size says). */
const char *model_files_rel(const struct model_files *f, size_t i);
int model_files_is_model(const struct model_files *f, size_t i);
int model_files_is_probed(const struct model_files *f, size_t i);

/* The size of file i, known from the listing or the scan, else learned
 * by opening it.  0 with *size, -ENOENT (a probed name that is not
 * there), -EIO (it cannot be opened now, or it changed). */
int model_files_size(struct model_files *f, size_t i, uint64_t *size);

/* Probe every probed name not yet tried, all at once (a listing of the
 * folder). */
void model_files_probe_all(struct model_files *f);

/* Where file i's bytes are: *text (its *len bytes, living as long as f)
 * or *src (opened now if need be; owned by f).  0 with one of them set,
 * -ENOENT, -EIO. */
int model_files_bytes(struct model_files *f, size_t i, const char **text,
		      size_t *len, struct source **src);

/* File i's source when it was opened, else NULL. */
struct source *model_files_opened(const struct model_files *f, size_t i);

/* The owner (st_uid, st_gid), mode (st_mode) and times (st_mtim,
 * st_ctim) of file i: a local folder's as its scan saw them, else its
 * source's once opened.  0, or -1 when not known (nothing is opened to
 * know them). */
struct stat;
int model_files_attr(const struct model_files *f, size_t i, struct stat *st);

#endif
