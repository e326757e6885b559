/* finwatch.c - MPI_Finalize with an end (finwatch.h). */
#include "util/finwatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

/* the run is over: a shutdown takes milliseconds */
#define FINALIZE_LIMIT_NS 30000000000ll
/* how often ready() is asked */
#define READY_POLL_NS 100000000ll

struct fin_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done; /* the shutdown returned */
	const struct finwatch_how *how;
};

#ifndef HCLOCK_SMPI
/* the line and the exit; waited_ns since the limit's start; whole: the wait for the others
 * and the shutdown's limit ran out without ready() saying every process was done */
static void fin_exit(const struct fin_watch *w, int64_t waited_ns, int whole)
{
	const struct finwatch_how *h = w->how;
	if (whole)
		err_line(h->who, "rank %d: MPI_Finalize did not return within %g s (HCLOCK_TIMEOUT "
		         "for the others, then the shutdown's limit) without seeing that %s: the MPI "
		         "library's shutdown waits for another process; %s", h->rank,
		         (double)waited_ns * 1e-9, h->ready_what, h->after);
	else
		err_line(h->who, "rank %d: MPI_Finalize did not return within %g s (HCLOCK_TIMEOUT, "
		         "30 s at most)%s%s: the MPI library's shutdown waits for another process; %s",
		         h->rank, (double)waited_ns * 1e-9, h->ready ? " after " : "",
		         h->ready ? h->ready_what : "", h->after);
	_exit(h->code);
}

static void *fin_watch(void *arg)
{
	struct fin_watch *w = arg;
	const struct finwatch_how *h = w->how;
	int64_t wait = wait_limit_ns();
	int64_t limit = wait < FINALIZE_LIMIT_NS ? wait : FINALIZE_LIMIT_NS;
	int64_t whole = wait + limit; /* for the others, then for the shutdown */
	int64_t t0 = real_now_ns(), start = h->ready ? -1 : t0; /* the limit's start, real ns */
	pthread_mutex_lock(&w->mu);
	while (!w->done) {
		int64_t now = real_now_ns();
		if (start < 0) {
			pthread_mutex_unlock(&w->mu);
			int ok = h->ready(h->arg);
			pthread_mutex_lock(&w->mu);
			if (w->done)
				break;
			now = real_now_ns();
			if (ok)
				start = now;
			else if (now - t0 >= whole)
				fin_exit(w, now - t0, 1);
		}
		if (start >= 0 && now - start >= limit)
			fin_exit(w, limit, 0);
		int64_t left = start >= 0 ? start + limit - now : READY_POLL_NS;
		struct timespec ts = mono_deadline(left < READY_POLL_NS ? left : READY_POLL_NS);
		(void)pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}
#endif

int finwatch_finalize(int (*fin)(void), const struct finwatch_how *how)
{
	fflush(stdout);
	fflush(stderr);
	struct fin_watch w = {.how = how};
	pthread_t th;
	mono_cond_init(&w.cv);
	pthread_mutex_init(&w.mu, NULL);
#ifdef HCLOCK_SMPI
	int watched = 0; /* simulated processes share one process: no exit of one of them */
	(void)th;
#else
	int watched = wait_limit_ns() != INT64_MAX && !pthread_create(&th, NULL, fin_watch, &w);
#endif
	if (watched && fault_hit(FAULT_FINALIZE))
		for (;;) /* test hook: this process is kept in its shutdown */
			pause();
	int rc = fin();
	if (watched) {
		pthread_mutex_lock(&w.mu);
		w.done = 1;
		pthread_cond_signal(&w.cv);
		pthread_mutex_unlock(&w.mu);
		pthread_join(th, NULL);
	}
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	return rc;
}
