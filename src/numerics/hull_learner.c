/*
 * hull_learner.c - a clock model with strict bounds from ping-pongs, on the shared hull
 * numerics (hull.h): the learner only keeps points, prunes them to their hulls, and turns the
 * corridor's relative lines into offset models.
 *
 * A relative line Y = a0 + a1 x (x = t_X - xbase, Y = t_Y - ybase) is the offset model
 * offset(t_X) = t_Y - t_X = (ybase - xbase) + a0 + (a1 - 1) (t_X - xbase).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "numerics/hull.h"
#include "numerics/hull_learner.h"
#include "util/err.h"

#define COORD_MAX ((int64_t)1 << 62) /* hull.h: |relative coordinate| below 2^62 */

/* points of one direction, sorted by x: the hull vertices of the last prune plus later
 * messages, relative ns */
struct pts {
	struct hull_pt *p;
	size_t n, cap;
};

struct hull_learner {
	int estimate;             /* enum hull_learner_estimate */
	int based;                /* xbase/ybase set (a message was fed) */
	int64_t xbase, ybase;     /* relative coordinates: x = t_X - xbase, y = t_Y - ybase, ns
	                             (the first message) */
	struct pts up, down;      /* up: X -> Y messages, down: Y -> X messages */
	struct hull_pt *scratch;  /* pruning between fits, scratch_cap points */
	size_t scratch_cap;
	int64_t xmin, xmax;       /* relative X range of every message fed, ns */
	int64_t rtt_min;          /* smallest (t4 - t1) - (t3 - t2), ns; INT64_MAX with none */
	int64_t slack;            /* read-error allowance, ns: up points raised, down points
	                             lowered by it (hull_learner_set_slack) */
	size_t nexch, nup, ndown; /* ping-pongs and messages fed */
	/* the last fit: its own hulls, borrowed by cor */
	struct hull_pt *lo, *hi;  /* lower hull of the up points, upper hull of the down points */
	size_t lo_cap, hi_cap;
	struct corridor cor;
	int status;               /* enum hull_learner_status of the last fit */
	struct line est;          /* its estimate, relative ns */
};

hull_learner *hull_learner_create(int estimate)
{
	hull_learner *l;

	if (estimate != HULL_LEARNER_CENTER && estimate != HULL_LEARNER_BISECTOR)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (l) {
		l->estimate = estimate;
		hull_learner_reset(l);
	}
	return l;
}

void hull_learner_destroy(hull_learner *l)
{
	if (!l)
		return;
	free(l->up.p);
	free(l->down.p);
	free(l->scratch);
	free(l->lo);
	free(l->hi);
	free(l);
}

void hull_learner_reset(hull_learner *l)
{
	l->based = 0;
	l->xbase = l->ybase = 0;
	l->up.n = l->down.n = 0;
	l->xmin = INT64_MAX;
	l->xmax = INT64_MIN;
	l->rtt_min = INT64_MAX;
	l->nexch = l->nup = l->ndown = 0;
	l->status = HULL_LEARNER_TOO_FEW;
	memset(&l->cor, 0, sizeof(l->cor));
}

int hull_learner_set_slack(hull_learner *l, double slack_ns)
{
	if (l->based)
		return err_set(HCLOCK_EINVAL, "the hull learner's slack is set before its first "
		               "message");
	if (!(slack_ns >= 0 && slack_ns < 1e12))
		return err_set(HCLOCK_EINVAL, "hull learner slack %g ns is not in [0, 1e12)",
		               slack_ns);
	l->slack = (int64_t)ceil(slack_ns);
	return 0;
}

static int grow(struct hull_pt **p, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 64;
	struct hull_pt *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * sizeof(*q));
	if (!q)
		return HCLOCK_ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* replace the points by their half hull (lower for up points, upper for down points): the
 * hull of the points and any later ones is the hull of this hull and those */
static int prune(hull_learner *l, struct pts *s, int upper)
{
	size_t m;

	if (grow(&l->scratch, &l->scratch_cap, s->n))
		return HCLOCK_ENOMEM;
	m = upper ? hull_upper(s->p, s->n, l->scratch) : hull_lower(s->p, s->n, l->scratch);
	memcpy(s->p, l->scratch, m * sizeof(*s->p));
	s->n = m;
	return 0;
}

/* room for one more point: prune when full, grow when the hull itself fills half */
static int make_room(hull_learner *l, struct pts *s, int upper)
{
	if (s->n < s->cap)
		return 0;
	if (s->cap && prune(l, s, upper))
		return HCLOCK_ENOMEM;
	if (s->n < s->cap / 2)
		return 0;
	return grow(&s->p, &s->cap, 2 * s->n + 2);
}

/* insert keeping s sorted by x (appending in time order); room must exist */
static void insert(struct pts *s, struct hull_pt q)
{
	size_t a = 0, b = s->n;

	if (s->n && s->p[s->n - 1].x > q.x) {
		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (s->p[m].x <= q.x)
				a = m + 1;
			else
				b = m;
		}
		memmove(&s->p[a + 1], &s->p[a], (s->n - a) * sizeof(*s->p));
	} else {
		a = s->n;
	}
	s->p[a] = q;
	s->n++;
}

/* t - base into *rel if it stays within the hull numerics' range */
static int relative(int64_t t, int64_t base, int64_t *rel)
{
	if (__builtin_sub_overflow(t, base, rel) || *rel >= COORD_MAX || *rel <= -COORD_MAX)
		return HCLOCK_EINVAL;
	return 0;
}

/* the relative point of (x, y), fixing the base at the first message */
static int to_point(hull_learner *l, int64_t x, int64_t y, struct hull_pt *q)
{
	if (x >= COORD_MAX || x <= -COORD_MAX || y >= COORD_MAX || y <= -COORD_MAX)
		return HCLOCK_EINVAL;
	if (!l->based)
		return q->x = q->y = 0, 0;
	if (relative(x, l->xbase, &q->x) || relative(y, l->ybase, &q->y))
		return HCLOCK_EINVAL;
	return 0;
}

static void set_base(hull_learner *l, int64_t x, int64_t y)
{
	if (!l->based) {
		l->based = 1;
		l->xbase = x;
		l->ybase = y;
	}
}

static void add_point(hull_learner *l, int up, struct hull_pt q)
{
	insert(up ? &l->up : &l->down, q);
	if (q.x < l->xmin)
		l->xmin = q.x;
	if (q.x > l->xmax)
		l->xmax = q.x;
	if (up)
		l->nup++;
	else
		l->ndown++;
}

int hull_learner_add_msg(hull_learner *l, int up, int64_t x, int64_t y)
{
	struct pts *s = up ? &l->up : &l->down;
	struct hull_pt q;

	y += up ? l->slack : -l->slack; /* |y| < 2^62 + 1e12 cannot overflow */
	if (to_point(l, x, y, &q))
		return err_set(HCLOCK_EINVAL, "message (%" PRId64 ", %" PRId64 ") ns out of the hull "
		               "learner's range", x, y);
	if (make_room(l, s, !up))
		return err_set(HCLOCK_ENOMEM, "out of memory in the hull learner");
	set_base(l, x, y);
	add_point(l, up, q);
	return 0;
}

static int bad_pingpong(int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
	return err_set(HCLOCK_EINVAL, "ping-pong t1 %" PRId64 " t2 %" PRId64 " t3 %" PRId64
	               " t4 %" PRId64 " ns out of order or out of the hull learner's range",
	               t1, t2, t3, t4);
}

int hull_learner_add(hull_learner *l, int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
	struct hull_pt u, d;
	int64_t rtt;

	if (t4 < t1 || t3 < t2 || t2 >= COORD_MAX || t3 <= -COORD_MAX)
		return bad_pingpong(t1, t2, t3, t4);
	/* the points with the slack; the round trip from the timestamps as read */
	int64_t r2 = t2, r3 = t3;
	t2 += l->slack;
	t3 -= l->slack;
	if (to_point(l, t1, t2, &u))
		return bad_pingpong(t1, t2, t3, t4);
	if (l->based) {
		if (to_point(l, t4, t3, &d))
			return bad_pingpong(t1, t2, t3, t4);
	} else if (relative(t4, t1, &d.x) || relative(t3, t2, &d.y)) {
		return bad_pingpong(t1, t2, t3, t4);
	}
	/* both or neither: make room for both before adding either */
	if (make_room(l, &l->up, 0) || make_room(l, &l->down, 1))
		return err_set(HCLOCK_ENOMEM, "out of memory in the hull learner");
	set_base(l, t1, t2);
	add_point(l, 1, u);
	add_point(l, 0, d);
	/* all four within 2^62 + slack of zero (to_point): the differences cannot overflow */
	rtt = (t4 - t1) - (r3 - r2);
	if (rtt < l->rtt_min)
		l->rtt_min = rtt;
	l->nexch++;
	return 0;
}

/* a relative line as the offset model Y - X with x0 at xbase */
static struct lm to_lm(const hull_learner *l, struct line r)
{
	struct lm m;

	m.x0_ns = l->xbase;
	m.intercept_ns = (double)((long double)(l->ybase - l->xbase) + r.a0);
	m.slope = (double)(r.a1 - 1);
	return m;
}

int hull_learner_fit(hull_learner *l, struct hull_learner_fit *f)
{
	size_t nlo, nhi;

	l->status = HULL_LEARNER_TOO_FEW;
	memset(&l->cor, 0, sizeof(l->cor));
	if (grow(&l->lo, &l->lo_cap, l->up.n ? l->up.n : 1) ||
	    grow(&l->hi, &l->hi_cap, l->down.n ? l->down.n : 1))
		return err_set(HCLOCK_ENOMEM, "out of memory for the hull learner's hulls");
	nlo = hull_lower(l->up.p, l->up.n, l->lo);
	nhi = hull_upper(l->down.p, l->down.n, l->hi);
	/* prune the kept points to the hulls just built */
	if (nlo) /* no array yet when no point was fed */
		memcpy(l->up.p, l->lo, nlo * sizeof(*l->lo));
	if (nhi)
		memcpy(l->down.p, l->hi, nhi * sizeof(*l->hi));
	l->up.n = nlo;
	l->down.n = nhi;
	switch (corridor_init(&l->cor, l->lo, nlo, l->hi, nhi)) {
	case CORRIDOR_OK:
		l->status = HULL_LEARNER_OK;
		l->est = l->estimate == HULL_LEARNER_BISECTOR ? corridor_bisector(&l->cor)
		                                               : l->cor.center;
		break;
	case CORRIDOR_INTERSECT:
		l->status = HULL_LEARNER_INTERSECT;
		l->est = l->cor.center;
		break;
	default:
		l->status = HULL_LEARNER_TOO_FEW;
		l->est = (struct line){0, 1};
		break;
	}
	if (!f)
		return l->status;
	memset(f, 0, sizeof(*f));
	f->status = l->status;
	f->est = f->bisector = f->center = f->cmax = f->cmin = to_lm(l, (struct line){0, 1});
	if (l->status != HULL_LEARNER_TOO_FEW) {
		f->est = to_lm(l, l->est);
		f->center = to_lm(l, l->cor.center);
		f->gap_ns = (double)l->cor.gap;
	}
	if (l->status == HULL_LEARNER_OK) {
		f->bisector = to_lm(l, corridor_bisector(&l->cor));
		f->cmax = to_lm(l, l->cor.cmax);
		f->cmin = to_lm(l, l->cor.cmin);
		f->slope_width = (double)(l->cor.cmax.a1 - l->cor.cmin.a1);
	}
	f->x_first_ns = l->based ? l->xbase + l->xmin : 0;
	f->x_last_ns = l->based ? l->xbase + l->xmax : 0;
	f->rtt_min_ns = l->rtt_min;
	f->nexchanges = l->nexch;
	f->nup = l->nup;
	f->ndown = l->ndown;
	f->nlo = nlo;
	f->nhi = nhi;
	return l->status;
}

int hull_learner_eval(const hull_learner *l, int64_t x, double *est_ns, double *lo_ns,
                      double *hi_ns)
{
	/* long double holds any int64 exactly, so the relative x is exact to 2^-63 relative */
	long double xr = (long double)x - (long double)l->xbase;
	long double d = (long double)l->ybase - (long double)l->xbase - xr;
	double e = NAN, lo = -INFINITY, hi = INFINITY;

	if (l->status != HULL_LEARNER_TOO_FEW)
		e = (double)(d + line_at(l->est, xr));
	if (l->status == HULL_LEARNER_OK) {
		lo = (double)(d + corridor_lp6_min(&l->cor, xr));
		hi = (double)(d + corridor_lp6_max(&l->cor, xr));
	}
	if (est_ns)
		*est_ns = e;
	if (lo_ns)
		*lo_ns = lo;
	if (hi_ns)
		*hi_ns = hi;
	return l->status;
}
