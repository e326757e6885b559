/*
 * hull_learner.h - learn a linear clock model with strict bounds from ping-pong exchanges,
 * by convex hulls (Poirier, Roy, Dagenais, Sections 3.3-3.5: the two half hulls, the extreme
 * valid lines of LP 5, Duda's bisector, LP 6 for the bounds at any time; the
 * online view of "Continuous Clock Synchronization for Accurate Performance Measurements":
 * the messages of lowest delay pin the intercept, the tangent between the hulls the slope).
 * Numerics only, no MPI.
 *
 * X is the local clock (the client), Y the reference. A message X -> Y (an "up" point: send
 * time on X, receive time on Y) lies on or above the true relation Y = f(X), a message
 * Y -> X (a "down" point: receive time on X, send time on Y) on or below it, as long as
 * delays are non-negative. A ping-pong started on X gives one of each: (t1, t2) up and
 * (t4, t3) down, t1/t4 the send/receive on X, t2/t3 the receive/send on Y.
 *
 * Assumption: over the window of the messages fed, both clocks are linear in each other
 * (constant rates, no step, no wander larger than the delays resolve). Then the true line
 * lies inside the reported bounds at every x, always: they are strict, not statistical.
 * When no line separates the hulls the assumption is broken (a clock step, a delay
 * asymmetry that changed, a timestamp taken on the wrong side of a stall) and the learner
 * says so (HULL_LEARNER_INTERSECT) instead of returning a wrong line. A violation smaller
 * than the corridor (a step of a few ns on a wide corridor) cannot be told from a rate and
 * stays hidden, as it must for any method using these timestamps only.
 *
 * Times are absolute int64 ns of each clock (|t| < 2^62, and all of one learner within 2^62
 * of its first message); the learner keeps them relative to its first message, so only
 * differences become floating point (long double inside, as hull.h). Models come out as
 * struct lm (numerics/linreg.h): offset(x) = Y - X ("reference minus local") at local time
 * x, offset(x) = intercept_ns + slope (x - x0_ns), x0_ns the first message's X time.
 *
 * Memory: the learner keeps the hull vertices plus the messages since the last prune, so it
 * stays O(hull size) however many exchanges it is fed (hull.h: the hull of a set is the hull
 * of its hull and any additions). Messages may come in any order (in time order an add is
 * O(1) amortized). A learner is not thread-safe; a fit is read-only between fits.
 */
#ifndef HCLOCK_NUMERICS_HULL_LEARNER_H
#define HCLOCK_NUMERICS_HULL_LEARNER_H

#include <stddef.h>
#include <stdint.h>

#include "numerics/linreg.h"

typedef struct hull_learner hull_learner;

enum hull_learner_status {
	HULL_LEARNER_OK = 0,        /* a line separates the hulls: est is the estimate
	                               chosen at create, the bounds are strict */
	HULL_LEARNER_INTERSECT = 1, /* the hulls intersect: no line is valid for every message
	                               (step, changed asymmetry, stalled exchange); est is only
	                               the fallback line and the bounds are infinite: fall back
	                               and warn */
	HULL_LEARNER_TOO_FEW = 2,   /* no fit yet, or too few messages (or one direction only)
	                               to bound the slope: at least two ping-pongs are needed */
};

struct hull_learner_fit {
	int status;             /* enum hull_learner_status */
	struct lm est;          /* the estimate chosen at create (OK), the widest-gap fallback
	                           (INTERSECT); zero model (TOO_FEW) */
	struct lm bisector;     /* Duda's bisector (OK only; zero model otherwise) */
	struct lm center;       /* the widest-gap line: at the slope where the vertical gap
	                           between the hulls is largest, halfway across it (a maximum-
	                           margin line; valid itself when OK, the fallback when INTERSECT);
	                           zero model (TOO_FEW) */
	struct lm cmax, cmin;   /* the valid lines of largest and smallest slope (LP 5, C_B^max
	                           and C_B^min of Poirier, Roy & Dagenais) as offset models; OK
	                           only. They cross inside the data; the interval at x is wider
	                           than the two lines there (hull_learner_eval) */
	double slope_width;     /* cmax.slope - cmin.slope (dimensionless, >= 0; OK only): the
	                           rate at which the interval widens away from the data, ns/ns */
	double gap_ns;          /* largest vertical gap between the hulls, ns; < 0 when they
	                           intersect (-gap_ns/2 is then the fallback's worst violation) */
	int64_t x_first_ns;     /* X time of the earliest and latest message, absolute ns */
	int64_t x_last_ns;
	int64_t rtt_min_ns;     /* smallest network round trip (t4 - t1) - (t3 - t2) over the
	                           exchanges, ns; INT64_MAX with none. With a sharp delay minimum
	                           the interval's width near the data tends to it */
	size_t nexchanges;      /* ping-pongs fed (hull_learner_add) */
	size_t nup, ndown;      /* messages X -> Y and Y -> X fed, ping-pongs included */
	size_t nlo, nhi;        /* vertices of the lower hull of the up points and of the upper
	                           hull of the down points */
};

/*
 * Which valid line is the estimate (est, hull_learner_eval). Both lie inside the bounds; they
 * differ in how fast they converge (tests/unit/test_hull_learner.c prints the figures):
 *  - BISECTOR, Duda's bisector of cmax and cmin (Poirier, Roy & Dagenais's estimate): its
 *    slope follows the first and last near-minimal messages of each direction, so it
 *    converges slowly, slower than least squares through min-filtered fit points at 100 and
 *    more exchanges;
 *  - CENTER, the widest-gap line: the slope at which the hulls lie farthest apart, halfway
 *    between them. Hull edges between near-minimal messages have the true slope, so it
 *    converges faster than that regression from 100 exchanges on (median error 3-50x
 *    smaller for the test's default seeds, 1-2x at the worst seed bases tried).
 */
enum hull_learner_estimate {
	HULL_LEARNER_CENTER = 0,
	HULL_LEARNER_BISECTOR = 1,
};

/* A new empty learner whose estimate is `estimate` (enum hull_learner_estimate), or NULL
 * without memory or for an unknown estimate. Free with hull_learner_destroy. */
hull_learner *hull_learner_create(int estimate);
void hull_learner_destroy(hull_learner *l);

/*
 * Allow for read errors: a timestamp may be off by up to e_X on X and e_Y on Y (read noise
 * that is not causal, coarse resolution); slack_ns >= e_Y + e_X (1 + |slope|) keeps the true
 * line inside the bounds. Every later message is relaxed by slack_ns (up points raised, down
 * points lowered), which widens the corridor by 2 slack_ns. Call before the first message
 * (HCLOCK_EINVAL after one, or for slack_ns < 0 or >= 1e12); reset keeps it. Default 0: reads
 * are causal (a timestamp taken before a send reads a time before it), as real clocks are.
 */
int hull_learner_set_slack(hull_learner *l, double slack_ns);

/* Forget every message and the fit; the learner is as new (memory and slack kept). */
void hull_learner_reset(hull_learner *l);

/*
 * Feed one ping-pong started on X: t1 send on X, t2 receive on Y, t3 send on Y, t4 receive
 * on X (absolute ns of each clock; t1 <= t4 and t2 <= t3 expected). Returns 0,
 * HCLOCK_ENOMEM (nothing added) or HCLOCK_EINVAL (t4 < t1 or t3 < t2, or a time out of range
 * of the first message; nothing added).
 */
int hull_learner_add(hull_learner *l, int64_t t1, int64_t t2, int64_t t3, int64_t t4);

/*
 * Feed one message: up != 0 for X -> Y (x its send time on X, y its receive time on Y),
 * up == 0 for Y -> X (x its receive time on X, y its send time on Y); absolute ns. Returns as
 * hull_learner_add.
 */
int hull_learner_add_msg(hull_learner *l, int up, int64_t x, int64_t y);

/*
 * Fit the messages fed so far: fills *f (may be NULL) and keeps the fit for
 * hull_learner_eval until the next hull_learner_fit or reset; returns f->status. O(h log h)
 * plus O(messages since the last fit). Returns HCLOCK_ENOMEM if memory for the hulls could
 * not be had: then *f is untouched, the learner has no fit (eval answers TOO_FEW) and keeps
 * its messages.
 */
int hull_learner_fit(hull_learner *l, struct hull_learner_fit *f);

/*
 * The last fit at local X time x (absolute ns): *est_ns the estimated offset Y - X, and the
 * guaranteed interval [*lo_ns, *hi_ns] of the true offset (LP 6: the extremes of every valid
 * line at x; beyond the data they widen at slope_width per ns). Any pointer may be NULL.
 * Returns the fit's status: for OK the interval is strict; for INTERSECT *est_ns is the
 * fallback and the interval is [-INFINITY, INFINITY]; for TOO_FEW *est_ns is NAN and the
 * interval [-INFINITY, INFINITY].
 */
int hull_learner_eval(const hull_learner *l, int64_t x, double *est_ns, double *lo_ns,
                      double *hi_ns);

#endif
