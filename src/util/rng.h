/* rng.h - small deterministic random numbers (splitmix64 seeding, xoshiro256**), so that an
 * emulation or a test is reproduced exactly from its seed on any platform. */
#ifndef HCLOCK_UTIL_RNG_H
#define HCLOCK_UTIL_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_u64(struct rng *r);
/* uniform in [0, 1) */
double rng_uniform(struct rng *r);
/* standard normal (Box-Muller) */
double rng_normal(struct rng *r);

/* A 64-bit mixer (a bijection; the one of splitmix64's style with the moremur constants):
 * hashes of ids, e.g. the tracer's communicator and message ids. */
static inline uint64_t rng_mix64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

#endif
