/* path.h - file system helpers. */
#ifndef HCLOCK_UTIL_PATH_H
#define HCLOCK_UTIL_PATH_H

#include <stddef.h>

/* mkdir -p: create the directory and its missing parents (mode 0777 & ~umask). Returns 0, or
 * -1 with errno (a component that exists and is not a directory: ENOTDIR; too long:
 * ENAMETOOLONG). */
int path_mkdirs(const char *dir);

/* snprintf for paths: 0, or -1 when the result did not fit in len bytes (cut) */
int path_fmt(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
