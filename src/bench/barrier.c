/*
 * barrier.c - scheme "barrier": MPI_Barrier before every repetition, as the OSU
 * Micro-Benchmarks and the Intel MPI Benchmarks do. The barrier releases the processes at
 * different times (its exit imbalance, see hclock imbalance), which the latency inherits;
 * it is here for comparison with the schemes that start on the global clock.
 */
#include "bench/scheme.h"
#include "transport/comm.h"

static int barrier_before(struct bench_scheme *s, MPI_Comm comm)
{
	(void)s;
	int rc = PMPI_Barrier(comm);
	return comm_check(rc, "MPI_Barrier (before a repetition)");
}

static int barrier_measure(struct bench_scheme *s, const struct bench_params *p,
                           struct bench_buf *b, struct bench_series *out)
{
	return scheme_local_batches(s, p, b, out, barrier_before);
}

const struct scheme_type scheme_type_barrier = {
	.name = "barrier",
	.usage = "barrier",
	.help = "MPI_Barrier before every repetition (OSU, IMB)",
	.common_start = 0,
	.create = scheme_create_plain,
	.measure = barrier_measure,
};
