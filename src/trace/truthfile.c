/*
 * truthfile.c - the reader of DIR/raw/truth.RANK (truthfile.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hclock_api.h"
#include "trace/truthfile.h"
#include "util/err.h"
#include "util/path.h"

struct truthfile {
	struct truth_entry *e; /* sorted by t_g */
	size_t n;
	uint64_t lost;
};

_Static_assert(sizeof(struct truth_header) == 32 && sizeof(struct truth_entry) == 24,
               "the truth file's layout");

/* the file's header and entries checked against each other and the file's size (bytes) */
static int check(const char *path, int rank, const struct truth_header *h, long long size)
{
	const long long hs = (long long)sizeof(*h), es = (long long)sizeof(struct truth_entry);
	if (memcmp(h->magic, TRUTH_FILE_MAGIC, 8))
		return err_set(HCLOCK_EINVAL, "%s: not a truth file (no %s at its start)", path,
		               TRUTH_FILE_MAGIC);
	if (h->rank != rank)
		return err_set(HCLOCK_EINVAL, "%s: the header says rank %d", path, (int)h->rank);
	if (h->count > (uint64_t)((LLONG_MAX - hs) / es) || hs + (long long)h->count * es > size)
		return err_set(HCLOCK_EINVAL, "%s: cut (%lld bytes; its header says %llu entries of "
		               "%lld bytes after %lld)", path, size, (unsigned long long)h->count, es,
		               hs);
	if (hs + (long long)h->count * es < size)
		return err_set(HCLOCK_EINVAL, "%s: %lld bytes after its %llu entries", path,
		               size - hs - (long long)h->count * es, (unsigned long long)h->count);
	return 0;
}

int truthfile_load(const char *dir, int rank, truthfile **out)
{
	char path[PATH_MAX + 64];
	struct truth_header h;
	struct stat st;
	truthfile *t = NULL;
	int rc;

	*out = NULL;
	if (path_fmt(path, sizeof(path), "%s/raw/truth.%d", dir, rank))
		return err_set(HCLOCK_EINVAL, "%s/raw/truth.%d: path too long", dir, rank);
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? 0 : err_set(HCLOCK_EIO, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st)) {
		rc = err_set(HCLOCK_EIO, "%s: %s", path, strerror(errno));
		goto err;
	}
	if (fread(&h, sizeof(h), 1, f) != 1) {
		rc = ferror(f) ? err_set(HCLOCK_EIO, "%s: %s", path, strerror(errno))
		               : err_set(HCLOCK_EINVAL, "%s: cut inside its header (%lld bytes)",
		                         path, (long long)st.st_size);
		goto err;
	}
	if ((rc = check(path, rank, &h, (long long)st.st_size)))
		goto err;
	if (!(t = calloc(1, sizeof(*t))) ||
	    (h.count && !(t->e = malloc((size_t)h.count * sizeof(*t->e))))) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory for the %llu entries of %s",
		             (unsigned long long)h.count, path);
		goto err;
	}
	t->n = (size_t)h.count;
	t->lost = h.lost;
	if (t->n && fread(t->e, sizeof(*t->e), t->n, f) != t->n) {
		rc = ferror(f) ? err_set(HCLOCK_EIO, "%s: %s", path, strerror(errno))
		               : err_set(HCLOCK_EINVAL, "%s: cut (changed while read)", path);
		goto err;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i].true_hi_ns < t->e[i].true_lo_ns) {
			rc = err_set(HCLOCK_EINVAL, "%s: entry %zu's truth ends before it starts", path,
			             i);
			goto err;
		}
		if (i && t->e[i].t_g < t->e[i - 1].t_g) {
			rc = err_set(HCLOCK_EINVAL, "%s: entry %zu is not sorted by its reading", path,
			             i);
			goto err;
		}
	}
	fclose(f);
	*out = t;
	return 0;
err:
	truthfile_free(t);
	fclose(f);
	return rc;
}

int truthfile_at(const truthfile *t, int64_t g, int64_t *lo_ns, int64_t *hi_ns)
{
	if (!t)
		return 0;
	size_t a = 0, b = t->n; /* the first entry with t_g >= g lies in [a, b] */
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (t->e[m].t_g < g)
			a = m + 1;
		else
			b = m;
	}
	if (a == t->n || t->e[a].t_g != g)
		return 0;
	int64_t lo = t->e[a].true_lo_ns, hi = t->e[a].true_hi_ns;
	for (size_t i = a + 1; i < t->n && t->e[i].t_g == g; i++) {
		if (t->e[i].true_lo_ns < lo)
			lo = t->e[i].true_lo_ns;
		if (t->e[i].true_hi_ns > hi)
			hi = t->e[i].true_hi_ns;
	}
	*lo_ns = lo;
	*hi_ns = hi;
	return 1;
}

uint64_t truthfile_lost(const truthfile *t)
{
	return t ? t->lost : 0;
}

void truthfile_free(truthfile *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}
