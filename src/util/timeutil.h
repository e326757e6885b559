/* timeutil.h - the machine's real time (the emulation's ground truth) and waiting on it. */
#ifndef HCLOCK_UTIL_TIMEUTIL_H
#define HCLOCK_UTIL_TIMEUTIL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns (simulated time under SimGrid SMPI). */
int64_t real_now_ns(void);
/* Pass d_ns of real time: sleep while far, spin for the last stretch (under SimGrid SMPI,
 * HCLOCK_SMPI: one sleep of simulated time, the only way a wait advances it). */
void real_delay_ns(int64_t d_ns);
/* Sleep d_ns (no spin; nothing for d_ns <= 0). */
void real_sleep_ns(int64_t d_ns);

/* A condition variable whose timed waits count on CLOCK_MONOTONIC (so that a step of the
 * wall clock moves no deadline), and the deadline d_ns from now on that clock for
 * pthread_cond_timedwait. */
void mono_cond_init(pthread_cond_t *cv);
struct timespec mono_deadline(int64_t d_ns);

/* The longest any of hclock's waits for another process may last, ns: HCLOCK_TIMEOUT in
 * seconds (default WAIT_LIMIT_DEFAULT_S; 0: no limit, INT64_MAX). Read once; a value that is
 * not a number of seconds gets one line on stderr and the default. */
#define WAIT_LIMIT_DEFAULT_S 300
int64_t wait_limit_ns(void);

#endif
