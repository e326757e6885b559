/* path.h - file system helpers. */
#ifndef HCLOCK_UTIL_PATH_H
#define HCLOCK_UTIL_PATH_H

/* mkdir -p: create the directory and its missing parents (mode 0777 & ~umask). Returns 0, or
 * -1 with errno (a component that exists and is not a directory: ENOTDIR; too long:
 * ENAMETOOLONG). */
int path_mkdirs(const char *dir);

#endif
