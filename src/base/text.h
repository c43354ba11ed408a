/* text.h - the small string helpers every layer needs once: suffix tests,
 * hex digits, percent-encoding and -decoding (RFC 3986), checking UTF-8,
 * a time stamp.
 * One copy here instead of one per module.  No I/O, no global state.
 */
#ifndef STFS_TEXT_H
#define STFS_TEXT_H

#include <stddef.h>
#include <time.h>

/* 1 when s ends with suffix (both NUL-terminated). */
int text_ends_with(const char *s, const char *suffix);

/* The value of one hex digit (either case), or -1. */
int text_hexval(int c);

/* Percent-encode n bytes of s: every byte but the unreserved ones
 * (A-Z a-z 0-9 - . _ ~) and those in keep (may be NULL, e.g. "/")
 * becomes %XX (upper case, as SigV4 and RFC 3986 want).  Malloc'd,
 * NUL-terminated; NULL without memory. */
char *text_pct_encode(const char *s, size_t n, const char *keep);

/* Percent-decode n bytes of s into a malloc'd NUL-terminated string;
 * *outlen (may be NULL) gets its length.  NULL when out of memory, on a
 * malformed escape, or when a decoded byte is in refuse (may be NULL;
 * a NUL byte is always refused). */
char *text_pct_decode(const char *s, size_t n, const char *refuse,
		      size_t *outlen);

/* Strict UTF-8 check (no overlongs, no surrogates, nothing above
 * U+10FFFF).  Returns 0 when valid; otherwise -1 with *bad_index the start
 * of the first invalid sequence and *bad_len its length as Rust's
 * Utf8Error::error_len() reports it (1..3), or 0 when the input ends in
 * the middle of a sequence. */
int text_utf8_check(const char *buf, size_t len, size_t *bad_index,
		    unsigned *bad_len);

/* The wall-clock time t as ISO 8601 in local time, to the millisecond,
 * with its offset: "2026-11-29T07:31:57.123+0000" (TEXT_TIME_ISO bytes
 * with the NUL).  Returns its length (0 when n is too small). */
#define TEXT_TIME_ISO 32
size_t text_time_iso(char *out, size_t n, const struct timespec *t);

#endif
