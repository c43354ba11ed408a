/* element_window.c - see element_window.h. */
#include "view/element_window.h"

uint64_t
element_window_clamp(uint64_t numel, uint64_t stride, uint64_t off, uint64_t len,
	     uint64_t *e0, uint64_t *e1)
{
	uint64_t size = numel * stride;

	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	if (len == 0)
		return 0;
	*e0 = off / stride;
	*e1 = (off + len + stride - 1) / stride;
	return len;
}
