/*
 * servo_track.c - the continuous clock's servo on a sliding-window tracker (cont/servo.h,
 * numerics/track.h): the window's hulls and regression give this base against the
 * parent's; composed with the parent's model and bound they give the target.
 *
 * Driven by the program (late_answers), answers wait for its next MPI call, and three rules
 * keep such exchanges from moving the clock by their skew: the one-shot sync's line (this
 * base against the parent's, from the two one-shot models) is the tracker's prior (its
 * slope's standard error prior_slope_se, growing by PRIOR_WANDER per second, its offset's a
 * third of the one-shot bound's half-width; dropped once the window's hulls exclude it: a
 * change of rate); the tracker reads waiting answers through its hulls (track_params.waits);
 * a new target is kept inside the current one's bound (keep_inside_old: both strict under
 * the same drift assumption). A thread answers at once and uses the third only: with 4
 * ranks on 2 cores the three, the third in an earlier form, made the 30-minute scenario B
 * worse (p99.9 2.3 us against 135 ns; docs/continuous.md), while without the third a
 * thread stalled through an exchange (every ping late by a millisecond) moved the clock by
 * half of it.
 *
 * Adaptive period: the offset the old line projects for the new exchange is compared with
 * the one measured; beyond `threshold`, or beyond three times the link's noise when that is
 * larger (the median over the last 16 fits of the window's scatter about its line, from
 * windows of 8 exchanges or more, not after a deviation beyond the limit: a jittery link's,
 * TCP's, is 100-200 ns and halved the period on it; the median, and no fit after news,
 * because a frequency step bends the next fits' residuals), the period halves (down to
 * min), after `streak` exchanges within it it doubles (up to max). The tracker's residual step test
 * takes the same limit, and a fit whose window shrank (the hulls intersected, or that test
 * fired: the rates changed) halves the period too, which a step within a noisy link's
 * limit still does once it has bent the offsets by a round trip. And the period halves
 * while the noise over the square root of the window's exchanges (what their line's offset
 * is known to) exceeds `threshold`: a link noisy by microseconds gets the exchanges it
 * needs. The comparison is made by the child, which
 * holds both numbers (in Liao, Martonosi & Clark the reference compares; the same test, one
 * message less).
 */
#include <math.h>
#include <stdlib.h>

#include "cont/servo.h"
#include "hclock_api.h"
#include "numerics/stats.h"
#include "numerics/track.h"
#include "util/err.h"
#include "util/fault.h"

#define PRIOR_WANDER 1e-8 /* how fast the one-shot slope's error grows, 1/s */
#define NOISE_FITS 16     /* the link's noise: the median scatter of the last 16 fits (a
                             frequency step bends the residuals of the fits after it, which
                             must not raise the threshold that is to see it), from 8 on */
#define NOISE_MIN_EXCH 8  /* fits of fewer exchanges do not count */

struct servo_track {
	struct servo s;
	struct servo_cfg cfg;
	track *tr;
	struct lm L;          /* this base -> parent's base (offset model), once have_L */
	int have_L;
	struct lm S0;         /* the one-shot line of this base against the parent's (set at the
	                         first exchange), the tracker's prior */
	double s0_se;         /* its slope's standard error (INFINITY: dropped) */
	double i0_se;         /* its offset's at S0.x0_ns, ns */
	double s0_hw, L_hw;   /* strict half-widths of S0's and L's slopes (INFINITY: unknown):
	                         what a one-exchange window's bound rests on */
	struct lm tp;         /* the parent's target and bound, from the latest sample */
	struct bound bp;
	int sampled;          /* samples fed since the last finish */
	int64_t period_ns;
	int streak;
	double scat[NOISE_FITS]; /* the latest fits' scatter about their lines, ns */
	int nscat;            /* fits noted (scat is a ring) */
	double noise_ns;      /* the link's noise: their median (0: not known), ns */
	size_t nwin;          /* exchanges in the latest fit's window */
	struct servo_stats st;
};

#define TRACK(p) container_of(p, struct servo_track, s)

static void st_destroy(struct servo *s)
{
	struct servo_track *t = TRACK(s);
	track_destroy(t->tr);
	free(t);
}

static int st_sample(struct servo *s, uint32_t exch, int64_t t1, int64_t t2, int64_t t3,
                     int64_t t4, const struct lm *tp, const struct bound *bp)
{
	struct servo_track *t = TRACK(s);
	t->tp = *tp;
	t->bp = *bp;
	int rc = track_add(t->tr, exch, t1, t2, t3, t4);
	t->sampled += !rc;
	return rc;
}

static void note_noise(struct servo_track *t, double scatter_ns)
{
	double v[NOISE_FITS];
	t->scat[t->nscat++ % NOISE_FITS] = scatter_ns;
	int n = t->nscat < NOISE_FITS ? t->nscat : NOISE_FITS;
	if (n < NOISE_FITS / 2)
		return; /* too few to tell: the threshold alone */
	for (int i = 0; i < n; i++)
		v[i] = t->scat[i];
	t->noise_ns = t->st.noise_ns = stats_middle(v, (size_t)n);
}

/* the least deviation from the line that is news, ns: the threshold, or three times the
 * link's noise when that is larger */
static double significant(const struct servo_track *t)
{
	return fmax(t->cfg.threshold_ns, 3 * t->noise_ns);
}

static void halve(struct servo_track *t)
{
	int64_t lo = t->cfg.min_period_ns;
	if (t->period_ns > lo)
		t->st.halvings++;
	t->period_ns = t->period_ns / 2 < lo ? lo : t->period_ns / 2;
	t->streak = 0;
}

/* the period after an exchange whose projection was dev_ns off; whether that was news
 * (not when only the window's exchanges were too few to average the noise down to the
 * threshold, which halves the period too: the noise must still be learned then, or a link
 * that calms down would keep the shortest period) */
static int adapt(struct servo_track *t, double dev_ns)
{
	int news = dev_ns > significant(t);
	int few = t->nwin > 0 && t->noise_ns / sqrt((double)t->nwin) > t->cfg.threshold_ns;
	int64_t hi = t->cfg.max_period_ns;
	t->st.last_dev_ns = dev_ns;
	if (news || few) {
		halve(t);
	} else if (++t->streak >= t->cfg.streak) {
		if (t->period_ns < hi)
			t->st.doublings++;
		t->period_ns = t->period_ns * 2 > hi ? hi : t->period_ns * 2;
		t->streak = 0;
	}
	return news;
}

/* Both the clock's current target and the new one have strict bounds under the same drift
 * assumption (the one-shot's, before the first exchange, widened by the drift allowance
 * too), so the truth lies in both, and the clock may take either, or the new estimate
 * moved into their intersection:
 *   - the new estimate and its bound as they are, where the estimate lies inside the old
 *     bound;
 *   - the new estimate moved to the nearest point of the intersection (the old bound
 *     carried to now at its rate), the bound the intersection, both sides widening at the
 *     faster of the rates of the bounds that make them (the old one's plus how fast the
 *     two estimates part);
 *   - the old target and bound, kept.
 * Either of the first two replaces the old only where its bound is narrower both halfway
 * through the next period and two longest periods on (under load the next exchange may
 * come late); where both do, the one narrower two longest periods on (as it is on a tie).
 * Under load a window through stalled exchanges had a line 2 % steep and a bound as fast,
 * narrow at the exchange and milliseconds wide a second later; taking whichever was the
 * narrower at the exchange, or halfway through the period, left errors of 13 and 55 ms
 * inside such bounds beside two busy processes. An exchange that waited on a busy program
 * (a late answer, a skewed midpoint) or through a stall cannot then move the clock further
 * than what it knew before allows. Disjoint bounds (the assumption broke: a step of the
 * rates) leave the new estimate as it is. */
static void keep_inside_old(struct servo_track *t, const struct lm *ot, const struct bound *ob0,
                            int first, int64_t x, struct lm *target, struct bound *bd)
{
	if (!bound_known(ob0) || !bound_known(bd))
		return;
	/* the one-shot's bound (before the first exchange) holds while the rates do: under the
	 * drift assumption it widens by the allowance too, from its own anchor */
	struct bound obd = *ob0;
	if (first)
		obd.rate += t->cfg.drift;
	const struct bound *ob = &obd;
	int64_t yo = lm_map(ot, x), yn = lm_map(target, x);
	double olo, ohi, nlo, nhi;
	bound_at(ob, yo, &olo, &ohi);
	bound_at(bd, yn, &nlo, &nhi);
	/* the intersection relative to yn, and which bound makes each side */
	double d = (double)diff_ns(yo, yn);
	int old_lo = d + olo >= nlo, old_hi = d + ohi <= nhi;
	double lo = fmax(d + olo, nlo), hi = fmin(d + ohi, nhi);
	if (lo > hi)
		return;
	double delta = lo > 0 ? lo : hi < 0 ? hi : 0;
	double r_old = ob->rate + fabs(target->slope - ot->slope);
	double rate = fmax(old_lo ? r_old : bd->rate, old_hi ? r_old : bd->rate);
	/* the widths halfway through the next period (h1) and two longest periods on (h2:
	 * under load the next exchange may come late): kept, as it is, moved in; a choice
	 * replaces the kept one only where it is narrower at both */
	double h1 = 0.5 * (double)t->period_ns, h2 = 2 * (double)t->cfg.max_period_ns;
	double wo1 = ohi - olo + 2 * ob->rate * h1, wo2 = ohi - olo + 2 * ob->rate * h2;
	double wn1 = nhi - nlo + 2 * bd->rate * h1, wn2 = nhi - nlo + 2 * bd->rate * h2;
	double wi1 = hi - lo + 2 * rate * h1, wi2 = hi - lo + 2 * rate * h2;
	int as_is = delta == 0 && wn1 < wo1 && wn2 < wo2;
	int moved = wi1 < wo1 && wi2 < wo2;
	if (as_is && (!moved || wn2 <= wi2))
		return;
	if (!moved) {
		*target = *ot;
		*bd = *ob;
		t->st.kept_inside++;
		return;
	}
	target->intercept_ns += delta;
	*bd = (struct bound){yn + (int64_t)llround(delta), lo - delta, hi - delta, rate};
	t->st.kept_inside += delta != 0;
}

static int st_finish(struct servo *s, const struct lm *cur, const struct bound *cur_b,
                     struct servo_out *out)
{
	struct servo_track *t = TRACK(s);
	int64_t x = 0;
	double off;
	struct track_fit f;
	int first = !t->have_L; /* cur_b is still the one-shot's */
	if (!t->sampled)
		return 1;
	t->sampled = 0;
	/* the projection's error beyond what this exchange's own queueing explains: on a busy
	 * machine round trips stretch and a fixed threshold halved the period on noise */
	double excess;
	int news = 0;
	if (!track_last_offset(t->tr, &x, &off, &excess) && t->have_L)
		news = adapt(t, fmax(0, fabs(lm_offset(&t->L, x) - off) - excess));
	if (!t->have_L) { /* the one-shot model relative to the parent's: the tracker's prior */
		t->S0 = (struct lm){x, (double)diff_ns(lm_unmap(&t->tp, lm_map(cur, x)), x),
		                    (1 + cur->slope) / (1 + t->tp.slope) - 1};
		t->i0_se = bound_known(cur_b) ? bound_half_width(cur_b, lm_map(cur, x)) / 3
		                              : INFINITY;
		/* my one-shot clock's slope error against the reference's is within its bound's
		 * rate, the parent's clock's within the parent's: S0's within the sum */
		t->s0_hw = bound_known(cur_b) && bound_known(&t->bp) ? cur_b->rate + t->bp.rate
		                                                      : INFINITY;
	}
	double dt = (double)diff_ns(x, t->S0.x0_ns) * 1e-9;
	struct track_prior prior = {t->S0, hypot(t->s0_se, PRIOR_WANDER * dt), t->i0_se,
	                            t->s0_hw};
	/* dropped, or a thread drives: the latest line's slope for a lone exchange only */
	if (!isfinite(t->s0_se) || !t->cfg.late_answers)
		prior = t->have_L ? (struct track_prior){t->L, INFINITY, INFINITY, t->L_hw}
		                  : (struct track_prior){t->S0, INFINITY, INFINITY, t->s0_hw};
	if (!t->cfg.late_answers) /* (late answers: the tracker adds the window's scatter) */
		track_set_step(t->tr, significant(t));
	int st = track_fit(t->tr, &prior, &f);
	if (st < 0) /* no memory, or an exchange out of the tracker's range: its line says */
		return st;
	t->st.shrinks += st == TRACK_SHRUNK;
	t->nwin = f.nexchanges;
	if (st == TRACK_SHRUNK && !news) /* the tracker saw the rates change: news too */
		halve(t);
	/* the link's noise from windows of enough exchanges, and not from a fit after news (a
	 * step bends its residuals) */
	if (!isnan(f.scatter_ns) && f.nexchanges >= NOISE_MIN_EXCH && !news)
		note_noise(t, f.scatter_ns);
	t->st.rtt_ns = f.rtt_ns;
	if (f.prior_rejected) /* a change of rate: the one-shot line no longer holds */
		t->s0_se = t->i0_se = INFINITY;
	t->L = f.est;
	t->L_hw = bound_known(&f.bd) ? f.bd.rate * (1 + f.est.slope) : INFINITY;
	t->have_L = 1;
	out->target = lm_compose(&t->tp, &t->L);
	out->bound = bound_compose(&f.bd, &t->tp, &t->bp);
	out->x_ns = f.x_last_ns;
	keep_inside_old(t, cur, cur_b, first, f.x_last_ns, &out->target, &out->bound);
	return 0;
}

/* a cut exchange: its samples stay in the window, nothing to finish */
static void st_lost(struct servo *s)
{
	TRACK(s)->sampled = 0;
}

static int64_t st_period(const struct servo *s)
{
	return TRACK(s)->period_ns;
}

static void st_stats(const struct servo *s, struct servo_stats *st)
{
	*st = TRACK(s)->st;
}

static const struct servo_ops track_ops = {
	.destroy = st_destroy, .sample = st_sample, .finish = st_finish, .lost = st_lost, .period_ns = st_period,
	.stats = st_stats,
};

int servo_track_create(const struct servo_cfg *cfg, struct servo **out)
{
	*out = NULL;
	if (!(cfg->window_ns > 0) || !(cfg->min_period_ns > 0) ||
	    cfg->min_period_ns > cfg->max_period_ns || cfg->streak < 1 || !(cfg->drift >= 0) ||
	    !(cfg->read_err_ns >= 0) || !(cfg->prior_slope_se > 0))
		return err_set(HCLOCK_EINVAL, "servo: a window > 0, 0 < min period <= max period, "
		               "streak >= 1, drift >= 0, read error >= 0 and a prior slope error > 0 "
		               "are needed");
	struct servo_track *t = fault_calloc(1, sizeof(*t));
	struct track_params tp = {cfg->window_ns, cfg->read_err_ns, cfg->drift, cfg->threshold_ns,
	                          cfg->late_answers};
	if (!t || !(t->tr = track_create(&tp))) {
		free(t);
		return err_set(HCLOCK_ENOMEM, "out of memory");
	}
	t->s.ops = &track_ops;
	t->cfg = *cfg;
	t->s0_se = cfg->prior_slope_se;
	t->s0_hw = t->L_hw = INFINITY;
	t->tp = (struct lm){0, 0, 0};
	t->bp = bound_unknown();
	t->period_ns = cfg->min_period_ns;
	*out = &t->s;
	return 0;
}
