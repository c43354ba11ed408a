/* cancel.c - see cancel.h. */
#include "base/cancel.h"

#include <stddef.h>

static __thread const struct cancel *current;

void
cancel_set(const struct cancel *c)
{
	current = c;
}

int
cancel_requested(void)
{
	const struct cancel *c = current;

	return c && c->gone && c->gone(c->arg);
}
