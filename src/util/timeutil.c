#include <time.h>

#include "util/timeutil.h"

int64_t real_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void real_delay_ns(int64_t d_ns)
{
	if (d_ns <= 0)
		return;
	int64_t end = real_now_ns() + d_ns;
#ifdef HCLOCK_SMPI
	/* simulated time only advances through MPI calls and sleeps */
	struct timespec ts = {d_ns / 1000000000, d_ns % 1000000000};
	nanosleep(&ts, NULL);
	(void)end;
#else
	while (1) {
		int64_t left = end - real_now_ns();
		if (left <= 0)
			break;
		if (left > 2000000) { /* sleep all but the last ~1 ms */
			int64_t s = left - 1000000;
			struct timespec ts = {s / 1000000000, s % 1000000000};
			nanosleep(&ts, NULL);
		}
	}
#endif
}
