/* outset.c - output files written under temporary names, renamed together (outset.h). */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_api.h"
#include "align/outset.h"
#include "util/err.h"

int outset_init(struct outset *o, size_t n)
{
	o->n = n;
	o->f = calloc(n ? n : 1, sizeof(*o->f));
	return o->f ? 0 : err_set(HCLOCK_ENOMEM, "out of memory");
}

int outset_create(struct outset *o, size_t i, const char *outdir, const char *name, FILE **fp)
{
	struct outfile *t = &o->f[i];
	size_t dl = strlen(outdir) + strlen(name) + 16;
	int fd, e;

	t->dst = malloc(dl);
	t->tmp = malloc(dl);
	if (!t->dst || !t->tmp) {
		free(t->tmp); /* not a file's name yet: outset_free must not unlink it */
		t->tmp = NULL;
		return err_set(HCLOCK_ENOMEM, "out of memory");
	}
	snprintf(t->dst, dl, "%s/%s", outdir, name);
	snprintf(t->tmp, dl, "%s/.%s.XXXXXX", outdir, name);
	fd = mkstemp(t->tmp);
	if (fd < 0) {
		e = errno;
		free(t->tmp);
		t->tmp = NULL;
		return err_set(HCLOCK_EIO, "%s: cannot create a file there: %s", outdir, strerror(e));
	}
	if (outset_mode(fd, t->tmp, 0)) {
		close(fd);
		return HCLOCK_EIO;
	}
	if (!(*fp = fdopen(fd, "w"))) {
		e = errno;
		close(fd);
		return err_set(HCLOCK_EIO, "%s: %s", t->tmp, strerror(e));
	}
	return 0;
}

/* the umask without changing it (thread-safe, Linux >= 4.7), else by setting it back */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned int m;
	mode_t u;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1) {
			fclose(f);
			return (mode_t)m;
		}
	if (f)
		fclose(f);
	u = umask(022);
	umask(u);
	return u;
}

int outset_mode(int fd, const char *path, int dir)
{
	mode_t mode = (dir ? 0777 : 0666) & ~current_umask();

	if (dir ? chmod(path, mode) : fchmod(fd, mode))
		return err_set(HCLOCK_EIO, "%s: cannot set its mode: %s", path, strerror(errno));
	return 0;
}

int outset_commit(struct outset *o)
{
	for (size_t i = 0; i < o->n; i++) {
		struct outfile *t = &o->f[i];
		if (rename(t->tmp, t->dst))
			return err_set(HCLOCK_EIO, "%s: cannot rename to %s: %s", t->tmp, t->dst,
			               strerror(errno));
		free(t->tmp);
		t->tmp = NULL;
	}
	return 0;
}

void outset_free(struct outset *o)
{
	for (size_t i = 0; o->f && i < o->n; i++) {
		if (o->f[i].tmp)
			unlink(o->f[i].tmp);
		free(o->f[i].tmp);
		free(o->f[i].dst);
	}
	free(o->f);
	o->f = NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

void outset_rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int outset_replace_dir(const char *tmp, const char *dst, char *old)
{
	struct stat st;
	if (lstat(dst, &st) != 0) {
		if (rename(tmp, dst))
			return err_set(HCLOCK_EIO, "%s: cannot rename to %s: %s", tmp, dst,
			               strerror(errno));
		return 0;
	}
	if (!mkdtemp(old) || rename(dst, old))
		return err_set(HCLOCK_EIO, "%s: exists and cannot be replaced: %s", dst,
		               strerror(errno));
	if (rename(tmp, dst)) {
		int r = err_set(HCLOCK_EIO, "%s: cannot rename to %s: %s", tmp, dst,
		                strerror(errno));
		rename(old, dst);
		return r;
	}
	outset_rm_tree(old);
	return 0;
}
