/* names.h - the list of a family's names for help texts and error lines, and names made safe
 * to stand for a node (no MPI). */
#ifndef HCLOCK_UTIL_NAMES_H
#define HCLOCK_UTIL_NAMES_H

#include <stddef.h>

/* "a, b or c" from names[0..n-1] into buf (at most len bytes, NUL-terminated); returns buf. */
const char *names_join(char *buf, size_t len, const char *const *names, size_t n);

/* s with every character outside [A-Za-z0-9._-] replaced by '_', in place ("MPI Rank 3" ->
 * "MPI_Rank_3": how hclock align names a trace's process as a node); returns s. */
char *names_sanitize(char *s);

#endif
