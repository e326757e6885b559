/* names.h - the list of a family's names for help texts and error lines (no MPI). */
#ifndef HCLOCK_UTIL_NAMES_H
#define HCLOCK_UTIL_NAMES_H

#include <stddef.h>

/* "a, b or c" from names[0..n-1] into buf (at most len bytes, NUL-terminated); returns buf. */
const char *names_join(char *buf, size_t len, const char *const *names, size_t n);

#endif
