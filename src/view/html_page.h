/* html_page.h - the page of a model (.html/index.html): a static shell
 * (style and a script) around the model's table as data, so that the
 * page is as small as its table (about 100 bytes a tensor) and the
 * browser builds only what is opened: modules as a tree of <details>
 * (tensors, parameters, bytes and dtypes per module, counted as
 * stfs-inspect --group counts them), each tensor a row with its dtype,
 * shape, size, statistics (s/INDEX.js, loaded when the row is scrolled
 * into view) and its two pictures as thumbnails (loading="lazy"), links
 * by relative paths to ../.png/, so that it works opened as a file:// page
 * and served by any static server.  No FUSE, no I/O.
 *
 * The data, one JSON array per tensor in model order:
 *   [name, dtype, shape, nbytes, numel, heat, hist, w, h, drawn]
 * heat and hist: the pictures' paths relative to .png/, or 0 when they
 * are name + ".png" and name + ".hist.png", 1 when the name's dots are
 * slashes (the tree layout); w, h the heatmap's size; drawn 0 when the
 * values are not decoded (no pictures, no statistics).
 */
#ifndef STFS_HTML_PAGE_H
#define STFS_HTML_PAGE_H

#include <stddef.h>
#include <stdint.h>

struct buf;

/* One tensor's row of the data. */
struct html_page_tensor {
	const char *name;
	size_t name_len;
	const char *dtype;
	const uint64_t *shape;
	uint32_t rank;
	uint64_t nbytes, numel;
	const char *heat, *hist;	/* paths relative to .png/ */
	size_t heat_len, hist_len;
	unsigned w, h;
	int drawn;
};

/* The page up to its data: title (the model's source) escaped. */
int html_page_begin(struct buf *b, const char *title, size_t len);

/* One tensor; first is 1 for the first. */
int html_page_tensor(struct buf *b, const struct html_page_tensor *t,
		     int first);

/* The rest of the page. */
int html_page_end(struct buf *b);

/* s[0..len) as a JSON string that can stand inside <script>: '<', '>'
 * and '&' are \u escapes too. */
int html_page_json_string(struct buf *b, const char *s, size_t len);

/* The statistics script s/INDEX.js: "stfs_stats(INDEX," + json + ");\n",
 * json being a .stats/ file's bytes; its length for a json of len. */
#define HTML_PAGE_STATS_HEAD "stfs_stats("
#define HTML_PAGE_STATS_TAIL ");\n"

#endif
