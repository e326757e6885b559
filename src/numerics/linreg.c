#include <math.h>

#include "numerics/linreg.h"

int linreg_fit(const int64_t *x, const double *y, size_t n, struct lm *out)
{
	if (n < 2)
		return -1;
	/* mean of x without overflow: a running mean of differences from x[0] */
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		mx += ((double)(x[i] - x[0]) - mx) / (double)(i + 1);
		my += (y[i] - my) / (double)(i + 1);
	}
	int64_t x0 = x[0] + (int64_t)llround(mx);
	double sxx = 0, sxy = 0, dx0 = (double)(x0 - x[0]) - mx;
	for (size_t i = 0; i < n; i++) {
		double dx = (double)(x[i] - x0) + dx0; /* x[i] - mean, exactly centred */
		sxx += dx * dx;
		sxy += dx * (y[i] - my);
	}
	if (!(sxx > 0))
		return -1;
	out->slope = sxy / sxx;
	out->x0_ns = x0;
	out->intercept_ns = my + out->slope * dx0; /* the line through (mean, my), at x0 */
	return 0;
}

double lm_offset(const struct lm *m, int64_t x)
{
	return m->intercept_ns + m->slope * (double)(x - m->x0_ns);
}

/*
 * inner: b = a + i1 + s1 (a - x1);  outer: c = b + i2 + s2 (b - x2)
 * c - a = i1 + s1 (a - x1) + i2 + s2 (a - x2 + i1 + s1 (a - x1))
 *       = [i1 + i2 + s2 (x1 - x2 + i1)] + (s1 + s2 + s1 s2)(a - x1)
 */
struct lm lm_compose(const struct lm *outer, const struct lm *inner)
{
	struct lm r;
	r.x0_ns = inner->x0_ns;
	r.intercept_ns = inner->intercept_ns + outer->intercept_ns +
	                 outer->slope * ((double)(inner->x0_ns - outer->x0_ns) + inner->intercept_ns);
	r.slope = inner->slope + outer->slope + inner->slope * outer->slope;
	return r;
}
