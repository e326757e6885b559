/*
 * stats.h - summary statistics of a sample: mean, median, quantiles, spread, a confidence
 * interval of the median, and a running relative standard error for stop rules.
 * Knows nothing of MPI or clocks: samples are doubles in whatever unit the caller uses
 * (the benchmarks pass latencies in ns), and every result is in that same unit.
 */
#ifndef HCLOCK_NUMERICS_STATS_H
#define HCLOCK_NUMERICS_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;          /* sample size */
	double mean;       /* arithmetic mean */
	double median;     /* 0.5 quantile */
	double min, max;
	double p90, p99;   /* 0.90 and 0.99 quantiles */
	double std;        /* sample standard deviation (n - 1 in the denominator); 0 if n < 2 */
	int ci_ok;         /* 1 when n is large enough for the interval below (n >= 6 at 95%) */
	double ci_lo, ci_hi; /* distribution-free 95% confidence interval of the median */
	double ci_level;   /* its actual coverage (>= 0.95; order statistics are discrete) */
};

/* What stats_summarize and stats_median_ci return besides 0 (a result) and an error (the
 * numerics convention, docs/architecture.md#errors). */
enum stats_status {
	STATS_OK = 0,
	STATS_TOO_FEW = 1, /* too few values for a result (none, or too few for the interval) */
};

/*
 * Summarize x[0..n-1] (not modified; a sorted copy is made). Returns STATS_OK,
 * STATS_TOO_FEW (n == 0), HCLOCK_EINVAL (a value is NaN or infinite) or HCLOCK_ENOMEM;
 * out is unchanged unless STATS_OK.
 */
int stats_summarize(const double *x, size_t n, struct stats_summary *out);

/* Quantile q in [0, 1] of an ascending array, linear interpolation between order
 * statistics (Hyndman-Fan type 7, as R's default). n must be > 0. */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/*
 * Distribution-free confidence interval of the median from order statistics: the number
 * of sample points below the true median is Binomial(n, 1/2), so [x_(j), x_(n+1-j)]
 * (1-based) covers it with probability 1 - 2 P(B <= j - 1). j is the largest index for
 * which that coverage is still >= level. Returns STATS_OK and sets *lo, *hi (and *coverage
 * when not NULL), STATS_TOO_FEW when n is too small for any interval to reach level, or
 * HCLOCK_EINVAL for a level outside (0, 1).
 */
int stats_median_ci(const double *sorted, size_t n, double level, double *lo, double *hi,
                    double *coverage);

/* The middle element of x[0..n-1] (x[n/2] once sorted: the upper median for even n), x
 * reordered; n > 0. */
double stats_middle(double *x, size_t n);

/* A robust standard deviation from absolute deviations: 1.4826 x stats_middle(absdev, n)
 * (the normal distribution's sd per median absolute deviation); absdev reordered, n > 0. */
double stats_robust_sd(double *absdev, size_t n);

/*
 * Mean of the points within k robust standard deviations (1.4826 x the median absolute
 * deviation) of the median: a mean that one stalled measurement cannot drag away.
 * x (n > 0) is reordered. With MAD = 0 only the points equal to the median count.
 */
double stats_robust_mean(double *x, size_t n, double k);

/* Running mean and variance (Welford), for a stop rule evaluated while measuring. */
struct stats_running {
	size_t n;
	double mean;
	double m2; /* sum of squared deviations from the mean */
};

void stats_running_init(struct stats_running *r);
void stats_running_add(struct stats_running *r, double x);
/* Relative standard error of the mean: (std / sqrt(n)) / |mean|; +inf when n < 2 or the
 * mean is 0. SKaMPI's stop rule ends a measurement when this falls below a target. */
double stats_running_rse(const struct stats_running *r);

#endif
