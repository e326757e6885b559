/*
 * check.h - Check-Global-Clock (Hunold & Carpen-Amarie, Alg. 6): after a sync, rank 0
 * measures the offset of every process (or of a random sample) to its own clock, right
 * away and after each wait; with an emulation (or one shared physical clock) every rank
 * also reports its true error. Knows nothing of output formats.
 */
#ifndef HCLOCK_CHECK_CHECK_H
#define HCLOCK_CHECK_CHECK_H

#include <stdint.h>

#include "hclock.h"

struct check_opts {
	const double *waits_s; /* seconds after the sync to check at (ascending) */
	int nwaits;
	double sample;         /* fraction of the processes measured, (0, 1] */
	uint64_t seed;         /* which processes are sampled */
	int npingpongs;        /* SKaMPI-Offset exchanges per measurement */
	hclock_emu *emu;       /* truth from the emulation, or NULL */
	int truth;             /* truth from real clocks (no emulation; check/truth.h) */
	double truth_slack_ns; /* the truth's own uncertainty, ns: the truth counts as inside
	                          bounds widened by it (--truth realtime's read step) */
};

struct check_point {
	double after_s;              /* nominal wait, s */
	double max_abs_offset_ns;    /* max |offset| measured by rank 0, ns */
	double mean_abs_offset_ns;   /* mean |offset| over the measured processes, ns */
	int nmeasured;               /* processes measured */
	double rtt_min_ns;           /* smallest round trip of the check's exchanges, ns */
	double rtt_median_ns;        /* the median over the measured processes of their fastest
	                                round trip, ns (what the network gives a ping-pong) */
	int have_truth;
	double true_max_abs_error_ns; /* max over all ranks of |true error|, ns */
	int have_bounds;             /* some process's clock has error bounds (hull learner) */
	double bound_half_width_ns;  /* the larger half-width of the bounds, max over the
	                                processes, ns (INFINITY when one has none) */
	int truth_in_bounds;         /* with truth and bounds: every process's truth lay inside
	                                its bounds (a process without bounds counts as inside) */
	double read_after_ns;        /* when the last process read its truth and bounds, ns
	                                since the check's start on the global clock (after_s
	                                plus the wait and the read, before the measurements) */
};

/* Collective over comm. res has opts->nwaits entries, filled on rank 0. */
/* The time a process waits from when rank 0 broadcast start_ns and its own clock reads now_ns:
 * start_ns, unless the two are more than CHECK_UNSYNCED_NS apart (clocks that were not
 * synchronized, --sync none on hosts with their own clocks: waiting for rank 0's time could
 * take hours), then now_ns (the waits then run on each process's own time). */
#define CHECK_UNSYNCED_NS 1000000000
int64_t check_start_on(int64_t start_ns, int64_t now_ns);

int check_clock(MPI_Comm comm, hclock_clock *g, const struct check_opts *opts,
                struct check_point *res);

#endif
