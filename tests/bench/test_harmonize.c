/*
 * test_harmonize.c - hclock_harmonize under emulated clocks: do the processes really leave
 * at one common time?
 *
 * usage: test_harmonize EMULATE SYNC REPS BOUND_NS [MIN_FRACTION [SLACK_US [rel]]]
 *
 * After a sync on emulated clocks (every rank a different offset and frequency), each of
 * REPS harmonized starts is followed at once by a reading g of the global clock and the
 * true error e of that clock (hclock_true_error: g minus the reference's clock at the same
 * true instant). g - e is then the reference clock's reading at the instant this rank was
 * released: the true release time on one time scale for all ranks. The spread of it over
 * the ranks (last minus first) must be within BOUND_NS in at least MIN_FRACTION (default
 * 0.9) of the starts that no rank was late for, and its median within BOUND_NS / 2. As a
 * cross-check the same spread is computed from the machine's CLOCK_MONOTONIC (the
 * emulation's true time), which needs no model at all.
 *
 * With "rel", the bound applies to what harmonize adds to the sync's own error: the true
 * release spread minus the spread of the ranks' true clock errors e at that start. That is
 * the test for more processes than cores, where the sync itself is only as good as the
 * scheduler lets it be (the sync's accuracy is tested in tests/mpi).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock.h"
#include "util/timeutil.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (argc < 5) {
		if (rank == 0)
			fprintf(stderr, "usage: test_harmonize EMULATE SYNC REPS BOUND_NS "
			        "[MIN_FRACTION [SLACK_US]]\n");
		MPI_Finalize();
		return 2;
	}
	int reps = atoi(argv[3]);
	double bound = atof(argv[4]), minfrac = argc > 5 ? atof(argv[5]) : 0.9;
	int relative = argc > 7 && !strcmp(argv[7], "rel");
	hclock_emu *emu = NULL;
	hclock_clock *base = NULL, *g = NULL;
	hclock_sync *s = NULL;
	int rc = hclock_emu_create(argv[1], MPI_COMM_WORLD, &emu);
	if (!rc)
		rc = hclock_base_create(NULL, emu, &base);
	if (!rc)
		rc = hclock_sync_create(argv[2], &s);
	if (!rc)
		rc = hclock_sync_run(s, MPI_COMM_WORLD, base, &g);
	if (rc) {
		fprintf(stderr, "test_harmonize: rank %d: %s\n", rank, hclock_last_error());
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* slack (default 5 ms): far above the broadcast latency even on an oversubscribed,
	 * loaded machine, so lateness is rare (late starts are counted and left out) */
	int64_t slack = argc > 6 ? (int64_t)(atof(argv[6]) * 1e3) : 5000000;
	double *rel = malloc((size_t)reps * sizeof(double)), *real = malloc((size_t)reps * sizeof(double));
	double *err = malloc((size_t)reps * sizeof(double));
	int *late = malloc((size_t)reps * sizeof(int));
	/* up to 3 attempts: a burst of other load on a shared machine can spoil one */
	int fail = 1;
	for (int attempt = 1; attempt <= 3 && fail; attempt++) {
		int64_t start0 = 0;
		for (int i = 0; i < reps; i++) {
			int64_t start, l;
			hclock_harmonize(MPI_COMM_WORLD, g, slack, &start, &l);
			int64_t now = hclock_now(g);
			int64_t rn = real_now_ns();
			double e;
			hclock_true_error(g, emu, &e);
			if (i == 0)
				start0 = start;
			rel[i] = (double)(now - start0) - e; /* relative to the first start: fits a double */
			real[i] = (double)rn;
			err[i] = e;
			late[i] = l > 0;
		}
		double *all = rank == 0 ? malloc((size_t)reps * p * 3 * sizeof(double)) : NULL;
		int *alllate = rank == 0 ? malloc((size_t)reps * p * sizeof(int)) : NULL;
		double *mine = malloc((size_t)reps * 3 * sizeof(double));
		for (int i = 0; i < reps; i++) {
			mine[3 * i] = rel[i];
			mine[3 * i + 1] = real[i];
			mine[3 * i + 2] = err[i];
		}
		MPI_Gather(mine, 3 * reps, MPI_DOUBLE, all, 3 * reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Gather(late, reps, MPI_INT, alllate, reps, MPI_INT, 0, MPI_COMM_WORLD);
		fail = 0;
		if (rank == 0) {
			double *spread = malloc((size_t)reps * sizeof(double));
			double *rspread = malloc((size_t)reps * sizeof(double));
			double maxerr = 0;
			int n = 0, within = 0, nlate = 0;
			for (int i = 0; i < reps; i++) {
				double lo = INFINITY, hi = -INFINITY, rlo = INFINITY, rhi = -INFINITY;
				double elo = INFINITY, ehi = -INFINITY;
				int any = 0;
				for (int r = 0; r < p; r++) {
					const double *v = &all[(size_t)r * 3 * reps + 3 * i];
					lo = fmin(lo, v[0]);
					hi = fmax(hi, v[0]);
					rlo = fmin(rlo, v[1]);
					rhi = fmax(rhi, v[1]);
					maxerr = fmax(maxerr, fabs(v[2]));
					elo = fmin(elo, v[2]);
					ehi = fmax(ehi, v[2]);
					any |= alllate[(size_t)r * reps + i];
				}
				if (any) {
					nlate++;
					continue;
				}
				spread[n] = hi - lo - (relative ? ehi - elo : 0);
				rspread[n] = rhi - rlo - (relative ? ehi - elo : 0);
				within += spread[n] <= bound && rspread[n] <= bound;
				n++;
			}
			qsort(spread, (size_t)n, sizeof(double), cmp);
			qsort(rspread, (size_t)n, sizeof(double), cmp);
			double med = n ? spread[n / 2] : INFINITY, rmed = n ? rspread[n / 2] : INFINITY;
			double frac = n ? (double)within / n : 0;
			printf("test_harmonize: %d ranks, %d starts (%d with a late rank): true release spread%s "
			       "median %.0f ns, p75 %.0f ns, max %.0f ns; from CLOCK_MONOTONIC median %.0f ns, max %.0f ns; "
			       "max |true clock error| %.0f ns; %.1f%% within %.0f ns\n", p, reps, nlate,
			       relative ? " beyond the clock errors' spread" : "", med,
			       n ? spread[3 * n / 4] : NAN, n ? spread[n - 1] : NAN, rmed, n ? rspread[n - 1] : NAN, maxerr, 100 * frac,
			       bound);
			if (n < 20 || frac < minfrac || med > bound / 2 || rmed > bound / 2) {
				printf("test_harmonize: FAIL (need >= %.0f%% within %.0f ns and medians <= %.0f ns)\n",
				       100 * minfrac, bound, bound / 2);
				fail = 1;
			}
			free(spread);
			free(rspread);
		}
		MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
		free(all);
		free(alllate);
		free(mine);
		if (fail && attempt < 3 && rank == 0)
			printf("test_harmonize: attempt %d failed, trying again\n", attempt);
	}
	free(rel);
	free(real);
	free(err);
	free(late);
	hclock_clock_free(g);
	hclock_clock_free(base);
	hclock_sync_free(s);
	hclock_emu_free(emu);
	MPI_Finalize();
	return fail;
}
