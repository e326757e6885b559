/*
 * hull.h - half convex hulls of message points and the exact solution of the two-variable
 * linear programs of the accuracy-reporting convex hull algorithm (Poirier, Roy, Dagenais,
 * Sections 2.3 and 3.1): the min/max-slope lines (LP 5), Duda's bisector, and the bounds
 * Delta1/Delta2 (eq. 7-8) from LP 6.
 *
 * Pure numerics: knows nothing of traces or files. Points are in relative coordinates
 * (timestamps minus a base, int64 ns); they must satisfy |x|,|y| < 2^62 so that every
 * difference of two coordinates fits an int64. Orientation tests are exact (__int128);
 * slopes and line values are long double (64-bit mantissa: exact for int64 differences).
 *
 * A line is y = a0 + a1 x. "up" points (messages X->Y, x = send time on X, y = receive time
 * on Y) must lie on or above every valid line; "down" points (messages Y->X, x = receive time
 * on X, y = send time on Y) on or below it.
 */
#ifndef HCLOCK_ALIGN_HULL_H
#define HCLOCK_ALIGN_HULL_H

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
 * (lower hull) or highest (upper hull) point is kept. out must hold n points; returns the
 * number of hull vertices, sorted by increasing x.
 */
size_t hull_lower(const struct hull_pt *p, size_t n, struct hull_pt *out);
size_t hull_upper(const struct hull_pt *p, size_t n, struct hull_pt *out);

/*
 * The corridor between the lower hull of the up points (lo) and the upper hull of the down
 * points (hi). Built by corridor_init, which solves LP 5 (the feasible slope range) or, when
 * the hulls intersect, finds the fallback line. The hull arrays are borrowed, not copied.
 */
enum corridor_status {
	CORRIDOR_OK = 0,          /* valid lines exist: a1min <= a1max, bounds are strict */
	CORRIDOR_INTERSECT = -1,  /* hulls intersect: no line separates them (fallback line) */
	CORRIDOR_UNBOUNDED = -2,  /* too few or one-sided points: slopes are not bounded */
};

struct corridor {
	const struct hull_pt *lo; /* lower hull of up points, by increasing x */
	size_t nlo;
	const struct hull_pt *hi; /* upper hull of down points, by increasing x */
	size_t nhi;
	int status;               /* enum corridor_status */
	struct line cmax;         /* LP 5 maximising a1: a0min + a1max x (status OK) */
	struct line cmin;         /* LP 5 minimising a1: a0max + a1min x (status OK) */
	struct line center;       /* widest-gap line: at the slope maximising the vertical gap
	                             between the hulls, halfway between them */
	long double gap;          /* that largest vertical gap, ns; < 0 when hulls intersect (then
	                             -gap/2 is the worst violation of the center line) */
};

/* Solve LP 5 for the hulls lo/hi; fills c and returns c->status. */
int corridor_init(struct corridor *c, const struct hull_pt *lo, size_t nlo,
                  const struct hull_pt *hi, size_t nhi);

/* Duda's estimate: the bisector of the angle between c->cmax and c->cmin (status OK). */
struct line corridor_bisector(const struct corridor *c);

/*
 * LP 6: the largest (corridor_lp6_max) or smallest (corridor_lp6_min) value at x of any valid
 * line, in relative ns, solved exactly in O(log h). Requires status OK.
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
	long double a1;  /* the solution's slope for this k */
};

#define LP6_UNSET ((size_t)-1)
#define LP6_CURSOR_INIT ((struct lp6_cursor){LP6_UNSET, 0, 0})

long double corridor_lp6_max_next(const struct corridor *c, struct lp6_cursor *cur,
                                  long double x);
long double corridor_lp6_min_next(const struct corridor *c, struct lp6_cursor *cur,
                                  long double x);

/*
 * The same for n sorted abscissae xs, in O(n + h log h): LP 6 is solved at the hull vertices
 * only and interpolated linearly in between, which is exact because the optimum is a
 * polygonal curve with its vertices at hull vertices (Section 3.1.1). vmax/vmin may be NULL.
 */
void corridor_lp6_sorted(const struct corridor *c, const int64_t *xs, size_t n,
                         long double *vmax, long double *vmin);

/* Least-squares line through n points (n >= 2 with distinct x); returns 0, or -1 if none. */
int line_regress(const struct hull_pt *p, size_t n, struct line *l);

static inline long double line_at(struct line l, long double x)
{
	return l.a0 + l.a1 * x;
}

#endif
