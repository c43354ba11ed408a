/* bigmem.h - big scratch memory on transparent huge pages.
 *
 * A picture's working memory (a 1024 x 1024 map of doubles is 8 MiB, its
 * surface 5 MiB) is mapped fresh for each picture.  Touched 4 KiB page
 * by page, every first touch costs a page fault (a few microseconds on
 * a virtual machine with shadow page tables, where it cost more than
 * reducing the tensor); asked for as 2 MiB pages (MADV_HUGEPAGE, when
 * the kernel has transparent huge pages), a few faults map it all.
 * Best effort: without huge pages it is ordinary zeroed memory.
 */
#ifndef STFS_BIGMEM_H
#define STFS_BIGMEM_H

#include <stddef.h>

/* len zeroed bytes (len > 0), or NULL when out of memory. */
void *bigmem_alloc(size_t len);
/* Free what bigmem_alloc(len) gave (p may be NULL). */
void bigmem_free(void *p, size_t len);

#endif
