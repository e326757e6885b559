/*
 * bound.c - strict error bounds of clock estimates and their composition (bound.h).
 *
 * Composition (bound.h's bound_compose), with a = m1(c) the estimate of A's time, e1 its
 * error, y = m2(a) the composed reading and d = |y - at| (at = m2(b1's anchor)):
 *   B_true - y = e2(m2(a + e1)) + (1 + s2) e1,
 *   (1 + s2) e1 in (1 + s2) [lo1, hi1] +- r1 d            (|a - at1| = d / (1 + s2)),
 *   e2 at m2(a + e1), which is within (1 + s2)|e1| of y:   b2 widened by r2 (|at - at2| + d)
 *                                                         and by r2 (1 + s2) |e1|,
 * so the composed interval at the anchor is (1 + s2)[lo1, hi1] + [lo2, hi2] widened by
 * r2 (|at - at2| + (1 + s2) max(|lo1|, |hi1|)), and its rate r1 + r2 + r1 r2. Anchors are
 * rounded to whole ns: every interval is widened by its rate times 1 ns for that.
 */
#include <math.h>

#include "numerics/bound.h"

struct bound bound_unknown(void)
{
	return (struct bound){0, -INFINITY, INFINITY, 0};
}

struct bound bound_exact(void)
{
	return (struct bound){0, 0, 0, 0};
}

int bound_known(const struct bound *b)
{
	return isfinite(b->lo_ns) && isfinite(b->hi_ns) && isfinite(b->rate) && b->lo_ns <= b->hi_ns &&
	       b->rate >= 0;
}

void bound_at(const struct bound *b, int64_t y_ns, double *lo_ns, double *hi_ns)
{
	if (!bound_known(b)) {
		*lo_ns = -INFINITY;
		*hi_ns = INFINITY;
		return;
	}
	double w = b->rate * fabs((double)diff_ns(y_ns, b->at_ns));
	*lo_ns = b->lo_ns - w;
	*hi_ns = b->hi_ns + w;
}

static int64_t lm_apply(const struct lm *m, int64_t x)
{
	double off = m->intercept_ns + m->slope * (double)diff_ns(x, m->x0_ns);
	return x + (int64_t)llround(off);
}

struct bound bound_compose(const struct bound *b1, const struct lm *m2, const struct bound *b2)
{
	if (!bound_known(b1) || !bound_known(b2) || (m2 && !(m2->slope > -1)))
		return bound_unknown();
	double k = 1 + (m2 ? m2->slope : 0);
	struct bound r;
	r.at_ns = m2 ? lm_apply(m2, b1->at_ns) : b1->at_ns;
	double e1 = fmax(fabs(b1->lo_ns), fabs(b1->hi_ns));
	double widen = b2->rate * (fabs((double)diff_ns(r.at_ns, b2->at_ns)) + k * e1);
	r.rate = b1->rate + b2->rate + b1->rate * b2->rate;
	r.lo_ns = k * b1->lo_ns + b2->lo_ns - widen - r.rate;
	r.hi_ns = k * b1->hi_ns + b2->hi_ns + widen + r.rate;
	return bound_known(&r) ? r : bound_unknown();
}

struct bound bound_from_offset_interval(const struct lm *est, int64_t x_ns, double lo_ns,
                                        double hi_ns, double smin, double smax)
{
	double e = est->intercept_ns + est->slope * (double)diff_ns(x_ns, est->x0_ns);
	if (!isfinite(e) || !isfinite(lo_ns) || !isfinite(hi_ns) || !(smin <= smax) ||
	    !(est->slope > -1))
		return bound_unknown();
	struct bound r;
	r.at_ns = x_ns + (int64_t)llround(e);
	r.rate = fmax(fmax(smax - est->slope, est->slope - smin), 0) / (1 + est->slope);
	r.lo_ns = lo_ns - e - r.rate;
	r.hi_ns = hi_ns - e + r.rate;
	return bound_known(&r) ? r : bound_unknown();
}

struct bound bound_shift(const struct bound *b, double delta_ns)
{
	if (!bound_known(b) || !isfinite(delta_ns))
		return bound_unknown();
	int64_t d = (int64_t)llround(delta_ns);
	struct bound r = *b;
	r.at_ns = b->at_ns + d;
	r.lo_ns = b->lo_ns - delta_ns - b->rate;
	r.hi_ns = b->hi_ns - delta_ns + b->rate;
	return r;
}

struct bound bound_widen(const struct bound *b, double slack_ns)
{
	if (!bound_known(b) || !(slack_ns >= 0))
		return bound_unknown();
	struct bound r = *b;
	r.lo_ns -= slack_ns;
	r.hi_ns += slack_ns;
	return r;
}

double bound_half_width(const struct bound *b, int64_t y_ns)
{
	double lo, hi;
	bound_at(b, y_ns, &lo, &hi);
	return fmax(-lo, hi);
}
