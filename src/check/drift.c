/* drift.c - the drift series (drift.h): rank 0 measures every process at every probe. */
#include <math.h>
#include <stdint.h>

#include "check/check.h"
#include "check/drift.h"
#include "clock/clock.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/err.h"

#define TAG_DRIFT 0x4851 /* a process's probe result, to rank 0 */

int drift_nprobes(double duration_s, double interval_s)
{
	return (int)floor(duration_s / interval_s + 1e-9) + 1;
}

/* this process's truth and bounds right now */
static void my_truth(hclock_clock *clk, hclock_emu *emu, int truth, double *err, double *lo,
                     double *hi)
{
	if ((!emu && !truth) || hclock_true_error(clk, emu, err))
		*err = NAN;
	hclock_clock_bounds(clk, hclock_now(clk), lo, hi); /* +-inf without bounds */
}

int drift_run(MPI_Comm comm, hclock_clock *clk, hclock_emu *emu, int truth, double duration_s,
              double interval_s, int npp, struct drift_sample *out)
{
	MPI_Comm c;
	int p, r, rc = comm_private(comm, &c);
	if (rc)
		return rc;
	PMPI_Comm_size(c, &p);
	PMPI_Comm_rank(c, &r);
	int n = drift_nprobes(duration_s, interval_s);
	int64_t t0 = hclock_now(clk);
	rc = comm_check(PMPI_Bcast(&t0, 1, MPI_INT64_T, 0, c), "MPI_Bcast (drift start)");
	int64_t from = check_start_on(t0, hclock_now(clk));
	for (int i = 0; i < n; i++) {
		hclock_wait_until(clk, from + (int64_t)llround(i * interval_s * 1e9));
		/* offset, rtt, err, lo, hi, when on rank 0's clock since t0 (ns) */
		double v[6] = {0, 0, NAN, -INFINITY, INFINITY, 0};
		if (r == 0) {
			int64_t at = hclock_now(clk);
			my_truth(clk, emu, truth, &v[2], &v[3], &v[4]);
			out[i] = (struct drift_sample){(double)(at - t0) * 1e-9, 0, 0, v[2], v[3], v[4]};
			for (int k = 1; k < p; k++) {
				rc = first_err(rc, measure_offset_on(c, clk, 0, k, npp, NULL, NULL));
				rc = first_err(rc, comm_check(yield_recv(v, 6, MPI_DOUBLE, k, TAG_DRIFT, c),
				                              "MPI_Recv (drift result)"));
				out[(size_t)k * n + i] = (struct drift_sample){v[5] * 1e-9, v[0], v[1], v[2],
				                                               v[3], v[4]};
			}
		} else {
			/* the probe's time: when the exchange the estimate rests on was made, on rank
			 * 0's clock since the start (a busy machine makes a probe late and long: fitted
			 * at its due time, 50 ms late at 100 ppm is 5 us off the line) */
			int64_t local = t0;
			rc = first_err(rc, measure_offset_at(c, clk, 0, r, npp, &v[0], &v[1], &local));
			v[5] = (double)(local - t0) + v[0];
			my_truth(clk, emu, truth, &v[2], &v[3], &v[4]);
			rc = first_err(rc, comm_check(PMPI_Send(v, 6, MPI_DOUBLE, 0, TAG_DRIFT, c),
			                              "MPI_Send (drift result)"));
		}
	}
	return comm_agree(c, rc);
}
