/*
 * learn.c - LEARN_CLOCK_MODEL (Hunold & Carpen-Amarie, Alg. 2), which the model-learning
 * algorithms (hca3, hca2, hca, jk) share (learn.h; their arguments: learn_spec.c): NFIT
 * offset measurements, a robust linear fit of offset against local time; or, with "hull" in
 * the offset slot, every ping-pong of the NFIT measurements (and of ri's extra one) also fed
 * to convex hulls (numerics/hull_learner.h): the same regression when the hulls allow it,
 * else their center line, with a strict bound either way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "numerics/stall.h"
#include "numerics/stats.h"
#include "sync/learn.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

/* The model from the fit points; an offset alone (the median, at the last point) when the
 * points are all at one instant (coarse clock) or give a slope no clock has (stalled
 * exchanges). A slope the points cannot pin down is shrunk toward 0 by its standard error
 * (lm_shrink_slope, pivoting at the points' mean time), not dropped: dropping a slope of 2-3
 * standard errors missed by its whole value, and shrinking halves that worst case while a
 * zero slope stays within about half a standard error (docs/choices.md).
 * Before the fit, the points made through a stall (numerics/stall.h: a round trip far above
 * the smallest of the model's points) are left out; each is off by up to half its round
 * trip, and a few of them tilt the slope beyond what the fit's outlier rejection can see
 * (its first line is the tilted one). Fewer than 3 clean: the fit takes all of them.
 * paper: ordinary least squares through all points, as Alg. 2 does, nothing else.
 * *kp says what the line rests on. */
struct kept {
	int clean;             /* points whose round trip was not a stall */
	double floor_ns;       /* the fastest point's round trip, ns */
	double slowest_ns;     /* the slowest point's, ns */
	double kept_rtt_max_ns; /* the slowest of the points the line went through, ns */
	double span_ns;         /* their span, first to last (local ns) */
};

static void fit(const int64_t *x, const double *y, const double *rtt, int n, int paper,
                int64_t *xk, double *yk, struct lm *lm, struct kept *kp)
{
	double f = stall_floor(rtt, (size_t)n);
	*kp = (struct kept){.floor_ns = f};
	for (int i = 0; i < n; i++) {
		int clean = !stall_judge(rtt[i], f);
		kp->clean += clean;
		kp->slowest_ns = fmax(kp->slowest_ns, rtt[i]);
		if (clean || paper)
			kp->kept_rtt_max_ns = fmax(kp->kept_rtt_max_ns, rtt[i]);
	}
	if (paper) {
		kp->span_ns = n > 0 ? (double)diff_ns(x[n - 1], x[0]) : 0;
		if (linreg_fit(x, y, (size_t)n, lm)) {
			lm->x0_ns = x[n - 1];
			lm->intercept_ns = y[n - 1];
			lm->slope = 0;
		}
		return;
	}
	size_t k = stall_keep(x, y, rtt, (size_t)n, xk, yk);
	if (k < 3) {
		memcpy(xk, x, (size_t)n * sizeof(*x));
		memcpy(yk, y, (size_t)n * sizeof(*y));
		k = (size_t)n;
		kp->kept_rtt_max_ns = kp->slowest_ns;
	}
	n = (int)k;
	kp->span_ns = n > 0 ? (double)diff_ns(xk[n - 1], xk[0]) : 0;
	struct linreg_info info;
	if (linreg_fit_robust(xk, yk, (size_t)n, lm, &info) || fabs(lm->slope) > MAX_PLAUSIBLE_SLOPE) {
		struct stats_summary st;
		lm->x0_ns = xk[n - 1];
		lm->intercept_ns = stats_summarize(yk, (size_t)n, &st) ? yk[n - 1] : st.median;
		lm->slope = 0;
		return;
	}
	lm_shrink_slope(lm, info.slope_se);
}

/* The hull learner's hello, from the reference before the exchanges: the bound of its clock
 * (composed by the client along the tree) and its read error (the learner's slack). Five
 * int64 messages over the link, doubles as their bits. */
#define HELLO_N 5

static void send_hello(struct pp_link *l, hclock_clock *clk)
{
	struct bound b = clk->bound;
	double e = clock_read_error_ns(clk);
	int64_t v[HELLO_N] = {b.at_ns, 0, 0, 0, 0};
	memcpy(&v[1], &b.lo_ns, 8);
	memcpy(&v[2], &b.hi_ns, 8);
	memcpy(&v[3], &b.rate, 8);
	memcpy(&v[4], &e, 8);
	for (int i = 0; i < HELLO_N; i++)
		pp_send(l, v[i], l->client);
}

static void recv_hello(struct pp_link *l, struct bound *b, double *read_error_ns)
{
	int64_t v[HELLO_N];
	for (int i = 0; i < HELLO_N; i++)
		v[i] = pp_recv(l, l->ref);
	b->at_ns = v[0];
	memcpy(&b->lo_ns, &v[1], 8);
	memcpy(&b->hi_ns, &v[2], 8);
	memcpy(&b->rate, &v[3], 8);
	memcpy(read_error_ns, &v[4], 8);
	if (l->rc || !bound_known(b))
		*b = bound_unknown();
	if (l->rc || !(*read_error_ns >= 0 && *read_error_ns < 1e9))
		*read_error_ns = 1e9; /* never used: the link failed or the peer is broken */
}

/* After fit point i (0-based) of a model with a time limit: whether another follows. The
 * client decides (the next point, at its pace, would end within the limit, by the mean point
 * so far: the longest, a stall of other jobs, would cut the round's end though the points
 * after a stall catch up on the schedule, and leave the stall's points the slope's leverage)
 * and tells the reference; without a limit, or after the last point, 1 or 0 with no
 * message. */
static int more_points(const struct learner *L, struct pp_link *l, int i, int64_t t_start,
                       int64_t next_ns, int64_t point_ns)
{
	if (i + 1 >= L->nfit)
		return 0;
	if (!(L->limit_ns > 0))
		return 1;
	if (l->me == l->ref)
		return pp_recv(l, l->client) != 0;
	int more = i + 1 < LEARN_MIN_NFIT ||
	           next_ns + point_ns - t_start <= (int64_t)L->limit_ns;
	pp_send(l, more, l->ref);
	return more;
}

/* The reference's side: serve every measurement of the schedule, whatever fails (with a
 * time limit, as many fit points as the client says). */
static int serve_model(struct learner *L, struct pp_link *l)
{
	int rc = 0, i = 0;
	if (L->oa->type->hull)
		send_hello(l, l->clk);
	do
		rc = first_err(rc, offset_measure(L->oa, l, NULL));
	while (more_points(L, l, i++, 0, 0, 0));
	if (L->ri)
		rc = first_err(rc, offset_measure(L->oa, l, NULL));
	return first_err(rc, l->rc);
}

/* The client's fit points, paced over span_ns from the end of the first one (the reference
 * may still be busy in an earlier round when the client starts waiting for it), then ri's
 * extra measurement; each sample into smp[i] when smp is not NULL, the fit points made in
 * *done (L->nfit, fewer when L->limit_ns cut them; ri's sample then follows them). Returns
 * the first error. */
static int measure_paced(struct learner *L, struct pp_link *l, struct offset_sample *smp,
                         int *done)
{
	struct offset_sample one = {0, 0, 0};
	/* the points after the first: their time (the mean judges the limit) and the longest;
	 * the first's (reported; it may hold a wait for a reference busy in an earlier round) */
	int64_t t_start = 0, longest_ns = 0, sum_ns = 0, next_ns = real_now_ns(), first_ns = 0;
	int rc = 0, i = 0;
	for (int more = 1; more; i++) {
		if (i > 0)
			real_delay_ns(next_ns - real_now_ns());
		rc = first_err(rc, offset_measure(L->oa, l, &one));
		int64_t now = real_now_ns();
		if (i == 0) {
			t_start = now;
			first_ns = now - next_ns;
		} else {
			sum_ns += now - next_ns;
			if (now - next_ns > longest_ns)
				longest_ns = now - next_ns;
		}
		if (smp)
			smp[i] = one;
		next_ns = L->span_ns > 0 && L->nfit > 1
		          ? t_start + (int64_t)(L->span_ns * i / (L->nfit - 1)) : now;
		if (next_ns < now)
			next_ns = now;
		more = more_points(L, l, i, t_start, next_ns, i ? sum_ns / i : first_ns);
	}
	*done = i;
	if (first_ns > longest_ns)
		longest_ns = first_ns;
	if ((double)longest_ns > L->slowest_point_ns)
		L->slowest_point_ns = (double)longest_ns;
	if (L->ri) {
		rc = first_err(rc, offset_measure(L->oa, l, &one));
		if (smp)
			smp[i] = one;
	}
	return rc;
}

/* A model that could not get enough clean fit points says so: a warning line of s. */
static void warn_unclean(struct hclock_sync *s, const struct learner *L, const struct kept *kp,
                         const struct pp_link *l)
{
	int wr, wref = comm_world_rank(l->comm, l->ref);
	PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
	s->unclean++;
	sync_warn(s, "rank %d: only %d of %d fit points with rank %d clean (round trip within "
	          "%gx+%.0f us of the fastest, %.0f ns; the slowest %.0f ns) after retakes: the "
	          "machine was busy during the sync, the model may be off by up to half the "
	          "slowest round trip", wr, kp->clean, L->nfit, wref, STALL_FACTOR,
	          STALL_MARGIN_NS * 1e-3, kp->floor_ns, kp->slowest_ns);
}

/* Regression through the per-measurement offsets (the learners' classic path). */
static int fit_samples(struct hclock_sync *s, struct learner *L, const struct offset_sample *smp,
                       const struct pp_link *l, struct lm *lm)
{
	size_t n = (size_t)L->nfit;
	int64_t *x = fault_malloc(2 * n * sizeof(*x));
	double *y = fault_malloc(2 * n * sizeof(*y));
	double *rtt = fault_malloc(n * sizeof(*rtt));
	int rc = 0;
	if (!x || !y || !rtt) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	} else {
		for (size_t i = 0; i < n; i++) {
			x[i] = smp[i].local_ns;
			y[i] = smp[i].offset_ns;
			rtt[i] = smp[i].rtt_ns;
		}
		struct kept kp;
		fit(x, y, rtt, L->nfit, L->oa->paper, x + n, y + n, lm, &kp);
		if (!L->oa->paper && 2 * kp.clean < L->nfit)
			warn_unclean(s, L, &kp, l);
		sync_note_rtt(s, kp.kept_rtt_max_ns); /* the round trips the line rests on */
		sync_note_span(s, kp.span_ns);
	}
	free(x);
	free(y);
	free(rtt);
	return rc;
}

/* The hull learner's fit and its strict bound (relative to the reference's clk, composed
 * with that clock's own bound when compose). The estimate: the regression through the
 * measurements' offsets when the hulls allow it (slope in their range, inside the bounds at
 * the end), else the hulls' center line; measured (docs/results.md, "Hull learner against
 * regression"), the regression was 1.7-6.4x closer after 10 s here, the hull's lines
 * following a few extreme exchanges.
 * Hulls that intersect: their fallback line, no bound, a warning; too few exchanges for
 * hulls: the regression, no bound, a warning. */
static int fit_hull(struct hclock_sync *s, struct learner *L, hull_learner *h,
                    const struct offset_sample *smp, const struct pp_link *l,
                    const struct bound *ref_bound, int compose, struct lm *lm, struct bound *bd)
{
	struct hull_learner_fit f;
	struct lm reg;
	int st = hull_learner_fit(h, &f), rc;
	if (st < 0)
		return err_set(st, "out of memory in the hull learner");
	if ((rc = fit_samples(s, L, smp, l, &reg)))
		return rc;
	*lm = reg;
	if (st == HULL_LEARNER_OK) {
		double lo, hi;
		hull_learner_eval(h, f.x_last_ns, NULL, &lo, &hi);
		double e = reg.intercept_ns + reg.slope * (double)diff_ns(f.x_last_ns, reg.x0_ns);
		if (reg.slope < f.cmin.slope || reg.slope > f.cmax.slope || e < lo || e > hi)
			*lm = f.est;
		*bd = bound_from_offset_interval(lm, f.x_last_ns, lo, hi, f.cmin.slope, f.cmax.slope);
		if (compose)
			*bd = bound_compose(bd, NULL, ref_bound);
		return 0;
	}
	int wr, wref = comm_world_rank(l->comm, l->ref);
	PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
	if (st == HULL_LEARNER_INTERSECT) {
		*lm = f.est;
		sync_warn(s, "rank %d: the hulls of its %zu exchanges with rank %d intersect (by %.0f ns): "
		          "a clock step, a change of delay asymmetry or a stalled exchange during the "
		          "sync; fallback line of least worst violation (%.0f ns), no bounds", wr,
		          f.nexchanges, wref, -f.gap_ns, -f.gap_ns / 2);
	} else {
		sync_warn(s, "rank %d: only %zu usable exchanges with rank %d, too few for hulls; "
		          "regression through the offsets, no bounds", wr, f.nexchanges, wref);
	}
	return 0;
}

int learn_model(struct hclock_sync *s, struct learner *L, MPI_Comm comm, int ref, int client,
                hclock_clock *clk, int compose, struct lm *lm, struct bound *bd)
{
	struct pp_link l;
	int rc = 0, n = L->nfit + L->ri;
	pp_link_init(&l, comm, ref, client, clk, &s->pingpongs);
	l.retakes = &s->retakes;
	if (l.me == ref || l.me == client) /* the pair's fit points take the span */
		s->planned_s += L->span_ns * 1e-9;
	if (l.me == ref)
		return serve_model(L, &l);
	if (l.me != client)
		return 0;
	*lm = (struct lm){0, 0, 0};
	if (bd)
		*bd = bound_unknown();
	struct bound ref_bound = bound_unknown(), my_bound = bound_unknown();
	hull_learner *h = NULL;
	if (L->oa->type->hull) {
		double ref_err;
		recv_hello(&l, &ref_bound, &ref_err);
		if (!(h = hull_learner_create(HULL_LEARNER_CENTER)))
			rc = err_set(HCLOCK_ENOMEM, "out of memory");
		else
			/* each reading may be off by its read error, scaled by at most 1 + slope
			 * through models (hull_learner_set_slack) */
			hull_learner_set_slack(h, (ref_err + clock_read_error_ns(clk)) *
			                       (1 + MAX_PLAUSIBLE_SLOPE));
		L->oa->sink = h;
		L->oa->sink_rc = 0;
	}
	struct offset_sample *smp = fault_malloc((size_t)n * sizeof(*smp));
	if (!smp)
		rc = first_err(rc, err_set(HCLOCK_ENOMEM, "out of memory"));
	int done = 0;
	rc = first_err(rc, measure_paced(L, &l, smp, &done));
	struct learner Ld = *L; /* the fit points made */
	Ld.nfit = done;
	L->made_points = done;
	L->oa->sink = NULL;
	rc = first_err(rc, L->oa->sink_rc);
	if (fault_hit(FAULT_FIT))
		rc = first_err(rc, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in a model "
		                                             "fit"));
	if (!rc && h) {
		rc = fit_hull(s, &Ld, h, smp, &l, &ref_bound, compose, lm, &my_bound);
	} else if (!rc) {
		rc = fit_samples(s, &Ld, smp, &l, lm);
		/* COMPUTE_AND_SET_INTERCEPT: keep the slope, re-anchor on the extra measurement */
		if (!rc && L->ri) {
			lm->x0_ns = smp[Ld.nfit].local_ns;
			lm->intercept_ns = smp[Ld.nfit].offset_ns;
			sync_note_rtt(s, smp[Ld.nfit].rtt_ns);
		}
	}
	hull_learner_destroy(h);
	free(smp);
	if (rc)
		*lm = (struct lm){0, 0, 0};
	else if (bd)
		*bd = my_bound;
	return rc;
}
