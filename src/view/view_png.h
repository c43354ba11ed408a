/* view_png.h - what the .png/ directory (view_png.c) tells the pages of
 * .html/ (view_html.c) about a tensor's pictures. */
#ifndef STFS_VIEW_PNG_H
#define STFS_VIEW_PNG_H

#include <stddef.h>

struct buf;
struct view;

/* Append the paths of tensor i's heatmap and histogram relative to .png/
 * ("model/layers/0/w.png" in the tree layout, file names as the
 * directory lists them) to heat and hist, and set the heatmap's size in
 * pixels and whether the pictures can be drawn (the values are decoded).
 * 0; -1 when the view has no .png/ or out of memory. */
int view_png_paths(const struct view *v, size_t i, struct buf *heat,
		   struct buf *hist, unsigned *w, unsigned *h, int *drawn);

#endif
