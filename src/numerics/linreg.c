#include <math.h>
#include <stdlib.h>

#include "numerics/linreg.h"

int linreg_fit(const int64_t *x, const double *y, size_t n, struct lm *out)
{
	if (n < 2)
		return LINREG_TOO_FEW;
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
		return LINREG_TOO_FEW;
	out->slope = sxy / sxx;
	out->x0_ns = x0;
	out->intercept_ns = my + out->slope * dx0; /* the line through (mean, my), at x0 */
	return LINREG_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* standard error of m's slope over the points (x, y) it was fitted to */
static double slope_se(const int64_t *x, const double *y, size_t n, const struct lm *m)
{
	if (n < 3)
		return NAN;
	double mx = 0, sxx = 0, srr = 0;
	for (size_t i = 0; i < n; i++)
		mx += ((double)diff_ns(x[i], m->x0_ns) - mx) / (double)(i + 1);
	for (size_t i = 0; i < n; i++) {
		double dx = (double)diff_ns(x[i], m->x0_ns) - mx, r = y[i] - lm_offset(m, x[i]);
		sxx += dx * dx;
		srr += r * r;
	}
	return sxx > 0 ? sqrt(srr / (double)(n - 2) / sxx) : NAN;
}

int linreg_fit_robust(const int64_t *x, const double *y, size_t n, struct lm *out,
                      struct linreg_info *info)
{
	struct lm first;
	if (linreg_fit(x, y, n, &first))
		return LINREG_TOO_FEW;
	*out = first;
	const int64_t *fx = x;
	const double *fy = y;
	size_t m = n;
	double *r = NULL, *y2 = NULL;
	int64_t *x2 = NULL;
	if (n < 8)
		goto out;
	r = malloc(n * sizeof(*r));
	x2 = malloc(n * sizeof(*x2));
	y2 = malloc(n * sizeof(*y2));
	if (!r || !x2 || !y2)
		goto out; /* keep the plain fit */
	for (size_t i = 0; i < n; i++)
		r[i] = fabs(y[i] - lm_offset(&first, x[i]));
	qsort(r, n, sizeof(*r), cmp_double);
	double mad = r[n / 2], limit = 4 * 1.4826 * mad;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(y[i] - lm_offset(&first, x[i])) <= limit) {
			x2[k] = x[i];
			y2[k++] = y[i];
		}
	if (k < n && k >= n / 2 && !linreg_fit(x2, y2, k, out)) {
		fx = x2;
		fy = y2;
		m = k;
	}
out:
	if (info) {
		info->kept = m;
		info->slope_se = slope_se(fx, fy, m, out);
	}
	free(r);
	free(x2);
	free(y2);
	return LINREG_OK;
}

double lm_shrink_slope(struct lm *m, double se)
{
	double s2 = m->slope * m->slope;
	if (!(isfinite(se) && se > 0) || !(s2 > 0))
		return 1;
	double w = s2 / (s2 + se * se);
	m->slope *= w;
	return w;
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

/* nearest integer ns (as clock.h's round_ns: no libm call) */
static int64_t nearest_ns(double v)
{
	return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

int64_t lm_map(const struct lm *m, int64_t x_ns)
{
	return x_ns + nearest_ns(lm_offset(m, x_ns));
}

int64_t lm_unmap(const struct lm *m, int64_t y_ns)
{
	/* x + intercept + slope (x - x0) = y */
	double d = ((double)diff_ns(y_ns, m->x0_ns) - m->intercept_ns) / (1 + m->slope);
	return m->x0_ns + nearest_ns(d);
}
