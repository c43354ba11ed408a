/* png_file.h - a PNG file whose size is known before its pixels are: the
 * .png/ view's files have a true size at stat, without reading weights.
 *
 * libpng (the library cairo itself writes PNGs with) writes the file:
 * signature, IHDR (8-bit RGB, not interlaced), the text chunks (tEXt for
 * ASCII, iTXt for UTF-8), the pixels in IDAT chunks compressed at zlib
 * level 0 ("stored" deflate blocks: every row is its filter byte and its
 * 3 w bytes, plus a few bytes per block of at most 64 KiB), then one
 * ancillary private chunk "stPd" of zero bytes, then IEND.  The file's
 * size is an upper bound computed from the width, the height and the
 * longest each text can be (png_file_size()); stPd fills what the pixels
 * and texts left of it.  Every decoder skips an ancillary chunk it does
 * not know (the PNG specification requires it), so the padding is a
 * valid PNG that reads the same everywhere.
 */
#ifndef STFS_PNG_FILE_H
#define STFS_PNG_FILE_H

#include <stddef.h>
#include <stdint.h>

struct buf;

struct png_text {
	const char *key;	/* Latin-1 keyword, 1..79 bytes */
	const char *text;	/* NUL-terminated; ASCII unless utf8 */
	size_t max;		/* longest text this key can have */
	int utf8;		/* iTXt, else tEXt */
};

/* The size of every file of w x h pixels with these texts (their max). */
uint64_t png_file_size(unsigned w, unsigned h, const struct png_text *t,
		       size_t nt);

/* Append the file to out: pixels are rows of w 32-bit words 0x..RRGGBB
 * (cairo's RGB24), stride bytes apart.  Exactly png_file_size() bytes.
 * 0, -ENOMEM, or -EIO (a text longer than its max, libpng's error). */
int png_file_write(const unsigned char *pixels, unsigned w, unsigned h,
		   size_t stride, const struct png_text *t, size_t nt,
		   struct buf *out);

#endif
