/* sizes.c - parsing message size lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sizes.h"
#include "hclock_api.h"
#include "util/err.h"
#include "util/parse.h"

/* one size: digits and an optional K/M/G/T (util/parse.h's rule); the whole of [s, e) */
static int parse_one(const char *s, const char *e, size_t *out)
{
	uint64_t v;
	if (parse_bytes(s, (size_t)(e - s), 0, BENCH_SIZE_MAX, &v))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int push(size_t **a, size_t *n, size_t *cap, size_t v)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		size_t *p = realloc(*a, c * sizeof(*p));
		if (!p)
			return -1;
		*a = p;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return 0;
}

int bench_sizes_parse(const char *s, size_t **out, size_t *n)
{
	size_t *a = NULL, cnt = 0, cap = 0;
	int rc;
	const char *p = s ? s : "";
	if (!*p)
		return err_set(HCLOCK_EINVAL, "--sizes is empty; give e.g. 8,64,1K,1M or 8:1M");
	for (;;) {
		const char *e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		const char *colon = memchr(p, ':', (size_t)(e - p));
		size_t lo = 0, hi = 0;
		int bad;
		if (colon)
			bad = parse_one(p, colon, &lo) || parse_one(colon + 1, e, &hi) || lo == 0 ||
			      lo > hi;
		else
			bad = parse_one(p, e, &lo);
		if (bad) {
			rc = err_set(HCLOCK_EINVAL, "--sizes item '%.*s' does not parse; give sizes in "
			             "bytes with an optional K, M, G suffix, as a list (8,64,1K,1M) or a "
			             "range of powers of two LO:HI with 0 < LO <= HI (8:1M)", (int)(e - p),
			             p);
			goto err;
		}
		for (size_t v = lo;; v *= 2) {
			if (push(&a, &cnt, &cap, v)) {
				rc = err_set(HCLOCK_ENOMEM, "--sizes: out of memory");
				goto err;
			}
			if (!colon || v > hi / 2)
				break;
		}
		if (!*e)
			break;
		p = e + 1;
	}
	*out = a;
	*n = cnt;
	return 0;
err:
	free(a);
	return rc;
}
