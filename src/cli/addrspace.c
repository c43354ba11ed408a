/* addrspace.c - see addrspace.h. */
#include "cli/addrspace.h"

#include <malloc.h>
#include <pthread.h>

void
addrspace_setup(void)
{
	pthread_attr_t a;

	/* The main arena grows with brk and gives back what is freed at
	 * its top; every other arena reserves 64 MiB (128 MiB while it is
	 * aligned) whatever it holds. */
	mallopt(M_ARENA_MAX, 1);
	if (pthread_attr_init(&a) != 0)
		return;
	if (pthread_attr_setstacksize(&a, ADDRSPACE_STACK) == 0)
		pthread_setattr_default_np(&a);
	pthread_attr_destroy(&a);
}
