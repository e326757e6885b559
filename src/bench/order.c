/* order.c - sequential, shuffled and interleaved job orders of hclock bench. */
#include <stdlib.h>
#include <string.h>

#include "bench/order.h"
#include "hclock_api.h"
#include "util/err.h"
#include "util/parse.h"

static const char *const names[] = {"sequential", "shuffled", "interleaved"};

int bench_order_parse(const char *s, struct bench_order *out)
{
	static const char form[] = "--order needs sequential, shuffled or interleaved[=N] "
	                           "(N passes, 2 to 1000)";
	out->passes = 1;
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(names[k]);
		if (strncmp(s, names[k], n) || (s[n] && (s[n] != '=' || k != ORDER_INTERLEAVED)))
			continue;
		out->kind = (enum bench_order_kind)k;
		if (k == ORDER_INTERLEAVED) {
			long p = BENCH_ORDER_PASSES;
			if (s[n] && parse_int_str(s + n + 1, 2, BENCH_ORDER_MAX_PASSES, &p))
				return err_set(HCLOCK_EINVAL, "%s, not '%s'", form, s);
			out->passes = (int)p;
		}
		return 0;
	}
	return err_set(HCLOCK_EINVAL, "%s, not '%s'", form, s);
}

const char *bench_order_name(const struct bench_order *o)
{
	return names[o->kind];
}

/* splitmix64 (Steele, Lea & Flood, 2014): a 64-bit generator good enough for shuffling */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void bench_order_pass(const struct bench_order *o, uint64_t seed, int pass, size_t *idx,
                      size_t n)
{
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	if (o->kind == ORDER_SEQUENTIAL || n < 2)
		return;
	uint64_t x = seed ^ ((uint64_t)pass * 0xd1b54a32d192ed03ULL);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(splitmix64(&x) % (uint64_t)(i + 1)); /* bias < n / 2^64 */
		size_t t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
	}
}
