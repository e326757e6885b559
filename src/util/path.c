/* path.c - file system helpers (path.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/path.h"

int path_mkdirs(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);
	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0777) && errno != EEXIST)
				return -1;
			*s = '/';
		}
	if (mkdir(p, 0777) && errno != EEXIST)
		return -1;
	struct stat sb;
	if (stat(p, &sb))
		return -1;
	if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int path_fmt(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
