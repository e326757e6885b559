/* stall.c - measurements made through a stall (stall.h). */
#include <math.h>

#include "numerics/stall.h"

double stall_floor(const double *rtt, size_t n)
{
	double f = INFINITY;
	for (size_t i = 0; i < n; i++)
		if (rtt[i] < f)
			f = rtt[i];
	return f;
}

size_t stall_keep(const int64_t *x, const double *y, const double *rtt, size_t n, int64_t *xo,
                  double *yo)
{
	double f = stall_floor(rtt, n);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!stall_judge(rtt[i], f)) {
			xo[k] = x[i];
			yo[k++] = y[i];
		}
	return k;
}
