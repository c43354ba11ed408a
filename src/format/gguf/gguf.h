/* gguf.h - GGUF files (llama.cpp, ggml's docs/gguf.md): container.h's
 * interface for GGUF v2 and v3.
 *
 * The table (table.h) a GGUF file yields:
 *   - tensors in file order; each tensor's shape is ggml's ne[] reversed
 *     (row-major, as numpy and safetensors write it: ne[0], the row, is
 *     the last dimension); dtype from ggml's type number (dtype.h);
 *     begin/end relative to data_start, the aligned start of the data
 *     section; end - begin = numel / block * block_bytes.
 *   - metadata in file order, one pair per key.  A string value is the
 *     string itself (json 0); every other value (numbers, booleans,
 *     arrays, nested arrays) is its JSON text (json 1): numbers as
 *     decimals, booleans as true/false, non-finite floats as the strings
 *     "nan", "inf", "-inf", u64 values past 2^63 - 1 as decimal strings
 *     (JSON readers such as jansson stop at 2^63 - 1).
 *   - header_len: bytes before the data section.
 *
 * Refused, in one line naming the field: a magic other than "GGUF" (what
 * was found, in text and bytes; llama.cpp's formats before GGUF by name),
 * versions other than 2 and 3, counts that cannot fit in the file,
 * strings running past the file's end or not UTF-8, unknown value types,
 * arrays nested deeper than GGUF_MAX_DEPTH, duplicate keys and tensor
 * names, general.alignment not a u32 power of two multiple of
 * 8 (the spec wants a multiple of 8, ggml a power of two), more than 4 dims,
 * element counts past 2^63, unknown ggml types (by number), rows not a
 * whole number of blocks, offsets not aligned, data past the file's end,
 * overlapping tensors.  Time and memory are linear in the file's header:
 * nothing is allocated from a count before the count is checked against
 * the bytes left in the file.
 */
#ifndef STFS_GGUF_H
#define STFS_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "format/table.h"

struct err;

#define GGUF_MAX_DEPTH 8		/* arrays of arrays of ... */
#define GGUF_MAX_DIMS 4			/* ggml's GGML_MAX_DIMS */
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_META_TEXT_MAX (1ULL << 30)	/* metadata rendered as text */

/* llama.cpp's name of a general.file_type value (its llama_ftype, without
 * "MOSTLY_"): 15 -> "Q4_K_M"; NULL for a number llama.cpp does not name. */
const char *gguf_file_type_name(uint64_t file_type);

/* container.h's claims(): the file starts with "GGUF", with the magic
 * of llama.cpp's formats before GGUF (so that gguf_read() names it), or
 * with 4 bytes and then what reads as a GGUF version and tensor count (a
 * damaged magic). */
int gguf_claims(const unsigned char *head, size_t n, uint64_t size);

/* container.h's open(): read the header and the tensor infos through r
 * in chunks; 0 with *out set, or -1 with *e (ERR_INVALID_GGUF, ERR_IO,
 * ERR_NO_MEMORY) named after r->name. */
int gguf_read(const struct reader *r, struct header **out, struct err *e);

#endif
