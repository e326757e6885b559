/*
 * hull.h - half convex hulls of clock-relation points and the exact solution of the two-
 * variable linear programs of the accuracy-reporting convex hull algorithm (Poirier, Roy,
 * Dagenais, Sections 2.3 and 3.1): the min/max-slope lines (LP 5), Duda's bisector, and the
 * bounds Delta1/Delta2 (eq. 7-8) from LP 6.
 *
 * Pure numerics: points in, lines and bounds out; nothing here knows of traces, files, MPI or
 * clocks. No function allocates memory, none can fail (corridor_init and line_regress return
 * a status: how good the result is, or that there is none); all are reentrant (no global
 * state).
 *
 * Points relate two clocks X and Y. Coordinates are relative int64 ns (timestamps minus a
 * base the caller chooses, e.g. the first point): |x|, |y| < 2^62, so that every difference
 * of two coordinates fits an int64. Orientation tests are exact (__int128); slopes and line
 * values are long double (64-bit mantissa: exact for int64 differences). Absolute realtime
 * timestamps (~1.7e18 ns) are within range, but make a line's a0 (its value at x = 0) an
 * extrapolation over decades: subtract a base near the data.
 *
 * A line is y = a0 + a1 x (a0 in relative ns of Y, a1 dimensionless, ~1). "up" points
 * (a message X -> Y: x = send time on X, y = receive time on Y) lie on or above every valid
 * line; "down" points (a message Y -> X: x = receive time on X, y = send time on Y) on or
 * below it. A ping-pong started on X gives one of each: (t1, t2) up and (t4, t3) down, with
 * t1/t4 the send/receive on X and t2/t3 the receive/send on Y.
 *
 * For online users (the sync's hull learner of ping-pongs, hull_learner.h; the continuous
 * clock's sliding windows, track.h):
 *  - hull_lower/hull_upper are batch, O(n) on sorted points; a learner that adds ping-pongs
 *    in time order can keep only the hulls and rebuild them from hull + new points (the
 *    hull of a set is the hull of its hull and any additions), so its memory stays O(h).
 *  - A sliding window (dropping the oldest points) is not supported: a vertex removed from
 *    the front can expose points that were dropped as interior. Rebuild from the window's
 *    points, or keep per-block hulls and merge them; neither exists yet.
 *  - The bound lines a learner reports are corridor.cmin and corridor.cmax (the extreme
 *    valid lines, LP 5) and corridor_lp6_max/min at any x: beyond the data they grow
 *    linearly with the distance, at the rate a1max - a1min (the error after a wait).
 */
#ifndef HCLOCK_NUMERICS_HULL_H
#define HCLOCK_NUMERICS_HULL_H

#include <stddef.h>
#include <stdint.h>

struct hull_pt {
	int64_t x; /* relative ns on the X clock */
	int64_t y; /* relative ns on the Y clock */
};

struct line {
	long double a0; /* y at x = 0, relative ns */
	long double a1; /* slope dy/dx, dimensionless (~1) */
};

/*
 * Lower (hull_lower) or upper (hull_upper) half hull of n points sorted by x (ties allowed),
 * Andrew's monotone chain, O(n). Collinear points are dropped; for equal x only the lowest
 * (lower hull) or highest (upper hull) point is kept. out (caller's memory) must hold n
 * points and may not overlap p; returns the number of hull vertices written to out, sorted
 * by strictly increasing x.
 */
size_t hull_lower(const struct hull_pt *p, size_t n, struct hull_pt *out);
size_t hull_upper(const struct hull_pt *p, size_t n, struct hull_pt *out);

/*
 * The corridor between the lower hull of the up points (lo) and the upper hull of the down
 * points (hi): every valid line passes between them.
 */
enum corridor_status {
	CORRIDOR_OK = 0,        /* valid lines exist: a1min <= a1max, bounds are strict */
	CORRIDOR_INTERSECT = 1, /* hulls intersect: no line separates them (center is the
	                           fallback line) */
	CORRIDOR_UNBOUNDED = 2, /* too few or one-sided points: slopes are not bounded */
};

struct corridor {
	const struct hull_pt *lo; /* lower hull of up points, by increasing x (borrowed) */
	size_t nlo;
	const struct hull_pt *hi; /* upper hull of down points, by increasing x (borrowed) */
	size_t nhi;
	int status;               /* enum corridor_status */
	struct line cmax;         /* LP 5 maximising a1: a0min + a1max x (status OK) */
	struct line cmin;         /* LP 5 minimising a1: a0max + a1min x (status OK) */
	struct line center;       /* widest-gap line: at the slope maximising the vertical gap
	                             between the hulls, halfway between them (not UNBOUNDED) */
	long double gap;          /* that largest vertical gap, ns; < 0 when hulls intersect (then
	                             -gap/2 is the worst violation of the center line) */
};

/*
 * Solve LP 5 for the hulls lo (from hull_lower) and hi (from hull_upper): fills c and returns
 * c->status. O(h log h) for h hull vertices, no allocation. The hull arrays are borrowed and
 * must outlive c.
 */
int corridor_init(struct corridor *c, const struct hull_pt *lo, size_t nlo,
                  const struct hull_pt *hi, size_t nhi);

/* Duda's estimate: the bisector of the angle between c->cmax and c->cmin (status OK); a
 * valid line itself. */
struct line corridor_bisector(const struct corridor *c);

/*
 * LP 6: the largest (corridor_lp6_max) or smallest (corridor_lp6_min) value at x (relative
 * ns of X) of any valid line, in relative ns of Y, solved exactly in O(log h). Requires
 * status OK. Delta1 of eq. 7 at x is corridor_lp6_max(c, x) - estimate(x), Delta2 of eq. 8
 * estimate(x) - corridor_lp6_min(c, x).
 */
long double corridor_lp6_max(const struct corridor *c, long double x);
long double corridor_lp6_min(const struct corridor *c, long double x);

/*
 * The same at many x in a row: the cursor remembers where the last query fell among the hull
 * vertices and the solution there, so queries at non-decreasing x cost amortized O(1) (any
 * order stays correct, only slower). Results are bit-identical to corridor_lp6_max/min. Set
 * a cursor to LP6_CURSOR_INIT before its first use with a corridor, and again to reuse it with
 * another; one cursor per function (max or min).
 */
struct lp6_cursor {
	size_t k;        /* hull vertices with x <= the last query; LP6_UNSET before the first */
	size_t v;        /* supporting vertex of the solution for this k */
	long double a1;  /* the solution's slope for this k, dimensionless */
};

#define LP6_UNSET ((size_t)-1)
#define LP6_CURSOR_INIT ((struct lp6_cursor){LP6_UNSET, 0, 0})

long double corridor_lp6_max_next(const struct corridor *c, struct lp6_cursor *cur,
                                  long double x);
long double corridor_lp6_min_next(const struct corridor *c, struct lp6_cursor *cur,
                                  long double x);

/*
 * The same for n sorted abscissae xs (relative ns), in O(n + h log h): LP 6 is solved at the
 * hull vertices only and interpolated linearly in between, which is exact because the optimum
 * is a polygonal curve with its vertices at hull vertices (Section 3.1.1). vmax/vmin (caller's
 * arrays of n values, relative ns) may be NULL. Requires status OK.
 */
void corridor_lp6_sorted(const struct corridor *c, const int64_t *xs, size_t n,
                         long double *vmax, long double *vmin);

enum line_status {
	LINE_OK = 0,      /* *l holds the line */
	LINE_TOO_FEW = 1, /* fewer than 2 points, or all x equal: no line, *l unchanged */
};

/* Least-squares line through n points (relative ns); returns LINE_OK or LINE_TOO_FEW. */
int line_regress(const struct hull_pt *p, size_t n, struct line *l);

/* The line's value at x, relative ns. */
static inline long double line_at(struct line l, long double x)
{
	return l.a0 + l.a1 * x;
}

#endif
