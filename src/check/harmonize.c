/* harmonize.c - waiting on a global clock, and common start times (Round-Time, Alg. 5). */
#include <time.h>

#include "check/check.h"
#include "clock/clock.h"
#include "hclock.h"
#include "transport/comm.h"
#include "util/timeutil.h"

/* Spin only for the last SPIN_NS: a process that slept wakes up some 50-100 us late (timer
 * slack, wake-up latency), and a short spin right after a wake-up is rarely preempted even
 * on a loaded machine, where a long one is cut by the scheduler's time slice. */
#define SPIN_NS 200000

int64_t hclock_wait_until(hclock_clock *clk, int64_t t_ns)
{
	int64_t now = hclock_now(clk);
#ifndef HCLOCK_SMPI
	/* a drive=progress clock is driven as its thread would be: polled while an exchange
	 * runs, asleep until its next one otherwise (its errors come back from the stop) */
	int64_t nap_ns;
	while (t_ns - now > SPIN_NS && clock_drive(clk, &nap_ns)) {
		int64_t left = t_ns - now - SPIN_NS;
		if (nap_ns > 0)
			real_sleep_ns(nap_ns < left ? nap_ns : left);
		now = hclock_now(clk);
	}
#endif
#ifdef HCLOCK_SMPI
	/* not driven here: the waits below are sleeps of simulated time */
	/* Under SimGrid SMPI reading a clock does not advance simulated time (smpi/wtime:0), so
	 * a spin never ends: sleep instead. The global clock runs within 1% of real time, so
	 * sleeping 99% of the distance never overshoots and leaves at most 2% of it; the last
	 * microsecond is slept whole (overshoot below 10 ns). */
	while (now < t_ns) {
		int64_t d = t_ns - now;
		real_delay_ns(d > 1000 ? d - d / 100 : d);
		now = hclock_now(clk);
	}
#else
	/* sleep in real time while far (the global clock runs within 1% of real time, so
	 * sleeping the distance minus SPIN_NS never overshoots for waits up to 20 s; longer
	 * ones take a few turns) */
	while (t_ns - now > SPIN_NS) {
		int64_t d = t_ns - now - SPIN_NS;
		real_sleep_ns(d - d / 100);
		now = hclock_now(clk);
	}
	while (now < t_ns)
		now = hclock_now(clk);
#endif
	return now - t_ns;
}

int hclock_harmonize(MPI_Comm comm, hclock_clock *clk, int64_t slack_ns, int64_t *start_ns,
                     int64_t *late_ns)
{
	int r, rc;
	int64_t t = 0;
	MPI_Comm c;
	if ((rc = comm_private(comm, &c)))
		return rc;
	PMPI_Comm_rank(c, &r);
	if (r == 0)
		t = hclock_now(clk) + slack_ns;
	if ((rc = comm_check(PMPI_Bcast(&t, 1, MPI_INT64_T, 0, c), "MPI_Bcast (harmonize)")))
		return rc;
	int64_t now = hclock_now(clk);
	int64_t late = now > t ? now - t : 0;
	if (!late)
		hclock_wait_until(clk, t);
	if (start_ns)
		*start_ns = t;
	if (late_ns)
		*late_ns = late;
	return 0;
}
