/*
 * test_fault.c SPEC... - the no-hang rule under injected faults (util/fault.h). For every
 * spec, every fault point (alloc, exchange, fit, agree) at several passages k, and every
 * rank position, one rank is made to fail and hclock_sync_run must return on every rank
 * with the same code and the same one-line error (or succeed everywhere when the fault
 * never fired: e.g. 'none' has no exchange). A hang is caught by the launcher's timeout
 * (tests/mpi/mpirun.sh); the last "case" line printed names the case that hung. Then
 * hclock_measure_offset and hclock_harmonize, and two ranks given different specs. Specs
 * cont(...) get cont_cases: faults at start, and in a running exchange reported by the stop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hclock.h"
#include "util/fault.h"

#define LINE 400

static int rank, size, fails, cases;

/* Gather everyone's outcome on rank 0 and judge it. */
static void judge(const char *what, int rc, int fired_here)
{
	struct {
		int rc, fired;
		char line[LINE];
	} mine, *all = NULL;
	memset(&mine, 0, sizeof(mine));
	mine.rc = rc;
	mine.fired = fired_here;
	snprintf(mine.line, LINE, "%s", rc ? hclock_last_error() : "");
	if (rank == 0)
		all = calloc((size_t)size, sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
	           MPI_COMM_WORLD);
	if (rank != 0)
		return;
	int fired = 0, bad = 0;
	for (int i = 0; i < size; i++)
		fired |= all[i].fired;
	for (int i = 0; i < size; i++) {
		if (all[i].rc != all[0].rc || strcmp(all[i].line, all[0].line))
			bad = 1;
		if (strchr(all[i].line, '\n'))
			bad = 1;
	}
	if (fired ? all[0].rc == 0 : all[0].rc != 0)
		bad = 1;
	cases++;
	printf("  -> %s, rc %d on every rank%s%s%s\n", fired ? "fired" : "not fired", all[0].rc,
	       all[0].rc ? ": '" : "", all[0].line, all[0].rc ? "'" : "");
	if (bad) {
		fails++;
		fprintf(stderr, "FAIL %s (fault %s):\n", what, fired ? "fired" : "did not fire");
		for (int i = 0; i < size; i++)
			fprintf(stderr, "  rank %d: rc %d fired %d '%s'\n", i, all[i].rc, all[i].fired,
			        all[i].line);
	}
	free(all);
}

/* the sync of spec, or NULL (counted as a failure) */
static hclock_sync *make_sync(const char *spec)
{
	hclock_sync *s;
	if (hclock_sync_create(spec, &s)) {
		if (rank == 0)
			fprintf(stderr, "FAIL: spec %s: %s\n", spec, hclock_last_error());
		fails++;
		return NULL;
	}
	return s;
}

/* arm HCLOCK_FAULT for one case and name it (what, on rank 0's stdout first: a hang's last
 * line) */
static void start_case(const char *spec, const char *at, int k, int victim, char *what,
                       size_t len)
{
	char val[64];
	snprintf(val, sizeof(val), "rank=%d,at=%s,k=%d", victim, at, k);
	snprintf(what, len, "np %d sync %s HCLOCK_FAULT=%s", size, spec, val);
	if (rank == 0) {
		printf("case %s\n", what);
		fflush(stdout);
	}
	fault_configure(val, rank);
}

static void sync_cases(const char *spec, hclock_clock *base)
{
	static const struct {
		const char *at;
		int k;
	} points[] = {{"alloc", 1}, {"alloc", 2}, {"alloc", 4}, {"exchange", 1}, {"exchange", 3},
	              {"exchange", 9}, {"fit", 1}, {"fit", 2}, {"agree", 1}};
	hclock_sync *s = make_sync(spec);
	if (!s)
		return;
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		for (int victim = 0; victim < size; victim++) {
			char what[256];
			start_case(spec, points[i].at, points[i].k, victim, what, sizeof(what));
			hclock_clock *g = NULL;
			int rc = hclock_sync_run(s, MPI_COMM_WORLD, base, &g);
			judge(what, rc, fault_fired());
			if (!rc != !!g)
				fails++;
			hclock_clock_free(g);
		}
	fault_configure(NULL, rank);
	hclock_sync_free(s);
}

/* hclock_measure_offset and hclock_harmonize with a fault in the exchange, each rank a
 * victim in turn: both ends return (the client reports the fault). */
static void offset_cases(hclock_clock *base)
{
	for (int victim = 0; victim < size; victim++)
		for (int client = 1; client < size; client++) {
			char val[64];
			double off = 0, rtt = 0;
			snprintf(val, sizeof(val), "rank=%d,at=exchange,k=2", victim);
			fault_configure(val, rank);
			int rc = hclock_measure_offset(MPI_COMM_WORLD, base, 0, client, 5, &off, &rtt);
			int expect = (rank == victim && (rank == 0 || rank == client));
			if (!!rc != expect) {
				fprintf(stderr, "FAIL rank %d: measure_offset client %d victim %d: rc %d\n", rank,
				        client, victim, rc);
				fails++;
			}
			MPI_Barrier(MPI_COMM_WORLD);
		}
	fault_configure(NULL, rank);
	int64_t start, late;
	if (hclock_harmonize(MPI_COMM_WORLD, base, 100000, &start, &late))
		fails++;
}

/* The continuous clock, driven by the application's progress calls and by its
 * thread: a fault at start (in the one-shot sync or the engine's set-up) fails the run on
 * every rank alike; a fault in a running exchange (at=cont) stops that process's engine and
 * hclock_sync_stop then reports the same line on every rank; the clock stays readable. */
static void run_for(hclock_sync *s, double secs)
{
	double t0 = MPI_Wtime();
	struct timespec nap = {0, 200000};
	while (MPI_Wtime() - t0 < secs) {
		if (hclock_sync_progress(s))
			break; /* a failed engine stops exchanging; stop reports it */
		nanosleep(&nap, NULL);
	}
}

static void cont_cases(const char *spec, hclock_clock *base)
{
	static const struct {
		const char *at;
		int k;
	} points[] = {{"alloc", 1}, {"alloc", 4}, {"exchange", 3}, {"fit", 1}, {"agree", 1},
	              {"cont", 1}, {"cont", 3}};
	hclock_sync *s = make_sync(spec);
	if (!s)
		return;
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		for (int victim = 0; victim < size; victim++) {
			char what[256];
			int running = !strcmp(points[i].at, "cont");
			start_case(spec, points[i].at, points[i].k, victim, what, sizeof(what));
			hclock_clock *g = NULL;
			int rc = hclock_sync_run(s, MPI_COMM_WORLD, base, &g);
			if (running) { /* the start never sees it */
				if (rc) {
					fprintf(stderr, "FAIL rank %d: %s: the run failed: %s\n", rank, what,
					        hclock_last_error());
					fails++;
				}
			} else {
				judge(what, rc, fault_fired());
			}
			if (!rc != !!g)
				fails++;
			if (!rc) {
				run_for(s, 0.25);
				int64_t a = hclock_now(g);
				rc = hclock_sync_stop(s);
				/* a fault that did not fire in the running phase (the root has no parent)
				 * must leave the stop clean */
				judge(running ? "stop after a running fault" : "stop", rc, running && fault_fired());
				if (hclock_now(g) < a) {
					fprintf(stderr, "FAIL rank %d: %s: the clock went back at stop\n", rank, what);
					fails++;
				}
			}
			hclock_clock_free(g);
		}
	fault_configure(NULL, rank);
	hclock_sync_free(s);
}

/* two ranks given different specs: every rank refuses before any exchange */
static void mismatch_case(hclock_clock *base)
{
	hclock_sync *s;
	hclock_clock *g = NULL;
	hclock_sync_create(rank == size - 1 ? "jk/3/skampi/2" : "hca3/3/skampi/2", &s);
	int rc = hclock_sync_run(s, MPI_COMM_WORLD, base, &g);
	judge("mismatched specs", rc, 1);
	if (rc != HCLOCK_EMISMATCH || !strstr(hclock_last_error(), "jk/3/skampi/2")) {
		fprintf(stderr, "FAIL rank %d: mismatch: rc %d '%s'\n", rank, rc, hclock_last_error());
		fails++;
	}
	hclock_sync_free(s);
}

int main(int argc, char **argv)
{
	hclock_emu *emu;
	hclock_clock *base;
	int got;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (hclock_emu_create("offset=1e-3,skew=1e-4,nodes=2,seed=3", MPI_COMM_WORLD, &emu) ||
	    hclock_base_create("monotonic", emu, &base)) {
		fprintf(stderr, "rank %d: set-up: %s\n", rank, hclock_last_error());
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "cont(", 5))
			sync_cases(argv[i], base);
		else if (got == MPI_THREAD_MULTIPLE || strstr(argv[i], "drive=progress"))
			cont_cases(argv[i], base);
		else if (rank == 0)
			printf("skipped %s: the MPI library gave no MPI_THREAD_MULTIPLE\n", argv[i]);
	offset_cases(base);
	mismatch_case(base);
	int all;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("test_fault: %d cases on %d ranks, %d failed\n", cases, size, all);
	hclock_clock_free(base);
	hclock_emu_free(emu);
	MPI_Finalize();
	return all ? 1 : 0;
}
