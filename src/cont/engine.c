/*
 * engine.c - the continuous clock's exchanges (cont/engine.h): the protocol between a child
 * and its parent, run over a nonblocking link (transport/nblink.h); what an exchange means
 * for the clock is the servo's business (cont/servo.h), the followers' shared clock
 * cont/share.c's.
 *
 * Messages on the engine's own link (over MPI, a duplicate of the run's private
 * communicator), which also carries the set-up and tear-down: engine.c makes no MPI call.
 *   child -> parent  TAG_PING  struct ping: k >= 0 a ping of exchange exch; k < 0 a note
 *                              (the next exchange starts at global time next_ns), after
 *                              an exchange completed or given up
 *   parent -> child  TAG_PONG  struct pong: its base receive and send times, its model
 * Every wait is a poll: an exchange not done after EXCH_TIMEOUT_NS is given up, and a pong
 * of an exchange given up is recognized by its numbers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "cont/engine.h"
#include "cont/servo.h"
#include "cont/share.h"
#include "model/cont.h"
#include "transport/nblink.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

#define TAG_PING 0x4850
#define TAG_PONG 0x4851
#define EXCH_TIMEOUT_NS 50000000ll     /* an exchange not done after 50 ms is given up */
#define WAKE_EARLY_NS 50000ll          /* a parent polls from 50 us before a child's time */
#define SAFETY_POLL_NS 100000000ll     /* and at least every 100 ms for unannounced pings */
#define SPIN_NS 50000ll                /* drive=progress: how long a parent that answered a ping
                                          waits for the exchange's next one, and a child that
                                          sent a ping after a pong waits for its pong */
#define PRIOR_SLOPE_SE 1e-6            /* a one-shot slope's standard error where its bound
                                          says nothing */

struct ping {
	uint32_t exch;   /* exchange number of the child */
	int32_t k;       /* ping-pong index; < 0: a note */
	int64_t next_ns; /* note: the next exchange's start, global time ns */
};

struct pong {
	uint32_t exch;
	int32_t k;
	int64_t t2_ns, t3_ns; /* the parent's base receive and send times, ns */
	struct lm tp;         /* the parent's target model: its base -> the reference */
	struct bound bp;      /* and its bound */
};

struct child_exp {
	int rank;
	int64_t next_ns;  /* base time of its announced next exchange, ns (INT64_MAX: none) */
	int active;       /* its exchange is under way (pinged, no note yet) */
	int64_t since_ns; /* base time of its latest ping, ns */
	int64_t stall_ns; /* test hook (HCLOCK_FAULT at=stall): its exchange's pings are taken
	                     this late, ns (0: not stalled) */
};

struct engine {
	int rank;
	hclock_clock *base;
	hclock_clock *clk;       /* this process's continuous clock */
	struct cont_state *st;   /* what it reads (own, or the share window's) */
	struct cont_cfg cfg;
	struct nblink *link;
	struct share share;
	int err;                 /* first error; the engine stops exchanging after it */
	char errline[400];       /* its line (the error text is per thread: the driver's thread
	                            sets it, engine_stop reports it) */
	int busy_flag;           /* engine_drive's lock */
	int64_t busy_since;      /* engine_drive's polling: base time the current spin
	                            started, ns (-1: not spinning) */
	uint64_t busy_events;    /* events when it looked last */
	int64_t poll_ns;         /* the next nap while an exchange waits, ns */
	int stopped;
	int mute;                /* test hook (HCLOCK_FAULT at=mute): answer no ping */
	uint64_t events;         /* messages handled (the driver spins while they come) */
	/* as a child */
	int parent;              /* -1: none (root or follower) */
	struct servo *servo;
	int64_t next_ns;         /* base time of the next exchange, ns */
	uint32_t exch;
	int k;                   /* ping-pong in flight */
	int in_flight;
	int64_t t1_ns, start_ns; /* base times: the ping in flight was sent, the exchange began */
	int64_t stall_ns;        /* test hook (HCLOCK_FAULT at=stall): the exchange's pongs are
	                            taken this late, ns (0: not stalled) */
	/* as a parent */
	int nchildren;
	struct child_exp *children;
	struct hclock_sync_stats stats; /* its own counters: exchanges, timeouts, served,
	                                   max_corr_ns (the servo keeps the rest) */
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

/* a message with the clock's pre-send hook (emulated jitter) after its timestamps, so that
 * it looks like network delay; a message the link dropped is lost like any other */
static int send_msg(struct engine *e, int peer, int tag, const void *m, size_t len)
{
	clock_before_send(e->base);
	int rc = nblink_send(e->link, peer, tag, m, len);
	return rc < 0 ? rc : 0;
}

/* ---- parent ---- */

static struct child_exp *child_of(struct engine *e, int rank)
{
	for (int i = 0; i < e->nchildren; i++)
		if (e->children[i].rank == rank)
			return &e->children[i];
	return NULL;
}

/* A ping or a note from a child. Driven by a program's MPI calls, a parent notices a ping
 * only at its next call: the ping's leg holds that wait, the pong's the child's. After
 * answering one ping of an exchange it therefore waits a little for the next, which the
 * child sends as soon as it has the pong: the exchange's later ping-pongs then have both
 * ends waiting, legs of the wire's latency alike (a thread-driven parent answers at once). */
static void on_ping(struct engine *e, int src, const struct ping *in, int64_t t2,
                    int64_t *spin_until)
{
	struct child_exp *c = child_of(e, src);
	if (!c)
		return;
	if (in->k < 0) { /* a note: the exchange is over, the next one announced */
		struct lm t;
		struct bound b;
		cont_state_target(e->st, &t, &b);
		c->next_ns = lm_unmap(&t, in->next_ns);
		c->active = 0;
		*spin_until = t2;
		return;
	}
	if (!e->mute && fault_hit(FAULT_MUTE))
		e->mute = 1;
	if (e->mute)
		return;
	struct pong out = {in->exch, in->k, t2, 0, {0, 0, 0}, bound_unknown()};
	cont_state_target(e->st, &out.tp, &out.bp);
	out.t3_ns = base_now(e);
	int rc = send_msg(e, src, TAG_PONG, &out, sizeof(out));
	if (fail(e, rc))
		return;
	e->stats.served++;
	c->active = 1;
	c->since_ns = t2;
	if (in->k + 1 < e->cfg.pingpongs)
		*spin_until = base_now(e) + SPIN_NS;
}

/* children that went quiet */
static void watch_children(struct engine *e, int64_t now)
{
	for (int i = 0; i < e->nchildren; i++) {
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
	struct ping p = {e->exch, e->k, 0};
	e->t1_ns = base_now(e);
	return send_msg(e, e->parent, TAG_PING, &p, sizeof(p));
}

static void start_exchange(struct engine *e, int64_t now)
{
	e->in_flight = 1;
	e->k = 0;
	e->start_ns = now;
	if (fail(e, send_ping(e)))
		e->in_flight = 0;
}

/* an exchange not done in time: counted, and the next one announced all the same, so that
 * a parent that missed a message (or its note) listens for it */
static void give_up(struct engine *e, int64_t now)
{
	struct lm cur;
	struct bound cur_b;
	e->in_flight = 0;
	servo_lost(e->servo);
	e->stats.timeouts++;
	e->next_ns = now + servo_period_ns(e->servo);
	cont_state_target(e->st, &cur, &cur_b);
	struct ping note = {e->exch, -1, lm_map(&cur, e->next_ns)};
	fail(e, send_msg(e, e->parent, TAG_PING, &note, sizeof(note)));
	e->exch++;
}

/* the exchange's last pong came: the servo's new target, the next exchange announced */
static void finish_exchange(struct engine *e)
{
	struct lm cur;
	struct bound cur_b;
	struct servo_out o;
	if (fault_hit(FAULT_CONT)) {
		fail(e, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in an exchange of the "
		                "continuous clock"));
		return;
	}
	cont_state_target(e->st, &cur, &cur_b);
	int rc = servo_finish(e->servo, &cur, &cur_b, &o);
	if (fail(e, rc < 0 ? rc : 0))
		return;
	if (rc == 0) {
		double corr = cont_state_update(e->st, e->base, &o.target, &o.bound, e->cfg.slew, 0,
		                                o.x_ns, (int64_t)(e->cfg.stale_s * 1e9), NULL);
		e->stats.max_corr_ns = fmax(e->stats.max_corr_ns, fabs(corr));
		cur = o.target;
	}
	e->stats.exchanges++;
	/* the next exchange, announced to the parent in global time */
	int64_t now = base_now(e);
	e->next_ns = e->start_ns + servo_period_ns(e->servo);
	if (diff_ns(e->next_ns, now) < 0)
		e->next_ns = now;
	struct ping note = {e->exch, -1, lm_map(&cur, e->next_ns)};
	fail(e, send_msg(e, e->parent, TAG_PING, &note, sizeof(note)));
	e->exch++;
}

/* a pong: the next ping, or the exchange's end */
static void on_pong(struct engine *e, const struct pong *in, int64_t t4, int64_t *spin_until)
{
	if (!e->in_flight || in->exch != e->exch || in->k != e->k)
		return; /* a pong of an exchange given up */
	int rc = servo_sample(e->servo, e->exch, e->t1_ns, in->t2_ns, in->t3_ns, t4, &in->tp,
	                      &in->bp);
	if (rc == HCLOCK_ENOMEM)
		fail(e, err_set(rc, "out of memory in the continuous clock's tracker"));
	if (++e->k < e->cfg.pingpongs) {
		if (fail(e, send_ping(e)))
			e->in_flight = 0;
		else /* the parent waits for this ping (on_ping): its pong comes at once */
			*spin_until = base_now(e) + SPIN_NS;
		return;
	}
	e->in_flight = 0;
	finish_exchange(e);
	*spin_until = t4;
}

/* ---- both ---- */

/* Test hook (HCLOCK_FAULT at=stall): a message of a stalled exchange is taken late, before
 * its timestamp, as if the scheduler had given the core away between its arrival and its
 * reading: the stall is drawn at the exchange's first pong (child) or ping (parent), and
 * holds every later message of that exchange on this side. */
static void stall_msg(struct engine *e, int peer, int tag, const void *m, size_t len)
{
	int64_t d = 0;
	if (tag == TAG_PONG && len == sizeof(struct pong) && peer == e->parent) {
		const struct pong *in = m;
		if (!e->in_flight || in->exch != e->exch || in->k != e->k)
			return;
		if (in->k == 0)
			e->stall_ns = fault_stall_draw_at(FAULT_STALL_CHILD);
		d = e->stall_ns;
	} else if (tag == TAG_PING && len == sizeof(struct ping)) {
		const struct ping *in = m;
		struct child_exp *c = child_of(e, peer);
		if (!c || in->k < 0)
			return;
		if (in->k == 0)
			c->stall_ns = fault_stall_draw_at(FAULT_STALL_PARENT);
		d = c->stall_ns;
	}
	if (d > 0)
		real_sleep_ns(d);
}

/* Take in what came; driven by a program's calls (not a thread), poll on until
 * *spin_until while an exchange's next message is due at once. */
static void pump(struct engine *e, int64_t now)
{
	int64_t spin_until = now;
	union {
		struct ping ping;
		struct pong pong;
	} m;
	while (!e->err) {
		int peer, tag;
		size_t len;
		int r = nblink_poll(e->link, &peer, &tag, &m, sizeof(m), &len);
		if (fail(e, r < 0 ? r : 0))
			return;
		if (!r) {
			if (!e->cfg.thread && diff_ns(spin_until, base_now(e)) > 0)
				continue;
			return;
		}
		if (fault_stall_armed)
			stall_msg(e, peer, tag, &m, len);
		int64_t t = base_now(e);
		e->events++;
		if (tag == TAG_PING && len == sizeof(m.ping) && e->nchildren)
			on_ping(e, peer, &m.ping, t, &spin_until);
		else if (tag == TAG_PONG && len == sizeof(m.pong) && peer == e->parent)
			on_pong(e, &m.pong, t, &spin_until);
	}
}

static int engine_progress(struct engine *e, int64_t *wake)
{
	int64_t now = base_now(e);
	*wake = now + SAFETY_POLL_NS;
	if (e->err || e->stopped)
		return e->err;
	if (e->parent >= 0 && !e->in_flight && diff_ns(now, e->next_ns) >= 0)
		start_exchange(e, now);
	pump(e, now);
	if (e->parent >= 0 && e->in_flight && diff_ns(now, e->start_ns) > EXCH_TIMEOUT_NS)
		give_up(e, now);
	watch_children(e, now);
	if (e->parent >= 0 && !e->in_flight && diff_ns(e->next_ns, *wake) < 0)
		*wake = e->next_ns;
	for (int i = 0; i < e->nchildren; i++) {
		int64_t w = e->children[i].next_ns - WAKE_EARLY_NS;
		if (e->children[i].next_ns != INT64_MAX && diff_ns(w, *wake) < 0)
			*wake = w;
	}
	return e->err;
}

/* While an exchange is under way: poll without sleeping for SPIN_POLL_NS after its start or
 * its last message (a reply on a free core comes within a few us; a parent wakes 50 us
 * before a child's announced time), then nap POLL_NS, doubling up to MAX_POLL_NS while
 * nothing comes. A nap costs 20-30 us of CPU on this machine (timer and two context
 * switches), so short naps save nothing over spinning; under loops that keep every core
 * busy the spin of 300 us and steady 20 us naps this replaces cost 1.3-2.3 % of a core. */
#define SPIN_POLL_NS 100000
#define POLL_NS 50000
#define MAX_POLL_NS 1000000
#define MAX_SLEEP_NS 1000000000ll

static int engine_busy(const struct engine *e)
{
	if (e->in_flight)
		return 1;
	for (int i = 0; i < e->nchildren; i++)
		if (e->children[i].active)
			return 1;
	return 0;
}

int engine_drive(struct engine *e, int64_t *sleep_ns, int64_t *now_ns)
{
	int64_t wake;
	if (__atomic_exchange_n(&e->busy_flag, 1, __ATOMIC_ACQUIRE)) {
		*sleep_ns = 0; /* another thread drives: at once again */
		if (now_ns)
			*now_ns = base_now(e);
		return 0;
	}
	int rc = engine_progress(e, &wake);
	int64_t now = base_now(e);
	if (now_ns)
		*now_ns = now;
	if (rc) {
		*sleep_ns = MAX_SLEEP_NS;
	} else if (engine_busy(e) || wake - now <= 0) {
		if (e->busy_since < 0 || e->events != e->busy_events) {
			e->busy_since = now;
			e->poll_ns = POLL_NS;
		}
		e->busy_events = e->events;
		if (now - e->busy_since < SPIN_POLL_NS) {
			*sleep_ns = 0;
		} else {
			*sleep_ns = e->poll_ns;
			e->poll_ns = e->poll_ns * 2 > MAX_POLL_NS ? MAX_POLL_NS : e->poll_ns * 2;
		}
	} else {
		e->busy_since = -1;
		*sleep_ns = wake - now < MAX_SLEEP_NS ? wake - now : MAX_SLEEP_NS;
	}
	__atomic_store_n(&e->busy_flag, 0, __ATOMIC_RELEASE);
	return rc;
}

/* ---- set up and tear down ---- */

/* this process's servo: the learning of its base against its parent's */
static int make_servo(struct engine *e, const struct bound *b0)
{
	struct servo_cfg sc = {
		.window_ns = (int64_t)(e->cfg.window_s * 1e9),
		.min_period_ns = (int64_t)(e->cfg.min_s * 1e9),
		.max_period_ns = (int64_t)(e->cfg.max_s * 1e9),
		.threshold_ns = e->cfg.threshold_ns,
		.streak = e->cfg.streak,
		.drift = e->cfg.drift,
		.read_err_ns = 2 * clock_read_error_ns(e->base) * (1 + 2e-3),
		/* a third of the one-shot bound's slope half-width */
		.prior_slope_se = isfinite(b0->rate) && b0->rate > 0 ? b0->rate / 3 : PRIOR_SLOPE_SE,
		.late_answers = !e->cfg.thread,
	};
	return servo_create(SERVO_TRACK, &sc, &e->servo);
}

/* the one-shot announcement of each child's first exchange, before anyone starts */
static int first_notes(struct engine *e, const struct lm *t)
{
	int rc = 0;
	struct ping note = {0, -1, lm_map(t, e->next_ns)};
	if (e->parent >= 0 && (rc = nblink_send(e->link, e->parent, TAG_PING, &note,
	                                        sizeof(note))) > 0)
		rc = err_set(HCLOCK_EMPI, "the continuous clock's link had no room for its first note");
	for (int i = 0; i < e->nchildren; i++) {
		/* each child's, in turn (any child's, when there was no memory for the list) */
		struct ping in;
		struct child_exp *c = e->children ? &e->children[i] : NULL;
		int r2 = nblink_recv(e->link, c ? c->rank : -1, TAG_PING, &in, sizeof(in));
		if (c && !r2)
			c->next_ns = lm_unmap(t, in.next_ns);
		rc = first_err(rc, r2);
	}
	return rc;
}

static void free_engine(struct engine *e)
{
	if (!e)
		return;
	nblink_destroy(e->link);
	servo_destroy(e->servo);
	free(e->children);
	hclock_clock_free(e->clk);
	hclock_clock_free(e->base);
	free(e);
}

/* the children in the tree (tree[2 r]: r's parent, tree[2 r + 1]: r follows it) */
static int find_children(struct engine *e, const int *tree, int p)
{
	for (int r = 0; r < p; r++)
		e->nchildren += tree[2 * r] == e->rank && !tree[2 * r + 1];
	if (e->nchildren && !(e->children = fault_calloc((size_t)e->nchildren,
	                                                 sizeof(*e->children))))
		return err_set(HCLOCK_ENOMEM, "out of memory");
	for (int r = 0, i = 0; r < p && e->children; r++)
		if (tree[2 * r] == e->rank && !tree[2 * r + 1])
			e->children[i++] = (struct child_exp){r, INT64_MAX, 0, 0, 0};
	return 0;
}

/* the clock: the one-shot model t to start from (bound b), read from the followers' window
 * where this process shares one */
static int make_clock(struct engine *e, int shares, const struct lm *t, const struct bound *b,
                      hclock_clock **clk)
{
	int rc = cont_clock_create(e->base, shares ? e->share.state : NULL, clk);
	if (rc)
		return rc;
	e->clk = hclock_clock_ref(*clk); /* the engine's own reference */
	e->st = cont_clock_state(*clk);
	if (e->share.state && !shares) { /* a leader: publish in the window, read from it */
		cont_state_init(e->share.state, t, b, HCLOCK_BOUNDS_LIVE);
		cont_clock_set_state(*clk, e->share.state);
		e->st = e->share.state;
	} else if (!shares) {
		cont_state_init(e->st, t, b, HCLOCK_BOUNDS_LIVE);
	}
	/* the one-shot model goes stale as an exchange's would: a child whose parent never
	 * answers says so after stale_s, as one whose parent stopped later does */
	if (e->parent >= 0)
		cont_state_update(e->st, e->base, t, b, e->cfg.slew, 0, base_now(e),
		                  (int64_t)(e->cfg.stale_s * 1e9), NULL);
	return 0;
}

int engine_create(struct nblink *link, hclock_clock *base, const struct cont_cfg *cfg,
                  int parent, int shares, const struct lm *t0, const struct bound *b0,
                  struct engine **out, hclock_clock **clk)
{
	int p = link->size, rc = 0;
	*out = NULL;
	*clk = NULL;
	struct engine *e = fault_calloc(1, sizeof(*e));
	int *tree = NULL;
	if (!e || !(tree = fault_malloc(2 * (size_t)p * sizeof(*tree))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	if ((rc = nblink_agree(link, rc))) { /* before any other collective */
		nblink_close(link);
		nblink_destroy(link);
		goto err;
	}
	e->link = link;
	e->base = hclock_clock_ref(base);
	e->cfg = *cfg;
	e->busy_since = -1;
	e->rank = link->rank;
	/* from here every step runs on every rank whatever failed before it; agreed at the end */
	int mine[2] = {parent, shares};
	rc = nblink_allgather(link, mine, sizeof(mine), tree);
	rc = first_err(rc, share_create(link, rc ? NULL : tree, &e->share));
	e->parent = shares ? -1 : parent;
	if (!rc)
		rc = find_children(e, tree, p);
	if (!rc && e->parent >= 0)
		rc = make_servo(e, b0);
	/* rank 0 is the reference, exactly */
	struct lm t = e->rank == 0 ? (struct lm){0, 0, 0} : *t0;
	struct bound b = e->rank == 0 ? bound_exact() : *b0;
	if (!rc)
		rc = make_clock(e, shares, &t, &b, clk);
	/* first exchanges staggered over one period, announced before anyone starts */
	int64_t period = (int64_t)(cfg->min_s * 1e9);
	e->next_ns = base_now(e) + period + period * (e->rank % 8) / 8;
	rc = first_err(rc, first_notes(e, &t));
	if ((rc = nblink_agree(link, rc)))
		goto err_link;
	free(tree);
	*out = e;
	return 0;

err_link: /* every rank is here: the collective frees can be made */
	nblink_close(link);
	hclock_clock_free(*clk);
	*clk = NULL;
err:
	free(tree);
	free_engine(e);
	return rc;
}

int engine_stop(struct engine *e)
{
	nblink_quiesce(e->link);
	e->in_flight = 0;
	e->stopped = 1;
	if (e->err) /* the line was set in the thread that failed */
		err_set(e->err, "%s", e->errline);
	int rc = nblink_agree(e->link, e->err);
	/* nothing is sent any more; freeze: followers and leaders take a copy of the shared
	 * state into their clock */
	if (e->share.member)
		share_freeze(&e->share, e->clk);
	else
		cont_state_set_status(e->st, HCLOCK_BOUNDS_FROZEN);
	e->st = cont_clock_state(e->clk);
	/* take in what is still on the way, free the group's memory and the link's own */
	nblink_close(e->link);
	nblink_destroy(e->link);
	e->link = NULL;
	return rc;
}

void engine_destroy(struct engine *e)
{
	if (!e)
		return;
	/* without a collective stop the link's collective parts (the shared memory the clock
	 * may read, over MPI a communicator) stay; destroying the link stops this process's
	 * exchanges */
	free_engine(e);
}

void engine_stats(const struct engine *e, struct hclock_sync_stats *st)
{
	*st = e->stats;
	st->thread_cpu_s = -1;
	st->running = 1;
	st->period_s = e->cfg.min_s;
	if (e->servo) {
		struct servo_stats ss;
		servo_stats(e->servo, &ss);
		st->halvings = ss.halvings;
		st->doublings = ss.doublings;
		st->shrinks = ss.shrinks;
		st->kept_inside = ss.kept_inside;
		st->last_dev_ns = ss.last_dev_ns;
		st->noise_ns = ss.noise_ns;
		st->rtt_ns = ss.rtt_ns;
		st->period_s = (double)servo_period_ns(e->servo) / 1e9;
	}
}

hclock_clock *engine_base(const struct engine *e)
{
	return e->base;
}
