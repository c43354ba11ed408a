/* torch_zip.h - the zip archive of a PyTorch checkpoint, read through a
 * struct reader (format/reader.h), never extracted.
 *
 * torch.save (1.6 and later) writes a zip whose entries are all stored
 * (not compressed): NAME/data.pkl (the pickle), NAME/data/KEY (one per
 * storage), NAME/version and, from 2.1, NAME/byteorder; NAME is the file's
 * stem in older versions and "archive" in newer ones.  A storage is then a
 * run of bytes of the checkpoint file itself, which is what makes a tensor
 * a byte range of the file.
 *
 * The central directory (found from its end record, zip64's when there
 * are more than 65,535 entries, as torch.save writes for 100,000 tensors)
 * is read through a window, and each entry kept in 40 bytes and its name
 * (libzip, used before, kept about 260 bytes an entry and its own copy of
 * the directory: 26 MB of a mount of 100,000 tensors, issue 38).  An
 * entry's local header is read and checked (signature, method, name) when
 * the entry is located, which gives where its data starts.  The pickle,
 * data.pkl, is read as a stream (torch_zip_stream_open), so that it may be
 * deflated too, as torch.load allows (zlib inflates it, and its CRC-32 is
 * checked): it is read in order, and never served.
 */
#ifndef STFS_TORCH_ZIP_H
#define STFS_TORCH_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

struct err;
struct torch_zip;

/* Open the archive in r (kept, not copied: it must outlive the archive).
 * 0 with *out, or -1 with *e (not named: the caller names the file). */
int torch_zip_open(const struct reader *r, struct torch_zip **out,
		   struct err *e);
void torch_zip_free(struct torch_zip *z);

/* The folder every entry lives in ("archive", "pytorch_model"), found as
 * the folder of the one entry named FOLDER/data.pkl; NULL when there is
 * none. */
const char *torch_zip_folder(const struct torch_zip *z);

/* 1 when the archive holds FOLDER/name. */
int torch_zip_has(const struct torch_zip *z, const char *name);

/* Where the bytes of entry NAME (FOLDER/name) are in the file: 0 with *off
 * and *len, or -1 with *e (no such entry, compressed, a local header that
 * does not match, a range past the end). */
int torch_zip_locate(struct torch_zip *z, const char *name, uint64_t *off,
		     uint64_t *len, struct err *e);

/* An entry read in order. */
struct torch_zip_stream;

/* Open entry NAME (FOLDER/name) to read its bytes in order, stored or
 * deflated (zlib inflates): what torch.load reads, for the pickle,
 * which need not lie in place.  0 with *out and its size in *len, or -1
 * with *e (no such entry, encrypted or compressed otherwise, a local
 * header that does not match, a range past the end). */
int torch_zip_stream_open(struct torch_zip *z, const char *name,
			  struct torch_zip_stream **out, uint64_t *len,
			  struct err *e);

/* The next n bytes, no more than are left of the size: 0, or -1 with *e
 * (the reader's I/O error, damaged deflated data, fewer bytes than the
 * size), which does not name the entry: the caller does. */
int torch_zip_stream_read(struct torch_zip_stream *s, void *buf, size_t n,
			  struct err *e);

void torch_zip_stream_close(struct torch_zip_stream *s);

#endif
