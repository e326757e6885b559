/*
 * test_cont_stall.c - the continuous clock read against the truth, for check_cont_stall.py.
 *
 *   test_cont_stall SPEC EMULATE SECONDS [SHRINK [UNTIL]]
 *
 * Syncs with SPEC (a cont(...) spec, its thread driving) on emulated clocks (EMULATE, known
 * truth), then for SECONDS (and at least until UNTIL s after the emulation's epoch, if given)
 * reads the clock about every millisecond on every rank: the true
 * error (reading - truth) and the bounds of hclock_read. Per rank it records whether the
 * truth lay inside the bounds at every read, and the largest step of the error between two
 * consecutive reads against the larger of the bound's half-widths at the two plus what
 * slewing may move the clock in between (a correction is slewed in at up to 500 ppm, the
 * default slew: a read that comes 3 ms late on a busy machine legitimately sees 1.5 us
 * more; news narrows the bound and corrects the estimate within the bound it had): a clock whose
 * estimate jumped by more than it claims to know would show a step above that. SHRINK
 * (default 1) scales every half-width about its middle first (below 1: bounds narrower than
 * the clock's, which the check must catch). HCLOCK_FAULT (at=stall) makes a share of the
 * exchanges go through stalls; the stalls each process drew are printed. One line per rank:
 *   test_cont_stall: rank R node N probes P nobound B outside O max_err_ns E max_step_ns S
 *     step_half_ns H step_dt_ms G worst_ratio Q worst_step_ns W worst_half_ns V worst_dt_ms U
 *     over O2 min_half_ns A max_half_ns Z stale T
 *     exchanges X timeouts Y stalls_child C stalls_parent D sync_s E
 * (step_half_ns, step_dt_ms: the larger half-width of the largest step's two reads and the
 * longest the time between its two samples can have been; worst_ratio: the largest step over
 * its allowance, that half-width plus SLEW x that time; worst_step_ns, worst_half_ns,
 * worst_dt_ms: that step's figures; over: the steps above it; sync_s: when
 * the one-shot sync ended, s after the emulation's epoch, about).
 * Exits 0 unless a call failed; check_cont_stall.py judges the numbers. With
 * TEST_CONT_STALL_CSV=PREFIX every rank also writes its reads to PREFIX.RANK.csv (t_s,
 * err_ns, lo_ns, hi_ns: seconds since the first read, the true error, the bounds of
 * truth - reading; for looking into a failure).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hclock.h"
#include "util/fault.h"

#define SLEW 500e-6 /* cont(...,slew=R)'s default: the fastest a correction moves the clock */

static int rank;

static void die(const char *what)
{
	fprintf(stderr, "test_cont_stall: rank %d: %s: %s\n", rank, what, hclock_last_error());
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int got;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 4 || got < MPI_THREAD_MULTIPLE) {
		if (!rank)
			fprintf(stderr, "usage: test_cont_stall SPEC EMULATE SECONDS [SHRINK [UNTIL]] (needs "
			        "MPI_THREAD_MULTIPLE)\n");
		MPI_Finalize();
		return 2;
	}
	double seconds = atof(argv[3]), shrink = argc > 4 ? atof(argv[4]) : 1,
	       until = argc > 5 ? atof(argv[5]) : 0;
	MPI_Comm app;
	MPI_Comm_dup(MPI_COMM_WORLD, &app);
	hclock_emu *emu;
	hclock_clock *base, *g;
	hclock_sync *s;
	double t_emu = now_s(); /* about the emulation's epoch (its steps are timed from it) */
	if (hclock_emu_create(argv[2], app, &emu) || hclock_base_create("monotonic", emu, &base))
		die("emulation");
	if (hclock_sync_create(argv[1], &s) || hclock_sync_run(s, app, base, &g))
		die("sync");
	double sync_s = now_s() - t_emu;

	long probes = 0, nobound = 0, outside = 0, over = 0, stale = 0;
	double max_err = 0, max_step = 0, step_half = NAN, step_dt = NAN, worst = 0,
	       min_half = INFINITY, max_half = 0, prev = NAN, prev_t = NAN, prev_half = NAN,
	       worst_step = NAN, worst_half = NAN, worst_dt = NAN;
	struct timespec nap = {0, 1000000};
	FILE *csv = NULL;
	if (getenv("TEST_CONT_STALL_CSV")) {
		char name[512];
		snprintf(name, sizeof(name), "%s.%d.csv", getenv("TEST_CONT_STALL_CSV"), rank);
		if ((csv = fopen(name, "w")))
			fprintf(csv, "t_s,err_ns,lo_ns,hi_ns\n");
	}
	double t0 = now_s();
	double t_end = fmax(t0 + seconds, t_emu + until);
	for (; now_s() < t_end; nanosleep(&nap, NULL)) {
		double err, lo, hi;
		hclock_reading r;
		/* the error is sampled somewhere between ta and tb: on a busy machine a read can be
		 * preempted for tens of ms between them, so two samples lie at most tb - the earlier
		 * ta apart, and the slew may move the clock that much in between */
		double ta = now_s();
		hclock_true_error(g, emu, &err);
		hclock_read(g, &r);
		probes++;
		stale += r.status == HCLOCK_BOUNDS_STALE;
		if (hclock_clock_bounds(g, r.now_ns, &lo, &hi)) { /* truth - reading in [lo, hi] */
			nobound++;
			if (csv)
				fprintf(csv, "%.6f,%.1f,nan,nan\n", ta - t0, err);
			prev = NAN;
			continue;
		}
		double tb = now_s();
		if (csv)
			fprintf(csv, "%.6f,%.1f,%.1f,%.1f\n", ta - t0, err, lo, hi);
		double mid = (lo + hi) / 2, half = (hi - lo) / 2 * shrink;
		lo = mid - half;
		hi = mid + half;
		outside += !(-err >= lo - 1 && -err <= hi + 1);
		max_err = fmax(max_err, fabs(err));
		min_half = fmin(min_half, half);
		max_half = fmax(max_half, half);
		if (!isnan(prev)) {
			/* the larger half-width of the two: news narrows the bound and corrects the
			 * estimate within the bound it had (a parent's correction reaches a child's
			 * composed clock at once) */
			double gap = tb - prev_t, step = fabs(err - prev), wide = fmax(half, prev_half),
			       allow = wide + SLEW * gap * 1e9;
			over += step > allow + 1;
			if (step > max_step) {
				max_step = step;
				step_half = wide;
				step_dt = gap * 1e3;
			}
			if (step / fmax(allow, 1) > worst) {
				worst = step / fmax(allow, 1);
				worst_step = step;
				worst_half = wide;
				worst_dt = gap * 1e3;
			}
		}
		prev = err;
		prev_t = ta;
		prev_half = half;
	}
	if (csv)
		fclose(csv);
	struct hclock_sync_stats st = {0};
	if (hclock_sync_stats(s, &st))
		die("stats");
	if (hclock_sync_stop(s))
		die("stop");
	printf("test_cont_stall: rank %d node %d probes %ld nobound %ld outside %ld max_err_ns %.1f "
	       "max_step_ns %.1f step_half_ns %.1f step_dt_ms %.3f worst_ratio %.4f worst_step_ns %.1f "
	       "worst_half_ns %.1f worst_dt_ms %.3f over %ld "
	       "min_half_ns %.1f "
	       "max_half_ns %.1f stale %ld exchanges %llu timeouts %llu stalls_child %llu "
	       "stalls_parent %llu sync_s %.3f\n", rank, hclock_emu_node(emu), probes, nobound, outside,
	       max_err, max_step, step_half, step_dt, worst, worst_step, worst_half, worst_dt, over,
	       min_half, max_half, stale,
	       (unsigned long long)st.exchanges, (unsigned long long)st.timeouts,
	       (unsigned long long)fault_stalls(FAULT_STALL_CHILD),
	       (unsigned long long)fault_stalls(FAULT_STALL_PARENT), sync_s);
	fflush(stdout);
	hclock_sync_free(s);
	hclock_clock_free(g);
	hclock_clock_free(base);
	hclock_emu_free(emu);
	MPI_Comm_free(&app);
	MPI_Finalize();
	return 0;
}
