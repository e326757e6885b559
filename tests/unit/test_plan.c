/* The budget planner of auto(...) (numerics/plan.c) on synthetic bursts of known truth:
 * - plan_predict against Monte Carlo fits (independent Gaussian point errors): the RMS error
 *   at the horizon within 10% of the prediction, over 3000 fits per case; the same check
 *   with the prediction of twice the noise must fail (it bites);
 * - plan_point_sigma: a fit point's error std measured on a burst of Gaussian offsets
 *   (within 20% of the truth; 60% on its first PLAN_MIN_GROUPS groups, a burst cut by its
 *   time cap), and on a burst where half the ping-pongs are delayed one
 *   way (their offsets off by half the extra delay): the smallest round trip of 8 removes
 *   most of one ping-pong's sigma (what the fit's outlier rejection leaves of it);
 * - plan_choose: in a 2 ms round, at most 4 ping-pongs per point on the Gaussian burst (more
 *   would cost points and buy nothing), more than one on the delayed one; in a 0.1 s round,
 *   which holds 1000 points of any n, 8 or more (within PLAN_SLACK of the best, the most);
 *   a longer budget predicts less; a round too short for PLAN_MIN_NFIT points says so;
 * - plan_net_measure: floor, spread, sharp floor or not; too few ping-pongs is a status.
 * - plan_stalled_groups: on the Gaussian burst no group is stalled; with 20 of its 48 groups
 *   made through a stall (every ping-pong 2 ms slower) and one more holding a single 4 ms
 *   exchange, exactly those 21 are; planned on, the stalled burst predicts over 10x the clean
 *   one's error with fewer points, while its clean groups alone predict within 1.5x of it;
 *   5 us more in every exchange of a quarter of the groups (the link under load, not a
 *   stall) is none; bad counts are a status.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "numerics/linreg.h"
#include "numerics/plan.h"
#include "test.h"
#include "util/rng.h"

static double mc_rms(struct rng *r, double sigma, int nfit, double span_ns, double horizon_ns)
{
	enum { TRIALS = 3000 };
	int64_t x[1000];
	double y[1000], s2 = 0;
	int64_t t0 = (int64_t)5e12, at = t0 + (int64_t)(span_ns + horizon_ns);
	for (int k = 0; k < TRIALS; k++) {
		double slope = (2 * rng_uniform(r) - 1) * 1e-4, icpt = 1e6 * rng_uniform(r);
		for (int i = 0; i < nfit; i++) {
			x[i] = t0 + (int64_t)(span_ns * i / (nfit - 1));
			y[i] = icpt + slope * (double)(x[i] - t0) + sigma * rng_normal(r);
		}
		struct lm m;
		linreg_fit(x, y, (size_t)nfit, &m);
		double e = lm_offset(&m, at) - (icpt + slope * (double)(at - t0));
		s2 += e * e;
	}
	return sqrt(s2 / TRIALS);
}

static void check_predict(uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	test_seed = seed;
	static const int nfits[] = {10, 100, 1000};
	for (int i = 0; i < 3; i++) {
		double sigma = 20 + 100 * rng_uniform(&r), span = 1e6 + 3e8 * rng_uniform(&r);
		double h = 10e9 * rng_uniform(&r);
		double rms = mc_rms(&r, sigma, nfits[i], span, h);
		double pred = plan_predict(sigma, nfits[i], span, h);
		TEST_CHECK(fabs(rms / pred - 1) < 0.1, "nfit %d sigma %.0f ns span %.3f s horizon %.1f s: "
		           "Monte Carlo RMS %.1f ns, predicted %.1f ns", nfits[i], sigma, span * 1e-9,
		           h * 1e-9, rms, pred);
		double wrong = plan_predict(2 * sigma, nfits[i], span, h);
		TEST_CHECK(fabs(rms / wrong - 1) >= 0.1, "the check does not bite: RMS %.1f ns within "
		           "10%% of a prediction from twice the noise (%.1f ns)", rms, wrong);
	}
}

/* a burst at slope 50 ppm, its groups 0.3 ms apart, their ping-pongs 1 us apart: Gaussian
 * offsets (delayed = 0) or half of the ping-pongs delayed one way by an exponential time of
 * mean 2 us */
static void make_burst(struct rng *r, int delayed, int64_t *x, double *off, double *rtt)
{
	for (int i = 0; i < PLAN_BURST; i++) {
		double extra = delayed && rng_uniform(r) < 0.5 ? -2000 * log(1 - rng_uniform(r)) : 0;
		x[i] = (int64_t)1e12 + 300000 * (i / PLAN_GROUP) + 1000 * (i % PLAN_GROUP);
		rtt[i] = 700 + 20 * fabs(rng_normal(r)) + extra;
		off[i] = 5e5 + 50e-6 * (double)(x[i] - (int64_t)1e12) + 30 * rng_normal(r) +
		         (rng_uniform(r) < 0.5 ? extra / 2 : -extra / 2);
	}
}

static void check_burst(uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	test_seed = seed;
	int64_t x[PLAN_BURST];
	double off[PLAN_BURST], rtt[PLAN_BURST];
	struct plan_net net;
	struct plan_choice c;

	make_burst(&r, 0, x, off, rtt);
	double s1 = plan_point_sigma(x, off, rtt, PLAN_GROUPS, 1);
	TEST_CHECK(fabs(s1 / 30 - 1) < 0.2, "Gaussian burst: point sigma %.1f ns, truth 30", s1);
	/* a burst cut by its time cap: its first groups alone, 8 points, a looser estimate */
	double s1_short = plan_point_sigma(x, off, rtt, PLAN_MIN_GROUPS, 1);
	TEST_CHECK(fabs(s1_short / 30 - 1) < 0.6, "Gaussian burst of %d groups: point sigma %.1f "
	           "ns, truth 30", PLAN_MIN_GROUPS, s1_short);
	TEST_CHECK(plan_choose(x, off, rtt, PLAN_MIN_GROUPS, &net, 0.1e9, 10e9, &c) == 0 &&
	           c.nfit == PLAN_MAX_NFIT, "Gaussian burst of %d groups, 0.1 s: %d points of %d",
	           PLAN_MIN_GROUPS, c.nfit, c.n);
	TEST_CHECK(plan_net_measure(rtt, PLAN_BURST, &net) == 0 && net.sharp &&
	           fabs(net.floor_ns - 700) < 5, "Gaussian burst: floor %.0f sharp %d",
	           net.floor_ns, net.sharp);
	TEST_CHECK(plan_choose(x, off, rtt, PLAN_GROUPS, &net, 2e6, 10e9, &c) == 0 && c.n <= 4 &&
	           c.nfit > 600, "Gaussian burst, 2 ms: chose %d points of %d", c.nfit, c.n);
	TEST_CHECK(plan_choose(x, off, rtt, PLAN_GROUPS, &net, 0.1e9, 10e9, &c) == 0 && c.n >= 8 &&
	           c.nfit == PLAN_MAX_NFIT, "Gaussian burst, 0.1 s: chose %d points of %d", c.nfit,
	           c.n);
	double p_short = c.predicted_error_ns;
	plan_choose(x, off, rtt, PLAN_GROUPS, &net, 1e9, 10e9, &c);
	TEST_CHECK(c.predicted_error_ns < p_short / 5, "1 s predicts %.1f ns, 0.1 s %.1f ns",
	           c.predicted_error_ns, p_short);
	TEST_CHECK(plan_choose(x, off, rtt, PLAN_GROUPS, &net, 2000, 10e9, &c) == 1 &&
	           c.nfit == PLAN_MIN_NFIT && c.n == 1 && c.span_ns == 0 &&
	           isfinite(c.predicted_error_ns), "a 2 us round: %d points of %d, status not 1",
	           c.nfit, c.n);

	make_burst(&r, 1, x, off, rtt);
	s1 = plan_point_sigma(x, off, rtt, PLAN_GROUPS, 1);
	double s8 = plan_point_sigma(x, off, rtt, PLAN_GROUPS, 8);
	TEST_CHECK(s1 > 80 && s8 < s1 / 2, "delayed burst: point sigma %.0f ns (1), %.0f ns (8)", s1,
	           s8);
	plan_net_measure(rtt, PLAN_BURST, &net);
	TEST_CHECK(plan_choose(x, off, rtt, PLAN_GROUPS, &net, 2e6, 10e9, &c) == 0 && c.n >= 2,
	           "delayed burst, 2 ms: chose %d points of %d (sigmas %.0f, %.0f)", c.nfit, c.n, s1, s8);

	/* a floor blurred over 20 us: not sharp */
	for (int i = 0; i < PLAN_BURST; i++)
		rtt[i] = 1000 + 20000 * rng_uniform(&r);
	plan_net_measure(rtt, PLAN_BURST, &net);
	TEST_CHECK(!net.sharp && net.spread_ns > 7000, "blurred floor: sharp %d spread %.0f",
	           net.sharp, net.spread_ns);
}

/* each group's best round trip and time (the sum of its round trips) */
static void group_stats(const double *rtt, int ngroups, double *gmin, double *gtime)
{
	for (int g = 0; g < ngroups; g++) {
		gmin[g] = INFINITY;
		gtime[g] = 0;
		for (int i = g * PLAN_GROUP; i < (g + 1) * PLAN_GROUP; i++) {
			gmin[g] = fmin(gmin[g], rtt[i]);
			gtime[g] += rtt[i];
		}
	}
}

static void check_stalls(uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	test_seed = seed;
	static int64_t x[PLAN_BURST], xc[PLAN_BURST];
	static double off[PLAN_BURST], rtt[PLAN_BURST], offc[PLAN_BURST], rttc[PLAN_BURST];
	double gmin[PLAN_GROUPS], gtime[PLAN_GROUPS];
	unsigned char st[PLAN_GROUPS];
	struct plan_net net;
	struct plan_choice clean, stalled, kept;

	make_burst(&r, 0, x, off, rtt);
	group_stats(rtt, PLAN_GROUPS, gmin, gtime);
	int k = plan_stalled_groups(gmin, gtime, PLAN_GROUPS, st);
	TEST_CHECK(k == 0, "Gaussian burst: %d groups stalled", k);
	plan_net_measure(rtt, PLAN_BURST, &net);
	plan_choose(x, off, rtt, PLAN_GROUPS, &net, 0.1e9, 10e9, &clean);

	/* groups 10..29 through a stall: every ping-pong 2 ms slower, its offset off by up to
	 * half of that (one way); group 40 with one exchange held up 4 ms */
	for (int i = 10 * PLAN_GROUP; i < 30 * PLAN_GROUP; i++) {
		double extra = 2e6 * (1 + rng_uniform(&r));
		rtt[i] += extra;
		off[i] += (rng_uniform(&r) - 0.5) * extra;
	}
	rtt[40 * PLAN_GROUP + 3] += 4e6;
	off[40 * PLAN_GROUP + 3] += 2e6;
	group_stats(rtt, PLAN_GROUPS, gmin, gtime);
	k = plan_stalled_groups(gmin, gtime, PLAN_GROUPS, st);
	int right = 1;
	for (int g = 0; g < PLAN_GROUPS; g++)
		right &= st[g] == ((g >= 10 && g < 30) || g == 40);
	TEST_CHECK(k == 21 && right, "stalled burst: %d groups stalled (21 made so), the right "
	           "ones %d", k, right);
	plan_net_measure(rtt, PLAN_BURST, &net);
	plan_choose(x, off, rtt, PLAN_GROUPS, &net, 0.1e9, 10e9, &stalled);
	int nc = 0;
	for (int g = 0; g < PLAN_GROUPS; g++) {
		if (st[g])
			continue;
		for (int i = 0; i < PLAN_GROUP; i++) {
			xc[nc * PLAN_GROUP + i] = x[g * PLAN_GROUP + i];
			offc[nc * PLAN_GROUP + i] = off[g * PLAN_GROUP + i];
			rttc[nc * PLAN_GROUP + i] = rtt[g * PLAN_GROUP + i];
		}
		nc++;
	}
	plan_net_measure(rttc, (size_t)nc * PLAN_GROUP, &net);
	plan_choose(xc, offc, rttc, nc, &net, 0.1e9, 10e9, &kept);
	TEST_CHECK(stalled.predicted_error_ns > 10 * clean.predicted_error_ns &&
	           stalled.nfit < clean.nfit, "planned on the stalls: %d points of %d predict "
	           "%.0f ns, the clean burst %d of %d %.0f ns (the detection must matter)",
	           stalled.nfit, stalled.n, stalled.predicted_error_ns, clean.nfit, clean.n,
	           clean.predicted_error_ns);
	TEST_CHECK(kept.predicted_error_ns < 1.5 * clean.predicted_error_ns,
	           "its %d clean groups: %d points of %d predict %.0f ns (the clean burst %.0f ns)",
	           nc, kept.nfit, kept.n, kept.predicted_error_ns, clean.predicted_error_ns);

	/* a few us more in a quarter of the groups: a wake-up, not a stall */
	make_burst(&r, 0, x, off, rtt);
	for (int i = 0; i < PLAN_BURST / 4; i++)
		rtt[i] += 5000;
	group_stats(rtt, PLAN_GROUPS, gmin, gtime);
	k = plan_stalled_groups(gmin, gtime, PLAN_GROUPS, st);
	TEST_CHECK(k == 0, "5 us more in 12 groups: %d stalled", k);
	TEST_CHECK(plan_stalled_groups(gmin, gtime, 0, st) == -1 &&
	           plan_stalled_groups(gmin, gtime, PLAN_TAKE_MAX + 1, st) == -1,
	           "bad group counts not refused");
}

int main(void)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		check_predict(seed);
		check_burst(seed);
		check_stalls(seed);
	}
	/* too little data is a status, never a crash */
	static int64_t x[PLAN_BURST];
	static double y[PLAN_BURST];
	struct plan_net net;
	TEST_CHECK(plan_net_measure(y, 15, &net) == 1, "15 round trips gave a summary");
	TEST_CHECK(isnan(plan_point_sigma(x, y, y, PLAN_GROUPS, 4)),
	           "a burst at one instant gave a sigma");
	TEST_CHECK(isnan(plan_point_sigma(x, y, y, PLAN_GROUPS, 0)), "n = 0 gave a sigma");
	TEST_CHECK(isnan(plan_point_sigma(x, y, y, PLAN_GROUPS, PLAN_GROUP + 1)),
	           "n beyond a group gave a sigma");
	TEST_CHECK(isnan(plan_point_sigma(x, y, y, PLAN_MIN_GROUPS - 1, 1)),
	           "fewer than PLAN_MIN_GROUPS groups gave a sigma");
	TEST_CHECK(isnan(plan_point_sigma(x, y, y, PLAN_GROUPS + 1, 1)),
	           "more than PLAN_GROUPS groups gave a sigma");
	return test_end("test_plan");
}
