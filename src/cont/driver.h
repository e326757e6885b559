/*
 * driver.h - the continuous clock's background thread: calls engine_drive and sleeps as
 * long as it says (a condition variable, so a stop wakes it at once). All signals are
 * blocked in it: the application's handlers run in the application's threads.
 */
#ifndef HCLOCK_CONT_DRIVER_H
#define HCLOCK_CONT_DRIVER_H

#include "cont/engine.h"

struct driver;

/* Start the thread on e (which must outlive it). HCLOCK_ENOMEM or HCLOCK_EUNSUPP (no
 * thread could be created). */
int driver_start(struct engine *e, struct driver **out);
/* Stop and join it; returns the engine's error the thread saw (0 if none). NULL: no-op. */
int driver_stop(struct driver *d);
/* CPU time the thread used so far, ns (CLOCK_THREAD_CPUTIME_ID of the thread). */
int64_t driver_cpu_ns(const struct driver *d);

#endif
