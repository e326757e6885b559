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

#endif
