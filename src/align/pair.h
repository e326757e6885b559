/*
 * pair.h - the conversion function from one node's clock (X) to another's (Y), fitted to the
 * messages between them: the convex hull estimate with strict bounds, the fallback line when
 * the hulls intersect, piecewise continuous segments, or linear regression for comparison.
 *
 * Knows points, not traces: the engine (align.c) gathers the points of one ordered pair.
 */
#ifndef HCLOCK_ALIGN_PAIR_H
#define HCLOCK_ALIGN_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include "align/hull.h"

enum pair_mode {
	PAIR_MODE_HULL = 0,   /* Duda's bisector of the hull corridor, bounds by LP 6 */
	PAIR_MODE_REGRESSION, /* midway between the least-squares lines of both directions */
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
	int64_t xbase, ybase;     /* relative coordinates: x = t_X - xbase, y = t_Y - ybase */
	int quality;              /* enum pair_quality */
	size_t nseg;
	struct pair_seg *seg;
	long double *kx, *ky;     /* segments: knots at segment midpoints, relative ns */
	long double slope_max;    /* largest slope any valid conversion may have (propagation) */
	double weight;            /* mean over the points of max(delta_minus, delta_plus), ns */
	size_t nup, ndown;        /* messages X->Y, Y->X */
	size_t hull_points;       /* total hull vertices over segments */
};

/*
 * Fit the conversion from X to Y. up: nu messages X->Y as (send on X, receive on Y), sorted by
 * x; down: nd messages Y->X as (receive on X, send on Y), sorted by x; absolute ns. The arrays
 * are rewritten in place to relative coordinates. Returns 0 (check f->quality; PAIR_UNBOUNDED
 * means no usable fit) or -ENOMEM. Free with pair_free.
 */
int pair_fit(struct pair_fit *f, struct hull_pt *up, size_t nu, struct hull_pt *down, size_t nd,
             const struct pair_opts *o);
void pair_free(struct pair_fit *f);

/*
 * Convert X time x + xf (ns, xf a fraction or small offset) to Y time *y + *yf, and give the
 * bounds: the true Y time lies in [*y + *yf - *dminus, *y + *yf + *dplus]. O(log h).
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

const char *pair_quality_name(int q);

#endif
