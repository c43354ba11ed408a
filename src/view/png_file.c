/* png_file.c - PNG files of a size fixed before drawing (see png_file.h). */
#include "view/png_file.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/buf.h"

#define CHUNK 12		/* length, type, CRC */
#define IHDR_DATA 13
#define PAD_NAME "stPd"
/* libpng's IDAT chunks: one per this many compressed bytes */
#define ZBUF (1u << 16)

/* The most zlib writes for n bytes at level 0: its 2-byte header and
 * 4-byte checksum, and per stored block (at most 65535 bytes; zlib emits
 * one when its 32 KiB window is full, or fewer bytes at the end) 5 bytes
 * of header.  Counted as if blocks were 4 KiB, eight times the blocks
 * zlib makes: the bound does not rest on zlib's block sizes, and the
 * test (unit-png) checks it over many sizes. */
static uint64_t
zbound(uint64_t n)
{
	return n + 6 + 5 * (n / 4096 + 2);
}

static uint64_t
text_bytes(const struct png_text *t)
{
	uint64_t k = strlen(t->key);

	/* tEXt: key NUL text; iTXt: key NUL flag method lang NUL tkey NUL
	 * text */
	return CHUNK + k + 1 + (t->utf8 ? 4 : 0) + t->max;
}

uint64_t
png_file_size(unsigned w, unsigned h, const struct png_text *t, size_t nt)
{
	uint64_t raw = (uint64_t)h * (1 + 3 * (uint64_t)w), z = zbound(raw);
	uint64_t n = 8 + CHUNK + IHDR_DATA;
	size_t i;

	for (i = 0; i < nt; i++)
		n += text_bytes(&t[i]);
	n += z + CHUNK * ((z + ZBUF - 1) / ZBUF);
	return n + CHUNK /* stPd */ + CHUNK /* IEND */;
}

struct sink {
	struct buf *out;
	size_t start;
	int oom;
};

static void
sink_write(png_structp png, png_bytep data, size_t len)
{
	struct sink *s = png_get_io_ptr(png);

	if (!s->oom && buf_add(s->out, data, len))
		s->oom = 1;
}

static void
sink_flush(png_structp png)
{
	(void)png;
}

static void
on_error(png_structp png, png_const_charp msg)
{
	(void)msg;
	png_longjmp(png, 1);
}

static void
on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

int
png_file_write(const unsigned char *pixels, unsigned w, unsigned h,
	       size_t stride, const struct png_text *t, size_t nt,
	       struct buf *out)
{
	uint64_t size = png_file_size(w, h, t, nt), have;
	struct sink s = { out, out->len, 0 };
	png_structp png;
	png_infop info;
	png_textp texts = NULL;
	png_unknown_chunk pad;
	unsigned char *volatile row = NULL, *volatile zeros = NULL;
	volatile int rc = -EIO;
	unsigned x, y;
	size_t i;

	memset(&pad, 0, sizeof(pad));
	if (buf_reserve(out, (size_t)size))
		return -ENOMEM;
	{
		/* the pages to be written: on huge pages where whole ones
		 * fit (base/bigmem.h says why), mapped at once rather than
		 * one page fault at a time (best effort) */
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), hp = 2u << 20;
		uintptr_t from = (uintptr_t)out->data + out->len;
		uintptr_t b = (from + pg - 1) & ~(pg - 1);
		uintptr_t e = (from + size) & ~(pg - 1);
		uintptr_t hb = (from + hp - 1) & ~(hp - 1);
		uintptr_t he = (from + size) & ~(hp - 1);

		(void)hb;
		(void)he;
#ifdef MADV_HUGEPAGE
		if (he > hb)
			madvise((void *)hb, he - hb, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
		if (e > b)
			madvise((void *)b, e - b, MADV_POPULATE_WRITE);
#endif
		(void)b;
		(void)e;
	}
	for (i = 0; i < nt; i++)
		if (strlen(t[i].text) > t[i].max)
			return -EIO;
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, on_error,
				      on_warning);
	if (!png)
		return -ENOMEM;
	info = png_create_info_struct(png);
	texts = calloc(nt ? nt : 1, sizeof(*texts));
	row = malloc(3 * (size_t)w + 1);
	if (!info || !texts || !row) {
		rc = -ENOMEM;
		goto done;
	}
	if (setjmp(png_jmpbuf(png)))
		goto done;
	png_set_write_fn(png, &s, sink_write, sink_flush);
	png_set_compression_level(png, 0);
	png_set_compression_buffer_size(png, ZBUF);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	for (i = 0; i < nt; i++) {
		texts[i].compression = t[i].utf8 ? PNG_ITXT_COMPRESSION_NONE :
				       PNG_TEXT_COMPRESSION_NONE;
		texts[i].key = (png_charp)t[i].key;
		texts[i].text = (png_charp)t[i].text;
		texts[i].text_length = t[i].utf8 ? 0 : strlen(t[i].text);
		texts[i].itxt_length = t[i].utf8 ? strlen(t[i].text) : 0;
		texts[i].lang = (png_charp)"";
		texts[i].lang_key = (png_charp)"";
	}
	png_set_text(png, info, texts, (int)nt);
	png_write_info(png, info);
	for (y = 0; y < h; y++) {
		const unsigned char *p = pixels + (size_t)y * stride;

		for (x = 0; x < w; x++) {
			uint32_t c;

			memcpy(&c, p + 4 * (size_t)x, 4);
			row[3 * x] = (unsigned char)(c >> 16);
			row[3 * x + 1] = (unsigned char)(c >> 8);
			row[3 * x + 2] = (unsigned char)c;
		}
		png_write_row(png, row);
	}
	/* the pixels are written: the padding takes what is left */
	have = out->len - s.start;
	if (s.oom) {
		rc = -ENOMEM;
		goto done;
	}
	if (have + 2 * CHUNK > size)
		goto done;	/* never: png_file_size() is an upper bound */
	memcpy(pad.name, PAD_NAME, 5);
	pad.size = (size_t)(size - have - 2 * CHUNK);
	zeros = calloc(pad.size ? pad.size : 1, 1);
	if (!zeros) {
		rc = -ENOMEM;
		goto done;
	}
	pad.data = zeros;
	pad.location = PNG_AFTER_IDAT;
	png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_ALWAYS,
				    (png_const_bytep)PAD_NAME, 1);
	png_set_unknown_chunks(png, info, &pad, 1);
	png_write_end(png, info);
	if (s.oom)
		rc = -ENOMEM;
	else
		rc = out->len - s.start == size ? 0 : -EIO;
done:
	png_destroy_write_struct(&png, &info);
	free(texts);
	free(row);
	free(zeros);
	if (rc)
		out->len = s.start;
	return rc;
}
