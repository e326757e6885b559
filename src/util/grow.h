/* grow.h - room for one more element in a growing array (no MPI). */
#ifndef HCLOCK_UTIL_GROW_H
#define HCLOCK_UTIL_GROW_H

#include <stddef.h>

/* Make *p (an array of *cap elements of size bytes, n of them used) hold at least n + 1: its
 * capacity doubled (64 at first) when n reached it. Returns 0, or -1 without memory (*p and
 * *cap unchanged). */
int grow_array(void **p, size_t *cap, size_t n, size_t size);

/* grow_array on an array variable and its count and capacity */
#define GROW(arr, n, cap) grow_array((void **)&(arr), &(cap), (n), sizeof(*(arr)))

#endif
