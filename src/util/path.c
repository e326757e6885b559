/* path.c - file system helpers (path.h). */
#define _XOPEN_SOURCE 700 /* strdup */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hclock_api.h"
#include "util/err.h"
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

int path_write(const char *path, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	char tmp[4096];
	if (path_fmt(tmp, sizeof(tmp), "%s.part", path))
		return err_set(HCLOCK_EIO, "%s: the path is too long", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return err_set(HCLOCK_EIO, "cannot write %s: %s", tmp, strerror(errno));
	errno = 0;
	int rc = fn(ctx, f), e = 0;
	if (ferror(f) || fflush(f))
		e = errno ? errno : EIO;
	if (fclose(f) && !e)
		e = errno;
	if (!rc && e)
		rc = err_set(HCLOCK_EIO, "writing %s failed: %s", tmp, strerror(e));
	if (!rc && rename(tmp, path))
		rc = err_set(HCLOCK_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
	if (rc)
		remove(tmp);
	return rc;
}

char *path_find_one(const char *path, const char *ext)
{
	struct stat st;
	if (stat(path, &st))
		return NULL;
	if (S_ISREG(st.st_mode))
		return strdup(path);
	DIR *d = S_ISDIR(st.st_mode) ? opendir(path) : NULL;
	if (!d)
		return NULL;
	char *found = NULL;
	int n = 0;
	size_t le = strlen(ext);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= le || strcmp(de->d_name + l - le, ext) || de->d_name[0] == '.')
			continue;
		n++;
		free(found);
		if ((found = malloc(strlen(path) + l + 2)))
			sprintf(found, "%s/%s", path, de->d_name);
	}
	closedir(d);
	if (n != 1) {
		free(found);
		return NULL;
	}
	return found;
}
