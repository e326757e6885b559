/*
 * hull.c - half hulls and the two-variable LPs of the accuracy-reporting convex hull algorithm.
 *
 * Geometry used throughout (the dual view of LP 5/6): a valid line y = a0 + a1 x must satisfy
 *   a0 <= U(a1) = min over lower-hull vertices k of (y_k - a1 x_k)   (below every up point)
 *   a0 >= L(a1) = max over upper-hull vertices j of (y_j - a1 x_j)   (above every down point)
 * U is concave and piecewise linear with its breakpoints at the lower hull's edge slopes (for
 * slope a1 the supporting vertex is the one whose left edge is flatter and right edge steeper);
 * L is convex with breakpoints at the upper hull's edge slopes. The gap G = U - L is concave:
 * valid lines exist iff max G >= 0, and [a1min, a1max] is where G >= 0 (LP 5). Each end of
 * that range is the line through one vertex of each hull, computed from integers.
 *
 * LP 6 (maximise a0 + a1 x at a given x) becomes: maximise U(a1) + a1 x over [a1min, a1max].
 * The function is concave in a1 with slope (x - x_k) on the piece of vertex k, so its free
 * maximum is at the slope of the lower-hull edge spanning x (the hull itself); the constrained
 * one is that slope clamped to [a1min, a1max]. Symmetrically for the minimum with L.
 */
#include <math.h>

#include "numerics/hull.h"

__extension__ typedef __int128 i128;

/* > 0 if o->a->b turns left (counter-clockwise), exact for coordinates below 2^62 */
static inline i128 cross(const struct hull_pt *o, const struct hull_pt *a, const struct hull_pt *b)
{
	return (i128)(a->x - o->x) * (b->y - o->y) - (i128)(a->y - o->y) * (b->x - o->x);
}

size_t hull_lower(const struct hull_pt *p, size_t n, struct hull_pt *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (m && out[m - 1].x == p[i].x) {
			if (p[i].y >= out[m - 1].y)
				continue;
			m--;
		}
		while (m >= 2 && cross(&out[m - 2], &out[m - 1], &p[i]) <= 0)
			m--;
		out[m++] = p[i];
	}
	return m;
}

size_t hull_upper(const struct hull_pt *p, size_t n, struct hull_pt *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (m && out[m - 1].x == p[i].x) {
			if (p[i].y <= out[m - 1].y)
				continue;
			m--;
		}
		while (m >= 2 && cross(&out[m - 2], &out[m - 1], &p[i]) >= 0)
			m--;
		out[m++] = p[i];
	}
	return m;
}

static inline long double edge_slope(const struct hull_pt *h, size_t k)
{
	return (long double)(h[k + 1].y - h[k].y) / (long double)(h[k + 1].x - h[k].x);
}

/* supporting lower-hull vertex for slope a1: number of edges flatter than a1 */
static size_t lo_active(const struct corridor *c, long double a1)
{
	size_t l = 0, r = c->nlo - 1;

	while (l < r) {
		size_t m = (l + r) / 2;
		if (edge_slope(c->lo, m) < a1)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

/* supporting upper-hull vertex for slope a1: number of edges steeper than a1 */
static size_t hi_active(const struct corridor *c, long double a1)
{
	size_t l = 0, r = c->nhi - 1;

	while (l < r) {
		size_t m = (l + r) / 2;
		if (edge_slope(c->hi, m) > a1)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

static inline long double upper_env(const struct corridor *c, long double a1)
{
	const struct hull_pt *v = &c->lo[lo_active(c, a1)];
	return (long double)v->y - a1 * (long double)v->x;
}

static inline long double lower_env(const struct corridor *c, long double a1)
{
	const struct hull_pt *v = &c->hi[hi_active(c, a1)];
	return (long double)v->y - a1 * (long double)v->x;
}

/* the line through the supporting vertices of both hulls active on the open interval around
 * probe: where U and L cross inside that interval */
static struct line crossing(const struct corridor *c, long double probe)
{
	const struct hull_pt *u = &c->lo[lo_active(c, probe)];
	const struct hull_pt *d = &c->hi[hi_active(c, probe)];
	struct line l;

	l.a1 = (long double)(d->y - u->y) / (long double)(d->x - u->x);
	l.a0 = (long double)u->y - l.a1 * (long double)u->x;
	return l;
}

static long double probe_between(long double a, long double b)
{
	if (isinf(a))
		return b - fabsl(b) - 1;
	if (isinf(b))
		return a + fabsl(a) + 1;
	return a + (b - a) / 2;
}

/*
 * The breakpoints of G in increasing order, without sorting: the edge slopes of a lower hull
 * increase along it and those of an upper hull decrease, so the two lists only need merging.
 */
struct breaks {
	const struct corridor *c;
	size_t i; /* next lower-hull edge */
	size_t j; /* upper-hull edges taken, from the last one backwards */
};

static int next_break(struct breaks *w, long double *b)
{
	const struct corridor *c = w->c;
	int lo = w->i + 1 < c->nlo, hi = w->j + 1 < c->nhi;
	long double sl = lo ? edge_slope(c->lo, w->i) : 0;
	long double sh = hi ? edge_slope(c->hi, c->nhi - 2 - w->j) : 0;

	if (!lo && !hi)
		return 0;
	if (lo && (!hi || sl <= sh)) {
		*b = sl;
		w->i++;
	} else {
		*b = sh;
		w->j++;
	}
	return 1;
}

int corridor_init(struct corridor *c, const struct hull_pt *lo, size_t nlo,
                  const struct hull_pt *hi, size_t nhi)
{
	struct breaks w = {c, 0, 0};
	long double b, gmax = -INFINITY, best = 0, prev = -INFINITY;
	long double before_first = 0, first = 0, last = 0, after_last = INFINITY;
	size_t i = 0, ilast = 0;
	int feasible = 0;

	c->lo = lo;
	c->nlo = nlo;
	c->hi = hi;
	c->nhi = nhi;
	c->gap = 0;
	c->status = CORRIDOR_UNBOUNDED;
	/* G must fall to -inf on both sides, otherwise slopes are unbounded; then there is at
	 * least one breakpoint (one vertex per hull cannot satisfy both conditions) */
	if (!nlo || !nhi || hi[nhi - 1].x <= lo[0].x || hi[0].x >= lo[nlo - 1].x)
		return c->status;
	/* the maximum of a concave piecewise linear function is at a breakpoint; G >= 0 on
	 * the range of valid slopes, from breakpoint first to breakpoint last */
	for (; next_break(&w, &b); prev = b, i++) {
		long double g = upper_env(c, b) - lower_env(c, b);
		if (g > gmax) {
			gmax = g;
			best = b;
		}
		if (feasible && i == ilast + 1)
			after_last = b;
		if (g >= 0) {
			if (!feasible) {
				before_first = prev;
				first = b;
			}
			feasible = 1;
			ilast = i;
			last = b;
			after_last = INFINITY;
		}
	}
	c->center.a1 = best;
	c->center.a0 = (upper_env(c, best) + lower_env(c, best)) / 2;
	c->gap = gmax;
	if (gmax < 0)
		return c->status = CORRIDOR_INTERSECT;
	c->cmin = crossing(c, probe_between(before_first, first));
	c->cmax = crossing(c, probe_between(last, after_last));
	return c->status = CORRIDOR_OK;
}

struct line corridor_bisector(const struct corridor *c)
{
	struct line l;
	long double xi, yi, th;

	if (c->cmax.a1 <= c->cmin.a1) {
		l.a1 = c->cmax.a1;
		l.a0 = (c->cmax.a0 + c->cmin.a0) / 2;
		return l;
	}
	/* the two lines cross at (xi, yi); the bisector of their angle passes there and, being a
	 * convex combination of two valid lines through one point, is valid too */
	xi = (c->cmin.a0 - c->cmax.a0) / (c->cmax.a1 - c->cmin.a1);
	yi = line_at(c->cmax, xi);
	th = (atanl(c->cmax.a1) + atanl(c->cmin.a1)) / 2;
	l.a1 = tanl(th);
	if (l.a1 > c->cmax.a1)
		l.a1 = c->cmax.a1;
	if (l.a1 < c->cmin.a1)
		l.a1 = c->cmin.a1;
	l.a0 = yi - l.a1 * xi;
	return l;
}

static long double clampl(long double v, long double lo, long double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* number of vertices of h with x <= x */
static size_t count_le(const struct hull_pt *h, size_t n, long double x)
{
	size_t l = 0, r = n;

	while (l < r) {
		size_t m = (l + r) / 2;
		if ((long double)h[m].x <= x)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

/* count_le(h, n, x) by stepping from k, its value at an earlier query: O(1) amortized when
 * queries come in increasing x */
static size_t step_le(const struct hull_pt *h, size_t n, size_t k, long double x)
{
	if (k == LP6_UNSET || isnan(x))
		return count_le(h, n, x);
	while (k > 0 && (long double)h[k - 1].x > x)
		k--;
	while (k < n && (long double)h[k].x <= x)
		k++;
	return k;
}

/*
 * LP 6 at x along one half hull h of n vertices: with k vertices left of x, the optimal
 * slope is that of the edge spanning x clamped to [a1min, a1max] (before the first vertex
 * a_before, past the last a_after); the optimum then lies on the line of that slope through
 * its supporting vertex (active). Both depend on k only, so the cursor recomputes them only
 * when k changes.
 */
static inline long double lp6_next(const struct corridor *c, const struct hull_pt *h, size_t n,
                                   long double a_before, long double a_after,
                                   size_t (*active)(const struct corridor *, long double),
                                   struct lp6_cursor *cur, long double x)
{
	size_t k = step_le(h, n, cur->k, x);

	if (k != cur->k) {
		if (k == 0)
			cur->a1 = a_before;
		else if (k == n)
			cur->a1 = a_after;
		else
			cur->a1 = clampl(edge_slope(h, k - 1), c->cmin.a1, c->cmax.a1);
		cur->v = active(c, cur->a1);
		cur->k = k;
	}
	const struct hull_pt *v = &h[cur->v];
	return (long double)v->y + (x - (long double)v->x) * cur->a1;
}

/* LP 6 maximum at x: on the lower hull, from a1min to a1max */
long double corridor_lp6_max_next(const struct corridor *c, struct lp6_cursor *cur,
                                  long double x)
{
	return lp6_next(c, c->lo, c->nlo, c->cmin.a1, c->cmax.a1, lo_active, cur, x);
}

/* LP 6 minimum at x: the same on the upper hull, slopes taken from the other end */
long double corridor_lp6_min_next(const struct corridor *c, struct lp6_cursor *cur,
                                  long double x)
{
	return lp6_next(c, c->hi, c->nhi, c->cmax.a1, c->cmin.a1, hi_active, cur, x);
}

long double corridor_lp6_max(const struct corridor *c, long double x)
{
	struct lp6_cursor cur = LP6_CURSOR_INIT;

	return corridor_lp6_max_next(c, &cur, x);
}

long double corridor_lp6_min(const struct corridor *c, long double x)
{
	struct lp6_cursor cur = LP6_CURSOR_INIT;

	return corridor_lp6_min_next(c, &cur, x);
}

/* sweep one hull: value at its vertices by LP 6, linear in between, slopes sl/sr outside */
static void sweep(const struct corridor *c, const struct hull_pt *h, size_t nh,
                  long double (*lp6)(const struct corridor *, long double), long double sl,
                  long double sr, const int64_t *xs, size_t n, long double *out)
{
	size_t k = 0;
	long double vk, vk1;

	vk = lp6(c, (long double)h[0].x);
	vk1 = nh > 1 ? lp6(c, (long double)h[1].x) : vk;
	for (size_t i = 0; i < n; i++) {
		long double x = (long double)xs[i];
		while (k + 1 < nh && xs[i] >= h[k + 1].x) {
			k++;
			vk = vk1;
			if (k + 1 < nh)
				vk1 = lp6(c, (long double)h[k + 1].x);
		}
		if (xs[i] < h[0].x)
			out[i] = vk + sl * (x - (long double)h[0].x);
		else if (k + 1 == nh)
			out[i] = vk + sr * (x - (long double)h[k].x);
		else
			out[i] = vk + (vk1 - vk) * ((x - (long double)h[k].x) /
			                            (long double)(h[k + 1].x - h[k].x));
	}
}

void corridor_lp6_sorted(const struct corridor *c, const int64_t *xs, size_t n,
                         long double *vmax, long double *vmin)
{
	if (vmax)
		sweep(c, c->lo, c->nlo, corridor_lp6_max, c->cmin.a1, c->cmax.a1, xs, n, vmax);
	if (vmin)
		sweep(c, c->hi, c->nhi, corridor_lp6_min, c->cmax.a1, c->cmin.a1, xs, n, vmin);
}

int line_regress(const struct hull_pt *p, size_t n, struct line *l)
{
	long double mx = 0, my = 0, sxx = 0, sxy = 0;

	if (n < 2)
		return LINE_TOO_FEW;
	for (size_t i = 0; i < n; i++) {
		mx += p[i].x;
		my += p[i].y;
	}
	mx /= n;
	my /= n;
	for (size_t i = 0; i < n; i++) {
		long double dx = p[i].x - mx, dy = p[i].y - my;
		sxx += dx * dx;
		sxy += dx * dy;
	}
	if (sxx <= 0)
		return LINE_TOO_FEW;
	l->a1 = sxy / sxx;
	l->a0 = my - l->a1 * mx;
	return LINE_OK;
}
