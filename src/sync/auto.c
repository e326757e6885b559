/*
 * auto.c - auto(BUDGET[,horizon=H]): HCA3 whose parameters fit a time budget. Ranks 0 and 1
 * first exchange a burst of single ping-pongs in paced groups (counted in the budget); rank 1
 * summarizes it (floor, spread, tail of the round trips; the error of a fit point of n
 * ping-pongs, measured) and picks the fit points, ping-pongs per point and span of each of
 * HCA3's rounds that minimise the predicted error at the horizon (numerics/plan.h); the
 * estimator is hull where the floor is sharp, skampi (min-filtered offsets) where it is
 * not. Every rank receives the choice and runs hca3 with it. The model and its test:
 * docs/check.md, "Sync specs chosen by a time budget".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/plan.h"
#include "sync/sync.h"
#include "util/timeutil.h"

#define AUTO_FORM "auto(BUDGET[,horizon=H])"
#define DEFAULT_HORIZON_S 10.0

struct auto_sync {
	struct hclock_sync s;
	double budget_s, horizon_s;
	int chosen; /* a run has filled choice */
	struct hclock_sync_auto choice;
};

/* The burst between ranks 0 and 1 of comm: PLAN_GROUPS groups of PLAN_GROUP single
 * ping-pongs, a group every gap_ns (paced by the client, as fit points are); rank 1 keeps
 * each ping-pong's time, offset and round trip. */
static int burst(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, int64_t gap_ns,
                 int64_t *x, double *off, double *rtt)
{
	struct offset_alg *oa = NULL;
	int r, rc = offset_create(offset_type_find("skampi", 6), 1, &oa);
	MPI_Comm_rank(comm, &r);
	int64_t t0 = real_now_ns();
	for (int i = 0; i < PLAN_BURST; i++) {
		struct offset_sample smp = {0, 0, 0};
		if (r == 1 && i % PLAN_GROUP == 0)
			real_delay_ns(t0 + gap_ns * (i / PLAN_GROUP) - real_now_ns());
		/* without an estimator (no memory) the pair still makes every exchange */
		if (oa)
			rc = first_err(rc, measure_pair(s, oa, comm, 0, 1, clk, &smp));
		x[i] = smp.local_ns;
		off[i] = smp.offset_ns;
		rtt[i] = smp.rtt_ns;
	}
	offset_destroy(oa);
	return rc;
}

/* Rank 1's choice into v (the doubles every rank receives). */
enum { V_OK, V_BURST, V_FLOOR, V_SPREAD, V_TAIL, V_SHARP, V_NFIT, V_N, V_SPAN, V_SIGMA,
       V_PRED, V_LEN };

static void choose(const struct auto_sync *a, int rounds, int64_t t0, const int64_t *x,
                   const double *off, const double *rtt, double *v)
{
	struct plan_net net;
	struct plan_choice c;
	double burst_ns = (double)(real_now_ns() - t0);
	if (plan_net_measure(rtt, PLAN_BURST, &net))
		return;
	double round_ns = (a->budget_s * 1e9 - burst_ns) / rounds;
	plan_choose(x, off, rtt, &net, round_ns, a->horizon_s * 1e9, &c);
	/* a tree of rounds levels: independent errors add in quadrature */
	double v2[V_LEN] = {1, burst_ns, net.floor_ns, net.spread_ns, net.tail_ns, net.sharp,
	                    c.nfit, c.n, c.span_ns, c.point_sigma_ns,
	                    c.predicted_error_ns * sqrt((double)rounds)};
	memcpy(v, v2, sizeof(v2));
}

static int auto_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct auto_sync *a = container_of(s, struct auto_sync, s);
	int p, r, rc = 0;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	a->chosen = 0;
	if (p < 2) {
		*out = hclock_clock_ref(clk);
		return 0;
	}
	int rounds = ilog2(p) + (p > (1 << ilog2(p)));
	int64_t x[PLAN_BURST], t0 = real_now_ns();
	double off[PLAN_BURST], rtt[PLAN_BURST], v[V_LEN] = {0};
	/* groups as far apart as the fit points of a round filled with PLAN_MAX_NFIT of them */
	int64_t gap_ns = (int64_t)(a->budget_s * 1e9 / rounds / PLAN_MAX_NFIT);
	if (r <= 1)
		rc = burst(s, comm, clk, gap_ns, x, off, rtt);
	if (r == 1 && !rc)
		choose(a, rounds, t0, x, off, rtt, v);
	if (MPI_Bcast(v, V_LEN, MPI_DOUBLE, 1, comm) != MPI_SUCCESS)
		rc = first_err(rc, err_set(HCLOCK_EMPI, "MPI_Bcast of the auto choice failed"));
	uint64_t burst_pp = s->pingpongs;
	struct hclock_sync_auto *c = &a->choice;
	*c = (struct hclock_sync_auto){.budget_s = a->budget_s, .horizon_s = a->horizon_s};
	if (v[V_OK]) {
		c->burst_s = v[V_BURST] * 1e-9;
		c->floor_ns = v[V_FLOOR];
		c->spread_ns = v[V_SPREAD];
		c->tail_ns = v[V_TAIL];
		c->nfit = (int)v[V_NFIT];
		c->npingpongs = (int)v[V_N];
		c->span_s = v[V_SPAN] * 1e-9;
		snprintf(c->estimator, sizeof(c->estimator), "%s", v[V_SHARP] ? "hull" : "skampi");
		c->point_sigma_ns = v[V_SIGMA];
		c->predicted_error_ns = v[V_PRED];
	} else { /* rank 1's burst failed: the run fails below; a small model keeps the schedule */
		*c = (struct hclock_sync_auto){.nfit = PLAN_MIN_NFIT, .npingpongs = 1};
		snprintf(c->estimator, sizeof(c->estimator), "skampi");
		if (!rc && r == 1)
			rc = err_set(HCLOCK_EINVAL, "auto: the burst of %d ping-pongs gave no round "
			             "trips", PLAN_BURST);
	}
	char span[48] = "";
	if (c->span_s >= 1e-6)
		snprintf(span, sizeof(span), "/span=%.6g", c->span_s);
	snprintf(c->spec, sizeof(c->spec), "hca3/%d/%s/%d%s", c->nfit, c->estimator, c->npingpongs,
	         span);
	struct hclock_sync *inner = NULL;
	int prc = spec_parse(c->spec, &inner);
	if (prc) {
		hclock_sync_free(inner);
		/* the same spec everywhere: every rank fails here, none waits */
		*out = hclock_clock_ref(clk);
		return first_err(rc, prc);
	}
	rc = first_err(rc, sync_run(inner, comm, clk, out));
	s->pingpongs = burst_pp + inner->pingpongs;
	s->rounds = inner->rounds + 1;
	s->parent = inner->parent;
	s->shares = inner->shares;
	memcpy(s->warnings, inner->warnings, sizeof(s->warnings));
	hclock_sync_free(inner);
	a->chosen = 1;
	return rc;
}

static int auto_choice(const struct hclock_sync *s, struct hclock_sync_auto *out)
{
	const struct auto_sync *a = container_of(s, struct auto_sync, s);
	if (!a->chosen)
		return err_set(HCLOCK_EUNSUPP, "%s has not run yet: it chose nothing", s->spec);
	*out = a->choice;
	return 0;
}

static const struct sync_ops auto_ops = {.run = auto_run, .auto_choice = auto_choice};

static int auto_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	int rc = sync_alloc(sizeof(struct auto_sync), &auto_ops, out);
	if (rc)
		return rc;
	struct auto_sync *a = container_of(*out, struct auto_sync, s);
	a->horizon_s = DEFAULT_HORIZON_S;
	if ((rc = spec_expect(ps, '(', AUTO_FORM)) ||
	    (rc = spec_duration(ps, 0.01, 3600, "BUDGET, the time the sync may take", &a->budget_s)))
		return rc;
	if (*ps->p == ',') {
		ps->p++;
		const char *k = ps->p;
		size_t kn = spec_toklen(k);
		if (strncmp(k, "horizon=", 8))
			return spec_bad(ps, k, kn, "'horizon=H', the time after the sync the error is "
			                           "minimised at");
		ps->p += 8;
		if ((rc = spec_duration(ps, 0, 1e6, "horizon=H, the time after the sync the error is "
		                        "minimised at", &a->horizon_s)))
			return rc;
	}
	if ((rc = spec_expect(ps, ')', "closing " AUTO_FORM)))
		return rc;
	(*out)->bounded = 1; /* hull may be chosen: rank 0's clock then carries the exact bound */
	if (a->horizon_s != DEFAULT_HORIZON_S)
		sync_set_spec(*out, "auto(%gs,horizon=%gs)", a->budget_s, a->horizon_s);
	else
		sync_set_spec(*out, "auto(%gs)", a->budget_s);
	return 0;
}

const struct sync_type sync_type_auto = {
	.name = "auto",
	.usage = AUTO_FORM,
	.help = "HCA3 fitted to a time budget: a burst of ping-pongs measures the round trips, "
	        "then fit points, ping-pongs per point, span and estimator are chosen to minimise "
	        "the predicted error H (default 10 s) after the sync",
	.parse = auto_parse,
};
