/* bigmem.c - big scratch memory on transparent huge pages (see
 * bigmem.h). */
#include "base/bigmem.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE (2u << 20)		/* x86-64's huge page */

/* Lengths of 1 MiB or more in whole huge pages (a huge page only backs
 * an aligned 2 MiB of the mapping), smaller ones in whole pages. */
static size_t
rounded(size_t len)
{
	size_t unit = len >= HUGE / 2 ? HUGE : 4096;

	return len > SIZE_MAX - unit ? 0 : (len + unit - 1) & ~(size_t)(unit - 1);
}

void *
bigmem_alloc(size_t len)
{
	size_t n = rounded(len), slack;
	uint8_t *p, *a;

	if (!n)
		return NULL;
	if (n < HUGE) {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	/* a mapping HUGE longer, trimmed to an aligned start */
	if (n > SIZE_MAX - HUGE)
		return NULL;
	p = mmap(NULL, n + HUGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	slack = (size_t)(a - p);
	if (slack)
		munmap(p, slack);
	munmap(a + n, HUGE - slack);
#ifdef MADV_HUGEPAGE
	madvise(a, n, MADV_HUGEPAGE);	/* best effort */
#endif
	return a;
}

void
bigmem_free(void *p, size_t len)
{
	if (p)
		munmap(p, rounded(len));
}
