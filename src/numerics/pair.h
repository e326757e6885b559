/*
 * pair.h - the conversion from one clock (X) to another (Y), fitted to the messages between
 * them: the convex hull estimate with strict bounds (hull.h), the fallback line when the
 * hulls intersect, piecewise continuous segments, or linear regression for comparison
 * (Poirier, Roy, Dagenais, Sections 3.1 and 5).
 *
 * Points in, a conversion with bounds out: nothing here knows of traces, files or MPI. Times
 * are absolute int64 ns of each clock (|t| < 2^62); pair_fit moves them to relative
 * coordinates itself. A fit is read-only after pair_fit: any number of threads may call
 * pair_eval on one fit, each pair_eval_next with its own cursor.
 *
 * For online use: pair_fit is batch and rewrites its input arrays in place (copy them to
 * keep them); a learner that refits as ping-pongs arrive can pass the hull vertices plus the
 * new points instead of every point (one segment's lines and bounds depend on its hulls
 * only; segments and the weight need every point). A fit costs O(n) plus O(h log h) per
 * segment. A one-line fit as a clock model (numerics/linreg.h,
 * offset = Y - X = intercept_ns + slope (X - x0_ns)): x0_ns = xbase, slope = a1 - 1,
 * intercept_ns = (ybase - xbase) + a0, the difference taken in int64 first.
 */
#ifndef HCLOCK_NUMERICS_PAIR_H
#define HCLOCK_NUMERICS_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include "numerics/hull.h"

enum pair_mode {
	PAIR_MODE_HULL = 0,   /* Duda's bisector of the hull corridor, bounds by LP 6 */
	PAIR_MODE_REGRESSION, /* midway between the least-squares lines of both directions */
	PAIR_MODE_MEAN,       /* the mean of the extreme valid lines (Trace Compass), bounds by
	                         LP 6 as for PAIR_MODE_HULL */
};

enum pair_quality {
	PAIR_HULL = 0,     /* one line between the hulls: no inversions, strict bounds */
	PAIR_FALLBACK,     /* hulls intersect: the line of least worst violation, bounds not strict */
	PAIR_SEGMENTS,     /* several intervals each fitted, joined continuously */
	PAIR_REGRESSION,   /* regression line; bounds are strict only if the hulls do not intersect */
	PAIR_UNBOUNDED,    /* too few messages, or all in one direction: unusable */
};

#define PAIR_SEGMENTS_AUTO (-1)

struct pair_opts {
	int mode;          /* enum pair_mode */
	int64_t segments;  /* 0: one line; PAIR_SEGMENTS_AUTO: split where the hulls intersect;
	                      > 0: split into intervals of this many ns of X time */
};

struct pair_seg {
	int64_t x0, x1;           /* relative X range of the points in the segment, ns */
	struct hull_pt *lo, *hi;  /* half hulls (owned) */
	struct corridor cor;
	struct line est;          /* this segment's estimate, relative ns */
	long double viol;         /* worst violation of est by any hull point, ns (0 if none) */
};

struct pair_fit {
	int64_t xbase, ybase;     /* relative coordinates: x = t_X - xbase, y = t_Y - ybase, ns */
	int quality;              /* enum pair_quality */
	size_t nseg;
	struct pair_seg *seg;
	long double *kx, *ky;     /* segments: knots between segments, relative ns */
	long double slope_max;    /* largest slope dY/dX any valid conversion may have, for
	                             propagating bounds through a further hop (dimensionless) */
	double weight;            /* mean over the points of max(delta_minus, delta_plus), ns;
	                             INFINITY if unbounded */
	size_t nup, ndown;        /* messages X->Y, Y->X */
	size_t hull_points;       /* total hull vertices over segments */
};

/*
 * Fit the conversion from X to Y. up: nu messages X->Y as (send on X, receive on Y), sorted by
 * x; down: nd messages Y->X as (receive on X, send on Y), sorted by x; absolute ns. The arrays
 * are rewritten in place to relative coordinates. Returns 0 (check f->quality; PAIR_UNBOUNDED
 * means no usable fit) or HCLOCK_ENOMEM (f then holds nothing to free). On success f owns
 * memory that pair_free releases.
 */
int pair_fit(struct pair_fit *f, struct hull_pt *up, size_t nu, struct hull_pt *down, size_t nd,
             const struct pair_opts *o);
void pair_free(struct pair_fit *f);

/*
 * Convert X time x + xf (x absolute ns, xf a fraction or small offset in ns) to Y time
 * *y + *yf (absolute ns plus a long double remainder), and give the bounds (ns): the true Y
 * time lies in [*y + *yf - *dminus, *y + *yf + *dplus] (strict for PAIR_HULL; for other
 * qualities see enum pair_quality; INFINITY without a fit). O(log h).
 */
void pair_eval(const struct pair_fit *f, int64_t x, long double xf, int64_t *y, long double *yf,
               long double *dminus, long double *dplus);

/*
 * The same for many times in a row, e.g. every event of a time-sorted trace: the cursor keeps
 * the segment and the LP 6 solutions of the previous call, so calls at non-decreasing x + xf
 * cost amortized O(1) instead of O(log h) (any order stays correct). Results are bit-identical
 * to pair_eval. A cursor serves one pair_fit; start it with PAIR_CURSOR_INIT.
 */
struct pair_cursor {
	size_t knots;                 /* knots <= the last x, i.e. its segment; PAIR_UNSET at first */
	struct lp6_cursor max, min;   /* LP 6 in that segment */
};

#define PAIR_UNSET ((size_t)-1)
#define PAIR_CURSOR_INIT ((struct pair_cursor){PAIR_UNSET, LP6_CURSOR_INIT, LP6_CURSOR_INIT})

void pair_eval_next(const struct pair_fit *f, struct pair_cursor *cur, int64_t x, long double xf,
                    int64_t *y, long double *yf, long double *dminus, long double *dplus);

/* "hull", "fallback", "segments", "regression", "unbounded" (static strings; "?" otherwise). */
const char *pair_quality_name(int q);

#endif
