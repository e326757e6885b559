/*
 * auto.c - auto(BUDGET[,horizon=H]): HCA3 whose parameters fit a time budget. First every
 * pair of HCA3's tree exchanges a burst of single ping-pongs in paced groups, round by round
 * in HCA3's order (the pairs of a round at once), the bursts capped at a quarter of the
 * budget (fewer groups when the round trips are slow); each pair's client summarizes its
 * burst (floor, spread, tail of the round trips; the error of a fit point of n ping-pongs,
 * measured) and picks the fit points, ping-pongs per point and span of each of HCA3's rounds
 * that minimise the predicted error at the horizon (numerics/plan.h); the pair predicting
 * the largest error wins (a reduction over the sync's communicator), and every rank runs
 * hca3 with its choice. The estimator is hull where the worst pair's floor is sharp, skampi
 * (min-filtered offsets) where it is not. The model and its test: docs/check.md, "Sync specs
 * chosen by a time budget".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/plan.h"
#include "sync/learn.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/fault.h"
#include "util/timeutil.h"

#define AUTO_FORM "auto(BUDGET[,horizon=H])"
#define DEFAULT_HORIZON_S 10.0
#define BURST_SHARE 4 /* the bursts take at most 1/BURST_SHARE of the budget */

struct auto_sync {
	struct hclock_sync s;
	double budget_s, horizon_s;
	int chosen; /* a run (or a plan) has filled choice */
	int nprocs; /* the processes of its last run or plan (0: none yet) */
	double round_ns; /* the time each of HCA3's rounds may take (after the bursts), ns */
	int rounds;      /* HCA3's rounds on the processes of the last plan */
	double my_burst_ns; /* this process's bursts' time in its last plan, ns */
	struct hclock_sync_auto choice;
};

/* What a pair's burst gave its client. */
struct burst_out {
	int ngroups; /* groups kept in x, off, rtt (at most PLAN_GROUPS) */
	int taken;   /* groups made, retaken ones included */
	int stalled; /* of them made through a stall (plan_stalled_groups) */
	int clean;   /* 1: the kept groups are clean (enough were); 0: stalled ones among them */
};

/* One pair's burst, between ref and client of comm: up to PLAN_GROUPS groups of PLAN_GROUP
 * single ping-pongs, a group every gap_ns (paced by the client, as fit points are). After
 * each group the client tells ref whether another follows: none once the next one, as long
 * as the mean group so far, would end more than limit_ns after the burst's start (at least
 * PLAN_MIN_GROUPS). A group made through a stall (plan_stalled_groups) does not count towards
 * PLAN_GROUPS: another is taken in its place while the time allows (at most PLAN_TAKE_MAX in
 * all); while fewer than PLAN_MIN_GROUPS are clean, also past limit_ns, up to
 * 2 PLAN_MIN_GROUPS groups, as long as the next group, as long as the mean clean one, ends
 * within retake_ns (half the round's share of the budget: a stall that ate the bursts' time
 * leaves the plan its clean groups, not the stall's; one that goes on cannot eat the
 * rounds' time). The client keeps only the clean groups when PLAN_MIN_GROUPS or more are (else
 * all, the first PLAN_GROUPS: o->clean 0), each ping-pong's time, offset and round trip in
 * x, off, rtt (NULL on the ref; room for PLAN_TAKE_MAX groups), and what the burst gave in
 * *o; both ends raise *slowest_ns to their longest group's time (clean or not). */
static int burst(struct hclock_sync *s, MPI_Comm comm, int ref, int client, hclock_clock *clk,
                 int64_t gap_ns, int64_t limit_ns, int64_t retake_ns, int64_t *x, double *off,
                 double *rtt, struct burst_out *o, double *slowest_ns)
{
	/* SKaMPI-Offset keeps no state beyond the family's: on the stack, so that no failed
	 * allocation leaves one end out of an exchange (and of its retakes' messages) */
	const struct offset_type *ot = offset_type_find("skampi", 6);
	struct offset_alg oa_s = {.ops = ot->ops, .type = ot, .nexchanges = 1}, *oa = &oa_s;
	struct pp_link ctl; /* the client's go/stop after each group */
	int rc = 0, g = 0, clean = 0, stall = 0;
	double gmin[PLAN_TAKE_MAX], gtime[PLAN_TAKE_MAX];
	unsigned char stalled[PLAN_TAKE_MAX];
	pp_link_init(&ctl, comm, ref, client, clk, NULL);
	int64_t t0 = real_now_ns(), longest_ns = 0, sum_ns = 0;
	while (g < PLAN_TAKE_MAX) {
		/* a group's time from its planned start: a late wake-up counts */
		int64_t tg = real_now_ns(), plan = t0 + gap_ns * g;
		if (ctl.me == client)
			real_delay_ns(plan - tg);
		if (plan > tg)
			tg = plan;
		gmin[g] = INFINITY;
		/* tests: a stall from here on, through every try of every measurement (retakes
		 * included: offset_measure's) */
		if (!stall && fault_hit(FAULT_BURST)) {
			stall = 1;
			fault_stall_force(1000000);
		}
		for (int i = g * PLAN_GROUP; i < (g + 1) * PLAN_GROUP; i++) {
			struct offset_sample smp = {0, 0, 0};
			rc = first_err(rc, measure_pair(s, oa, comm, ref, client, clk, &smp));
			if (x) {
				x[i] = smp.local_ns;
				off[i] = smp.offset_ns;
				rtt[i] = smp.rtt_ns;
				if (smp.rtt_ns < gmin[g])
					gmin[g] = smp.rtt_ns;
			}
		}
		int64_t now = real_now_ns();
		gtime[g] = (double)(now - tg);
		sum_ns += now - tg;
		if (now - tg > longest_ns)
			longest_ns = now - tg;
		++g;
		int64_t more;
		if (ctl.me == client) {
			double clean_ns = 0;
			clean = g - plan_stalled_groups(gmin, gtime, g, stalled);
			for (int j = 0; j < g; j++)
				clean_ns += stalled[j] ? 0 : gtime[j];
			int64_t next = t0 + gap_ns * g > now ? t0 + gap_ns * g : now;
			more = g < PLAN_TAKE_MAX && clean < PLAN_GROUPS &&
			       (g < PLAN_MIN_GROUPS || next + sum_ns / g - t0 <= limit_ns ||
			        (clean < PLAN_MIN_GROUPS && g < 2 * PLAN_MIN_GROUPS &&
			         (double)(next - t0) + (clean ? clean_ns / clean : 0) <= (double)retake_ns));
			pp_send(&ctl, more, ref);
		} else {
			more = pp_recv(&ctl, client);
		}
		if (!more)
			break;
	}
	*o = (struct burst_out){.ngroups = g < PLAN_GROUPS ? g : PLAN_GROUPS, .taken = g,
	                        .stalled = g - clean, .clean = clean == g};
	if (x && clean < g && clean >= PLAN_MIN_GROUPS) { /* the clean groups, in their order */
		int k = 0;
		for (int j = 0; j < g && k < PLAN_GROUPS; j++) {
			if (stalled[j])
				continue;
			if (k != j) {
				size_t to = (size_t)k * PLAN_GROUP, from = (size_t)j * PLAN_GROUP;
				memmove(x + to, x + from, PLAN_GROUP * sizeof(*x));
				memmove(off + to, off + from, PLAN_GROUP * sizeof(*off));
				memmove(rtt + to, rtt + from, PLAN_GROUP * sizeof(*rtt));
			}
			k++;
		}
		*o = (struct burst_out){.ngroups = k, .taken = g, .stalled = g - clean, .clean = 1};
	}
	if ((double)longest_ns > *slowest_ns)
		*slowest_ns = (double)longest_ns;
	if (stall)
		fault_stall_force(0);
	return first_err(rc, ctl.rc);
}

/* The choice every rank receives (doubles), the pair's that predicts the largest error. */
enum { V_OK, V_FLOOR, V_SPREAD, V_TAIL, V_SHARP, V_NFIT, V_N, V_SPAN, V_SIGMA,
       V_PRED, V_GROUPS, V_TAKEN, V_STALLED, V_REF, V_CLIENT, V_LEN };

/* A client's choice for its pair into v; 0, or 1 when its burst gave no round trips. */
static int choose(const struct auto_sync *a, int rounds, double burst_ns, int ngroups,
                  const int64_t *x, const double *off, const double *rtt, double *v)
{
	struct plan_net net;
	struct plan_choice c;
	if (plan_net_measure(rtt, (size_t)ngroups * PLAN_GROUP, &net))
		return 1;
	double round_ns = (a->budget_s * 1e9 - burst_ns) / rounds;
	plan_choose(x, off, rtt, ngroups, &net, round_ns, a->horizon_s * 1e9, &c);
	/* a tree of rounds levels: independent errors add in quadrature */
	double pred = c.predicted_error_ns * sqrt((double)rounds);
	v[V_OK] = 1;
	v[V_FLOOR] = net.floor_ns;
	v[V_SPREAD] = net.spread_ns;
	v[V_TAIL] = net.tail_ns;
	v[V_SHARP] = net.sharp;
	v[V_NFIT] = c.nfit;
	v[V_N] = c.n;
	v[V_SPAN] = c.span_ns;
	v[V_SIGMA] = c.point_sigma_ns;
	v[V_PRED] = isnan(pred) ? INFINITY : pred;
	return 0;
}

/* One pair of HCA3's schedule (hca3_pairs): its burst, the client's kept. */
struct auto_bursts {
	struct hclock_sync *s;
	MPI_Comm comm;
	hclock_clock *clk;
	int me, ref;           /* this process, its reference (-1: none, rank 0) */
	int64_t gap_ns, limit_ns, retake_ns;
	int64_t *x;            /* the client's burst: times, offsets, round trips, groups */
	double *off, *rtt;
	struct burst_out out;  /* what the client's burst gave */
	double slowest_ns;     /* the slowest group of this process's bursts */
};

static int auto_pair(void *ctx, int ref, int client)
{
	struct auto_bursts *b = ctx;
	struct burst_out other;
	int mine = client == b->me;
	if (mine)
		b->ref = ref;
	return burst(b->s, b->comm, ref, client, b->clk, b->gap_ns, b->limit_ns, b->retake_ns,
	             mine ? b->x : NULL, mine ? b->off : NULL, mine ? b->rtt : NULL,
	             mine ? &b->out : &other, &b->slowest_ns);
}

/* Every pair of HCA3's tree measures its burst, round by round as hca3.c's schedule runs
 * (the pairs of a round at once), and the pair predicting the largest error gives the
 * choice, the same on every rank (in a->choice; the spec it makes in a->choice.spec). */
static int auto_plan(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk)
{
	struct auto_sync *a = container_of(s, struct auto_sync, s);
	int p, r;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	a->chosen = 0;
	a->nprocs = p;
	if (p < 2)
		return 0;
	int rounds = hca3_rounds(p);
	int64_t x[PLAN_TAKE_MAX * PLAN_GROUP], t0 = real_now_ns();
	a->rounds = rounds;
	double off[PLAN_TAKE_MAX * PLAN_GROUP], rtt[PLAN_TAKE_MAX * PLAN_GROUP], v[V_LEN] = {0};
	double mine[2] = {0, 0};
	/* groups as far apart as the fit points of a round filled with PLAN_MAX_NFIT of them */
	struct auto_bursts b = {
		.s = s, .comm = comm, .clk = clk, .me = r, .ref = -1,
		.gap_ns = (int64_t)(a->budget_s * 1e9 / rounds / PLAN_MAX_NFIT),
		.limit_ns = (int64_t)(a->budget_s * 1e9 / BURST_SHARE / rounds),
		.retake_ns = (int64_t)(a->budget_s * 1e9 / 2 / rounds),
		.x = x, .off = off, .rtt = rtt};
	int rc = hca3_pairs(p, r, auto_pair, &b), ref = b.ref, ngroups = b.out.ngroups;
	mine[1] = b.slowest_ns;
	/* the bursts' time and the slowest group, over all pairs */
	mine[0] = a->my_burst_ns = (double)(real_now_ns() - t0);
	double all[2] = {mine[0], mine[1]}, burst_ns;
	if (yield_allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
		rc = first_err(rc, err_set(HCLOCK_EMPI, "MPI_Allreduce of the auto bursts' time "
		                           "failed"));
	burst_ns = all[0];
	/* rank 0 is no client; a client whose burst gave nothing wins, and every rank learns */
	struct { double pred; int rank; } worst = {-INFINITY, r}, w = {0, 0};
	if (ref >= 0) {
		if (rc || choose(a, rounds, burst_ns, ngroups, x, off, rtt, v)) {
			v[V_OK] = 0;
			v[V_PRED] = INFINITY;
			if (!rc)
				rc = err_set(HCLOCK_EINVAL, "auto: the burst of %d ping-pongs with rank %d "
				             "gave no round trips", ngroups * PLAN_GROUP,
				             comm_world_rank(comm, ref));
		}
		v[V_GROUPS] = ngroups;
		v[V_TAKEN] = b.out.taken;
		v[V_STALLED] = b.out.stalled;
		v[V_REF] = comm_world_rank(comm, ref);
		if (!b.out.clean && !rc)
			sync_warn(s, "auto: the burst of rank %d with rank %d met stalls (other jobs on "
			          "the cores) in %d of its %d groups of %d ping-pongs, too many to retake "
			          "within the bursts' time: the choice rests on stalled round trips, and "
			          "its predicted error is not to be trusted", comm_world_rank(comm, r),
			          comm_world_rank(comm, ref), b.out.stalled, b.out.taken, PLAN_GROUP);
		v[V_CLIENT] = comm_world_rank(comm, r);
		worst.pred = v[V_PRED];
	}
	/* the winner's v to every rank: the others give -inf to a maximum (a yielding wait) */
	double vin[V_LEN];
	int mrc = yield_allreduce(&worst, &w, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
	for (int i = 0; i < V_LEN; i++)
		vin[i] = w.rank == r ? v[i] : -INFINITY;
	if (mrc != MPI_SUCCESS ||
	    yield_allreduce(vin, v, V_LEN, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
		rc = first_err(rc, err_set(HCLOCK_EMPI, "MPI_Allreduce of the auto choice failed"));
	a->round_ns = (a->budget_s * 1e9 - burst_ns) / rounds;
	struct hclock_sync_auto *c = &a->choice;
	*c = (struct hclock_sync_auto){.budget_s = a->budget_s, .horizon_s = a->horizon_s,
	                               .burst_s = burst_ns * 1e-9, .pairs = p - 1,
	                               .slowest_group_s = all[1] * 1e-9};
	if (v[V_OK] == 1) { /* not after a failed reduction (-inf) */
		c->groups = (int)v[V_GROUPS];
		c->groups_made = (int)v[V_TAKEN];
		c->groups_stalled = (int)v[V_STALLED];
		c->worst_ref = (int)v[V_REF];
		c->worst_client = (int)v[V_CLIENT];
		c->floor_ns = v[V_FLOOR];
		c->spread_ns = v[V_SPREAD];
		c->tail_ns = v[V_TAIL];
		c->nfit = (int)v[V_NFIT];
		c->npingpongs = (int)v[V_N];
		c->span_s = v[V_SPAN] * 1e-9;
		snprintf(c->estimator, sizeof(c->estimator), "%s", v[V_SHARP] ? "hull" : "skampi");
		c->point_sigma_ns = v[V_SIGMA];
		c->predicted_error_ns = v[V_PRED];
	} else { /* some burst failed: the run fails below; a small model keeps the schedule */
		c->nfit = PLAN_MIN_NFIT;
		c->npingpongs = 1;
		snprintf(c->estimator, sizeof(c->estimator), "skampi");
	}
	char span[48] = "";
	if (c->span_s >= 1e-6)
		snprintf(span, sizeof(span), "/span=%.6g", c->span_s);
	snprintf(c->spec, sizeof(c->spec), "hca3/%d/%s/%d%s", c->nfit, c->estimator, c->npingpongs,
	         span);
	a->chosen = 1;
	return rc;
}

static int auto_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct auto_sync *a = container_of(s, struct auto_sync, s);
	int p;
	PMPI_Comm_size(comm, &p);
	if (p < 2) {
		a->chosen = 0;
		a->nprocs = p;
		*out = hclock_clock_ref(clk);
		return 0;
	}
	int64_t t0 = real_now_ns();
	int rc = auto_plan(s, comm, clk);
	uint64_t burst_pp = s->pingpongs;
	struct hclock_sync *inner = NULL;
	int prc = hclock_sync_create(a->choice.spec, &inner);
	if (prc) {
		hclock_sync_free(inner);
		/* the same spec everywhere: every rank fails here, none waits */
		*out = hclock_clock_ref(clk);
		return first_err(rc, prc);
	}
	/* a round's fit points stop where its time ends (round trips slower than the burst's) */
	LEARNER(inner)->limit_ns = a->round_ns > 0 ? a->round_ns : 1;
	double agree_ns = (double)(real_now_ns() - t0) - a->my_burst_ns;
	rc = first_err(rc, sync_run(inner, comm, clk, out));
	/* what it took, the slowest fit point and the fewest points a model made, over all ranks
	 * (the same report everywhere) */
	const struct learner *L = LEARNER(inner);
	double took[4] = {(double)(real_now_ns() - t0), L->slowest_point_ns,
	                  L->made_points ? -L->made_points : -INFINITY, agree_ns}, all[4];
	if (yield_allreduce(took, all, 4, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
		rc = first_err(rc, err_set(HCLOCK_EMPI, "MPI_Allreduce of the auto sync's time "
		                           "failed"));
	} else {
		struct hclock_sync_auto *c = &a->choice;
		c->run_s = all[0] * 1e-9;
		c->slowest_point_s = all[1] * 1e-9;
		c->agree_s = all[3] * 1e-9;
		c->nfit_made = isfinite(all[2]) ? (int)-all[2] : c->nfit;
		/* a round cut short: the prediction for the points made, over the span they took */
		if (c->nfit_made < c->nfit && c->nfit > 1 && isfinite(c->predicted_error_ns))
			c->predicted_error_ns = sqrt((double)a->rounds) *
			                        plan_predict(c->point_sigma_ns, c->nfit_made,
			                                     c->span_s * 1e9 * (c->nfit_made - 1) /
			                                     (c->nfit - 1), a->horizon_s * 1e9);
	}
	s->pingpongs = burst_pp + inner->pingpongs;
	sync_take_quality(s, inner);
	s->planned_s = a->budget_s; /* bursts and tree, within the budget */
	s->rounds = inner->rounds * 2; /* a burst per round of the tree, then the tree */
	s->parent = inner->parent;
	s->shares = inner->shares;
	if (inner->warnings[0]) /* after the bursts' own */
		sync_warn(s, "%.*s", (int)strlen(inner->warnings) - 1, inner->warnings);
	hclock_sync_free(inner);
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

static void auto_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	const struct auto_sync *a = container_of(s, struct auto_sync, s);
	const struct hclock_sync_auto *c = &a->choice;
	sync_explain_line(e, "budget %g s, horizon %g s (the time after the sync the predicted error "
	                  "is minimised at)", a->budget_s, a->horizon_s);
	sync_explain_line(e, "runs: hca3/NFIT/OFF/N/span=S, HCA3 (Alg. 1, 2) in ceil(log2 p) rounds, "
	                  "its parameters chosen at run time:");
	e->depth++;
	sync_explain_line(e, "1. measure: every pair of HCA3's tree, round by round (a round's pairs "
	                  "at once), exchanges up to %d groups of %d single ping-pongs, the groups "
	                  "BUDGET / rounds / %d apart; all bursts together capped at 1/%d of the "
	                  "budget (fewer groups, at least %d, when the round trips are slow)",
	                  PLAN_GROUPS, PLAN_GROUP, PLAN_MAX_NFIT, BURST_SHARE, PLAN_MIN_GROUPS);
	sync_explain_line(e, "2. point error: sigma(n), the std of a fit point of n ping-pongs (the "
	                  "smallest round trip of n kept) about the burst's line, n = 1..%d",
	                  PLAN_MAX_N);
	sync_explain_line(e, "3. choice: each round gets (BUDGET - bursts) / rounds; for each n the "
	                  "span is the round less one point, NFIT as many points as fill 1/%d of it "
	                  "(%d..%d); the largest n predicting within %.1fx of the smallest RMS error "
	                  "at the horizon wins", PLAN_DUTY, PLAN_MIN_NFIT, PLAN_MAX_NFIT, PLAN_SLACK);
	sync_explain_line(e, "4. the worst pair: the pair predicting the largest error gives every "
	                  "rank its choice (times sqrt(rounds) for the tree)");
	sync_explain_line(e, "5. estimator: hull (strict bounds) where that pair's floor is sharp "
	                  "(10%% of round trips within twice the smallest), else skampi");
	e->depth--;
	if (!a->nprocs)
		return;
	if (a->nprocs < 2) {
		sync_explain_line(e, "measured on this job: nothing, it ran on %d process here (a "
		                  "level of one process syncs nothing)", a->nprocs);
		return;
	}
	if (!a->chosen)
		return;
	sync_explain_line(e, "measured on this job (%d processes, %d pair%s): bursts took %.4f s "
	                  "(%.1f%% of the budget), the slowest group of %d ping-pongs %.4f s", a->nprocs,
	                  c->pairs, c->pairs > 1 ? "s" : "", c->burst_s,
	                  100 * c->burst_s / c->budget_s, PLAN_GROUP, c->slowest_group_s);
	sync_explain_line(e, "worst pair: ranks %d-%d, %d groups (%d made, %d through a stall): round "
	                  "trips floor %.0f ns, spread %.0f ns, tail %.0f ns (%s floor)",
	                  c->worst_ref, c->worst_client, c->groups, c->groups_made, c->groups_stalled,
	                  c->floor_ns, c->spread_ns, c->tail_ns,
	                  strcmp(c->estimator, "hull") ? "a blurred" : "a sharp");
	sync_explain_line(e, "choice: %s (%d fit points of %d ping-pong%s over %.4g s, %s), a fit "
	                  "point's sigma %.1f ns", c->spec, c->nfit, c->npingpongs,
	                  c->npingpongs > 1 ? "s" : "", c->span_s, c->estimator, c->point_sigma_ns);
	sync_explain_line(e, "predicted error %g s after the sync: %.0f ns (RMS; a stall after the "
	                  "burst, other jobs on the cores, is not in it)", c->horizon_s,
	                  c->predicted_error_ns);
}

static const struct sync_ops auto_ops = {
	.run = auto_run, .auto_choice = auto_choice, .explain = auto_explain, .plan = auto_plan};

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
