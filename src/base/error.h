/* error.h - error kinds and the one-line error record shared by every layer.
 *
 * Validation errors carry the reference reader's error name (the Rust
 * `SafeTensorError` variant), the tensor name when one is involved, and a
 * human sentence.  Front ends print them as "FILE: Name: detail".
 */
#ifndef STFS_ERROR_H
#define STFS_ERROR_H

#include <stddef.h>

enum err_code {
	ERR_OK = 0,
	/* the reference reader's error kinds, in the order it checks them */
	ERR_HEADER_TOO_SMALL,
	ERR_HEADER_TOO_LARGE,
	ERR_INVALID_HEADER_LENGTH,
	ERR_INVALID_HEADER,			/* header is not UTF-8 */
	ERR_INVALID_HEADER_DESERIALIZATION,	/* JSON grammar or schema */
	ERR_INVALID_OFFSET,
	ERR_VALIDATION_OVERFLOW,
	ERR_MISALIGNED_SLICE,
	ERR_TENSOR_INVALID_INFO,
	ERR_METADATA_INCOMPLETE_BUFFER,
	/* stfs's own kinds */
	ERR_IO,			/* could not open/read the source (exit 2) */
	ERR_NO_MEMORY,
	ERR_INVALID_INDEX,	/* sharded index: bad JSON, bad shard name, ... */
	ERR_USAGE,
	ERR_INVALID_PICKLE,	/* a pickle stfs will not read (format/torch) */
	ERR_INVALID_CHECKPOINT,	/* a PyTorch checkpoint's zip or layout */
	ERR_INVALID_GGUF,	/* a GGUF file stfs refuses (format/gguf) */
	ERR__COUNT
};

#define ERR_DETAIL_MAX 512

struct err {
	enum err_code code;
	char where[256];		/* file (or shard, or URL) concerned */
	char detail[ERR_DETAIL_MAX];	/* human sentence, tensor name quoted */
};

/* "HeaderTooSmall", ... ; "IoError" for ERR_IO. */
const char *err_name(enum err_code code);

/* The protocol, the same in every layer:
 *
 * - A function that fails records what went wrong with err_set() where it
 *   is seen, and returns -1 (or NULL).  The first error recorded is the
 *   one reported: callers on the way out never overwrite it.
 * - The file (path, URL, shard) an error is about is named on the way out
 *   with err_at(), by the innermost function that knows it: it fills
 *   where only when an error is set and not yet named.  Nothing is
 *   written to *e on success, so a struct err can be passed through any
 *   number of successful steps and still be ERR_OK with no where.
 * - err_replace() re-classifies an error on purpose (a server's fault
 *   found after the parser blamed the file); err_clear() forgets an
 *   error that was handled (a retry that may still succeed). */

/* Record an error unless one is recorded already.  Returns -1 so callers
 * can write `return err_set(...)`. */
int err_set(struct err *e, enum err_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Replace the recorded error (its where stays).  Returns -1. */
int err_replace(struct err *e, enum err_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Forget the recorded error and its where. */
void err_clear(struct err *e);

/* Name the file the recorded error is about, when one is recorded and not
 * yet named (URLs lose their user info, query and fragment).  Returns -1
 * so an error path can end with `return err_at(e, path);`. */
int err_at(struct err *e, const char *where);

/* Append a tensor name to a buffer as a quoted, escaped, bounded string
 * (names may hold NUL, control bytes or be 64 KiB long).  Writes at most
 * cap bytes including the terminating NUL; returns buf. */
char *err_quote(char *buf, size_t cap, const char *name, size_t len);

/* Print "WHERE: Name: detail\n" to stderr (prefix "stfs: " style left to
 * the caller via prog, which may be NULL). */
void err_print(const char *prog, const struct err *e);

/* The front ends' exit status for an error: 2 for usage, I/O and memory
 * problems, 1 for an invalid file or set. */
int err_exit_status(enum err_code code);

#endif
