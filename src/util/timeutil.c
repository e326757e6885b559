#include <time.h>

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
