/*
 * overlap.h - the compute phase of hclock bench --overlap (OSU's osu_iallreduce and the
 * like): a busy loop of a calibrated number of iterations that calls neither MPI nor the
 * clock, inserted between a nonblocking collective's start and its MPI_Wait, so that any
 * progress the collective makes during it is the MPI library's own (a progress thread, the
 * network), and the overlap
 *
 *     overlap % = max(0, 100 (1 - (t_total - t_cpu) / t_pure))
 *
 * of t_pure (the call alone), t_total (with the compute phase) and t_cpu (the compute
 * phase alone) says how much of the communication the computation hid.
 */
#ifndef HCLOCK_BENCH_OVERLAP_H
#define HCLOCK_BENCH_OVERLAP_H

#include <stdint.h>

/* Run the loop for iters iterations. */
void overlap_compute(uint64_t iters);
/* This process's loop rate, iterations per ns: the fastest of 3 timings of a run of at
 * least 2 ms (local monotonic clock), so that a preempted timing does not count. */
double overlap_rate(void);
/* The overlap % of the formula above (NAN when t_pure_ns is not > 0). */
double overlap_pct(double t_pure_ns, double t_total_ns, double t_cpu_ns);

#endif
