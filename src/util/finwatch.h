/*
 * finwatch.h - MPI_Finalize with an end.
 *
 * When a run is over its results are out, and an MPI library's shutdown takes milliseconds;
 * yet MPICH 4.0.2 over UCX's TCP keeps one process in MPI_Finalize for ever in a few
 * percent of launches (its peer, done with its own disconnect, sits in a PMI barrier that
 * makes no progress on the disconnect the first one waits for; docs/tests.md, "Flaky tests
 * found"). finwatch_finalize calls the shutdown with a watch: past the limit the process
 * prints one line and exits with the code given. MPI-free: the caller passes its
 * PMPI_Finalize. Under SimGrid SMPI (one process holds every simulated rank) and with
 * HCLOCK_TIMEOUT=0 there is no watch.
 *
 * The limit: the wait limit (HCLOCK_TIMEOUT, util/timeutil.h), 30 s at most, counted from the
 * moment the caller's ready() first says every process is done with its own work (polled
 * every 100 ms; NULL: from the call). A shutdown waits for every process, so a peer still
 * busy is not taken for a hang. While ready() has not said so, the wait for the others is
 * one more wait for another process: the wait limit, then the shutdown's, count from the
 * call (ready() may never see a peer's mark, e.g. in a directory not shared).
 */
#ifndef HCLOCK_UTIL_FINWATCH_H
#define HCLOCK_UTIL_FINWATCH_H

struct finwatch_how {
	const char *who;   /* the line's prefix, e.g. "hclock check" */
	int rank;          /* this process's rank, in the line */
	int code;          /* its exit status past the limit */
	const char *after; /* what that exit means, e.g. "exiting with the run's code 0" */
	int (*ready)(void *arg); /* 1 once every process is done (NULL: at once) */
	void *arg;
	const char *ready_what; /* what ready() waits for, in the line: "every process had
	                         * written its part" (NULL with ready NULL) */
};

/* Calls fin() and returns what it returned. HCLOCK_FAULT's at=finalize keeps this process in
 * it (a test). */
int finwatch_finalize(int (*fin)(void), const struct finwatch_how *how);

#endif
