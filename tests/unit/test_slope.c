/* The learners' slope rule (lm_shrink_slope, as src/sync/learn.c's fit() applies it) against
 * the rule it replaced (a slope within 2 standard errors of zero dropped, the median offset
 * kept) on emulated fit points of known truth: 100 points evenly spread over a short (1 ms)
 * or a long (0.3 s) span, Gaussian noise of 12 ns (the slope's standard error SE is then
 * 4.2 ppm over 1 ms: a true 10 ppm is 2.4 SE, where the drop rule missed by the whole 10 ppm
 * in 1 of 3 one-shot syncs), true slopes 0, 1, 10 and 100 ppm. The error is the model's
 * after a horizon of 10 s past the last point, averaged over TRIALS fits per seed, in units
 * of U = SE x (10 s + the distance from the points' mean time to the last point), which is
 * what a fit's slope error costs there. What must hold, per seed:
 *   - 0 ppm: mean error at most 0.55 U (expected 0.43 U for the shrink; keeping the fitted
 *     slope as it is gives 0.8 U, which must fail this check) and at most ZERO_FACTOR times
 *     the drop rule's (0.11 U, expected ratio about 4);
 *   - 1 ppm over 1 ms (0.24 SE): at most 0.6 U and 2x the drop rule's (expected 1.4x);
 *   - 10 ppm over 1 ms (2.4 SE): at most 0.8x the drop rule's (expected 0.7x);
 *   - every slope many SE from 0 (100 ppm, and 1-100 ppm over 0.3 s): within 2% of the drop
 *     rule's (both keep the slope; the shrink weight is then 1 - O(SE^2 / s^2)).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "numerics/linreg.h"
#include "numerics/stats.h"
#include "test.h"
#include "util/rng.h"

#define NPTS 100
#define NOISE_NS 12.0
#define HORIZON_NS 10e9
#define TRIALS 2000
#define ZERO_FACTOR 6.0

enum rule { SHRINK, DROP, KEEP };

/* the model of one rule from the points (as learn.c's fit(), without its round-trip filter) */
static void fit_rule(enum rule ru, int64_t *x, double *y, struct lm *m)
{
	struct linreg_info info;
	if (linreg_fit_robust(x, y, NPTS, m, &info)) {
		TEST_CHECK(0, "fit failed");
		return;
	}
	if (ru == SHRINK) {
		lm_shrink_slope(m, info.slope_se);
	} else if (ru == DROP && fabs(m->slope) < 2 * info.slope_se) {
		struct stats_summary st;
		stats_summarize(y, NPTS, &st);
		*m = (struct lm){x[NPTS - 1], st.median, 0};
	}
}

/* mean |error| of rule ru after the horizon, in units of U (see the top) */
static double mean_error_u(enum rule ru, uint64_t seed, double slope, double span_ns)
{
	struct rng r;
	rng_seed(&r, seed);
	int64_t x[NPTS];
	double y[NPTS], sum = 0;
	double mean_x = span_ns / 2, se = NOISE_NS / (span_ns * sqrt(NPTS * (NPTS + 1.0) /
	                                                             (12.0 * (NPTS - 1))));
	int64_t t0 = (int64_t)1e12, at = t0 + (int64_t)(span_ns + HORIZON_NS);
	double u = se * (HORIZON_NS + span_ns - mean_x);
	for (int k = 0; k < TRIALS; k++) {
		double s = rng_uniform(&r) < 0.5 ? -slope : slope, icpt = 1e9 * rng_uniform(&r);
		for (int i = 0; i < NPTS; i++) {
			x[i] = t0 + (int64_t)(span_ns * i / (NPTS - 1));
			y[i] = icpt + s * (double)(x[i] - t0) + NOISE_NS * rng_normal(&r);
		}
		struct lm m;
		fit_rule(ru, x, y, &m);
		sum += fabs(lm_offset(&m, at) - (icpt + s * (double)(at - t0)));
	}
	return sum / TRIALS / u;
}

static void check_seed(uint64_t seed)
{
	static const double slopes[] = {0, 1e-6, 10e-6, 100e-6}, spans[] = {1e6, 0.3e9};
	test_seed = seed;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 4; i++) {
			double s = slopes[i], sp = spans[j];
			double sh = mean_error_u(SHRINK, seed, s, sp), dr = mean_error_u(DROP, seed, s, sp);
			printf("seed %llu slope %5.0f ppm span %6.0f ms: mean error / U shrink %.3f drop %.3f\n",
			       (unsigned long long)seed, s * 1e6, sp / 1e6, sh, dr);
			if (s == 0) {
				TEST_CHECK(sh <= 0.55 && sh <= ZERO_FACTOR * dr, "0 ppm, span %.0f ms: shrink "
				           "%.3f U, drop %.3f U", sp / 1e6, sh, dr);
				double kp = mean_error_u(KEEP, seed, s, sp);
				TEST_CHECK(kp > 0.55, "the 0 ppm check does not bite: keeping the fitted slope "
				           "gives %.3f U <= 0.55 U", kp);
			} else if (sp < 1e7 && s < 5e-6) {
				TEST_CHECK(sh <= 0.6 && sh <= 2 * dr, "1 ppm over 1 ms: shrink %.3f U, drop "
				           "%.3f U", sh, dr);
			} else if (sp < 1e7 && s < 50e-6) {
				TEST_CHECK(sh <= 0.8 * dr, "10 ppm over 1 ms: shrink %.3f U not below 0.8 x "
				           "drop %.3f U", sh, dr);
			} else {
				TEST_CHECK(fabs(sh - dr) <= 0.02 * dr, "%.0f ppm over %.0f ms: shrink %.3f U, "
				           "drop %.3f U", s * 1e6, sp / 1e6, sh, dr);
			}
		}
}

/* the weight itself: halving at one SE, untouched without a usable SE, never a sign flip */
static void check_weight(void)
{
	struct lm m = {0, 5, 2e-6};
	double w = lm_shrink_slope(&m, 2e-6);
	TEST_CHECK(fabs(w - 0.5) < 1e-12 && fabs(m.slope - 1e-6) < 1e-18 && m.intercept_ns == 5,
	           "w %.3f slope %.3e", w, m.slope);
	m.slope = -3e-6;
	TEST_CHECK(lm_shrink_slope(&m, NAN) == 1 && m.slope == -3e-6, "NAN se changed the slope");
	TEST_CHECK(lm_shrink_slope(&m, 0) == 1 && m.slope == -3e-6, "zero se changed the slope");
	lm_shrink_slope(&m, 1e-3);
	TEST_CHECK(m.slope < 0 && m.slope > -3e-6, "slope %.3e", m.slope);
	m.slope = 0;
	TEST_CHECK(lm_shrink_slope(&m, 1e-6) == 1 && m.slope == 0, "zero slope");
}

int main(void)
{
	check_weight();
	for (uint64_t seed = 1; seed <= 5; seed++)
		check_seed(seed);
	return test_end("test_slope");
}
