/* sizes.c - parsing message size lists. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sizes.h"
#include "hclock_api.h"
#include "util/err.h"

/* one size: digits and an optional K/M/G/T; the whole of [s, e) must be consumed */
static int parse_one(const char *s, const char *e, size_t *out)
{
	if (s == e || !isdigit((unsigned char)*s))
		return -1;
	size_t v = 0;
	while (s < e && isdigit((unsigned char)*s)) {
		size_t d = (size_t)(*s - '0');
		if (v > (BENCH_SIZE_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		s++;
	}
	if (s < e) {
		int shift;
		switch (toupper((unsigned char)*s)) {
		case 'K': shift = 10; break;
		case 'M': shift = 20; break;
		case 'G': shift = 30; break;
		case 'T': shift = 40; break;
		default: return -1;
		}
		s++;
		if (s != e || v > (BENCH_SIZE_MAX >> shift))
			return -1;
		v <<= shift;
	}
	*out = v;
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
		size_t lo, hi;
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
