/*
 * test_hull.c - unit tests of the hull numerics (src/numerics/hull.c, pair.c) on random data of
 * known truth:
 *  - half hulls: every point on the right side of every edge, convex, sorted;
 *  - LP 5 and LP 6 against a brute force over every intersection of two constraints, to 1e-9
 *    relative, on small cases; "hulls intersect" exactly when the brute force finds no line;
 *  - large realtime-sized cases: the true line always inside the bounds, bisector error far
 *    below the bound, O(n) behaviour;
 *  - segments on a quadratic drift, and a garbage pass that must not crash.
 * Usage: test_hull [SEED]; every failure prints the seed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/hull.h"
#include "numerics/pair.h"

static uint64_t rng;
static unsigned long seed;
static int failures;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double unif(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "FAIL (seed %lu) %s:%d: ", seed, __FILE__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                                               \
			fputc('\n', stderr);                                                        \
			failures++;                                                                 \
		}                                                                                   \
	} while (0)

/* a random instance: truth y = a0 + a1 x, up points above by a latency, down points below */
struct inst {
	struct hull_pt *up, *dn;
	size_t nu, nd;
	long double a0, a1;
};

static void make(struct inst *in, size_t nu, size_t nd, int64_t span, double lat0, double jit,
                 double bad_frac)
{
	in->up = malloc((nu + 1) * sizeof(*in->up));
	in->dn = malloc((nd + 1) * sizeof(*in->dn));
	in->nu = nu;
	in->nd = nd;
	in->a1 = 1 + (unif() - 0.5) * 2e-4;
	in->a0 = (unif() - 0.5) * 1e6;
	for (int pass = 0; pass < 2; pass++) {
		struct hull_pt *p = pass ? in->dn : in->up;
		size_t n = pass ? nd : nu;
		int64_t x = (int64_t)(unif() * span / (double)(n + 1));
		for (size_t i = 0; i < n; i++) {
			double lat = lat0 + jit * -log(1 - unif());
			if (unif() < bad_frac)
				lat = -lat; /* a message against the truth: may make hulls intersect */
			if (unif() < 0.1 && i) /* ties in x */
				x = p[i - 1].x;
			p[i].x = x;
			p[i].y = (int64_t)llroundl(in->a0 + in->a1 * x + (pass ? -lat : lat));
			x += 1 + (int64_t)(unif() * 2.0 * span / (double)(n + 1));
		}
	}
}

static void drop(struct inst *in)
{
	free(in->up);
	free(in->dn);
}

/* brute force: best objective a0 + a1 * x (or a1 if x is NAN) over every feasible vertex */
static int brute(const struct inst *in, long double x, int maximise, long double *best)
{
	size_t n = in->nu + in->nd;
	int found = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const struct hull_pt *p = i < in->nu ? &in->up[i] : &in->dn[i - in->nu];
			const struct hull_pt *q = j < in->nu ? &in->up[j] : &in->dn[j - in->nu];
			long double a1, a0, v;
			int ok = 1;
			if (p->x == q->x)
				continue;
			a1 = (long double)(q->y - p->y) / (long double)(q->x - p->x);
			a0 = p->y - a1 * p->x;
			for (size_t k = 0; ok && k < n; k++) {
				const struct hull_pt *r = k < in->nu ? &in->up[k] : &in->dn[k - in->nu];
				long double d = a0 + a1 * r->x - r->y;
				long double tol = 1e-6L; /* ns: rounding only, no slack */
				ok = k < in->nu ? d <= tol : d >= -tol;
			}
			if (!ok)
				continue;
			v = isnan(x) ? a1 : a0 + a1 * x;
			if (!found || (maximise ? v > *best : v < *best))
				*best = v;
			found = 1;
		}
	return found;
}

static int close_rel(long double a, long double b, long double scale)
{
	return fabsl(a - b) <= 1e-9L * (fabsl(scale) + 1);
}

static void test_hull_shape(void)
{
	for (int rep = 0; rep < 200; rep++) {
		struct inst in;
		struct hull_pt *h = malloc(400 * sizeof(*h));
		size_t m;
		make(&in, 1 + rnd() % 300, 1, 1000000, 1000, 5000, 0);
		m = hull_lower(in.up, in.nu, h);
		for (size_t k = 1; k < m; k++)
			CHECK(h[k].x > h[k - 1].x, "hull not sorted by x");
		for (size_t k = 0; k + 1 < m; k++)
			for (size_t i = 0; i < in.nu; i++) {
				__extension__ __int128 c = (__int128)(h[k + 1].x - h[k].x) * (in.up[i].y - h[k].y) -
				                           (__int128)(h[k + 1].y - h[k].y) * (in.up[i].x - h[k].x);
				if (in.up[i].x >= h[k].x && in.up[i].x <= h[k + 1].x)
					CHECK(c >= 0, "point below a lower hull edge");
			}
		for (size_t k = 0; k + 2 < m; k++) {
			__extension__ __int128 c = (__int128)(h[k + 1].x - h[k].x) * (h[k + 2].y - h[k].y) -
			                           (__int128)(h[k + 1].y - h[k].y) * (h[k + 2].x - h[k].x);
			CHECK(c > 0, "lower hull not strictly convex");
		}
		free(h);
		drop(&in);
	}
}

/* LP 5 / LP 6 and the intersection test against brute force */
static void test_brute(void)
{
	int feasible = 0, infeasible = 0;

	for (int rep = 0; rep < 3000; rep++) {
		struct inst in;
		struct hull_pt lo[32], hi[32];
		struct corridor c;
		size_t nlo, nhi;
		long double b;
		int st, bf;

		make(&in, 2 + rnd() % 12, 2 + rnd() % 12, 1000000000, 1000, 20000,
		     rep % 3 == 0 ? 0.15 : 0);
		/* bounded slopes need interleaved directions */
		if (in.dn[in.nd - 1].x <= in.up[0].x || in.dn[0].x >= in.up[in.nu - 1].x) {
			drop(&in);
			continue;
		}
		nlo = hull_lower(in.up, in.nu, lo);
		nhi = hull_upper(in.dn, in.nd, hi);
		st = corridor_init(&c, lo, nlo, hi, nhi);
		bf = brute(&in, NAN, 1, &b);
		CHECK(st != CORRIDOR_UNBOUNDED, "unbounded despite interleaving");
		CHECK((st == CORRIDOR_OK) == bf, "status %d but brute force %s", st,
		      bf ? "finds a line" : "finds none");
		if (st != CORRIDOR_OK || !bf) {
			infeasible += !bf;
			CHECK(c.gap < 1e-6, "intersecting hulls with a positive gap %Lg", c.gap);
			drop(&in);
			continue;
		}
		feasible++;
		CHECK(close_rel(c.cmax.a1, b, b), "a1max %.15Lg, brute %.15Lg", c.cmax.a1, b);
		brute(&in, NAN, 0, &b);
		CHECK(close_rel(c.cmin.a1, b, b), "a1min %.15Lg, brute %.15Lg", c.cmin.a1, b);
		{
			struct line e = corridor_bisector(&c);
			CHECK(e.a1 >= c.cmin.a1 && e.a1 <= c.cmax.a1, "bisector slope outside [min,max]");
			for (size_t k = 0; k < nlo; k++)
				CHECK(line_at(e, lo[k].x) <= lo[k].y + 1e-6, "bisector above an up point");
			for (size_t k = 0; k < nhi; k++)
				CHECK(line_at(e, hi[k].x) >= hi[k].y - 1e-6, "bisector below a down point");
			CHECK(line_at(e, 0) - line_at(e, 0) == 0, "nan");
		}
		/* LP 6 at hull vertices, at random places inside and outside the data */
		for (int q = 0; q < 12; q++) {
			long double x, vmax, vmin, bmax, bmin, e;
			if (q < 4 && nlo)
				x = lo[rnd() % nlo].x;
			else if (q < 6)
				x = hi[rnd() % nhi].x;
			else
				x = (long double)(unif() * 1.6e9 - 3e8);
			vmax = corridor_lp6_max(&c, x);
			vmin = corridor_lp6_min(&c, x);
			brute(&in, x, 1, &bmax);
			brute(&in, x, 0, &bmin);
			e = line_at(corridor_bisector(&c), x);
			/* compare the bounds Delta1, Delta2 of eq. 7-8 */
			CHECK(close_rel(vmax - e, bmax - e, bmax - e), "Delta1 at %.0Lf: %.12Lg, brute "
			      "%.12Lg", x, vmax - e, bmax - e);
			CHECK(close_rel(e - vmin, e - bmin, e - bmin), "Delta2 at %.0Lf: %.12Lg, brute "
			      "%.12Lg", x, e - vmin, e - bmin);
			CHECK(vmin <= line_at(c.cmax, x) + 1e-6 && vmax >= line_at(c.cmax, x) - 1e-6,
			      "cmax outside the LP 6 range");
		}
		/* the sorted sweep (vertex values interpolated) agrees with LP 6 everywhere */
		{
			int64_t xs[64];
			long double vmax[64], vmin[64];
			size_t n = 0;
			int64_t x = -200000000;
			while (n < 64) {
				xs[n++] = x;
				x += (int64_t)(unif() * 3e7);
			}
			corridor_lp6_sorted(&c, xs, n, vmax, vmin);
			for (size_t i = 0; i < n; i++) {
				long double m = corridor_lp6_max(&c, xs[i]), l = corridor_lp6_min(&c, xs[i]);
				CHECK(fabsl(vmax[i] - m) < 1e-6L * (1 + fabsl(m - l)),
				      "sweep max %.6Lf vs %.6Lf", vmax[i], m);
				CHECK(fabsl(vmin[i] - l) < 1e-6L * (1 + fabsl(m - l)),
				      "sweep min %.6Lf vs %.6Lf", vmin[i], l);
			}
		}
		drop(&in);
	}
	CHECK(feasible > 500 && infeasible > 100, "too few cases of each kind: %d feasible, %d not",
	      feasible, infeasible);
	printf("brute force: %d feasible and %d intersecting cases agree\n", feasible, infeasible);
}

/* realtime-sized, long traces: truth inside the bounds, bisector far better than the bound */
static void test_large(void)
{
	for (int rep = 0; rep < 6; rep++) {
		struct inst in;
		struct pair_fit f;
		struct pair_opts o = {PAIR_MODE_HULL, 0};
		const int64_t base_x = INT64_C(1700000000000000000), base_y = base_x + 12345678901;
		size_t n = 20000 << (rep % 3);
		long double sum_err = 0, sum_b = 0;
		int64_t span = INT64_C(3600) * 1000000000 * (1 + rep % 4); /* 1-4 h */
		int bad = 0;

		make(&in, n, n, span, 20000, 50000, 0);
		for (size_t i = 0; i < n; i++) {
			in.up[i].x += base_x;
			in.up[i].y += base_y;
			in.dn[i].x += base_x;
			in.dn[i].y += base_y;
		}
		{
			/* keep the truth checkable after pair_fit rewrites the points */
			struct hull_pt *u = malloc(n * sizeof(*u));
			memcpy(u, in.up, n * sizeof(*u));
			CHECK(pair_fit(&f, in.up, n, in.dn, n, &o) == 0, "pair_fit failed");
			CHECK(f.quality == PAIR_HULL, "quality %s", pair_quality_name(f.quality));
			for (size_t i = 0; i < n; i += 7) {
				int64_t y;
				long double yf, dm, dp, truth, c;
				pair_eval(&f, u[i].x, 0, &y, &yf, &dm, &dp);
				/* truth in absolute terms: base_y + a0 + a1 (x - base_x) */
				truth = (long double)(base_y - y) + in.a0 + in.a1 * (long double)(u[i].x - base_x);
				c = yf;
				if (truth < c - dm - 1e-3 || truth > c + dp + 1e-3)
					bad++;
				sum_err += fabsl(c - truth);
				sum_b += dm > dp ? dm : dp;
			}
			free(u);
		}
		CHECK(!bad, "%d events with the truth outside the bounds", bad);
		CHECK(sum_err < 0.5L * sum_b, "bisector error %.1Lf not far below the bound %.1Lf",
		      sum_err, sum_b);
		CHECK(f.hull_points < 400, "unexpectedly many hull points: %zu", f.hull_points);
		pair_free(&f);
		drop(&in);
	}
}

/* quadratic drift: one line cannot fit; auto segments can, and convert more accurately */
static void test_segments(void)
{
	size_t n = 20000;
	struct hull_pt *up = malloc(n * sizeof(*up)), *dn = malloc(n * sizeof(*dn));
	struct hull_pt *u2 = malloc(n * sizeof(*up)), *d2 = malloc(n * sizeof(*dn));
	int64_t span = INT64_C(4) * 3600 * 1000000000;
	double q = 2e-19 * (1 + unif()); /* ns/ns^2: ~ 40 us of curvature over 4 h */
	struct pair_fit f1, f2, f3;
	struct pair_opts o1 = {PAIR_MODE_HULL, 0}, o2 = {PAIR_MODE_HULL, PAIR_SEGMENTS_AUTO},
	                 o3 = {PAIR_MODE_HULL, INT64_C(600) * 1000000000};
	long double e1 = 0, e2 = 0;

	for (int pass = 0; pass < 2; pass++) {
		struct hull_pt *p = pass ? dn : up;
		for (size_t i = 0; i < n; i++) {
			double x = (double)i * span / n + unif() * 1e5;
			double lat = 20000 + 20000 * -log(1 - unif());
			p[i].x = (int64_t)x;
			p[i].y = (int64_t)(x * 1.00001 + q * x * x + (pass ? -lat : lat));
		}
	}
	memcpy(u2, up, n * sizeof(*up));
	memcpy(d2, dn, n * sizeof(*dn));
	CHECK(!pair_fit(&f1, up, n, dn, n, &o1) && f1.quality == PAIR_FALLBACK,
	      "quadratic drift did not trigger the fallback (%s)", pair_quality_name(f1.quality));
	memcpy(up, u2, n * sizeof(*up));
	memcpy(dn, d2, n * sizeof(*dn));
	CHECK(!pair_fit(&f2, up, n, dn, n, &o2) && f2.quality == PAIR_SEGMENTS && f2.nseg > 1,
	      "auto segments: %s", pair_quality_name(f2.quality));
	for (size_t k = 0; k < f2.nseg; k++)
		CHECK(f2.seg[k].cor.status == CORRIDOR_OK, "segment %zu does not fit", k);
	CHECK(!pair_fit(&f3, u2, n, d2, n, &o3) && f3.nseg >= 20, "fixed segments: %zu", f3.nseg);
	for (size_t i = 0; i < 1000; i++) {
		int64_t x = (int64_t)(unif() * span), y;
		long double truth = x * 1.00001L + (long double)q * x * x, yf, dm, dp;
		pair_eval(&f1, x, 0, &y, &yf, &dm, &dp);
		e1 += fabsl(y + yf - truth);
		pair_eval(&f2, x, 0, &y, &yf, &dm, &dp);
		e2 += fabsl(y + yf - truth);
		{ /* continuity of the joined segments */
			int64_t y0, y1;
			long double f0, f1v;
			pair_eval(&f2, x, 0, &y0, &f0, &dm, &dp);
			pair_eval(&f2, x + 1, 0, &y1, &f1v, &dm, &dp);
			CHECK(fabsl((y1 + f1v) - (y0 + f0) - 1.00001L) < 0.01L, "segments jump at %" PRId64, x);
		}
	}
	CHECK(e2 < e1 / 4, "segments error %.0Lf not well below fallback error %.0Lf", e2 / 1000,
	      e1 / 1000);
	printf("quadratic drift: fallback mean error %.0Lf ns, %zu auto segments %.0Lf ns\n",
	       e1 / 1000, f2.nseg, e2 / 1000);
	pair_free(&f1);
	pair_free(&f2);
	pair_free(&f3);
	free(up);
	free(dn);
	free(u2);
	free(d2);
}

/* garbage: any sorted points of any size must not crash or overflow */
static void test_garbage(void)
{
	for (int rep = 0; rep < 2000; rep++) {
		size_t nu = rnd() % 20, nd = rnd() % 20;
		struct hull_pt up[20], dn[20];
		struct pair_fit f;
		struct pair_opts o = {(int)(rnd() % 2), rep % 3 == 0 ? PAIR_SEGMENTS_AUTO : 0};
		const int64_t lim = (INT64_C(1) << 61) - 1;
		int64_t x = -lim;
		for (size_t i = 0; i < nu; i++) {
			x += (int64_t)(rnd() % (uint64_t)(lim / 16));
			up[i] = (struct hull_pt){x, (int64_t)(rnd() % (uint64_t)lim) - lim / 2};
		}
		x = -lim;
		for (size_t i = 0; i < nd; i++) {
			x += (int64_t)(rnd() % (uint64_t)(lim / 16));
			dn[i] = (struct hull_pt){x, (int64_t)(rnd() % (uint64_t)lim) - lim / 2};
		}
		if (!pair_fit(&f, up, nu, dn, nd, &o)) {
			int64_t y;
			long double yf, dm, dp;
			pair_eval(&f, 0, 0, &y, &yf, &dm, &dp);
			pair_free(&f);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long seeds[] = {1, 2, 3, 42, 20240601};
	size_t ns = sizeof(seeds) / sizeof(*seeds);

	if (argc > 1) {
		seeds[0] = strtoul(argv[1], NULL, 0);
		ns = 1;
	}
	for (size_t i = 0; i < ns; i++) {
		seed = seeds[i];
		rng = seed * 0x9E3779B97F4A7C15ull + 1;
		test_hull_shape();
		test_brute();
		test_large();
		test_segments();
		test_garbage();
	}
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
