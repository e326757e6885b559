#include <math.h>
#include <stdlib.h>

#include "check/check.h"
#include "clock/clock.h"
#include "numerics/stats.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/rng.h"

/* The same random sample on every rank: a partial Fisher-Yates shuffle of 1..p-1. */
static int pick_sample(int p, double frac, uint64_t seed, char *in)
{
	int k = (int)ceil(frac * (p - 1));
	int *idx = fault_malloc((size_t)p * sizeof(*idx));
	struct rng rng;
	if (!idx)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	rng_seed(&rng, seed);
	for (int i = 0; i < p - 1; i++)
		idx[i] = i + 1;
	for (int i = 0; i < k && i < p - 1; i++) {
		int j = i + (int)(rng_u64(&rng) % (uint64_t)(p - 1 - i));
		int t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		in[idx[i]] = 1;
	}
	free(idx);
	return 0;
}

#define TAG_RESULT 0x4850 /* a measured process's offset and round trip, to rank 0 */

/* One check point: every rank reads its true error and bounds, rank 0 measures every sampled
 * process in turn, then all report. Every rank takes part whatever failed; returns the first
 * error of this process. */
static int check_point(MPI_Comm c, hclock_clock *g, const struct check_opts *o, const char *in,
                       int measured, int64_t start_ns, struct check_point *res)
{
	int p, r, rc = 0;
	PMPI_Comm_size(c, &p);
	PMPI_Comm_rank(c, &r);
	double off[2] = {0, 0}, err = 0, terr = 0; /* offset, rtt */
	int truth = o->emu || o->truth, trc = 0;
	/* the truth and the bounds first, at the check point: read after the measurements (a
	 * busy machine made them take 0.1-0.4 s), they judged the clock that much later */
	int64_t read_ns = hclock_now(g) - start_ns; /* on the global clock, since the check's start */
	if (truth && (trc = hclock_true_error(g, o->emu, &err)) != 0)
		err = NAN;
	/* the bounds at this reading: the truth (reference minus reading is -err) inside? */
	double lo, hi;
	int known = hclock_clock_bounds(g, hclock_now(g), &lo, &hi) == 0;
	if (r == 0) {
		double sum = 0, max = 0, rtt = INFINITY;
		double *rtts = malloc((size_t)p * sizeof(*rtts));
		int n = 0;
		for (int k = 1; k < p; k++)
			if (in[k]) {
				rc = first_err(rc, measure_offset_on(c, g, 0, k, o->npingpongs, NULL, NULL));
				rc = first_err(rc, comm_check(yield_recv(off, 2, MPI_DOUBLE, k, TAG_RESULT, c),
				                              "MPI_Recv (check result)"));
				sum += fabs(off[0]);
				max = fmax(max, fabs(off[0]));
				rtt = fmin(rtt, off[1]);
				if (rtts)
					rtts[n] = off[1];
				n++;
			}
		res->rtt_min_ns = n ? rtt : 0;
		res->rtt_median_ns = n && rtts ? stats_middle(rtts, (size_t)n) : res->rtt_min_ns;
		free(rtts);
		res->max_abs_offset_ns = max;
		res->mean_abs_offset_ns = n ? sum / n : 0;
		res->nmeasured = n;
	} else if (measured) {
		rc = measure_offset_on(c, g, 0, r, o->npingpongs, &off[0], &off[1]);
		if (fault_hit(FAULT_FIT))
			rc = first_err(rc, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in a "
			                                             "check measurement"));
		rc = first_err(rc, comm_check(PMPI_Send(off, 2, MPI_DOUBLE, 0, TAG_RESULT, c),
		                              "MPI_Send (check result)"));
	}
	/* max over the ranks of: |true error|, half-width, truth outside, bounds known, when read */
	double u = o->truth_slack_ns;
	double a[5] = {fabs(err), fmax(-lo, hi),
	               truth && known && !(-err >= lo - u && -err <= hi + u),
	               known, (double)read_ns}, m[5] = {0, 0, 0, 0, 0};
	/* ranks done early must not take the cores of those measuring */
	rc = first_err(rc, comm_check(yield_reduce(a, m, 5, MPI_DOUBLE, MPI_MAX, 0, c),
	                              "MPI_Reduce (check truth)"));
	terr = m[0];
	res->have_truth = truth;
	res->true_max_abs_error_ns = terr;
	res->have_bounds = m[3] > 0;
	res->bound_half_width_ns = m[1];
	res->truth_in_bounds = m[2] == 0;
	res->read_after_ns = m[4];
	return first_err(rc, trc);
}

int64_t check_start_on(int64_t start_ns, int64_t now_ns)
{
	int64_t d = start_ns - now_ns;
	return d > CHECK_UNSYNCED_NS || d < -CHECK_UNSYNCED_NS ? now_ns : start_ns;
}

int check_clock(MPI_Comm comm, hclock_clock *g, const struct check_opts *o,
                struct check_point *res)
{
	int p, r, rc;
	MPI_Comm c;
	if ((rc = comm_private(comm, &c)))
		return rc;
	PMPI_Comm_size(c, &p);
	PMPI_Comm_rank(c, &r);
	char *in = fault_calloc((size_t)p, 1);
	rc = in ? pick_sample(p, o->sample, o->seed, in) : err_set(HCLOCK_ENOMEM, "out of memory");
	if ((rc = comm_agree(c, rc))) { /* nobody measures without the sample */
		free(in);
		return rc;
	}
	/* only rank 0 keeps the sample: p bytes on every rank add up to p^2 when many ranks
	 * share one machine (16,384 simulated ranks: 256 MiB) */
	int measured = in[r];
	if (r != 0) {
		free(in);
		in = NULL;
	}
	int64_t ts = hclock_now(g);
	rc = comm_check(yield_bcast(&ts, 1, MPI_INT64_T, 0, c), "MPI_Bcast (check start)");
	int64_t from = check_start_on(ts, hclock_now(g));
	for (int w = 0; w < o->nwaits; w++) {
		struct check_point pt;
		hclock_wait_until(g, from + (int64_t)llround(o->waits_s[w] * 1e9));
		rc = first_err(rc, check_point(c, g, o, in, measured, from, &pt));
		pt.after_s = o->waits_s[w];
		if (r == 0)
			res[w] = pt;
	}
	free(in);
	return comm_agree(c, rc);
}
