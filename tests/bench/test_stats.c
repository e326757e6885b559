/*
 * test_stats.c - numerics/stats against samples of known distribution: exact values on a
 * small sample, moments and quantiles of a large uniform sample within a few standard
 * errors, the order-statistic interval of the median against binomial tables and by
 * simulated coverage, the running RSE, the robust mean, and garbage input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "hclock_api.h"
#include "numerics/stats.h"
#include "util/rng.h"

static void exact_small(void)
{
	double x[10] = {7, 3, 10, 1, 9, 2, 8, 5, 4, 6};
	struct stats_summary s;
	TEST_CHECK(stats_summarize(x, 10, &s) == 0, "summarize failed");
	TEST_CHECK(s.n == 10 && s.mean == 5.5 && s.median == 5.5 && s.min == 1 && s.max == 10,
	      "n %zu mean %g median %g min %g max %g", s.n, s.mean, s.median, s.min, s.max);
	/* type 7: h = 9 q */
	TEST_CHECK(fabs(s.p90 - 9.1) < 1e-12 && fabs(s.p99 - 9.91) < 1e-12, "p90 %g p99 %g", s.p90,
	      s.p99);
	TEST_CHECK(fabs(s.std - sqrt(55.0 / 6)) < 1e-12, "std %g", s.std);
	/* Binomial(10, 1/2): P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024 -> [x(2), x(9)] */
	TEST_CHECK(s.ci_ok && s.ci_lo == 2 && s.ci_hi == 9, "ci [%g, %g]", s.ci_lo, s.ci_hi);
	TEST_CHECK(fabs(s.ci_level - (1 - 22.0 / 1024)) < 1e-12, "coverage %g", s.ci_level);
	TEST_CHECK(x[0] == 7 && x[9] == 6, "input was modified");
}

static void small_ci(void)
{
	double x[6] = {1, 2, 3, 4, 5, 6}, lo, hi, cov;
	/* n = 5: even [min, max] covers only 1 - 2/32 = 0.9375 < 0.95 */
	TEST_CHECK(stats_median_ci(x, 5, 0.95, &lo, &hi, &cov) == STATS_TOO_FEW, "n=5 must have no interval");
	/* n = 6: [min, max] covers 1 - 2/64 */
	TEST_CHECK(stats_median_ci(x, 6, 0.95, &lo, &hi, &cov) == 0 && lo == 1 && hi == 6 &&
	      fabs(cov - (1 - 2.0 / 64)) < 1e-12, "n=6: [%g, %g] %g", lo, hi, cov);
	struct stats_summary s;
	TEST_CHECK(stats_summarize(x, 1, &s) == 0 && s.median == 1 && s.std == 0 && !s.ci_ok,
	      "n=1: median %g std %g ci_ok %d", s.median, s.std, s.ci_ok);
}

static void uniform_large(void)
{
	struct rng r;
	size_t n = 200000;
	double *x = malloc(n * sizeof(*x));
	test_seed = 42;
	rng_seed(&r, test_seed);
	for (size_t i = 0; i < n; i++)
		x[i] = rng_uniform(&r);
	struct stats_summary s;
	TEST_CHECK(stats_summarize(x, n, &s) == 0, "summarize");
	/* tolerances: about 4 standard errors of each estimate at n = 2e5 */
	TEST_CHECK(fabs(s.mean - 0.5) < 3e-3, "mean %g", s.mean);
	TEST_CHECK(fabs(s.median - 0.5) < 5e-3, "median %g", s.median);
	TEST_CHECK(fabs(s.p90 - 0.9) < 4e-3, "p90 %g", s.p90);
	TEST_CHECK(fabs(s.p99 - 0.99) < 2e-3, "p99 %g", s.p99);
	TEST_CHECK(fabs(s.std - sqrt(1.0 / 12)) < 2e-3, "std %g", s.std);
	TEST_CHECK(s.min >= 0 && s.min < 1e-3 && s.max < 1 && s.max > 0.999, "min %g max %g", s.min,
	      s.max);
	/* the median's interval: half-width ~ 1.96 * 0.5 / sqrt(n) for a density of 1 */
	double half = 1.96 * 0.5 / sqrt((double)n);
	TEST_CHECK(s.ci_ok && s.ci_lo < 0.5 + 5 * half && s.ci_hi > 0.5 - 5 * half, "ci [%g, %g]",
	      s.ci_lo, s.ci_hi);
	TEST_CHECK(fabs((s.ci_hi - s.ci_lo) / 2 - half) < 0.2 * half, "half width %g, expected %g",
	      (s.ci_hi - s.ci_lo) / 2, half);
	TEST_CHECK(s.ci_level >= 0.95 && s.ci_level < 0.952, "coverage %g", s.ci_level);
	free(x);
}

static void coverage(void)
{
	/* exponential(1), median ln 2: the 95% interval must contain it in ~95-97% of trials */
	struct rng r;
	test_seed = 7;
	rng_seed(&r, test_seed);
	int trials = 4000, hit = 0;
	double x[50];
	for (int t = 0; t < trials; t++) {
		for (int i = 0; i < 50; i++)
			x[i] = -log(1 - rng_uniform(&r));
		struct stats_summary s;
		stats_summarize(x, 50, &s);
		hit += s.ci_ok && s.ci_lo <= M_LN2 && M_LN2 <= s.ci_hi;
	}
	double f = (double)hit / trials;
	TEST_CHECK(f > 0.95 && f < 0.985, "coverage %g over %d trials", f, trials);
}

static void running(void)
{
	struct stats_running r;
	stats_running_init(&r);
	TEST_CHECK(isinf(stats_running_rse(&r)), "empty rse must be inf");
	for (int i = 0; i < 100; i++)
		stats_running_add(&r, 5);
	TEST_CHECK(stats_running_rse(&r) == 0, "constant rse %g", stats_running_rse(&r));

	struct rng g;
	test_seed = 3;
	rng_seed(&g, test_seed);
	stats_running_init(&r);
	size_t n = 10000;
	double *x = malloc(n * sizeof(*x));
	for (size_t i = 0; i < n; i++) {
		x[i] = 100 + 10 * rng_normal(&g);
		stats_running_add(&r, x[i]);
	}
	struct stats_summary s;
	stats_summarize(x, n, &s);
	TEST_CHECK(fabs(r.mean - s.mean) < 1e-9, "running mean %g vs %g", r.mean, s.mean);
	double rse = stats_running_rse(&r), want = s.std / sqrt((double)n) / s.mean;
	TEST_CHECK(fabs(rse - want) < 1e-9 * want, "rse %g vs %g", rse, want);
	TEST_CHECK(fabs(rse - 1e-3) < 1e-4, "rse %g, expected about 1e-3", rse);
	free(x);
}

static void garbage(void)
{
	struct stats_summary s;
	memset(&s, 0x5a, sizeof(s));
	double nan_in[3] = {1, NAN, 2}, inf_in[2] = {INFINITY, 1}, one = 1;
	TEST_CHECK(stats_summarize(&one, 0, &s) == STATS_TOO_FEW, "n=0 has no result");
	TEST_CHECK(stats_summarize(nan_in, 3, &s) == HCLOCK_EINVAL, "NaN must fail");
	TEST_CHECK(stats_summarize(inf_in, 2, &s) == HCLOCK_EINVAL, "inf must fail");
	double lo, hi;
	TEST_CHECK(stats_median_ci(&one, 1, 1.5, &lo, &hi, NULL) == HCLOCK_EINVAL, "level 1.5 must fail");
	TEST_CHECK(stats_median_ci(&one, 0, 0.95, &lo, &hi, NULL) == STATS_TOO_FEW, "n=0 has no result");
	/* huge n: the interval search is O(sqrt(n)) and must stay inside the array */
	size_t n = 4000000;
	double *x = malloc(n * sizeof(*x));
	for (size_t i = 0; i < n; i++)
		x[i] = (double)i;
	double cov;
	TEST_CHECK(stats_median_ci(x, n, 0.95, &lo, &hi, &cov) == 0 && lo < hi && lo > n / 2 - 4000.0 &&
	      hi < n / 2 + 4000.0 && cov >= 0.95, "n=4e6: [%g, %g] %g", lo, hi, cov);
	free(x);
}

/* the robust mean: a clean sample's mean within a few standard errors; stalls of 1000x the
 * spread (a scheduler tick against a 1 us round trip) do not move it; MAD 0 keeps the median */
static void robust_mean(void)
{
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct rng r;
		rng_seed(&r, seed);
		test_seed = seed;
		enum { N = 50 };
		double x[N], clean = 0;
		for (int i = 0; i < N; i++) {
			x[i] = 1000 + 50 * rng_normal(&r);
			clean += x[i] / N;
		}
		double m = stats_robust_mean(x, N, 4);
		TEST_CHECK(fabs(m - clean) < 3 * 50 / sqrt(N), "clean: robust %.1f vs mean %.1f", m, clean);
		for (int i = 0; i < N; i += 10)
			x[i] = 4e6 + 1e5 * rng_uniform(&r); /* 5 stalled exchanges */
		m = stats_robust_mean(x, N, 4);
		TEST_CHECK(fabs(m - 1000) < 6 * 50 / sqrt(N - 5), "stalled: robust %.1f, want ~1000", m);
	}
	double same[5] = {7, 7, 7, 7, 1e9};
	TEST_CHECK(stats_robust_mean(same, 5, 4) == 7, "MAD 0: %g", stats_robust_mean(same, 5, 4));
	double one[1] = {3};
	TEST_CHECK(stats_robust_mean(one, 1, 4) == 3, "one point");
}

int main(void)
{
	robust_mean();
	exact_small();
	small_ci();
	uniform_large();
	coverage();
	running();
	garbage();
	return test_end("test_stats");
}
