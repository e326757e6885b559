/*
 * track.c - one pair of clocks learned over a sliding window (track.h).
 *
 * Storage: the window's ping-pongs in time order in one growing array (the front moves as
 * old ones leave; compacted when half of it is dead). A fit rebuilds the hulls from the
 * window (a few hundred messages: microseconds), so forgetting old messages costs nothing
 * extra: the hull learner itself only ever grows.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "numerics/hull_learner.h"
#include "numerics/stats.h"
#include "numerics/track.h"
#include "util/err.h"

struct pp {
	uint32_t exch;
	int64_t t1, t2, t3, t4;
};

struct track {
	struct track_params p;
	struct pp *v;
	size_t head, n, cap; /* live ping-pongs: v[head .. n) */
	hull_learner *h;
	int64_t *gx;         /* per-exchange scratch for the regression */
	double *gy;
	size_t gcap;
};

track *track_create(const struct track_params *p)
{
	if (!(p->window_ns > 0) || !(p->slack_ns >= 0) || !(p->drift >= 0) || !(p->drift < 0.1))
		return NULL;
	track *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->p = *p;
	if (!(t->h = hull_learner_create(HULL_LEARNER_CENTER)) ||
	    hull_learner_set_slack(t->h, p->slack_ns)) {
		track_destroy(t);
		return NULL;
	}
	return t;
}

void track_destroy(track *t)
{
	if (!t)
		return;
	hull_learner_destroy(t->h);
	free(t->v);
	free(t->gx);
	free(t->gy);
	free(t);
}

void track_set_step(track *t, double step_ns)
{
	t->p.step_ns = step_ns;
}

void track_reset(track *t)
{
	t->head = t->n = 0;
}

int track_add(track *t, uint32_t exch, int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
	if (t4 < t1 || t3 < t2)
		return err_set(HCLOCK_EINVAL, "ping-pong out of order: t1 %" PRId64 " t2 %" PRId64
		               " t3 %" PRId64 " t4 %" PRId64 " ns", t1, t2, t3, t4);
	if (t->n > t->head && exch < t->v[t->n - 1].exch)
		return err_set(HCLOCK_EINVAL, "exchange %" PRIu32 " fed after exchange %" PRIu32,
		               exch, t->v[t->n - 1].exch);
	if (t->n == t->cap) {
		if (t->head > t->n / 2) { /* compact */
			memmove(t->v, t->v + t->head, (t->n - t->head) * sizeof(*t->v));
			t->n -= t->head;
			t->head = 0;
		} else {
			size_t c = t->cap ? 2 * t->cap : 64;
			struct pp *nv = realloc(t->v, c * sizeof(*nv));
			if (!nv)
				return err_set(HCLOCK_ENOMEM, "out of memory for %zu ping-pongs in the "
				               "tracker", c);
			t->v = nv;
			t->cap = c;
		}
	}
	t->v[t->n++] = (struct pp){exch, t1, t2, t3, t4};
	return 0;
}

/* SKaMPI's estimate of one ping-pong: Y - X at the midpoint of t1 and t4 */
static double pp_offset(const struct pp *q, int64_t *x)
{
	int64_t rtt = diff_ns(q->t4, q->t1);
	*x = q->t1 + rtt / 2;
	return ((double)diff_ns(q->t2, q->t1) + (double)diff_ns(q->t3, q->t4)) / 2;
}

static int64_t pp_rtt(const struct pp *q)
{
	return diff_ns(q->t4, q->t1) - diff_ns(q->t3, q->t2);
}

/* [first, end) of the exchange ending at end */
static size_t exch_start(const track *t, size_t end)
{
	size_t i = end - 1;
	while (i > t->head && t->v[i - 1].exch == t->v[end - 1].exch)
		i--;
	return i;
}

/* the fastest ping-pong of [a, b) */
static const struct pp *fastest(const track *t, size_t a, size_t b)
{
	const struct pp *best = &t->v[a];
	for (size_t i = a + 1; i < b; i++)
		if (pp_rtt(&t->v[i]) < pp_rtt(best))
			best = &t->v[i];
	return best;
}

/* An exchange's offset, ping-pongs [a, b) whose fastest is best: the mean of the midpoints
 * of those whose round trip is within CLOSE_RTT of best's, at the mean of their X times. */
#define CLOSE_RTT 1.25
static double exch_offset(const track *t, size_t a, size_t b, const struct pp *best, int64_t *x)
{
	double cap = CLOSE_RTT * (double)pp_rtt(best), sum = 0, dx = 0;
	int64_t x0 = 0, xi;
	pp_offset(best, &x0);
	int k = 0;
	for (size_t i = a; i < b; i++) {
		if ((double)pp_rtt(&t->v[i]) > cap)
			continue;
		sum += pp_offset(&t->v[i], &xi);
		dx += (double)diff_ns(xi, x0);
		k++;
	}
	*x = x0 + (int64_t)llround(dx / k);
	return sum / k;
}

int track_last_offset(const track *t, int64_t *x, double *off, double *excess_ns)
{
	if (t->n == t->head)
		return TRACK_EMPTY;
	size_t a = exch_start(t, t->n);
	const struct pp *last = fastest(t, a, t->n);
	*off = exch_offset(t, a, t->n, last, x);
	if (excess_ns)
		*excess_ns = (double)(pp_rtt(last) - pp_rtt(fastest(t, t->head, t->n))) / 2;
	return 0;
}

static size_t count_exchanges(const track *t)
{
	size_t k = 0;
	for (size_t i = t->head; i < t->n; i++)
		k += i == t->head || t->v[i].exch != t->v[i - 1].exch;
	return k;
}

/* drop the oldest k exchanges */
static void drop_exchanges(track *t, size_t k)
{
	while (k-- && t->head < t->n) {
		uint32_t e = t->v[t->head].exch;
		while (t->head < t->n && t->v[t->head].exch == e)
			t->head++;
	}
}

/* hulls of the window: HULL_LEARNER_*, or HCLOCK_ENOMEM or HCLOCK_EINVAL (hull_learner_add) */
static int fit_hulls(track *t, struct hull_learner_fit *hf)
{
	hull_learner_reset(t->h);
	for (size_t i = t->head; i < t->n; i++) {
		const struct pp *q = &t->v[i];
		int rc = hull_learner_add(t->h, q->t1, q->t2, q->t3, q->t4);
		if (rc)
			return rc;
	}
	return hull_learner_fit(t->h, hf);
}

/* An exchange whose fastest ping-pong took more than this many times the window's fastest
 * waited (a process preempted, a parent busy for milliseconds): its midpoint may be off by
 * half of that, so the regression leaves it out (the hulls keep its messages) */
#define SLOW_EXCHANGE 4.0

/* least squares through the offsets of the window's exchanges, those that did not wait (all
 * of them if fewer than two did not): LINREG_OK, LINREG_TOO_FEW with fewer than two
 * exchanges, or HCLOCK_ENOMEM. *se: the slope's
 * standard error (NAN with two points); *used: the points, left in gx, gy; *slow_ns: when
 * all of them were taken, the slowest one's fastest round trip (else 0), ns. */
static int regress(track *t, size_t nexch, struct lm *out, double *se, size_t *used,
                   double *slow_ns)
{
	if (nexch > t->gcap) {
		int64_t *gx = realloc(t->gx, nexch * sizeof(*gx));
		if (gx)
			t->gx = gx;
		double *gy = gx ? realloc(t->gy, nexch * sizeof(*gy)) : NULL;
		if (!gy)
			return err_set(HCLOCK_ENOMEM, "out of memory for %zu exchanges in the tracker",
			               nexch);
		t->gy = gy;
		t->gcap = nexch;
	}
	double cap = SLOW_EXCHANGE * (double)pp_rtt(fastest(t, t->head, t->n));
	size_t k = 0;
	*slow_ns = 0;
	for (int pass = 0; pass < 2 && k < 2; pass++) {
		k = 0;
		for (size_t a = t->head; a < t->n;) {
			size_t b = a;
			while (b < t->n && t->v[b].exch == t->v[a].exch)
				b++;
			const struct pp *q = fastest(t, a, b);
			if (pass || (double)pp_rtt(q) <= cap) {
				t->gy[k] = exch_offset(t, a, b, q, &t->gx[k]);
				k++;
				if (pass)
					*slow_ns = fmax(*slow_ns, (double)pp_rtt(q));
			}
			a = b;
		}
	}
	*used = k;
	if (k < 2)
		return LINREG_TOO_FEW;
	struct linreg_info info;
	int rc = linreg_fit_robust(t->gx, t->gy, k, out, &info);
	*se = info.slope_se;
	return rc;
}

/* The robust scatter (1.4826 MAD) of the first m regression points (left in gx, gy by
 * regress) about est, ns; NAN without memory or points. */
static double scatter(const track *t, size_t m, const struct lm *est)
{
	double *r = m ? malloc(m * sizeof(*r)) : NULL;
	if (!r)
		return NAN;
	for (size_t i = 0; i < m; i++)
		r[i] = fabs(t->gy[i] - lm_offset(est, t->gx[i]));
	double sd = stats_robust_sd(r, m);
	free(r);
	return sd;
}

/* The latest two exchanges' offsets (left in gx, gy by regress) both off the line by more
 * than step_ns, on one side; where answers may wait (p.waits), by more than step_ns plus
 * three times the window's robust residual scatter (1.4826 MAD of the others'), which keeps
 * the test quiet where the offsets are noisy by microseconds. */
static int stepped(track *t, size_t npts, const struct lm *est)
{
	if (!(t->p.step_ns > 0))
		return 0;
	double r1 = t->gy[npts - 1] - lm_offset(est, t->gx[npts - 1]);
	double r2 = t->gy[npts - 2] - lm_offset(est, t->gx[npts - 2]);
	if (!(fabs(r1) > t->p.step_ns && fabs(r2) > t->p.step_ns && (r1 > 0) == (r2 > 0)))
		return 0;
	if (!t->p.waits) /* answers at once: the residuals are the step's */
		return 1;
	double sd = scatter(t, npts - 2, est);
	if (isnan(sd))
		return 1; /* the test as it was without the scatter */
	double limit = t->p.step_ns + 3 * sd;
	return fabs(r1) > limit && fabs(r2) > limit;
}

/* The window's slope from its own estimate (slope se_w) and the caller's prior (slope
 * prior_se, both standard errors): their inverse-variance weighted mean. With two exchanges
 * (no residuals) the window's error is taken from its round trips: each offset is known
 * within half its round trip, a uniform error of rtt / sqrt(12) at either end of the span.
 * *w_prior: the prior's share of the weight (0 .. 1). */
static double weigh_slope(double s_w, double se_w, double s_p, double prior_se, double rtt_ns,
                          double span_ns, double *w_prior)
{
	*w_prior = 0;
	if (!(prior_se > 0) || !isfinite(prior_se))
		return s_w;
	if (!(se_w > 0))
		se_w = span_ns > 0 ? rtt_ns / sqrt(12.0) * sqrt(2.0) / span_ns : INFINITY;
	*w_prior = 1;
	if (!isfinite(se_w))
		return s_p;
	double ww = 1 / (se_w * se_w), wp = 1 / (prior_se * prior_se);
	*w_prior = wp / (ww + wp);
	return (ww * s_w + wp * s_p) / (ww + wp);
}

/* The estimate's offset at x_last from its own (the regression's points, npts of them, the
 * exchanges that did not wait, scatter about it by a robust sd, over the square root of
 * their number; with fewer than three, every ping-pong's midpoint, over the square root of
 * the nexch exchanges; or ise_ns, center_at_slope's, when smaller) and the prior line's (its
 * offset's standard error, grown by its slope's over the time since): their inverse-variance
 * weighted mean, the line moved to it. The one-shot sync's line, known to a few hundred ns, holds the clock while the
 * window's exchanges are few and skewed; a window of good exchanges (a few ns) outweighs it
 * at once. Returns whether the prior weighed in (it has an offset standard error). */
static int weigh_offset(const track *t, struct lm *est, const struct track_prior *pr,
                        int64_t x_last, size_t nexch, size_t npts, double ise_ns)
{
	double dt = (double)diff_ns(x_last, pr->line.x0_ns);
	double sp = hypot(pr->offset_se_ns, pr->slope_se * dt);
	if (!(sp >= 0) || !isfinite(sp))
		return 0;
	int pts = npts >= 3; /* the regression's points, else every ping-pong */
	size_t n = pts ? npts : t->n - t->head;
	double *r = malloc(n * sizeof(*r));
	if (!r)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int64_t x = pts ? t->gx[i] : 0;
		double off = pts ? t->gy[i] : pp_offset(&t->v[t->head + i], &x);
		r[i] = fabs(off - lm_offset(est, x));
	}
	double sw = stats_robust_sd(r, n) / sqrt((double)(pts ? npts : nexch));
	free(r);
	if (ise_ns < sw) /* the middle of what the messages allow (center_at_slope) */
		sw = ise_ns;
	/* never more certain than the read error allows */
	sw = fmax(sw, fmax(t->p.slack_ns, 1.0));
	double e = lm_offset(est, x_last), p = lm_offset(&pr->line, x_last);
	double ww = 1 / (sw * sw), wp = sp > 0 ? 1 / (sp * sp) : INFINITY;
	double m = isinf(wp) ? p : (ww * e + wp * p) / (ww + wp);
	est->intercept_ns += m - e;
	return 1;
}

/* Whether the window's hulls exclude the prior line by more than 3 of its standard errors
 * (slope, offset at x_last): a rate change the prior does not know of. */
static int prior_excluded(const track *t, const struct hull_learner_fit *hf,
                          const struct track_prior *pr, int64_t x_last)
{
	double lo, hi;
	if (hull_learner_eval(t->h, x_last, NULL, &lo, &hi) != HULL_LEARNER_OK)
		return 0;
	double ss = pr->slope_se, dt = (double)diff_ns(x_last, pr->line.x0_ns);
	double so = hypot(pr->offset_se_ns, ss * dt), p = lm_offset(&pr->line, x_last);
	return pr->line.slope < hf->cmin.slope - 3 * ss || pr->line.slope > hf->cmax.slope + 3 * ss ||
	       p < lo - 3 * so || p > hi + 3 * so;
}

/* For lines of slope est->slope: the intercepts (at est->x0_ns) every message of the window
 * allows, [*lo, *hi] (each up message an upper bound, each down message a lower one, relaxed
 * by the read slack); *lo > *hi when they contradict each other at that slope. */
static void slope_interval(const track *t, const struct lm *est, double *lo, double *hi)
{
	double s = est->slope, e = t->p.slack_ns;
	*lo = -INFINITY;
	*hi = INFINITY;
	for (size_t i = t->head; i < t->n; i++) {
		const struct pp *q = &t->v[i];
		*hi = fmin(*hi, (double)diff_ns(q->t2, q->t1) + e - s * (double)diff_ns(q->t1, est->x0_ns));
		*lo = fmax(*lo, (double)diff_ns(q->t3, q->t4) - e - s * (double)diff_ns(q->t4, est->x0_ns));
	}
}

/* The true offset at x_a from the messages of one exchange, ping-pongs [a, b), each relaxed
 * by the read slack and carried to x_a at any rate within TRACK_MAX_RATE (not the
 * estimate's: under stalled exchanges its slope can be far off, and an exchange can last
 * milliseconds); *rtt: its fastest round trip. */
static void exch_interval(const track *t, size_t a, size_t b, int64_t x_a, double *lo,
                          double *hi, double *rtt)
{
	double S = TRACK_MAX_RATE, e = t->p.slack_ns;
	*lo = -INFINITY;
	*hi = INFINITY;
	*rtt = INFINITY;
	for (size_t i = a; i < b; i++) {
		const struct pp *q = &t->v[i];
		double up_dx = (double)diff_ns(x_a, q->t1), down_dx = (double)diff_ns(x_a, q->t4);
		/* up: Y(t1) <= t2, so offset(t1) <= t2 - t1 */
		double u = (double)diff_ns(q->t2, q->t1) + e + S * fabs(up_dx);
		/* down: Y(t4) >= t3, so offset(t4) >= t3 - t4 */
		double d = (double)diff_ns(q->t3, q->t4) - e - S * fabs(down_dx);
		*hi = fmin(*hi, u);
		*lo = fmax(*lo, d);
		*rtt = fmin(*rtt, (double)pp_rtt(q));
	}
}

/* The bound of est at rates [smin, smax] from the latest exchange that did not wait (its
 * fastest ping-pong within SLOW_EXCHANGE times the window's fastest), anchored at its
 * fastest ping-pong, when the latest exchange itself waited and that one proves more at the
 * latest exchange's time x_a than *bd (the latest's bound) does; est must lie in its
 * interval. A stalled exchange's messages allow an interval as wide as its stall
 * (milliseconds); the clean one's, carried over the time since at the same rates, is
 * strict under the same assumption from its own time on. */
static void bound_from_clean(const track *t, const struct lm *est, double smin, double smax,
                             int64_t x_a, struct bound *bd)
{
	double cap = SLOW_EXCHANGE * (double)pp_rtt(fastest(t, t->head, t->n));
	size_t a = exch_start(t, t->n);
	if (!((double)pp_rtt(fastest(t, a, t->n)) > cap))
		return; /* the latest did not wait */
	while (a > t->head) {
		size_t b = a;
		a = exch_start(t, b);
		const struct pp *q = fastest(t, a, b);
		if ((double)pp_rtt(q) > cap)
			continue;
		double lo, hi, rtt, e = lm_offset(est, q->t4);
		exch_interval(t, a, b, q->t4, &lo, &hi, &rtt);
		if (!(lo <= e && e <= hi))
			return;
		struct bound c = bound_from_offset_interval(est, q->t4, lo, hi, smin, smax);
		int64_t y = x_a + (int64_t)llround(lm_offset(est, x_a));
		if (bound_known(&c) &&
		    (!bound_known(bd) || bound_half_width(&c, y) < bound_half_width(bd, y)))
			*bd = c;
		return;
	}
}

/* Whether the window's messages show answers that waited (a parent driven by a busy
 * program's own MPI calls notices a ping up to tens of us late, the child its pong too):
 * the hulls' widest gap (gap_ns, at their best slope) is under 0.8 of the window's fastest
 * round trip, where with symmetric delays it is about that round trip, and the midpoints of
 * the ping-pongs of one exchange (microseconds apart) scatter about their exchange's median
 * by more than a tenth of it (robust: 1.4826 MAD over the window), where with symmetric
 * delays they scatter by a few per cent. A frequency step narrows the gap too, but leaves
 * the ping-pongs of one exchange agreeing. The midpoints are then skewed by microseconds
 * and the hulls are the better estimate. */
static int waiting(const track *t, double gap_ns)
{
	double rtt_min = (double)pp_rtt(fastest(t, t->head, t->n));
	if (!(gap_ns < rtt_min * 0.8))
		return 0;
	size_t n = t->n - t->head, k = 0;
	double *r = malloc(2 * n * sizeof(*r)), *m = r + n;
	if (!r)
		return 0;
	for (size_t a = t->head; a < t->n;) {
		size_t b = a;
		int64_t x;
		while (b < t->n && t->v[b].exch == t->v[a].exch)
			b++;
		for (size_t i = a; i < b; i++)
			m[i - a] = pp_offset(&t->v[i], &x);
		double med = stats_middle(m, b - a);
		for (size_t i = a; i < b; i++)
			r[k++] = fabs(pp_offset(&t->v[i], &x) - med);
		a = b;
	}
	double scatter = stats_robust_sd(r, k);
	free(r);
	return scatter > rtt_min * 0.1;
}

/* est's intercept moved to the middle of what the window's messages allow at its slope;
 * returns that intercept's standard error (the interval's width over sqrt 12), NAN if no
 * line of that slope fits (est unchanged). */
static double center_at_slope(const track *t, struct lm *est)
{
	double ilo, ihi;
	slope_interval(t, est, &ilo, &ihi);
	if (ilo > ihi)
		return NAN;
	est->intercept_ns = (ilo + ihi) / 2;
	return (ihi - ilo) / sqrt(12.0);
}

/* The offset of the latest exchange that did not wait (as regress judges; the latest if
 * none), at *x. */
static void last_clean_offset(const track *t, int64_t *x, double *off)
{
	double cap = SLOW_EXCHANGE * (double)pp_rtt(fastest(t, t->head, t->n));
	for (size_t b = t->n; b > t->head;) {
		size_t a = exch_start(t, b);
		const struct pp *q = fastest(t, a, b);
		if ((double)pp_rtt(q) <= cap) {
			*off = exch_offset(t, a, b, q, x);
			return;
		}
		b = a;
	}
	track_last_offset(t, x, off, NULL);
}

int track_fit(track *t, const struct track_prior *pr, struct track_fit *f)
{
	const struct lm *prior = pr ? &pr->line : NULL;
	double prior_se = pr ? pr->slope_se : INFINITY;
	memset(f, 0, sizeof(*f));
	f->bd = bound_unknown();
	f->status = TRACK_EMPTY;
	if (t->n == t->head)
		return f->status;
	int64_t x_last = t->v[t->n - 1].t4;
	while (t->head < t->n && diff_ns(x_last, t->v[t->head].t4) > t->p.window_ns)
		t->head++;
	size_t nexch = count_exchanges(t);
	/* shrink until the hulls separate (or one exchange is left), and while the latest
	 * exchanges show a step the hulls do not see yet */
	struct hull_learner_fit hf;
	struct lm est;
	int hs, rc;
	double se = NAN, ise = NAN; /* the window's slope and intercept standard errors */
	size_t npts = 0;            /* the regression's points (exchanges that did not wait) */
	for (;;) {
		if ((hs = fit_hulls(t, &hf)) < 0)
			return hs;
		if (hs == HULL_LEARNER_INTERSECT && nexch > 1) {
			size_t k = nexch / 2;
			drop_exchanges(t, k);
			f->dropped += k;
			nexch -= k;
			continue;
		}
		double slow = 0;
		rc = nexch >= 2 ? regress(t, nexch, &est, &se, &npts, &slow) : LINREG_TOO_FEW;
		if (rc < 0)
			return rc;
		/* one exchange that did not wait and others that did (a stall, each off by up to
		 * half its round trip): their line's slope is known to the slowest's round trip over
		 * the window; worse than any rate two clocks can have (a stall of milliseconds, not
		 * the jitter of a busy machine, whose line still learns a changed rate: against the
		 * prior's half-width, ppm, the rule fired on microseconds of jitter too), it is one
		 * exchange. Not where answers wait (waits): there most exchanges are slow by tens of
		 * us, not stalled, their line learns a changed rate that the one-shot prior does not
		 * know (3.8 ppm after a step: 13 us in 3 s), and the prior holds the clock by its own
		 * rules */
		if (!rc && slow > 0 && pr && !t->p.waits &&
		    slow / fmax((double)diff_ns(x_last, t->v[t->head].t1), 1) > TRACK_MAX_RATE)
			rc = LINREG_TOO_FEW;
		if (rc || npts < 4 || !stepped(t, npts, &est))
			break;
		size_t k = nexch / 2;
		drop_exchanges(t, k);
		f->dropped += k;
		nexch -= k;
	}
	f->scatter_ns = !rc && npts >= 4 ? scatter(t, npts, &est) : NAN;
	if (pr && hs == HULL_LEARNER_OK && prior_excluded(t, &hf, pr, x_last)) {
		f->prior_rejected = 1; /* only its slope, for one exchange */
		prior_se = INFINITY;
		pr = NULL;
	}
	f->nexchanges = nexch;
	f->x_last_ns = x_last;
	f->span_ns = (double)diff_ns(x_last, t->v[t->head].t1);
	if (rc) { /* one exchange (that did not wait): the prior's slope through its offset */
		int64_t x;
		double off;
		last_clean_offset(t, &x, &off);
		est = (struct lm){x, off, prior ? prior->slope : 0};
		f->status = TRACK_PRIOR;
		if (t->p.waits && hs == HULL_LEARNER_OK && waiting(t, hf.gap_ns))
			ise = center_at_slope(t, &est);
	} else {
		f->status = f->dropped ? TRACK_SHRUNK : TRACK_OK;
		double rtt_min = (double)pp_rtt(fastest(t, t->head, t->n)), w_prior = 0;
		/* answers that waited: the hulls' widest-gap line, its slope known to within the
		 * range they leave valid */
		int late = t->p.waits && hs == HULL_LEARNER_OK && waiting(t, hf.gap_ns);
		if (late) {
			est = hf.est;
			se = hf.slope_width / sqrt(12.0);
		}
		if (prior)
			est.slope = weigh_slope(est.slope, se, prior->slope, prior_se, rtt_min,
			                        f->span_ns, &w_prior);
		if (late)
			ise = center_at_slope(t, &est);
		if (hs == HULL_LEARNER_OK) {
			double lo, hi, ilo, ihi;
			hull_learner_eval(t->h, x_last, NULL, &lo, &hi);
			double e = lm_offset(&est, x_last);
			int valid = est.slope >= hf.cmin.slope && est.slope <= hf.cmax.slope;
			/* a slope the prior led to, valid: the intercept moved into what the
			 * messages allow at it; otherwise the hulls' own line */
			if (valid && w_prior > 0.5 && (e < lo || e > hi)) {
				slope_interval(t, &est, &ilo, &ihi);
				if (ilo <= ihi)
					est.intercept_ns = fmin(fmax(est.intercept_ns, ilo), ihi);
				e = lm_offset(&est, x_last);
			}
			if (!valid || e < lo || e > hi)
				est = hf.est;
		}
	}
	double hlo, hhi; /* moved by the prior: still a line the window allows at its end */
	if (pr && weigh_offset(t, &est, pr, x_last, nexch, rc ? 0 : npts, ise) &&
	    hs == HULL_LEARNER_OK &&
	    hull_learner_eval(t->h, x_last, NULL, &hlo, &hhi) == HULL_LEARNER_OK) {
		double e = lm_offset(&est, x_last);
		est.intercept_ns += fmin(fmax(e, hlo), hhi) - e;
	}
	/* anchored at the latest exchange's fastest ping-pong, whose own messages pin it */
	int64_t x_a = fastest(t, exch_start(t, t->n), t->n)->t4;
	double lo, hi;
	exch_interval(t, exch_start(t, t->n), t->n, x_a, &lo, &hi, &f->rtt_ns);
	/* a line the latest exchange proves wrong is moved into its interval */
	double e = lm_offset(&est, x_a);
	if (lo <= hi && (e < lo || e > hi))
		est.intercept_ns += (e < lo ? lo : hi) - e;
	f->est = est;
	/* the rates the bound allows from there, widened by the drift allowance: the estimate's
	 * slope and every slope the window's hulls leave valid; with one exchange, the slopes
	 * both the prior's strict range and the hulls allow (either alone when the other is
	 * unknown, the hulls' when the two miss each other: the prior's was wrong) */
	double smin = est.slope, smax = est.slope;
	if (f->status == TRACK_PRIOR) {
		double hw = pr && pr->slope_hw >= 0 ? pr->slope_hw : INFINITY;
		smin = est.slope - hw;
		smax = est.slope + hw;
		if (hs == HULL_LEARNER_OK) {
			double a = fmax(smin, hf.cmin.slope), b = fmin(smax, hf.cmax.slope);
			smin = a <= b ? a : hf.cmin.slope;
			smax = a <= b ? b : hf.cmax.slope;
		}
	} else if (hs == HULL_LEARNER_OK) {
		smin = fmin(smin, hf.cmin.slope);
		smax = fmax(smax, hf.cmax.slope);
	}
	smin -= t->p.drift;
	smax += t->p.drift;
	if (lo <= hi)
		f->bd = bound_from_offset_interval(&est, x_a, lo, hi, smin, smax);
	bound_from_clean(t, &est, smin, smax, x_a, &f->bd);
	return f->status;
}
