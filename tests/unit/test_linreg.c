/* Regression fit on random data of known slope and intercept; model composition. */
#include <math.h>
#include <stdint.h>

#include "numerics/linreg.h"
#include "test.h"
#include "util/rng.h"

static void fit_case(uint64_t seed, size_t n, double noise_ns, int64_t t0, double span_ns,
                     int outliers)
{
	struct rng r;
	rng_seed(&r, seed);
	test_seed = seed;
	double slope = (2 * rng_uniform(&r) - 1) * 1e-4;   /* up to 100 ppm */
	double icpt = (2 * rng_uniform(&r) - 1) * 1e9;     /* up to 1 s */
	int64_t *x = malloc(n * sizeof(*x));
	double *y = malloc(n * sizeof(*y));
	for (size_t i = 0; i < n; i++) {
		x[i] = t0 + (int64_t)(span_ns * (double)i / (double)(n - 1)) + (int64_t)(rng_u64(&r) % 1000);
		y[i] = icpt + slope * (double)(x[i] - t0) + noise_ns * rng_normal(&r);
		if (outliers && i % 50 == 7)
			y[i] += (20 + 100 * rng_uniform(&r)) * noise_ns; /* delayed exchanges */
	}
	struct lm m;
	struct linreg_info info;
	/* with outliers the robust fit must do as well as a clean fit would */
	TEST_CHECK(linreg_fit_robust(x, y, n, &m, &info) == 0, "robust fit failed");
	if (outliers)
		TEST_CHECK(info.kept < n && info.kept >= n - n / 40, "kept %zu of %zu", info.kept, n);
	else
		TEST_CHECK(linreg_fit(x, y, n, &m) == 0, "fit failed");
	/* the slope's standard error: noise / (span sqrt(n / 12)) for evenly spread x; the
	 * fit's own estimate of it must agree (it decides whether a sync keeps a slope) */
	double se = noise_ns / (span_ns * sqrt((double)n / 12.0));
	TEST_CHECK(info.slope_se > 0.7 * se && info.slope_se < 1.4 * se,
	           "estimated slope se %.3e vs expected %.3e", info.slope_se, se);
	double tol = 6 * se + 1e-12;
	TEST_CHECK(fabs(m.slope - slope) <= tol, "slope %.3e vs true %.3e (tol %.2e)", m.slope, slope,
	           tol);
	/* the offset in the middle of the data: error ~ noise / sqrt(n) */
	int64_t mid = t0 + (int64_t)(span_ns / 2);
	double want = icpt + slope * (double)(mid - t0);
	double otol = 6 * noise_ns / sqrt((double)n) + 1e-3;
	TEST_CHECK(fabs(lm_offset(&m, mid) - want) <= otol, "offset %.3f vs %.3f (tol %.3f)",
	           lm_offset(&m, mid), want, otol);
	free(x);
	free(y);
}

static void compose_case(uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	test_seed = seed;
	/* realistic: models anchored within 100 s of each other at realtime-sized times */
	int64_t base = 1700000000000000000LL;
	struct lm a = {base + (int64_t)(rng_uniform(&r) * 1e11), (2 * rng_uniform(&r) - 1) * 1e9,
	               (2 * rng_uniform(&r) - 1) * 1e-4};
	struct lm b = {base + (int64_t)(rng_uniform(&r) * 1e11), (2 * rng_uniform(&r) - 1) * 1e9,
	               (2 * rng_uniform(&r) - 1) * 1e-4};
	struct lm c = lm_compose(&b, &a);
	for (int k = 0; k < 10; k++) {
		int64_t x = a.x0_ns + (int64_t)((2 * rng_uniform(&r) - 1) * 1e11);
		/* apply a, then b, as offsets relative to x in long double */
		long double da = a.intercept_ns + a.slope * (long double)(x - a.x0_ns);
		long double db = b.intercept_ns + b.slope * ((long double)(x - b.x0_ns) + da);
		long double z = da + db, got = lm_offset(&c, x);
		TEST_CHECK(fabsl(got - z) < 1e-3L, "composed %.3Lf vs sequential %.3Lf", got, z);
	}
}

int main(void)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		fit_case(seed, 500, 4, 1700000000000000000LL, 3e8, 0);   /* realtime-sized x */
		fit_case(seed + 100, 50, 20, 12345, 6e6, 0);
		fit_case(seed + 200, 1000, 10, -5000000000LL, 1e9, 1);  /* with outliers */
		compose_case(seed + 300);
	}
	/* too little data is reported, never a crash */
	struct lm m = {0, 0, 0};
	int64_t x[2] = {5, 5};
	double y[2] = {1, 2};
	TEST_CHECK(linreg_fit(x, y, 1, &m) == LINREG_TOO_FEW, "one point must not fit");
	TEST_CHECK(linreg_fit(x, y, 2, &m) == LINREG_TOO_FEW, "equal x must not fit");
	/* two points fit exactly and say nothing about the slope's error */
	int64_t x2[2] = {0, 1000};
	struct linreg_info info;
	TEST_CHECK(linreg_fit_robust(x2, y, 2, &m, &info) == 0 && info.kept == 2 &&
	           isnan(info.slope_se), "two points: kept %zu, se %g", info.kept, info.slope_se);
	return test_end("test_linreg");
}
