#include <math.h>
#include <stdlib.h>

#include "mpi/check.h"
#include "mpi/yield.h"
#include "util/err.h"
#include "util/rng.h"

/* The same random sample on every rank: a partial Fisher-Yates shuffle of 1..p-1. */
static int pick_sample(int p, double frac, uint64_t seed, char *in)
{
	int k = (int)ceil(frac * (p - 1));
	int *idx = malloc((size_t)p * sizeof(*idx));
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

int check_clock(MPI_Comm comm, hclock_clock *g, const struct check_opts *o,
                struct check_point *res)
{
	int p, r, rc = 0;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	char *in = calloc((size_t)p, 1);
	if (!in)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	if ((rc = pick_sample(p, o->sample, o->seed, in))) {
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
	int truth = o->emu || o->truth;
	int64_t ts = hclock_now(g);
	MPI_Bcast(&ts, 1, MPI_INT64_T, 0, comm);
	for (int w = 0; w < o->nwaits; w++) {
		double off[2] = {0, 0}, err = 0, terr = 0; /* offset, rtt */
		hclock_wait_until(g, ts + (int64_t)llround(o->waits_s[w] * 1e9));
		if (r == 0) {
			double sum = 0, max = 0, rtt = INFINITY;
			int n = 0;
			for (int c = 1; c < p; c++)
				if (in[c]) {
					hclock_measure_offset(comm, g, 0, c, o->npingpongs, NULL, NULL);
					yield_recv(off, 2, MPI_DOUBLE, c, 0x4850, comm);
					sum += fabs(off[0]);
					max = fmax(max, fabs(off[0]));
					rtt = fmin(rtt, off[1]);
					n++;
				}
			res[w].rtt_min_ns = n ? rtt : 0;
			res[w].after_s = o->waits_s[w];
			res[w].max_abs_offset_ns = max;
			res[w].mean_abs_offset_ns = n ? sum / n : 0;
			res[w].nmeasured = n;
		} else if (measured) {
			hclock_measure_offset(comm, g, 0, r, o->npingpongs, &off[0], &off[1]);
			MPI_Send(off, 2, MPI_DOUBLE, 0, 0x4850, comm);
		}
		int trc = 0;
		if (truth && (trc = hclock_true_error(g, o->emu, &err)) != 0)
			err = NAN;
		double a = fabs(err);
		/* ranks done early must not take the cores of those measuring */
		yield_reduce(&a, &terr, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
		if (r == 0) {
			res[w].have_truth = truth;
			res[w].true_max_abs_error_ns = terr;
		}
		if (trc && !rc)
			rc = trc;
	}
	free(in);
	return rc;
}
