/*
 * pair.c - fit the conversion X -> Y for one ordered pair of clocks (Section 3.1, Section 5).
 *
 * One line when it fits; when the hulls intersect (non-linear clocks) either the fallback line
 * (the line whose worst violation of the corridor is smallest: halfway across the widest gap,
 * our reading of the "fallback mode" Ashton suggests, Section 5) or, with segments, intervals
 * that each fit a line, joined continuously: straight between knots placed halfway between
 * neighbouring segments, at the mean of their two estimates there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "numerics/pair.h"
#include "util/err.h"

const char *pair_quality_name(int q)
{
	static const char *const names[] = {"hull", "fallback", "segments", "regression",
	                                    "unbounded"};
	return q >= 0 && q <= PAIR_UNBOUNDED ? names[q] : "?";
}

static size_t lower_bound_x(const struct hull_pt *p, size_t n, int64_t x)
{
	size_t l = 0, r = n;

	while (l < r) {
		size_t m = (l + r) / 2;
		if (p[m].x < x)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

static void seg_free(struct pair_seg *s)
{
	free(s->lo);
	free(s->hi);
	s->lo = s->hi = NULL;
}

/* fit one segment from its up and down points; returns 0 or HCLOCK_ENOMEM */
static int seg_fit(struct pair_seg *s, const struct hull_pt *up, size_t nu,
                   const struct hull_pt *down, size_t nd, int mode)
{
	size_t nlo, nhi;
	struct line ru, rd;

	memset(s, 0, sizeof(*s));
	s->lo = malloc((nu ? nu : 1) * sizeof(*s->lo));
	s->hi = malloc((nd ? nd : 1) * sizeof(*s->hi));
	if (!s->lo || !s->hi)
		goto nomem;
	nlo = hull_lower(up, nu, s->lo);
	nhi = hull_upper(down, nd, s->hi);
	corridor_init(&s->cor, s->lo, nlo, s->hi, nhi);
	s->x0 = INT64_MAX;
	s->x1 = INT64_MIN;
	if (nu) {
		s->x0 = up[0].x;
		s->x1 = up[nu - 1].x;
	}
	if (nd) {
		s->x0 = down[0].x < s->x0 ? down[0].x : s->x0;
		s->x1 = down[nd - 1].x > s->x1 ? down[nd - 1].x : s->x1;
	}
	s->est.a0 = 0;
	s->est.a1 = 1;
	if (mode == PAIR_MODE_REGRESSION && !line_regress(up, nu, &ru) &&
	    !line_regress(down, nd, &rd)) {
		/* both regression lines are shifted by the mean latency, in opposite directions */
		s->est.a0 = (ru.a0 + rd.a0) / 2;
		s->est.a1 = (ru.a1 + rd.a1) / 2;
	} else if (s->cor.status == CORRIDOR_OK && mode == PAIR_MODE_MEAN) {
		/* Trace Compass's estimate: the mean of the extreme lines; for messages over a
		 * short span it differs from the bisector by about (a1max - a1min)^2 / 8 in slope */
		s->est.a0 = (s->cor.cmax.a0 + s->cor.cmin.a0) / 2;
		s->est.a1 = (s->cor.cmax.a1 + s->cor.cmin.a1) / 2;
	} else if (s->cor.status == CORRIDOR_OK) {
		s->est = corridor_bisector(&s->cor);
	} else if (s->cor.status == CORRIDOR_INTERSECT) {
		s->est = s->cor.center;
	}
	s->viol = 0;
	if (s->cor.status != CORRIDOR_UNBOUNDED) {
		for (size_t k = 0; k < nlo; k++) {
			long double v = line_at(s->est, s->lo[k].x) - s->lo[k].y;
			if (v > s->viol)
				s->viol = v;
		}
		for (size_t k = 0; k < nhi; k++) {
			long double v = s->hi[k].y - line_at(s->est, s->hi[k].x);
			if (v > s->viol)
				s->viol = v;
		}
	}
	return 0;
nomem:
	seg_free(s);
	return HCLOCK_ENOMEM;
}

struct ctx {
	const struct hull_pt *up, *down;
	size_t nu, nd;
	const int64_t *all; /* x of every point, sorted */
	int mode;
};

/* fit the points with x in [all[s], all[e]) (e == N: to the end) */
static int fit_span(const struct ctx *c, size_t s, size_t e, size_t n, struct pair_seg *seg)
{
	size_t u0 = lower_bound_x(c->up, c->nu, c->all[s]);
	size_t d0 = lower_bound_x(c->down, c->nd, c->all[s]);
	size_t u1 = e < n ? lower_bound_x(c->up, c->nu, c->all[e]) : c->nu;
	size_t d1 = e < n ? lower_bound_x(c->down, c->nd, c->all[e]) : c->nd;

	return seg_fit(seg, c->up + u0, u1 - u0, c->down + d0, d1 - d0, c->mode);
}

static int span_status(const struct ctx *c, size_t s, size_t e, size_t n)
{
	struct pair_seg seg;
	int st;

	if (fit_span(c, s, e, n, &seg))
		return HCLOCK_ENOMEM;
	st = seg.cor.status;
	seg_free(&seg);
	return st;
}

/*
 * Cut positions (indexes into all[] where x changes) for --segments. pos[] holds the M+1
 * distinct-x starts (pos[M] = n); cuts are returned as indexes into pos[].
 */
static int auto_cuts(const struct ctx *c, const size_t *pos, size_t m, size_t n, size_t *cut,
                     size_t *ncut)
{
	size_t a = 0;

	*ncut = 0;
	while (a < m) {
		size_t step = 4, b, good, bad;
		int st;

		cut[(*ncut)++] = a;
		/* smallest bounded span, by doubling */
		for (;;) {
			b = a + step < m ? a + step : m;
			st = span_status(c, pos[a], pos[b], n);
			if (st == HCLOCK_ENOMEM)
				return st;
			if (st != CORRIDOR_UNBOUNDED || b == m)
				break;
			step *= 2;
		}
		if (st != CORRIDOR_OK) { /* unbounded tail or not even the smallest span fits */
			a = b;
			continue;
		}
		/* largest feasible span: doubling, then bisection (feasibility only shrinks) */
		good = b;
		bad = m + 1;
		while (good < m) {
			size_t t = a + 2 * (good - a) < m ? a + 2 * (good - a) : m;
			st = span_status(c, pos[a], pos[t], n);
			if (st == HCLOCK_ENOMEM)
				return st;
			if (st != CORRIDOR_OK) {
				bad = t;
				break;
			}
			good = t;
		}
		while (bad <= m && bad - good > 1) {
			size_t t = good + (bad - good) / 2;
			st = span_status(c, pos[a], pos[t], n);
			if (st == HCLOCK_ENOMEM)
				return st;
			if (st == CORRIDOR_OK)
				good = t;
			else
				bad = t;
		}
		a = good;
	}
	return 0;
}

static void fixed_cuts(const int64_t *all, const size_t *pos, size_t m, int64_t dur, size_t *cut,
                       size_t *ncut)
{
	int64_t next = 0;

	*ncut = 0;
	for (size_t a = 0; a < m; a++) {
		int64_t x = all[pos[a]];
		if (a == 0 || x >= next) {
			cut[(*ncut)++] = a;
			next = x + dur - (x - all[0]) % dur;
		}
	}
}

/* move the points to coordinates relative to the first one: differences fit an int64 */
static void to_relative(struct pair_fit *f, struct hull_pt *up, size_t nu, struct hull_pt *down,
                        size_t nd)
{
	const struct hull_pt *first = !nd || (nu && up[0].x <= down[0].x) ? &up[0] : &down[0];

	f->xbase = first->x;
	f->ybase = first->y;
	for (size_t i = 0; i < nu; i++) {
		up[i].x -= f->xbase;
		up[i].y -= f->ybase;
	}
	for (size_t i = 0; i < nd; i++) {
		down[i].x -= f->xbase;
		down[i].y -= f->ybase;
	}
}

/* the x of every point, merged in order (all[n]), and the index of each distinct x in all
 * (pos[m], pos[m] = n); returns m */
static size_t merge_x(const struct hull_pt *up, size_t nu, const struct hull_pt *down, size_t nd,
                      int64_t *all, size_t *pos)
{
	size_t n = nu + nd, m = 0, i = 0, j = 0;

	for (size_t k = 0; k < n; k++)
		all[k] = (j >= nd || (i < nu && up[i].x <= down[j].x)) ? up[i++].x : down[j++].x;
	for (size_t k = 0; k < n; k++)
		if (k == 0 || all[k] != all[k - 1])
			pos[m++] = k;
	pos[m] = n;
	return m;
}

/* --segments auto: one line if it fits, else the greedy maximal spans, each halved (the
 * spans are barely feasible at their ends; halves of a feasible span stay feasible and leave
 * the joints room). *cut (n + 1 entries) may be replaced by a larger array. */
static int cuts_auto(const struct ctx *c, const size_t *pos, size_t m, size_t n, size_t **cut,
                     size_t *ncut)
{
	size_t *half, nh = 0, *cu = *cut;
	int st = span_status(c, 0, n, n);

	*ncut = 0;
	if (st == HCLOCK_ENOMEM)
		return st;
	if (st != CORRIDOR_INTERSECT) {
		cu[(*ncut)++] = 0;
		return 0;
	}
	half = malloc((2 * n + 2) * sizeof(*half));
	if (!half || auto_cuts(c, pos, m, n, cu, ncut)) {
		free(half);
		return HCLOCK_ENOMEM;
	}
	for (size_t k = 0; k < *ncut; k++) {
		size_t b = k + 1 < *ncut ? cu[k + 1] : m;
		half[nh++] = cu[k];
		if (b - cu[k] >= 2)
			half[nh++] = cu[k] + (b - cu[k]) / 2;
	}
	free(cu);
	*cut = half;
	*ncut = nh;
	return 0;
}

/* fit every segment between cuts; a segment too short to bound the slopes joins a
 * neighbour. cut[] is edited along. */
static int fit_segments(struct pair_fit *f, const struct ctx *c, const size_t *pos, size_t *cut,
                        size_t ncut, size_t n)
{
	f->seg = calloc(ncut, sizeof(*f->seg));
	if (!f->seg)
		return HCLOCK_ENOMEM;
	for (size_t k = 0; k < ncut; k++) {
		size_t e = k + 1 < ncut ? pos[cut[k + 1]] : n;
		if (fit_span(c, pos[cut[k]], e, n, &f->seg[k]))
			return HCLOCK_ENOMEM;
		f->nseg++;
	}
	for (size_t k = 0; f->nseg > 1 && k < f->nseg;) {
		size_t a, b, e;
		if (f->seg[k].cor.status != CORRIDOR_UNBOUNDED) {
			k++;
			continue;
		}
		a = k ? k - 1 : k; /* merge segments a and a+1 */
		b = a + 1;
		e = b + 1 < f->nseg ? pos[cut[b + 1]] : n;
		seg_free(&f->seg[a]);
		seg_free(&f->seg[b]);
		memmove(&f->seg[b], &f->seg[b + 1], (f->nseg - b - 1) * sizeof(*f->seg));
		memmove(&cut[b], &cut[b + 1], (f->nseg - b - 1) * sizeof(*cut));
		f->nseg--;
		if (fit_span(c, pos[cut[a]], e, n, &f->seg[a])) {
			/* keep the array consistent for pair_free */
			memmove(&f->seg[a], &f->seg[a + 1], (f->nseg - a - 1) * sizeof(*f->seg));
			f->nseg--;
			return HCLOCK_ENOMEM;
		}
		k = a;
	}
	return 0;
}

/* the largest valid slope, the knots joining segments, and the quality */
static int finish(struct pair_fit *f, int mode)
{
	f->slope_max = 0;
	f->hull_points = 0;
	for (size_t k = 0; k < f->nseg; k++) {
		const struct pair_seg *s = &f->seg[k];
		long double sl = s->cor.status == CORRIDOR_OK ? s->cor.cmax.a1 : s->est.a1;
		if (sl > f->slope_max)
			f->slope_max = sl;
		f->hull_points += s->cor.nlo + s->cor.nhi;
	}
	if (f->nseg > 1) {
		size_t nk = f->nseg - 1;
		f->kx = malloc(nk * sizeof(*f->kx));
		f->ky = malloc(nk * sizeof(*f->ky));
		if (!f->kx || !f->ky)
			return HCLOCK_ENOMEM;
		/* knot k between segments k and k+1: halfway between their points, at the mean of
		 * both estimates there */
		for (size_t k = 0; k < nk; k++) {
			f->kx[k] = ((long double)f->seg[k].x1 + (long double)f->seg[k + 1].x0) / 2;
			f->ky[k] = (line_at(f->seg[k].est, f->kx[k]) +
			            line_at(f->seg[k + 1].est, f->kx[k])) / 2;
			if (k && f->kx[k] > f->kx[k - 1]) {
				long double sl = (f->ky[k] - f->ky[k - 1]) / (f->kx[k] - f->kx[k - 1]);
				if (sl > f->slope_max)
					f->slope_max = sl;
			}
		}
		f->quality = PAIR_SEGMENTS;
	} else if (f->seg[0].cor.status == CORRIDOR_UNBOUNDED) {
		f->quality = PAIR_UNBOUNDED;
	} else if (mode == PAIR_MODE_REGRESSION) {
		f->quality = PAIR_REGRESSION;
	} else {
		f->quality = f->seg[0].cor.status == CORRIDOR_OK ? PAIR_HULL : PAIR_FALLBACK;
	}
	return 0;
}

/* the mean bound over the points: the weight of this pair in path selection */
static double mean_bound(const struct pair_fit *f, const int64_t *all, size_t n)
{
	struct pair_cursor cur = PAIR_CURSOR_INIT;
	long double sum = 0;

	for (size_t k = 0; k < n; k++) {
		int64_t y;
		long double yf, dm, dp;
		pair_eval_next(f, &cur, all[k] + f->xbase, 0, &y, &yf, &dm, &dp);
		sum += dm > dp ? dm : dp;
	}
	return (double)(sum / n);
}

int pair_fit(struct pair_fit *f, struct hull_pt *up, size_t nu, struct hull_pt *down, size_t nd,
             const struct pair_opts *o)
{
	size_t n = nu + nd, m, ncut = 0;
	int64_t *all = NULL;
	size_t *pos = NULL, *cut = NULL;
	struct ctx c;
	int err = HCLOCK_ENOMEM;

	memset(f, 0, sizeof(*f));
	f->nup = nu;
	f->ndown = nd;
	f->quality = PAIR_UNBOUNDED;
	f->weight = INFINITY;
	if (!n)
		return 0;
	to_relative(f, up, nu, down, nd);
	all = malloc(n * sizeof(*all));
	pos = malloc((n + 1) * sizeof(*pos));
	cut = malloc((n + 1) * sizeof(*cut));
	if (!all || !pos || !cut)
		goto out;
	m = merge_x(up, nu, down, nd, all, pos);
	c = (struct ctx){up, down, nu, nd, all, o->mode};
	if (o->segments == PAIR_SEGMENTS_AUTO) {
		if (cuts_auto(&c, pos, m, n, &cut, &ncut))
			goto out;
	} else if (o->segments > 0) {
		fixed_cuts(all, pos, m, o->segments, cut, &ncut);
	} else {
		cut[ncut++] = 0;
	}
	if (fit_segments(f, &c, pos, cut, ncut, n) || finish(f, o->mode))
		goto out;
	if (f->quality != PAIR_UNBOUNDED)
		f->weight = mean_bound(f, all, n);
	err = 0;
out:
	free(all);
	free(pos);
	free(cut);
	if (err) {
		pair_free(f);
		err_set(err, "out of memory fitting %zu messages", n);
	}
	return err;
}

void pair_free(struct pair_fit *f)
{
	for (size_t k = 0; k < f->nseg; k++)
		seg_free(&f->seg[k]);
	free(f->seg);
	free(f->kx);
	free(f->ky);
	f->seg = NULL;
	f->kx = f->ky = NULL;
	f->nseg = 0;
}

/* number of knots at or left of x (knots increase strictly), stepping from k, the count at
 * an earlier call (PAIR_UNSET: none) */
static size_t knots_le(const struct pair_fit *f, size_t k, long double x)
{
	size_t nk = f->nseg - 1;

	if (k == PAIR_UNSET || isnan(x)) {
		size_t l = 0, r = nk;
		while (l < r) {
			size_t m = (l + r) / 2;
			if (f->kx[m] <= x)
				l = m + 1;
			else
				r = m;
		}
		return l;
	}
	while (k > 0 && f->kx[k - 1] > x)
		k--;
	while (k < nk && f->kx[k] <= x)
		k++;
	return k;
}

/* segments: the first and last segment keep their slope through the outer knots, inner
 * segments run straight from knot to knot; k = knots_le(x) */
static long double conv_rel(const struct pair_fit *f, long double x, size_t k)
{
	size_t l, r, nk = f->nseg - 1;

	if (f->nseg == 1)
		return line_at(f->seg[0].est, x);
	if (x <= f->kx[0])
		return f->ky[0] + f->seg[0].est.a1 * (x - f->kx[0]);
	if (x >= f->kx[nk - 1])
		return f->ky[nk - 1] + f->seg[f->nseg - 1].est.a1 * (x - f->kx[nk - 1]);
	/* kx[l] <= x < kx[r]; k is 0 here only for a NaN x, kept in range as before */
	l = k ? k - 1 : 0;
	r = l + 1 < nk ? l + 1 : l;
	if (f->kx[r] <= f->kx[l])
		return f->ky[l];
	return f->ky[l] + (f->ky[r] - f->ky[l]) * ((x - f->kx[l]) / (f->kx[r] - f->kx[l]));
}

void pair_eval_next(const struct pair_fit *f, struct pair_cursor *cur, int64_t x, long double xf,
                    int64_t *y, long double *yf, long double *dminus, long double *dplus)
{
	long double rel = (long double)(x - f->xbase) + xf, c;
	size_t k = 0;
	const struct pair_seg *s;

	*y = f->ybase;
	if (!f->nseg) {
		*yf = rel;
		*dminus = *dplus = INFINITY;
		return;
	}
	if (f->nseg > 1) /* segment k lies between knots k-1 and k */
		k = knots_le(f, cur->knots, rel);
	if (k != cur->knots) {
		cur->knots = k;
		cur->max = cur->min = LP6_CURSOR_INIT;
	}
	s = &f->seg[k];
	c = conv_rel(f, rel, k);
	*yf = c;
	if (s->cor.status == CORRIDOR_OK) {
		*dplus = corridor_lp6_max_next(&s->cor, &cur->max, rel) - c;
		*dminus = c - corridor_lp6_min_next(&s->cor, &cur->min, rel);
	} else if (s->cor.status == CORRIDOR_INTERSECT) {
		long double d = fabsl(c - line_at(s->est, rel));
		*dplus = *dminus = s->viol + d;
	} else {
		*dplus = *dminus = INFINITY;
	}
}

void pair_eval(const struct pair_fit *f, int64_t x, long double xf, int64_t *y, long double *yf,
               long double *dminus, long double *dplus)
{
	struct pair_cursor cur = PAIR_CURSOR_INIT;

	pair_eval_next(f, &cur, x, xf, y, yf, dminus, dplus);
}
