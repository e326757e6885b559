/*
 * bound.h - strict error bounds of a clock estimate, carried and composed along a sync tree
 * (the composition `hclock align` does over hops, for linear models learned online).
 *
 * A bound belongs to an estimate m of some clock B's time made from another clock's time
 * (a model, or a global clock that estimates the reference's time). For an estimate reading
 * y (ns, in B's time scale) the truth (B's reading at the same instant) lies in
 *   [y + lo_ns - rate |y - at_ns|,  y + hi_ns + rate |y - at_ns|]
 * i.e. the interval is [lo_ns, hi_ns] around the estimate at the anchor at_ns and widens by
 * `rate` ns per ns of distance from it (a Lipschitz bound: the valid lines' slopes differ from
 * the estimate's by at most rate). lo_ns <= 0 <= hi_ns whenever the estimate is itself a
 * valid line. An unknown bound has lo_ns = -INFINITY, hi_ns = INFINITY.
 *
 * MPI-free, no allocation; times are absolute int64 ns, only differences become doubles.
 */
#ifndef HCLOCK_NUMERICS_BOUND_H
#define HCLOCK_NUMERICS_BOUND_H

#include <stdint.h>

#include "numerics/linreg.h"

struct bound {
	int64_t at_ns; /* anchor: an estimate reading, ns (in the estimated clock's scale) */
	double lo_ns;  /* truth - estimate at the anchor is >= lo_ns, ns (-INFINITY: unknown) */
	double hi_ns;  /* ... and <= hi_ns, ns (INFINITY: unknown) */
	double rate;   /* widening per ns away from the anchor, both sides, dimensionless >= 0 */
};

/* The unknown bound, and the exact one (the reference itself: truth == estimate). */
struct bound bound_unknown(void);
struct bound bound_exact(void);
/* Finite and well formed (lo <= hi, rate >= 0). */
int bound_known(const struct bound *b);

/* The interval [*lo_ns, *hi_ns] of truth - estimate at estimate reading y_ns. */
void bound_at(const struct bound *b, int64_t y_ns, double *lo_ns, double *hi_ns);

/*
 * Compose: b1 bounds a model m1 (C -> A, its readings in A's scale), b2 bounds m2 (A -> B,
 * readings in B's scale). Returns the bound of m2(m1(.)) (C -> B), anchored at m2(b1's
 * anchor). Strict: it accounts for evaluating b2 at the estimate instead of at the true A
 * time (b2's widening over b1's width) and for m2's slope stretching b1. m2 may be NULL (the
 * identity: A's time is an estimate of B's, as a process's global clock estimates the
 * reference's). Unknown if either is.
 */
struct bound bound_compose(const struct bound *b1, const struct lm *m2, const struct bound *b2);

/*
 * The bound of a line fitted to B - C offsets (an offset model est, offset(x) = B - C at C
 * time x) from the interval [lo_ns, hi_ns] of the true offset at C time x_ns and the range
 * of valid slopes [smin, smax] (est.slope within it): the bound of the estimate, anchored at
 * its reading at x_ns, in B's scale. Unknown for non-finite input.
 */
struct bound bound_from_offset_interval(const struct lm *est, int64_t x_ns, double lo_ns,
                                        double hi_ns, double smin, double smax);

/* The bound of an estimate shifted by delta_ns (estimate' = estimate + delta_ns): the
 * interval moves by -delta_ns, the anchor by +delta_ns. */
struct bound bound_shift(const struct bound *b, double delta_ns);

/* Widen by slack_ns on both sides (>= 0). */
struct bound bound_widen(const struct bound *b, double slack_ns);

/* The larger half-width max(-lo, hi) at y_ns; INFINITY for an unknown bound. */
double bound_half_width(const struct bound *b, int64_t y_ns);

#endif
