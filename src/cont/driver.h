/*
 * driver.h - the continuous clock's background thread: calls engine_progress, sleeps until
 * the engine's next time (a condition variable, so a stop wakes it at once), and polls only
 * while an exchange is under way: a short spin (a reply on an idle core comes within a few
 * us), then naps from 50 us, doubling up to 1 ms. All signals are blocked in it: the
 * application's handlers run in the application's threads.
 */
#ifndef HCLOCK_CONT_DRIVER_H
#define HCLOCK_CONT_DRIVER_H

#include "cont/engine.h"

struct driver;

/* The driving rule, for the thread and for a caller that drives by itself (hclock check
 * waiting on a drive=progress clock): after engine_progress, poll again at once while an
 * exchange is under way and its messages flow (100 us after the last), then after naps of
 * 50 us doubling up to 1 ms, else sleep until the engine's next time. */
struct drive_state {
	int64_t busy_since; /* base time the current spin started, -1: not spinning */
	uint64_t events;
	int64_t poll_ns;    /* the next nap while waiting, ns */
};
#define DRIVE_STATE_INIT {-1, 0, 0}
/* One step: progress e (try: another thread may be in it), then *sleep_ns, how long the
 * caller may sleep (0: call again at once). Returns the engine's error (it stops then). */
int drive_step(struct engine *e, struct drive_state *st, int64_t *sleep_ns);

/* Start the thread on e (which must outlive it). HCLOCK_ENOMEM or HCLOCK_EUNSUPP (no
 * thread could be created). */
int driver_start(struct engine *e, struct driver **out);
/* Stop and join it; returns the engine's error the thread saw (0 if none). NULL: no-op. */
int driver_stop(struct driver *d);
/* CPU time the thread used so far, ns (CLOCK_THREAD_CPUTIME_ID of the thread). */
int64_t driver_cpu_ns(const struct driver *d);

#endif
