/* stats.c - summary statistics and the order-statistic confidence interval of the median. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "numerics/stats.h"
#include "util/err.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (q <= 0 || n == 1)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	double h = (double)(n - 1) * q;
	size_t i = (size_t)floor(h);
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (h - (double)i) * (sorted[i + 1] - sorted[i]);
}

/* log P(B = k) for B ~ Binomial(n, 1/2) */
static double log_binom_half(size_t n, size_t k)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) -
	       (double)n * M_LN2;
}

int stats_median_ci(const double *sorted, size_t n, double level, double *lo, double *hi,
                    double *coverage)
{
	if (!(level > 0 && level < 1))
		return err_set(HCLOCK_EINVAL, "confidence level %g is not in (0, 1)", level);
	if (n == 0)
		return STATS_TOO_FEW;
	double tail = (1 - level) / 2; /* allowed probability on each side */
	/*
	 * Walk k upward accumulating P(B <= k) until it exceeds the allowed tail; then j = k.
	 * Terms more than 8 standard deviations below the mean n/2 add less than 1e-15 and are
	 * skipped, which keeps this O(sqrt(n)) for the large samples a time slice produces.
	 */
	double sd = 0.5 * sqrt((double)n);
	size_t k = 0;
	if ((double)n / 2 - 8 * sd > 0)
		k = (size_t)((double)n / 2 - 8 * sd);
	double cdf = 0, prev = 0;
	for (;; k++) {
		prev = cdf;
		cdf += exp(log_binom_half(n, k));
		if (cdf > tail)
			break;
	}
	size_t j = k; /* P(B <= j - 1) = prev <= tail */
	if (j == 0)
		return STATS_TOO_FEW;
	*lo = sorted[j - 1];
	*hi = sorted[n - j];
	if (coverage)
		*coverage = 1 - 2 * prev;
	return STATS_OK;
}

int stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	if (n == 0)
		return STATS_TOO_FEW;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return err_set(HCLOCK_EINVAL, "value %zu of %zu to summarize is %g", i + 1, n,
			               x[i]);
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory summarizing %zu values", n);
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);

	struct stats_running r;
	stats_running_init(&r);
	for (size_t i = 0; i < n; i++)
		stats_running_add(&r, s[i]);

	struct stats_summary o = {0};
	o.n = n;
	o.mean = r.mean;
	o.std = n > 1 ? sqrt(r.m2 / (double)(n - 1)) : 0;
	o.min = s[0];
	o.max = s[n - 1];
	o.median = stats_quantile_sorted(s, n, 0.5);
	o.p90 = stats_quantile_sorted(s, n, 0.90);
	o.p99 = stats_quantile_sorted(s, n, 0.99);
	o.ci_ok = stats_median_ci(s, n, 0.95, &o.ci_lo, &o.ci_hi, &o.ci_level) == 0;
	if (!o.ci_ok)
		o.ci_lo = o.ci_hi = o.ci_level = NAN;
	free(s);
	*out = o;
	return STATS_OK;
}

double stats_middle(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return x[n / 2];
}

double stats_robust_sd(double *absdev, size_t n)
{
	return 1.4826 * stats_middle(absdev, n);
}

double stats_robust_mean(double *x, size_t n, double k)
{
	qsort(x, n, sizeof(*x), cmp_double);
	double med = stats_quantile_sorted(x, n, 0.5);
	double *dev = malloc(n * sizeof(*dev));
	if (!dev)
		return med; /* still robust, if less efficient */
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(x[i] - med);
	qsort(dev, n, sizeof(*dev), cmp_double);
	double limit = k * 1.4826 * stats_quantile_sorted(dev, n, 0.5), sum = 0;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(x[i] - med) <= limit) {
			sum += x[i];
			m++;
		}
	free(dev);
	return m ? sum / (double)m : med;
}

void stats_running_init(struct stats_running *r)
{
	memset(r, 0, sizeof(*r));
}

void stats_running_add(struct stats_running *r, double x)
{
	r->n++;
	double d = x - r->mean;
	r->mean += d / (double)r->n;
	r->m2 += d * (x - r->mean);
}

double stats_running_rse(const struct stats_running *r)
{
	if (r->n < 2 || r->mean == 0)
		return INFINITY;
	double se = sqrt(r->m2 / (double)(r->n - 1) / (double)r->n);
	return se / fabs(r->mean);
}
