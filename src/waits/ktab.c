/* ktab.c - a hash table of four-word keys (ktab.h). */
#include <stdlib.h>
#include <string.h>

#include "waits/ktab.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static size_t home(const struct ktab *t, const uint64_t k[4])
{
	/* the words combined by odd multipliers, then one finalizer (one mix per word cost 4x
	 * the lookups of a trace's every message) */
	uint64_t h = mix(k[0] * 0x9e3779b97f4a7c15ULL + k[1] * 0xbf58476d1ce4e5b9ULL +
	                 k[2] * 0x94d049bb133111ebULL + k[3]);
	return (size_t)h & (t->cap - 1);
}

static int same(const uint64_t a[4], const uint64_t b[4])
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

uint64_t *ktab_find(const struct ktab *t, const uint64_t k[4])
{
	if (!t->cap)
		return NULL;
	for (size_t j = home(t, k); t->s[j].used; j = (j + 1) & (t->cap - 1))
		if (same(t->s[j].k, k))
			return &t->s[j].v;
	return NULL;
}

static int grow(struct ktab *t)
{
	size_t cap = t->cap ? 2 * t->cap : 64;
	struct ktab_slot *old = t->s, *s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	size_t ocap = t->cap;
	t->s = s;
	t->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used) {
			size_t j = home(t, old[i].k);
			while (s[j].used)
				j = (j + 1) & (cap - 1);
			s[j] = old[i];
		}
	free(old);
	return 0;
}

int ktab_put(struct ktab *t, const uint64_t k[4], uint64_t v)
{
	if (2 * (t->n + 1) > t->cap && grow(t))
		return -1;
	/* one probe: the key's slot, or the first free one (where it would be) */
	size_t j = home(t, k);
	for (; t->s[j].used; j = (j + 1) & (t->cap - 1))
		if (same(t->s[j].k, k)) {
			t->s[j].v = v;
			return 0;
		}
	t->s[j] = (struct ktab_slot){.k = {k[0], k[1], k[2], k[3]}, .v = v, .used = 1};
	t->n++;
	return 0;
}

int ktab_del(struct ktab *t, const uint64_t k[4])
{
	if (!t->cap)
		return 0;
	size_t m = t->cap - 1, j = home(t, k);
	for (; t->s[j].used && !same(t->s[j].k, k); j = (j + 1) & m)
		;
	if (!t->s[j].used)
		return 0;
	/* backward shift: move up every later slot of the run whose home is not between the
	 * hole and it */
	for (size_t i = (j + 1) & m; t->s[i].used; i = (i + 1) & m) {
		size_t h = home(t, t->s[i].k);
		if (((i - h) & m) >= ((i - j) & m)) {
			t->s[j] = t->s[i];
			j = i;
		}
	}
	t->s[j].used = 0;
	t->n--;
	return 1;
}

void ktab_free(struct ktab *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}
