/*
 * collect.h - bring the repetitions of all ranks together on rank 0: per repetition the
 * latency on the global clock, and the OSU-style mean of the ranks' local times; and, for
 * --raw, every rank's own start and end. MPI code: rows are handed to a callback, which
 * does the formatting.
 */
#ifndef HCLOCK_BENCH_COLLECT_H
#define HCLOCK_BENCH_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "util/pmpi.h"

#include "bench/scheme.h"

struct bench_result {
	size_t nreps;       /* repetitions recorded (warm-up excluded) */
	size_t nvalid;      /* of which valid */
	double *lat_ns;     /* rank 0: the nvalid valid latencies, ns: last exit minus the
	                       common start (window, roundtime) or minus the first entry
	                       (barrier, none), all on the global clock; malloc'ed */
	double osu_mean_ns; /* rank 0: mean over ranks of each rank's mean (exit - entry) over
	                       the valid repetitions, ns (what OSU and IMB report as avg) */
};

/* Collective over comm: fill r on rank 0 (elsewhere only nreps, nvalid). 0, HCLOCK_ENOMEM
 * or HCLOCK_EMPI, the first failing rank's code and line on every rank (comm_agree).
 * Free with bench_result_free. */
int bench_collect(MPI_Comm comm, const struct bench_series *s, struct bench_result *r);
void bench_result_free(struct bench_result *r);

/* One repetition of one rank, global clock ns. */
typedef void (*bench_raw_fn)(void *arg, int rank, size_t rep, int64_t common_ns,
                             int64_t start_ns, int64_t end_ns, int valid);
/* Collective over comm: rank 0 calls fn for every repetition of every rank, rank by rank
 * (memory on rank 0: one rank's series at a time). 0, HCLOCK_ENOMEM or HCLOCK_EMPI, the
 * same on every rank, as bench_collect. */
int bench_collect_raw(MPI_Comm comm, const struct bench_series *s, bench_raw_fn fn, void *arg);

#endif
