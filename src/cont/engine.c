/*
 * engine.c - the continuous clock's exchanges (cont/engine.h).
 *
 * Messages on the engine's own communicator (a duplicate of the run's private one):
 *   child -> parent  TAG_PING  struct ping: k >= 0 a ping of exchange exch; k < 0 a note
 *                              (the next exchange starts at global time next_ns)
 *   parent -> child  TAG_PONG  struct pong: its base receive and send times, its model
 * Every wait is a poll: a ping-pong in flight is tested, never waited on, and given up after
 * EXCH_TIMEOUT_NS; stale pongs (of an exchange given up) are recognized by their numbers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "cont/engine.h"
#include "model/cont.h"
#include "numerics/track.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/fault.h"

#define TAG_PING 0x4850
#define TAG_PONG 0x4851
#define NSLOTS 16                      /* pongs in flight as a parent */
#define EXCH_TIMEOUT_NS 50000000ll     /* an exchange not done after 50 ms is given up */
#define WAKE_EARLY_NS 50000ll          /* a parent polls from 50 us before a child's time */
#define SAFETY_POLL_NS 100000000ll     /* and at least every 100 ms for unannounced pings */
#define SPIN_NS 50000ll                /* drive=progress: how long a parent that answered a ping
                                          waits for the exchange's next one, and a child that
                                          sent a ping after a pong waits for its pong */
#define PRIOR_SLOPE_SE 1e-6            /* a one-shot slope's standard error where its bound
                                          says nothing */
#define PRIOR_WANDER 1e-8              /* how fast the one-shot slope's error grows, 1/s */

struct ping {
	uint32_t exch;   /* exchange number of the child */
	int32_t k;       /* ping-pong index; < 0: a note */
	int64_t next_ns; /* note: the next exchange's start, global time ns */
};

struct pong {
	uint32_t exch;
	int32_t k;
	int64_t t2_ns, t3_ns; /* the parent's base receive and send times */
	struct lm tp;         /* the parent's target model: its base -> the reference */
	struct bound bp;      /* and its bound */
};

struct slot {
	MPI_Request req;
	struct pong msg;
};

struct child_exp {
	int rank;
	int64_t next_ns; /* base time of its announced next exchange (INT64_MAX: none) */
	int active;      /* its exchange is under way (pinged, no note yet) */
	int64_t since_ns;
};

struct engine {
	MPI_Comm comm;
	int rank;
	hclock_clock *base;
	hclock_clock *clk;       /* this process's continuous clock */
	struct cont_state *st;   /* what it reads (own, or the share window's) */
	struct cont_cfg cfg;
	int err;                 /* first error; the engine stops exchanging after it */
	char errline[400];       /* its line (the error text is per thread: the driver's thread
	                            sets it, engine_stop reports it) */
	int busy_flag;           /* engine_try_progress's lock */
	int stopped;
	uint64_t events;         /* messages handled (the driver spins while they come) */
	/* as a child */
	int parent;              /* -1: none (root or follower) */
	track *tr;
	struct lm L;             /* my base -> parent's base (offset model), have_L once fitted */
	int have_L;
	struct lm S0;            /* the one-shot sync's line of my base against the parent's
	                            (set at the first exchange), the tracker's prior */
	double s0_se;            /* its slope's standard error, set at create (INFINITY: dropped) */
	double i0_se;            /* its offset's at S0.x0_ns, ns */
	double s0_hw, L_hw;      /* strict half-widths of S0's and L's slopes (INFINITY:
	                            unknown): what a one-exchange window's bound rests on */
	struct lm tp;            /* parent's target and bound, from the latest pong */
	struct bound bp;
	int64_t period_ns;
	int streak;
	int64_t next_ns;         /* my base time of the next exchange */
	uint32_t exch;
	int k;                   /* ping-pong in flight */
	int in_flight;
	int64_t t1_ns, start_ns;
	MPI_Request rreq, sreq, nreq;
	struct ping pbuf, nbuf;
	struct pong rbuf;
	/* as a parent */
	int nchildren;
	struct child_exp *children;
	MPI_Request preq;
	struct ping in;
	struct slot slots[NSLOTS];
	int next_slot;
	/* followers share the leader's read function */
	MPI_Comm share;
	MPI_Win win;
	struct cont_stats stats;
};

static int64_t base_now(struct engine *e)
{
	return e->base->ops->now(e->base);
}

static int fail(struct engine *e, int rc)
{
	if (rc && !e->err) {
		e->err = rc;
		snprintf(e->errline, sizeof(e->errline), "%s", hclock_last_error());
	}
	return rc;
}

/* the global time of base time x by the target t, and back */
static int64_t to_global(const struct lm *t, int64_t x)
{
	return x + round_ns(lm_offset(t, x));
}

static int64_t from_global(const struct lm *t, int64_t g)
{
	/* x + intercept + slope (x - x0) = g */
	double d = ((double)diff_ns(g, t->x0_ns) - t->intercept_ns) / (1 + t->slope);
	return t->x0_ns + round_ns(d);
}

/* ---- parent ---- */

static struct child_exp *child_of(struct engine *e, int rank)
{
	for (int i = 0; i < e->nchildren; i++)
		if (e->children[i].rank == rank)
			return &e->children[i];
	return NULL;
}

static int post_ping_recv(struct engine *e)
{
	return comm_check(MPI_Irecv(&e->in, (int)sizeof(e->in), MPI_BYTE, MPI_ANY_SOURCE, TAG_PING,
	                            e->comm, &e->preq), "MPI_Irecv (continuous clock)");
}

static void answer(struct engine *e, int src, int64_t t2)
{
	struct slot *s = &e->slots[e->next_slot];
	int done = 1;
	if (s->req != MPI_REQUEST_NULL && comm_check(MPI_Test(&s->req, &done, MPI_STATUS_IGNORE),
	                                             "MPI_Test (continuous clock)"))
		return;
	if (!done) /* a pong 16 answers old still in flight: this ping goes unanswered */
		return;
	e->next_slot = (e->next_slot + 1) % NSLOTS;
	s->msg.exch = e->in.exch;
	s->msg.k = e->in.k;
	s->msg.t2_ns = t2;
	cont_state_target(e->st, &s->msg.tp, &s->msg.bp);
	s->msg.t3_ns = base_now(e);
	clock_before_send(e->base);
	fail(e, comm_check(MPI_Isend(&s->msg, (int)sizeof(s->msg), MPI_BYTE, src, TAG_PONG, e->comm,
	                             &s->req), "MPI_Isend (continuous clock)"));
	e->stats.served++;
}

static void serve(struct engine *e, int64_t now)
{
	/* Driven by a program's MPI calls, a parent notices a ping only at its next call: the
	 * ping's leg holds that wait, the pong's the child's. After answering one ping of an
	 * exchange it therefore waits a little for the next, which the child sends as soon as
	 * it has the pong: the exchange's later ping-pongs then have both ends waiting, legs of
	 * the wire's latency alike (a thread-driven parent answers at once anyway). */
	int64_t spin_until = now;
	for (;;) {
		int flag = 0;
		MPI_Status status;
		if (fail(e, comm_check(MPI_Test(&e->preq, &flag, &status), "MPI_Test (continuous clock)")))
			return;
		if (!flag) {
			if (!e->cfg.thread && diff_ns(spin_until, base_now(e)) > 0)
				continue;
			break;
		}
		int64_t t2 = base_now(e);
		e->events++;
		struct child_exp *c = child_of(e, status.MPI_SOURCE);
		if (c && e->in.k >= 0) {
			answer(e, status.MPI_SOURCE, t2);
			c->active = 1;
			c->since_ns = t2;
			if (e->in.k + 1 < e->cfg.pingpongs)
				spin_until = base_now(e) + SPIN_NS;
		} else if (c) { /* a note: the exchange is over, the next one announced */
			struct lm t;
			struct bound b;
			cont_state_target(e->st, &t, &b);
			c->next_ns = from_global(&t, e->in.next_ns);
			c->active = 0;
			spin_until = now;
		}
		if (fail(e, post_ping_recv(e)))
			return;
	}
	for (int i = 0; i < e->nchildren; i++) { /* a child that went quiet */
		struct child_exp *c = &e->children[i];
		if (c->active && diff_ns(now, c->since_ns) > EXCH_TIMEOUT_NS)
			c->active = 0;
		if (!c->active && c->next_ns != INT64_MAX &&
		    diff_ns(now, c->next_ns) > EXCH_TIMEOUT_NS)
			c->next_ns = INT64_MAX; /* it missed its time: the safety poll catches it */
	}
}

/* ---- child ---- */

static int send_ping(struct engine *e)
{
	int rc = comm_check(MPI_Irecv(&e->rbuf, (int)sizeof(e->rbuf), MPI_BYTE, e->parent, TAG_PONG,
	                              e->comm, &e->rreq), "MPI_Irecv (continuous clock)");
	if (rc)
		return rc;
	if (e->sreq != MPI_REQUEST_NULL) /* the previous ping: long delivered, the pong came */
		MPI_Wait(&e->sreq, MPI_STATUS_IGNORE);
	e->pbuf = (struct ping){e->exch, e->k, 0};
	e->t1_ns = base_now(e);
	clock_before_send(e->base);
	return comm_check(MPI_Isend(&e->pbuf, (int)sizeof(e->pbuf), MPI_BYTE, e->parent, TAG_PING,
	                            e->comm, &e->sreq), "MPI_Isend (continuous clock)");
}

static void give_up(struct engine *e)
{
	if (e->rreq != MPI_REQUEST_NULL) {
		MPI_Cancel(&e->rreq);
		MPI_Wait(&e->rreq, MPI_STATUS_IGNORE);
	}
	e->in_flight = 0;
}

/* the period after an exchange whose projection was dev_ns off (seed 004) */
static void adapt(struct engine *e, double dev_ns)
{
	int64_t lo = (int64_t)(e->cfg.min_s * 1e9), hi = (int64_t)(e->cfg.max_s * 1e9);
	e->stats.last_dev_ns = dev_ns;
	if (dev_ns > e->cfg.threshold_ns) {
		if (e->period_ns > lo)
			e->stats.halvings++;
		e->period_ns = e->period_ns / 2 < lo ? lo : e->period_ns / 2;
		e->streak = 0;
	} else if (++e->streak >= e->cfg.streak) {
		if (e->period_ns < hi)
			e->stats.doublings++;
		e->period_ns = e->period_ns * 2 > hi ? hi : e->period_ns * 2;
		e->streak = 0;
	}
}

/* Both the clock's current target and the new one have strict bounds under the same drift
 * assumption, so the truth lies in both: a new estimate outside the old bound (carried to
 * now at its rate) is moved to the nearest point of their intersection, its bound with it.
 * An exchange that waited on a busy program (a late answer, a skewed midpoint) cannot then
 * move the clock further than what it knew before allows, and the bound stays the narrower
 * intersection. Disjoint bounds (the assumption broke: a step of the rates) leave the new
 * estimate as it is. */
static void keep_inside_old(struct engine *e, int64_t x, struct lm *target, struct bound *bd)
{
	struct lm ot;
	struct bound ob;
	cont_state_target(e->st, &ot, &ob);
	if (!bound_known(&ob) || !bound_known(bd))
		return;
	int64_t yo = to_global(&ot, x), yn = to_global(target, x);
	double olo, ohi, nlo, nhi;
	bound_at(&ob, yo, &olo, &ohi);
	bound_at(bd, yn, &nlo, &nhi);
	/* the intersection relative to yn */
	double d = (double)diff_ns(yo, yn);
	double lo = fmax(d + olo, nlo), hi = fmin(d + ohi, nhi);
	if (lo > hi || (lo <= 0 && 0 <= hi))
		return;
	double delta = lo > 0 ? lo : hi;
	target->intercept_ns += delta;
	/* the bound: the intersection, widening at the faster of the two (the old one's rate
	 * plus how fast the two estimates part), so that it always holds the intersection of
	 * the two as they widen */
	double rate = fmax(bd->rate, ob.rate + fabs(target->slope - ot.slope));
	*bd = (struct bound){yn + (int64_t)llround(delta), lo - delta, hi - delta, rate};
	e->stats.kept_inside++;
}

static void finish_exchange(struct engine *e)
{
	int64_t x;
	double off;
	struct track_fit f;
	if (fault_hit(FAULT_CONT)) {
		fail(e, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in an exchange of the "
		                "continuous clock"));
		return;
	}
	/* the projection's error beyond what this exchange's own queueing explains: on a busy
	 * machine round trips stretch and a fixed threshold halved the period on noise */
	double excess;
	if (!track_last_offset(e->tr, &x, &off, &excess) && e->have_L)
		adapt(e, fmax(0, fabs(lm_offset(&e->L, x) - off) - excess));
	if (!e->have_L) { /* the one-shot model relative to the parent's: the tracker's prior */
		struct lm t0;
		struct bound b;
		cont_state_target(e->st, &t0, &b);
		e->S0 = (struct lm){x, (double)diff_ns(from_global(&e->tp, to_global(&t0, x)), x),
		                    (1 + t0.slope) / (1 + e->tp.slope) - 1};
		e->i0_se = bound_known(&b) ? bound_half_width(&b, to_global(&t0, x)) / 3 : INFINITY;
		/* my one-shot clock's slope error against the reference's is within its bound's
		 * rate, the parent's clock's within the parent's: S0's within the sum */
		e->s0_hw = bound_known(&b) && bound_known(&e->bp) ? b.rate + e->bp.rate : INFINITY;
	}
	double dt = (double)diff_ns(x, e->S0.x0_ns) * 1e-9;
	struct track_prior prior = {e->S0, hypot(e->s0_se, PRIOR_WANDER * dt), e->i0_se,
	                            e->s0_hw};
	/* dropped, or a thread drives: the latest line's slope for a lone exchange only */
	if (!isfinite(e->s0_se) || e->cfg.thread)
		prior = e->have_L ? (struct track_prior){e->L, INFINITY, INFINITY, e->L_hw}
		                  : (struct track_prior){e->S0, INFINITY, INFINITY, e->s0_hw};
	int st = track_fit(e->tr, &prior, &f);
	if (st < 0) {
		fail(e, err_set(st, "out of memory in the continuous clock's tracker"));
		return;
	}
	e->stats.shrinks += st == TRACK_SHRUNK;
	if (f.prior_rejected) /* a change of rate: the one-shot line no longer holds */
		e->s0_se = e->i0_se = INFINITY;
	e->L = f.est;
	e->L_hw = bound_known(&f.bd) ? f.bd.rate * (1 + f.est.slope) : INFINITY;
	e->have_L = 1;
	struct lm target = lm_compose(&e->tp, &e->L);
	struct bound bd = bound_compose(&f.bd, &e->tp, &e->bp);
	if (!e->cfg.thread)
		keep_inside_old(e, f.x_last_ns, &target, &bd);
	double corr = cont_state_update(e->st, e->base, &target, &bd, e->cfg.slew, 0, f.x_last_ns,
	                                (int64_t)(e->cfg.stale_s * 1e9), NULL);
	e->stats.max_corr_ns = fmax(e->stats.max_corr_ns, fabs(corr));
	e->stats.exchanges++;
	/* the next exchange, announced to the parent in global time */
	int64_t now = base_now(e);
	e->next_ns = e->start_ns + e->period_ns;
	if (diff_ns(e->next_ns, now) < 0)
		e->next_ns = now;
	if (e->nreq != MPI_REQUEST_NULL)
		MPI_Wait(&e->nreq, MPI_STATUS_IGNORE); /* a note a period old: delivered */
	e->nbuf = (struct ping){e->exch, -1, to_global(&target, e->next_ns)};
	fail(e, comm_check(MPI_Isend(&e->nbuf, (int)sizeof(e->nbuf), MPI_BYTE, e->parent, TAG_PING,
	                             e->comm, &e->nreq), "MPI_Isend (continuous clock)"));
	e->exch++;
}

static void exchange(struct engine *e, int64_t now)
{
	if (!e->in_flight) {
		if (diff_ns(now, e->next_ns) < 0)
			return;
		e->in_flight = 1;
		e->k = 0;
		e->start_ns = now;
		if (fail(e, send_ping(e)))
			give_up(e);
		return;
	}
	/* a ping sent after a pong: the parent waits for it (serve), so its pong comes at once
	 * (driven by a program's calls; the first ping waits for the parent's next call) */
	int64_t spin_until = now;
	for (;;) {
		int flag = 0;
		if (fail(e, comm_check(MPI_Test(&e->rreq, &flag, MPI_STATUS_IGNORE),
		                       "MPI_Test (continuous clock)")))
			return;
		if (!flag) {
			if (!e->cfg.thread && diff_ns(spin_until, base_now(e)) > 0)
				continue;
			if (diff_ns(now, e->start_ns) > EXCH_TIMEOUT_NS) {
				give_up(e);
				e->stats.timeouts++;
				e->exch++;
				e->next_ns = now + e->period_ns;
			}
			return;
		}
		int64_t t4 = base_now(e);
		e->events++;
		if (e->rbuf.exch != e->exch || e->rbuf.k != e->k) { /* a pong of an exchange given up */
			if (fail(e, comm_check(MPI_Irecv(&e->rbuf, (int)sizeof(e->rbuf), MPI_BYTE,
			                                 e->parent, TAG_PONG, e->comm, &e->rreq),
			                       "MPI_Irecv (continuous clock)")))
				e->in_flight = 0;
			return;
		}
		e->tp = e->rbuf.tp;
		e->bp = e->rbuf.bp;
		int rc = track_add(e->tr, e->exch, e->t1_ns, e->rbuf.t2_ns, e->rbuf.t3_ns, t4);
		if (rc == HCLOCK_ENOMEM)
			fail(e, err_set(rc, "out of memory in the continuous clock's tracker"));
		if (++e->k < e->cfg.pingpongs) {
			if (fail(e, send_ping(e))) {
				give_up(e);
				return;
			}
			spin_until = base_now(e) + SPIN_NS;
			continue;
		}
		e->in_flight = 0;
		finish_exchange(e);
		return;
	}
}

int engine_progress(struct engine *e, int64_t *wake)
{
	int64_t now = base_now(e);
	*wake = now + SAFETY_POLL_NS;
	if (e->err || e->stopped)
		return e->err;
	if (e->nchildren)
		serve(e, now);
	if (e->parent >= 0 && !e->err) {
		exchange(e, now);
		if (!e->in_flight && diff_ns(e->next_ns, *wake) < 0)
			*wake = e->next_ns;
	}
	for (int i = 0; i < e->nchildren; i++) {
		int64_t w = e->children[i].next_ns - WAKE_EARLY_NS;
		if (e->children[i].next_ns != INT64_MAX && diff_ns(w, *wake) < 0)
			*wake = w;
	}
	return e->err;
}

int engine_try_progress(struct engine *e, int64_t *wake)
{
	if (__atomic_exchange_n(&e->busy_flag, 1, __ATOMIC_ACQUIRE)) {
		*wake = 0;
		return 0;
	}
	int rc = engine_progress(e, wake);
	__atomic_store_n(&e->busy_flag, 0, __ATOMIC_RELEASE);
	return rc;
}

uint64_t engine_events(const struct engine *e)
{
	return e->events;
}

int engine_busy(const struct engine *e)
{
	if (e->in_flight)
		return 1;
	for (int i = 0; i < e->nchildren; i++)
		if (e->children[i].active)
			return 1;
	return 0;
}

/* ---- set up and tear down ---- */

/* the process whose clock p's follows (itself unless it shares) */
static int source_of(const int *tree, int r)
{
	int hops = 0;
	while (tree[2 * r + 1] && tree[2 * r] >= 0 && hops++ < 64)
		r = tree[2 * r];
	return r;
}

/* followers and their leader: one shared window with the leader's read function */
static int make_share(struct engine *e, const int *tree, int p, struct cont_state **shared)
{
	int src = source_of(tree, e->rank), n = 0;
	for (int r = 0; r < p; r++)
		n += source_of(tree, r) == src;
	*shared = NULL;
	if (MPI_Comm_split(e->comm, n > 1 ? src : MPI_UNDEFINED, e->rank == src ? 0 : 1 + e->rank,
	                   &e->share) != MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "MPI_Comm_split (continuous clock) failed");
	if (e->share == MPI_COMM_NULL)
		return 0;
	MPI_Comm node;
	int nn = 0;
	MPI_Comm_split_type(e->share, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &nn);
	MPI_Comm_free(&node);
	if (nn != n)
		return err_set(HCLOCK_EUNSUPP, "cont(...): the processes that copy a clock with prop "
		               "must share memory with the process they copy it from (their clock "
		               "reads its model there); %d of %d do: use a sync algorithm instead of "
		               "prop for the lower level", nn, n);
	MPI_Aint size = e->rank == src ? (MPI_Aint)cont_state_size() : 0;
	void *base_ptr = NULL;
	int rc = comm_check(MPI_Win_allocate_shared(size, 8, MPI_INFO_NULL, e->share, &base_ptr,
	                                            &e->win), "MPI_Win_allocate_shared");
	if (rc)
		return rc;
	MPI_Aint qs;
	int du;
	rc = comm_check(MPI_Win_shared_query(e->win, 0, &qs, &du, &base_ptr),
	                "MPI_Win_shared_query");
	*shared = base_ptr;
	return rc;
}

static void cancel(MPI_Request *r)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	MPI_Cancel(r);
	MPI_Wait(r, MPI_STATUS_IGNORE);
}

/* sends complete (they are small and eager) or are let go */
static void finish_send(MPI_Request *r)
{
	int done = 0;
	if (*r == MPI_REQUEST_NULL)
		return;
	for (int i = 0; i < 1000 && !done; i++)
		MPI_Test(r, &done, MPI_STATUS_IGNORE);
	if (!done)
		MPI_Request_free(r);
}

static void quiesce(struct engine *e)
{
	cancel(&e->rreq);
	cancel(&e->preq);
	finish_send(&e->sreq);
	finish_send(&e->nreq);
	for (int i = 0; i < NSLOTS; i++)
		finish_send(&e->slots[i].req);
	e->in_flight = 0;
	e->stopped = 1;
}

/* collective over the engine's communicators: the share window and communicator, then the
 * engine's own (after a stop, or a start that failed everywhere) */
static void free_comms(struct engine *e)
{
	if (e->win != MPI_WIN_NULL)
		MPI_Win_free(&e->win);
	if (e->share != MPI_COMM_NULL)
		MPI_Comm_free(&e->share);
	if (e->comm != MPI_COMM_NULL)
		MPI_Comm_free(&e->comm);
}

int engine_create(MPI_Comm comm, hclock_clock *base, const struct cont_cfg *cfg, int parent,
                  int shares, const struct lm *t0, const struct bound *b0, struct engine **out,
                  hclock_clock **clk)
{
	int p, rc = 0;
	*out = NULL;
	*clk = NULL;
	struct engine *e = fault_calloc(1, sizeof(*e));
	int *tree = NULL;
	MPI_Comm_size(comm, &p);
	if (!e || !(tree = fault_malloc(2 * (size_t)p * sizeof(*tree))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	if ((rc = comm_agree(comm, rc))) { /* before any other collective */
		free(tree);
		free(e);
		return rc;
	}
	e->base = hclock_clock_ref(base);
	e->cfg = *cfg;
	e->comm = e->share = MPI_COMM_NULL;
	e->win = MPI_WIN_NULL;
	e->rreq = e->sreq = e->nreq = e->preq = MPI_REQUEST_NULL;
	for (int i = 0; i < NSLOTS; i++)
		e->slots[i].req = MPI_REQUEST_NULL;
	e->tp = (struct lm){0, 0, 0};
	e->bp = bound_unknown();
	MPI_Comm_rank(comm, &e->rank);
	rc = comm_check(MPI_Comm_dup(comm, &e->comm), "MPI_Comm_dup (continuous clock)");
	if ((rc = comm_agree(comm, rc))) {
		hclock_clock_free(e->base);
		free(tree);
		free(e);
		return rc;
	}
	MPI_Comm_set_errhandler(e->comm, MPI_ERRORS_RETURN);
	int mine[2] = {parent, shares};
	rc = comm_check(MPI_Allgather(mine, 2, MPI_INT, tree, 2, MPI_INT, e->comm),
	                "MPI_Allgather (continuous clock)");
	struct cont_state *shared = NULL;
	if (!rc)
		rc = make_share(e, tree, p, &shared);
	else
		MPI_Comm_split(e->comm, MPI_UNDEFINED, 0, &e->share);
	e->parent = shares ? -1 : parent;
	for (int r = 0; r < p && !rc; r++)
		e->nchildren += tree[2 * r] == e->rank && !tree[2 * r + 1];
	if (!rc && e->nchildren && !(e->children = fault_calloc((size_t)e->nchildren,
	                                                         sizeof(*e->children))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	for (int r = 0, i = 0; r < p && e->children; r++)
		if (tree[2 * r] == e->rank && !tree[2 * r + 1])
			e->children[i++] = (struct child_exp){r, INT64_MAX, 0, 0};
	struct track_params tp = {(int64_t)(cfg->window_s * 1e9),
	                          2 * clock_read_error_ns(base) * (1 + 2e-3), cfg->drift,
	                          cfg->threshold_ns, !cfg->thread};
	if (!rc && e->parent >= 0 && !(e->tr = track_create(&tp)))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	/* the clock: the one-shot model to start from; rank 0 is the reference, exactly */
	struct lm t = *t0;
	struct bound b = *b0;
	/* the prior's slope error: a third of the one-shot bound's slope half-width */
	e->s0_se = isfinite(b0->rate) && b0->rate > 0 ? b0->rate / 3 : PRIOR_SLOPE_SE;
	if (e->rank == 0) {
		t = (struct lm){0, 0, 0};
		b = bound_exact();
	}
	int leader = shared && !shares;
	if (!rc)
		rc = cont_clock_create(base, shares ? shared : NULL, clk);
	if (!rc) {
		e->clk = hclock_clock_ref(*clk); /* the engine's own reference */
		e->st = cont_clock_state(*clk);
		if (leader) { /* publish in the window, read from it */
			cont_state_init(shared, &t, &b, HCLOCK_BOUNDS_LIVE);
			cont_clock_set_state(*clk, shared);
			e->st = shared;
		} else if (!shares) {
			cont_state_init(e->st, &t, &b, HCLOCK_BOUNDS_LIVE);
		}
	}
	/* first exchanges staggered over one period, announced before anyone starts */
	e->period_ns = (int64_t)(cfg->min_s * 1e9);
	int64_t now = base_now(e);
	e->next_ns = now + e->period_ns + e->period_ns * (e->rank % 8) / 8;
	struct ping note = {0, -1, to_global(&t, e->next_ns)};
	MPI_Request sr = MPI_REQUEST_NULL;
	if (e->parent >= 0)
		rc = first_err(rc, comm_check(MPI_Isend(&note, (int)sizeof(note), MPI_BYTE, e->parent,
		                                        TAG_PING, e->comm, &sr), "MPI_Isend"));
	for (int i = 0; i < e->nchildren; i++) {
		struct ping in;
		MPI_Status status;
		int r2 = comm_check(MPI_Recv(&in, (int)sizeof(in), MPI_BYTE, MPI_ANY_SOURCE, TAG_PING,
		                             e->comm, &status), "MPI_Recv (continuous clock)");
		struct child_exp *c = r2 ? NULL : child_of(e, status.MPI_SOURCE);
		if (c && e->st)
			c->next_ns = from_global(&t, in.next_ns);
		rc = first_err(rc, r2);
	}
	if (sr != MPI_REQUEST_NULL)
		rc = first_err(rc, comm_check(MPI_Wait(&sr, MPI_STATUS_IGNORE), "MPI_Wait"));
	if (!rc && e->nchildren)
		rc = post_ping_recv(e);
	free(tree);
	rc = comm_agree(e->comm, rc);
	if (rc) { /* every rank is here: the collective frees can be made */
		quiesce(e);
		free_comms(e);
		engine_destroy(e);
		hclock_clock_free(*clk);
		*clk = NULL;
		return rc;
	}
	*out = e;
	return 0;
}

int engine_stop(struct engine *e)
{
	quiesce(e);
	if (e->err) /* the line was set in the thread that failed */
		err_set(e->err, "%s", e->errline);
	int rc = comm_agree(e->comm, e->err);
	/* nothing is sent any more: take in what is still on the way */
	for (;;) {
		int flag = 0;
		MPI_Status status;
		char buf[sizeof(struct pong)];
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, e->comm, &flag, &status);
		if (!flag)
			break;
		MPI_Recv(buf, (int)sizeof(buf), MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, e->comm,
		         MPI_STATUS_IGNORE);
	}
	/* freeze; followers and leaders take a copy of the shared function into their clock */
	if (e->share != MPI_COMM_NULL) {
		int sr;
		MPI_Comm_rank(e->share, &sr);
		if (sr == 0)
			cont_state_set_status(e->st, HCLOCK_BOUNDS_FROZEN);
		MPI_Barrier(e->share);
		cont_clock_own_copy(e->clk);
		MPI_Barrier(e->share);
	} else {
		cont_state_set_status(e->st, HCLOCK_BOUNDS_FROZEN);
	}
	e->st = cont_clock_state(e->clk);
	free_comms(e);
	return rc;
}

void engine_destroy(struct engine *e)
{
	if (!e)
		return;
	int fin = 0;
	MPI_Finalized(&fin);
	if (!e->stopped && !fin)
		quiesce(e);
	/* without a collective stop the window and the communicator stay (the clock may read
	 * the window; freeing either is collective) */
	track_destroy(e->tr);
	free(e->children);
	hclock_clock_free(e->clk);
	hclock_clock_free(e->base);
	free(e);
}

void engine_stats(const struct engine *e, struct cont_stats *st)
{
	*st = e->stats;
	st->period_s = (double)e->period_ns / 1e9;
}

hclock_clock *engine_base(const struct engine *e)
{
	return e->base;
}
