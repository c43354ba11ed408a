/* jsonmem.c - see jsonmem.h. */
#include "base/jsonmem.h"

#include <jansson.h>
#include <stdlib.h>

static __thread unsigned long failures;

static void *
counted_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		failures++;
	return p;
}

void
jsonmem_watch(void)
{
	json_set_alloc_funcs(counted_malloc, free);
}

unsigned long
jsonmem_failures(void)
{
	return failures;
}
