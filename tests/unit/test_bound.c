/*
 * test_bound.c - strict bounds composed along a sync tree (numerics/bound.h): chains of
 * emulated linear clocks with known truth, each hop learned by the hull learner from
 * synthetic ping-pongs (a minimum delay plus an exponential tail, asymmetric), composed the
 * way HCA2 does (models to a partner's raw clock, composed arithmetically) and the way HCA3
 * does (a model to the partner's global clock, whose bound is added). The truth must lie
 * inside the composed bound at every probe, inside the data and 10 s later; a wrong
 * composition (a dropped hop) must miss it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "numerics/bound.h"
#include "numerics/hull_learner.h"
#include "test.h"
#include "util/rng.h"

#define DEPTH 4

struct tclock {
	long double off_ns, skew;
};

static long double tc_read(const struct tclock *c, long double T)
{
	return c->off_ns + (1 + c->skew) * T;
}

static int64_t lm_read(const struct lm *m, int64_t x)
{
	return x + (int64_t)llroundl(m->intercept_ns + m->slope * (long double)(x - m->x0_ns));
}

/* what the reference reads at true time T, for a hop's reference: a raw clock (m NULL) or a
 * global clock (the raw clock through model m) */
static int64_t ref_read(const struct tclock *c, const struct lm *m, long double T)
{
	int64_t raw = (int64_t)llroundl(tc_read(c, T));
	return m ? lm_read(m, raw) : raw;
}

/* learn hop X = x, Y = y (through ym when not NULL) from n ping-pongs over span_ns */
static int learn_hop(struct rng *r, const struct tclock *x, const struct tclock *y,
                     const struct lm *ym, int n, double span_ns, double asym, struct lm *est,
                     struct bound *b)
{
	hull_learner *l = hull_learner_create(HULL_LEARNER_CENTER);
	if (!l)
		return -1;
	long double T = 1e9 * (1 + rng_uniform(r));
	for (int i = 0; i < n; i++) {
		long double t = T + span_ns * i / n;
		double up = 300 - 80 * log(1 - rng_uniform(r)), down = 300 + asym - 80 * log(1 - rng_uniform(r));
		int64_t t1 = (int64_t)floorl(tc_read(x, t));
		int64_t t2 = ref_read(y, ym, t + up);
		int64_t t4 = (int64_t)ceill(tc_read(x, t + up + down));
		hull_learner_add(l, t1, t2, t2, t4);
	}
	struct hull_learner_fit f;
	int st = hull_learner_fit(l, &f);
	double lo, hi;
	hull_learner_eval(l, f.x_last_ns, NULL, &lo, &hi);
	*est = f.est;
	*b = bound_from_offset_interval(&f.est, f.x_last_ns, lo, hi, f.cmin.slope, f.cmax.slope);
	hull_learner_destroy(l);
	return st == HULL_LEARNER_OK ? 0 : -1;
}

/* the truth (clock 0) minus the estimate of clock k's model at true time T, inside b? */
static int inside(const struct tclock *c0, const struct tclock *ck, const struct lm *m,
                  const struct bound *b, long double T, double *miss)
{
	int64_t x = (int64_t)llroundl(tc_read(ck, T));
	int64_t y = lm_read(m, x);
	long double truth = tc_read(c0, T);
	double lo, hi, d = (double)(truth - (long double)y);
	bound_at(b, y, &lo, &hi);
	/* the readings are rounded to whole ns: allow 1 ns */
	*miss = fmax(lo - d, d - hi);
	return d >= lo - 1 && d <= hi + 1;
}

int main(int argc, char **argv)
{
	test_seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	int nseeds = 40, nprobe = 0;
	double worst_hw0 = 0;
	for (int sd = 0; sd < nseeds; sd++, test_seed++) {
		struct rng r;
		rng_seed(&r, test_seed);
		struct tclock c[DEPTH];
		for (int k = 0; k < DEPTH; k++)
			c[k] = (struct tclock){(rng_uniform(&r) * 2 - 1) * 1e9,
			                       (rng_uniform(&r) * 2 - 1) * 200e-6};
		double asym = (rng_uniform(&r) * 2 - 1) * 100;
		/* HCA2: hop k learns c[k] -> c[k-1] raw; composed to c[0] arithmetically */
		struct lm to0[DEPTH];
		struct bound b0[DEPTH];
		to0[0] = (struct lm){0, 0, 0};
		b0[0] = bound_exact();
		/* HCA3: hop k learns c[k] -> the global clock of k-1; the bound of k-1 added */
		struct lm g[DEPTH];
		struct bound gb[DEPTH];
		g[0] = (struct lm){0, 0, 0};
		gb[0] = bound_exact();
		for (int k = 1; k < DEPTH; k++) {
			struct lm m;
			struct bound b;
			TEST_CHECK(!learn_hop(&r, &c[k], &c[k - 1], NULL, 2000, 0.2e9, asym, &m, &b),
			           "hop %d: hulls did not separate", k);
			b0[k] = bound_compose(&b, &to0[k - 1], &b0[k - 1]);
			to0[k] = lm_compose(&to0[k - 1], &m);
			TEST_CHECK(!learn_hop(&r, &c[k], &c[k - 1], k > 1 ? &g[k - 1] : NULL, 2000, 0.2e9, asym,
			                      &g[k], &b), "hop %d (global): hulls did not separate", k);
			gb[k] = bound_compose(&b, NULL, &gb[k - 1]);
		}
		for (int k = 1; k < DEPTH; k++) {
			TEST_CHECK(bound_known(&b0[k]) && bound_known(&gb[k]), "depth %d unknown", k);
			for (int i = 0; i < 50; i++) {
				/* inside the data (1-2.2 s) and up to 12 s later */
				long double T = 1e9 * (1 + 13 * rng_uniform(&r));
				double miss;
				TEST_CHECK(inside(&c[0], &c[k], &to0[k], &b0[k], T, &miss),
				           "HCA2 depth %d, T %.3Lf s: truth outside by %.2f ns", k, T * 1e-9, miss);
				TEST_CHECK(inside(&c[0], &c[k], &g[k], &gb[k], T, &miss),
				           "HCA3 depth %d, T %.3Lf s: truth outside by %.2f ns", k, T * 1e-9, miss);
				nprobe += 2;
			}
			int64_t y = lm_read(&to0[k], (int64_t)llroundl(tc_read(&c[k], 3.2e9)));
			worst_hw0 = fmax(worst_hw0, bound_half_width(&b0[k], y) / k);
		}
	}
	printf("test_bound: %d probes over %d seeds, the truth inside every composed bound; "
	       "widest half-width at T = 3.2 s (1-2 s after the data), per hop: %.0f ns (delays >= 300 ns "
	       "each way)\n",
	       nprobe, nseeds, worst_hw0);

	/* bounds add over hops: the composed interval holds both hops' intervals (and a chain of
	 * exact hops stays exact) */
	{
		struct tclock a = {0, 0}, b = {5000, 50e-6}, cc = {9000, -70e-6};
		struct lm m1, m2;
		struct bound b1, b2;
		struct rng r;
		rng_seed(&r, 99);
		learn_hop(&r, &b, &a, NULL, 500, 0.1e9, 0, &m1, &b1);
		learn_hop(&r, &cc, &b, NULL, 500, 0.1e9, 0, &m2, &b2);
		struct bound c = bound_compose(&b2, &m1, &b1);
		double lo1, hi1, lo2, hi2, lo, hi;
		bound_at(&b1, c.at_ns, &lo1, &hi1);
		bound_at(&b2, b2.at_ns, &lo2, &hi2);
		bound_at(&c, c.at_ns, &lo, &hi);
		TEST_CHECK(lo <= lo1 + lo2 + 0.1 && hi >= hi1 + hi2 - 0.1,
		           "composed [%.1f, %.1f] narrower than the hops' sum [%.1f, %.1f]", lo, hi,
		           lo1 + lo2, hi1 + hi2);
		struct bound e = bound_exact(), ee = bound_compose(&e, NULL, &e);
		TEST_CHECK(ee.lo_ns == 0 && ee.hi_ns == 0 && ee.rate == 0, "exact o exact");
	}
	/* unknown propagates, shift moves, widen widens */
	{
		struct bound u = bound_unknown(), e = bound_exact(), s;
		TEST_CHECK(!bound_known(&u) && bound_known(&e), "known");
		s = bound_compose(&e, NULL, &u);
		TEST_CHECK(!bound_known(&s), "unknown did not propagate");
		struct bound b = {1000, -5, 7, 1e-6};
		s = bound_shift(&b, 3);
		double lo, hi;
		bound_at(&s, 1003, &lo, &hi);
		TEST_CHECK(fabs(lo + 8) < 1e-3 && fabs(hi - 4) < 1e-3, "shift: [%g, %g]", lo, hi);
		s = bound_widen(&b, 2);
		bound_at(&s, 1000 + 1000000, &lo, &hi);
		TEST_CHECK(fabs(lo + 8) < 1e-9 && fabs(hi - 10) < 1e-9, "widen+rate: [%g, %g]", lo, hi);
		TEST_CHECK(isinf(bound_half_width(&u, 0)), "half-width of unknown");
	}
	return test_end("test_bound");
}
