/*
 * order.h - the order in which hclock bench runs its measurements (no MPI).
 *
 * A measurement is one (scheme, operation, size), a "job". sequential runs them nested in
 * the order given (scheme, then operation, then size); shuffled runs them once in a random
 * order drawn from a seed, as ReproMPI does; interleaved runs every job in passes: each
 * pass visits all jobs once, in its own shuffled order, for 1/passes of the time slice, and
 * a job's result merges its passes. A slow change of the machine during a launch (memory
 * placement, frequency, other load) then falls on every job alike instead of on the jobs
 * that happen to run late.
 */
#ifndef HCLOCK_BENCH_ORDER_H
#define HCLOCK_BENCH_ORDER_H

#include <stddef.h>
#include <stdint.h>

enum bench_order_kind { ORDER_SEQUENTIAL, ORDER_SHUFFLED, ORDER_INTERLEAVED };

#define BENCH_ORDER_PASSES 4    /* interleaved's passes by default */
#define BENCH_ORDER_MAX_PASSES 1000

struct bench_order {
	enum bench_order_kind kind;
	int passes; /* 1, or interleaved's passes */
};

/* Parse "sequential", "shuffled" or "interleaved[=N]" (N passes, 2..1000): 0, or
 * HCLOCK_EINVAL with hclock_last_error() naming what is right. */
int bench_order_parse(const char *s, struct bench_order *out);
/* "sequential", "shuffled", "interleaved" */
const char *bench_order_name(const struct bench_order *o);

/*
 * The jobs of pass (0 <= pass < passes) in the order they run: idx[0..n) is a permutation
 * of 0..n-1, the identity for sequential, else a Fisher-Yates shuffle driven by splitmix64
 * from (seed, pass): the same seed gives the same order on every rank and in every launch.
 */
void bench_order_pass(const struct bench_order *o, uint64_t seed, int pass, size_t *idx,
                      size_t n);

#endif
