/* element_window.h - a window over an output made of a fixed number of
 * bytes per element (the decoded .npy data: 4 per element; the text view:
 * width + 1 per element), so that any byte range maps to its elements in
 * O(1).
 */
#ifndef STFS_ELEMENT_WINDOW_H
#define STFS_ELEMENT_WINDOW_H

#include <stdint.h>

/* Clamp [off, off + len) to an output of numel elements of stride bytes
 * each.  Returns the clamped length; when it is not 0, [*e0, *e1) are the
 * elements the window touches (the first and last possibly in part).
 * *e0 and *e1 are untouched when it returns 0. */
uint64_t element_window_clamp(uint64_t numel, uint64_t stride, uint64_t off,
		      uint64_t len, uint64_t *e0, uint64_t *e1);

#endif
