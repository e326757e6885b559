#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"

int64_t real_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void real_sleep_ns(int64_t d_ns)
{
	if (d_ns <= 0)
		return;
	struct timespec ts = {(time_t)(d_ns / 1000000000), (long)(d_ns % 1000000000)};
	nanosleep(&ts, NULL);
}

void real_delay_ns(int64_t d_ns)
{
	if (d_ns <= 0)
		return;
	int64_t end = real_now_ns() + d_ns;
#ifdef HCLOCK_SMPI
	/* simulated time only advances through MPI calls and sleeps */
	real_sleep_ns(d_ns);
	(void)end;
#else
	while (1) {
		int64_t left = end - real_now_ns();
		if (left <= 0)
			break;
		if (left > 2000000) /* sleep all but the last ~1 ms */
			real_sleep_ns(left - 1000000);
	}
#endif
}

int64_t wait_limit_ns(void)
{
	static int64_t cached = -1; /* the same value in every thread: benign if raced */
	if (cached >= 0)
		return cached;
	const char *v = getenv("HCLOCK_TIMEOUT");
	double s = WAIT_LIMIT_DEFAULT_S;
	if (v && *v && parse_number_str(v, 0, 1e7, &s)) {
		err_line("hclock", "HCLOCK_TIMEOUT='%s' is not a number of seconds from 0 to 1e7 (0: "
		         "no limit); using %d", v, WAIT_LIMIT_DEFAULT_S);
		s = WAIT_LIMIT_DEFAULT_S;
	}
	cached = s > 0 ? (int64_t)(s * 1e9) : INT64_MAX;
	return cached;
}

void mono_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

struct timespec mono_deadline(int64_t d_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + d_ns;
	ts.tv_sec = end / 1000000000;
	ts.tv_nsec = end % 1000000000;
	return ts;
}
