/* path.h - file system helpers. */
#ifndef HCLOCK_UTIL_PATH_H
#define HCLOCK_UTIL_PATH_H

#include <stddef.h>
#include <stdio.h>

/* mkdir -p: create the directory and its missing parents (mode 0777 & ~umask). Returns 0, or
 * -1 with errno (a component that exists and is not a directory: ENOTDIR; too long:
 * ENAMETOOLONG). */
int path_mkdirs(const char *dir);

/* snprintf for paths: 0, or -1 when the result did not fit in len bytes (cut) */
int path_fmt(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Write the file path whole or not at all: fn(ctx, f) writes into path.part beside it, which
 * is renamed to path once fn returned 0 and the file was written and closed without error,
 * and removed otherwise (a reader never sees half a file; an earlier path stays until the new
 * one is complete). Returns 0, fn's non-zero return, or HCLOCK_EIO with one line in
 * hclock_last_error() naming the file and the system's reason. */
int path_write(const char *path, int (*fn)(void *ctx, FILE *f), void *ctx);

/* The one file ending in ext (".otf2") that path names: path itself when it is a regular file,
 * else the only entry of the directory path whose name ends in ext (and is longer than it) and
 * does not start with '.'. Returns "DIR/NAME" or a copy of path, malloc'd (the caller frees
 * it), or NULL: no such path, no such entry or several, or no memory. */
char *path_find_one(const char *path, const char *ext);

#endif
