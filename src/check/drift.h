/*
 * drift.h - the drift series (the HCA3 paper's Fig. 2): every interval for a duration, rank
 * 0 measures every process's offset to its own clock (SKaMPI-Offset), so a user sees whether
 * the clocks drift linearly and how long a one-shot model lasts. With an emulation each
 * process also reports its true error, and, with a bounded clock, its bounds. Collective;
 * knows nothing of output formats.
 */
#ifndef HCLOCK_CHECK_DRIFT_H
#define HCLOCK_CHECK_DRIFT_H

#include "hclock.h"

struct drift_sample {
	double t_s;         /* time of the probe since the start on rank 0's clock, s: when the
	                       exchange its offset rests on was made (rank 0's own row: its
	                       truth read); the probes are due every interval */
	double offset_ns;   /* measured offset, rank 0 minus this process, ns (0 on rank 0) */
	double rtt_ns;      /* smallest round trip of the measurement, ns */
	double true_err_ns; /* true error of the process's clock, ns (NAN without truth) */
	double lo_ns, hi_ns; /* its bounds: the reference minus the reading lies in [lo, hi]
	                        (-INFINITY, INFINITY without bounds) */
};

/* Number of probes of a run: one at 0 and one every interval_s up to duration_s. */
int drift_nprobes(double duration_s, double interval_s);

/*
 * Collective over comm: the probes at 0, interval_s, ... on clk (waits on clk), npp
 * ping-pongs each. On rank 0, out[k * nprobes + i] is rank k's probe i (out must hold
 * p * nprobes; rank 0's own row has offset 0); other ranks pass NULL. Every rank takes part
 * in every probe whatever failed; returns 0 or the agreed error. A continuous clock with
 * drive=progress is driven while waiting (hclock_wait_until).
 */
int drift_run(MPI_Comm comm, hclock_clock *clk, hclock_emu *emu, int truth, double duration_s,
              double interval_s, int npp, struct drift_sample *out);

#endif
