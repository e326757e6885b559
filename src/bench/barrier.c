/*
 * barrier.c - scheme "barrier": MPI_Barrier before every repetition, as the OSU
 * Micro-Benchmarks and the Intel MPI Benchmarks do. The barrier releases the processes at
 * different times (its exit imbalance, see hclock imbalance), which the latency inherits;
 * it is here for comparison with the schemes that start on the global clock.
 */
#include "bench/scheme.h"

static int barrier_measure(struct bench_scheme *s, const struct bench_params *p,
                           struct bench_buf *b, struct bench_series *out)
{
	(void)s;
	return scheme_local_batches(p, b, out, MPI_Barrier);
}

static const struct scheme_ops barrier_ops = {
	.name = "barrier", .measure = barrier_measure, .destroy = NULL,
};

int scheme_barrier_create(struct bench_scheme **out)
{
	return scheme_new(&barrier_ops, out);
}
