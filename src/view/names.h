/* names.h - tensor name -> file name encoding.
 *
 * A tensor name is any UTF-8 byte string (it may hold '/', NUL or control
 * bytes, be empty, or be 64 KiB long); a file name is a non-empty string
 * of at most 255 bytes without '/' or NUL.  Each tensor becomes a data
 * file named names_encode(name) and a sidecar named that plus ".json", so
 * encoded names stay within NAMES_MAX = 250 bytes.  The rules, in order:
 *
 *   1. the bytes '/', '%', 0x00-0x1F and 0x7F become %XX (uppercase hex);
 *      every other byte, including UTF-8 above 0x7F, is kept as is;
 *   2. a leading '.' becomes %2E: no hidden files, no "." or "..";
 *   3. in a name ending in ".json" that '.' becomes %2E, so that only
 *      sidecars end in ".json";
 *   4. a name that (after 1-3) starts with "__" and ends with "__" has its
 *      first '_' written %5F: names of the form __*__ are stfs's own
 *      (__metadata__.json, __summary__.json);
 *   5. the empty name is written "%" (a lone percent, which no other rule
 *      produces since rule 1 always escapes '%');
 *   6. an encoded name longer than 250 bytes keeps its longest prefix of
 *      at most 200 bytes that splits neither a %XX escape nor a UTF-8
 *      sequence, followed by "%~" and the 16 lowercase hex digits of the
 *      64-bit FNV-1a hash of the whole tensor name.
 *
 * Rules 1-5 are reversible (undo every %XX; "%" is the empty name), so two
 * tensors can only share a file name through rule 6; the view refuses such
 * a model.  Rule-6 names are not decodable: read the sidecar's "name".
 */
#ifndef STFS_NAMES_H
#define STFS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NAMES_MAX 250		/* longest encoded name */
#define NAMES_KEEP 200		/* prefix kept by rule 6 */
#define NAMES_SUFFIX ".json"	/* sidecar suffix */
#define NAMES_SUFFIX_LEN 5

/* 64-bit FNV-1a of p[0..len). */
uint64_t names_fnv1a(const void *p, size_t len);

/* Encode name[0..len) into out (NUL-terminated, no NUL inside).  Returns
 * the encoded length, 1..NAMES_MAX.  Never fails. */
size_t names_encode(const char *name, size_t len, char out[NAMES_MAX + 1]);

/* 1 when name[0..len) encodes to itself (no rule applies), so callers can
 * point at the tensor name instead of keeping a copy. */
int names_is_identity(const char *name, size_t len);

/* Decode an encoded name enc[0..len) into out (room for len bytes; the
 * result is never longer).  Returns 0 with *outlen set, or -1 when enc is
 * not an encoding (a "%~" hashed name, a bad or lowercase escape, a byte
 * that should have been escaped). */
int names_decode(const char *enc, size_t len, char *out, size_t *outlen);

#endif
