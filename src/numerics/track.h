/*
 * track.h - one pair of clocks learned continuously over a sliding window: the per-pair
 * learner of the continuous clock (the continuous-sync poster, Sections 3-4 and Fig. 4-5:
 * both directions' convex hulls over a window of recent exchanges).
 *
 * X is the local clock (the client), Y the parent's. An exchange is a few ping-pongs
 * started on X: t1 send on X, t2 receive on Y, t3 send on Y, t4 receive on X (absolute ns
 * of each clock). The tracker keeps the exchanges of the last window_ns of X time and fits
 * offset(x) = Y - X at X time x:
 *  - the estimate: the least-squares line through the exchanges' offsets (each the mean of
 *    the midpoints of its ping-pongs within 1.25 times its fastest round trip, SKaMPI's
 *    estimate averaged: over TCP the asymmetry of equally fast ping-pongs scatters by
 *    hundreds of ns; an exchange whose fastest ping-pong took
 *    more than 4 times the window's fastest waited and is left out, its messages still in
 *    the hulls; with only one that did not wait, the line through all of them is taken
 *    only if the slowest one's round trip over the window's span is within TRACK_MAX_RATE,
 *    else the window counts as one exchange, the clean one (not with `waits`, where
 *    exchanges are slow by waiting, not stalled): a
 *    stall of milliseconds 25 ms from it would tilt the line by percent), kept when the
 *    window's hulls allow it
 *    (slope inside their valid range, inside their interval at the end), else the hulls'
 *    widest-gap line (the rule the one-shot hull learner uses, sync/learn.c). A prior line
 *    (the one-shot sync's, struct track_prior) weighs in on the slope and then on the
 *    offset, each by inverse variance: it holds the estimate while the window's exchanges
 *    are few or slow, and a window of fast exchanges outweighs it at once;
 *  - answers that wait (with `waits`: a parent driven by a busy program's own MPI calls
 *    notices a ping up to tens of us late, the child its pong too): the midpoints are
 *    skewed by as much, but the hulls' gap stays narrow; when the gap is well under the
 *    fastest round trip and one exchange's ping-pongs disagree, the estimate is the hulls'
 *    widest-gap line, its intercept the middle of what the messages allow at its slope;
 *  - consistency: when the window's hulls intersect (a frequency step, wander larger than
 *    the delays resolve over the window), the older half of the window is dropped until
 *    they separate: the window shrinks itself after a change and grows back after. The
 *    hulls see a step only once it has bent the offsets by a round trip; the residual test
 *    sees it sooner: when the latest two exchanges both lie more than step_ns (with
 *    `waits`, plus three times the others' robust scatter) off the fitted line, on the same
 *    side, the older half is dropped too (chrony's regression drops its oldest samples on a
 *    failed runs test for the same reason);
 *  - the bound, strict under one stated assumption: from the latest exchange on, the true
 *    rate difference stays within `drift` of the estimate's slope, or of a slope the
 *    window's hulls leave valid. The interval at the latest exchange's fastest ping-pong
 *    comes from that exchange's own messages (each up message an upper bound, each down
 *    message a lower one, relaxed by the read slack, carried over the exchange at up to
 *    TRACK_MAX_RATE), and widens from there by that rate range (TrueTime's and
 *    ClockBound's growing error bound). When the latest exchange waited (a stall: its
 *    messages allow an interval as wide as the stall), the latest one that did not is the
 *    anchor instead if its interval, carried to the latest's time at the same rates, is
 *    narrower there (the assumption then holds from that exchange on).
 * With one exchange in the window the slope is the prior's, and the bound allows the slopes
 * within the prior's strict half-width that the exchange's hulls leave valid (with neither
 * known, it is unknown: the prior's slope alone proves nothing).
 *
 * MPI-free. Times are absolute int64 ns, only differences become doubles.
 */
#ifndef HCLOCK_NUMERICS_TRACK_H
#define HCLOCK_NUMERICS_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "numerics/bound.h"
#include "numerics/linreg.h"

/* The largest rate difference two clocks can have, dimensionless: used to carry a message's
 * constraint over the length of one exchange (microseconds, milliseconds when stalled).
 * Real oscillators are within a few hundred ppm; the emulation allows 1.2e-3 between two. */
#define TRACK_MAX_RATE 2e-3

struct track_params {
	int64_t window_ns; /* keep the exchanges of the last window_ns of X time, ns (> 0) */
	double slack_ns;   /* read error allowance of one message, ns (>= 0; as
	                      hull_learner_set_slack) */
	double drift;      /* assumed bound on |true rate difference - estimate's slope| from
	                      the latest exchange on, dimensionless (5e-6: 5 us per s) */
	double step_ns;    /* the latest two exchanges' offsets off the fitted line by more
	                      than this, on one side: a frequency step, the window's older half
	                      is dropped (0: off), ns */
	int waits;         /* 1: answers may wait (a clock driven by a program's own MPI calls):
	                      the late-answer rule below is on */
};

enum track_status {
	TRACK_OK = 0,      /* the window is consistent; est and bd from it */
	TRACK_SHRUNK = 1,  /* the hulls intersected: older exchanges dropped (dropped > 0),
	                      est and bd from what is left */
	TRACK_PRIOR = 2,   /* one exchange only: est has the prior's slope (0 without one) */
	TRACK_EMPTY = 3,   /* nothing fed yet */
};

struct track_fit {
	int status;          /* enum track_status */
	struct lm est;       /* offset model Y - X at X time */
	struct bound bd;     /* strict bound of est (in Y's scale), unknown if the latest
	                        exchange's messages contradict each other beyond the slack */
	int64_t x_last_ns;   /* X time of the latest message, ns */
	size_t nexchanges;   /* exchanges in the window after the fit */
	size_t dropped;      /* exchanges dropped by this fit (hulls intersected, or a step) */
	int prior_rejected;  /* the window's hulls exclude the prior line: its slope lies
	                        outside their valid range, or its offset at the end outside
	                        their interval, by more than 3 of its standard errors */
	double span_ns;      /* X time between the first and the latest message kept, ns */
	double rtt_ns;       /* smallest round trip of the latest exchange, ns */
	double scatter_ns;   /* robust scatter (1.4826 MAD) of the window's offsets about their
	                        least-squares line, ns: the link's noise (NAN: under 4 points) */
};

typedef struct track track;

/* A new tracker (NULL without memory or for bad params). */
track *track_create(const struct track_params *p);
void track_destroy(track *t);
/* Change the residual step test's limit (track_params.step_ns), ns: the caller's measure
 * of the link's noise. */
void track_set_step(track *t, double step_ns);
/* Forget every exchange. */
void track_reset(track *t);

/* Feed one ping-pong of exchange number exch (exchanges numbered in increasing order, the
 * ping-pongs of one exchange fed together). Returns 0, HCLOCK_EINVAL (t4 < t1, t3 < t2 or
 * an exchange older than the last; nothing added) or HCLOCK_ENOMEM. */
int track_add(track *t, uint32_t exch, int64_t t1, int64_t t2, int64_t t3, int64_t t4);

/* The latest exchange's own offset estimate: the mean of the midpoints of its ping-pongs
 * within 1.25 times its fastest round trip, at their mean X time *x_ns; *excess_ns (may be
 * NULL): half its fastest ping-pong's round trip beyond the
 * window's fastest, how far queueing could have moved this midpoint more than the best
 * one's (0 when the latest exchange is as fast as any). Returns 0, or TRACK_EMPTY when no
 * exchange is in the window (outputs unchanged). */
int track_last_offset(const track *t, int64_t *x_ns, double *off_ns, double *excess_ns);

/* What the caller knew before the window: a line (the one-shot sync's, say) and how well. */
struct track_prior {
	struct lm line;      /* offset model Y - X at X time */
	double slope_se;     /* standard error of its slope (dimensionless; INFINITY: unknown) */
	double offset_se_ns; /* standard error of its offset at line.x0_ns, ns (INFINITY:
	                        unknown); at x it grows to hypot(offset_se_ns, slope_se (x - x0)) */
	double slope_hw;     /* strict half-width of its slope: the true rate difference lies
	                        within it (dimensionless; INFINITY: unknown). With one exchange
	                        it is what the bound's rate rests on */
};

/* Drop exchanges older than the window, fit, fill *f. pr (may be NULL: none) weighs in:
 * with one exchange the estimate has its slope; with more the slope is the inverse-variance
 * weighted mean of the window's least-squares slope and the prior's (an estimate with a
 * slope the window's hulls do not allow gives way to the hulls' line). Then the estimate's
 * offset at the latest exchange is weighed with the prior line's the same way, unless the
 * window's hulls exclude the prior (f->prior_rejected; the caller should then stop giving
 * it). Returns f->status, HCLOCK_ENOMEM, or HCLOCK_EINVAL when a ping-pong kept is out of
 * the hulls' range (hull_learner_add: times 2^62 ns apart). */
int track_fit(track *t, const struct track_prior *pr, struct track_fit *f);

#endif
