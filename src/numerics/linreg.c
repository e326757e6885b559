#include <math.h>
#include <stdlib.h>

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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int linreg_fit_robust(const int64_t *x, const double *y, size_t n, struct lm *out, size_t *kept)
{
	struct lm first;
	if (linreg_fit(x, y, n, &first))
		return -1;
	*out = first;
	if (kept)
		*kept = n;
	if (n < 8)
		return 0;
	double *r = malloc(n * sizeof(*r));
	int64_t *x2 = malloc(n * sizeof(*x2));
	double *y2 = malloc(n * sizeof(*y2));
	if (!r || !x2 || !y2)
		goto out; /* keep the plain fit */
	for (size_t i = 0; i < n; i++)
		r[i] = fabs(y[i] - lm_offset(&first, x[i]));
	qsort(r, n, sizeof(*r), cmp_double);
	double mad = r[n / 2], limit = 4 * 1.4826 * mad;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(y[i] - lm_offset(&first, x[i])) <= limit) {
			x2[m] = x[i];
			y2[m++] = y[i];
		}
	if (m < n && m >= n / 2 && !linreg_fit(x2, y2, m, out) && kept)
		*kept = m;
out:
	free(r);
	free(x2);
	free(y2);
	return 0;
}

double lm_offset(const struct lm *m, int64_t x)
{
	return m->intercept_ns + m->slope * (double)diff_ns(x, m->x0_ns);
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
	                 outer->slope * ((double)diff_ns(inner->x0_ns, outer->x0_ns) + inner->intercept_ns);
	r.slope = inner->slope + outer->slope + inner->slope * outer->slope;
	return r;
}
