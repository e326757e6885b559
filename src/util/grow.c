/* grow.c - room for one more element in a growing array (grow.h). */
#include <stdlib.h>

#include "util/grow.h"

int grow_array(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, nc * size);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}
