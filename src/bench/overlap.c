/* overlap.c - the compute phase of --overlap and the overlap figure (bench/overlap.h). */
#include <math.h>

#include "bench/overlap.h"
#include "util/timeutil.h"

static volatile double sink;

void overlap_compute(uint64_t iters)
{
	/* a dependency chain of multiply-adds: no memory traffic, not vectorizable; the start
	 * is read from and the result kept in a volatile, so the compiler can neither fold the
	 * loop (from a known start it would find 1.0 a fixed point) nor drop it */
	double x = sink + 1.0;
	for (uint64_t i = 0; i < iters; i++)
		x = x * 0.999999999 + 1e-9;
	sink = x;
}

double overlap_rate(void)
{
	double best = 0;
	for (int k = 0; k < 3; k++) {
		uint64_t n = 1024;
		for (;;) {
			int64_t t0 = real_now_ns();
			overlap_compute(n);
			int64_t dt = real_now_ns() - t0;
			if (dt >= 2000000) {
				double r = (double)n / (double)dt;
				best = r > best ? r : best;
				break;
			}
			n *= 2;
		}
	}
	return best;
}

double overlap_pct(double t_pure_ns, double t_total_ns, double t_cpu_ns)
{
	if (!(t_pure_ns > 0))
		return NAN;
	double o = 100.0 * (1.0 - (t_total_ns - t_cpu_ns) / t_pure_ns);
	return o > 0 ? o : 0;
}
