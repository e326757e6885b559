/*
 * test_repair.c - src/align/repair.c: message order repaired within the bounds, both ways in
 * time (hclock align --repair-order, hclock trace --repair-order), MPI-free and trace-free.
 *
 * Hand-made cases: a receive before its send moved to the send and the events after it on
 * its node only as far as they would precede it; an exact bound passes, a bound short by a
 * fraction of a ns fails naming the message and the event; a chain across three nodes, with
 * and without a minimum latency; nodes that must interleave (a naive node-by-node pass would
 * wait forever); an impossible pairing (a cycle) and a cycle only through events of one local
 * time; events of one local time moved together; an inversion into a node whose events cannot
 * move (a reference) repaired by moving the send back within its delta_minus (the events
 * after it untouched, the one before it moved back only as far as it would follow the send),
 * and the error when the event before it, or its own lower bound, holds it.
 * Random cases (40 seeds): runs of 2-6 nodes of known happens-before, corrected times off by
 * up to 5 us, bounds that hold the truth with random slack (now and then cut), sometimes
 * messages paired wrongly. Checked against a brute-force least solution and independent
 * cycle searches: the result exists exactly when no event needs more than its bound and no
 * cycle forbids an order; then no receive precedes its send plus the latency, every node
 * keeps its order, every shift lies in [0, delta_plus], and the result is the least: no
 * moved event (group) could be 1 ns earlier without breaking a constraint; a failure names
 * an event that truly needs more than its bound, or a message truly on a cycle. The same
 * cases with dminus_ns NULL give the same results. Both ways (the same seeds): bounds below
 * too, now and then a reference node (no room): the result exists exactly when the
 * brute-force earliest solution keeps every upper bound (a failure names an event and its
 * earliest time past its latest); then every time lies in [corrected - delta_minus,
 * corrected + delta_plus] and between the brute-force earliest and latest solutions, nodes
 * keep their order, no receive precedes its send plus the latency, the reference never
 * moves, an event moved forward sits at its earliest or is pushed by the event before it or
 * its send, an event moved back sits at its latest.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "align/repair.h"
#include "test.h"
#include "util/rng.h"

#define MAXN 6
#define MAXE 64
#define NONE ((size_t)-1)

struct tcase {
	size_t nn, nm;
	size_t nev[MAXN];
	int64_t corr[MAXN][MAXE];  /* corrected times, ns */
	int64_t local[MAXN][MAXE]; /* local times, ns */
	double dplus[MAXN][MAXE];  /* ns */
	double dminus[MAXN][MAXE]; /* ns (0: forward only) */
	int null_dminus;           /* pass dminus_ns NULL */
	int64_t t[MAXN][MAXE];     /* repaired, ns */
	struct repair_msg m[MAXN * MAXE];
	int64_t lat;
	int ties;                  /* pass local times (events of one local time together) */
	/* what the callback saw */
	int64_t to[MAXN][MAXE];    /* INT64_MIN: not moved */
	size_t ncalls;
	int bad_call;
	struct repair_node rn[MAXN];
	struct repair_fail fail;
};

static int on_moved(void *ctx, size_t node, size_t ev, int64_t from_ns, int64_t to_ns)
{
	struct tcase *c = ctx;

	c->ncalls++;
	if (node >= c->nn || ev >= c->nev[node] || from_ns != c->corr[node][ev] ||
	    to_ns == from_ns || c->to[node][ev] != INT64_MIN)
		c->bad_call++;
	else
		c->to[node][ev] = to_ns;
	return 0;
}

static int run(struct tcase *c)
{
	c->ncalls = 0;
	c->bad_call = 0;
	for (size_t v = 0; v < c->nn; v++) {
		for (size_t k = 0; k < c->nev[v]; k++) {
			c->t[v][k] = c->corr[v][k];
			c->to[v][k] = INT64_MIN;
		}
		c->rn[v] = (struct repair_node){c->nev[v], c->t[v], c->dplus[v],
		                                c->null_dminus ? NULL : c->dminus[v],
		                                c->ties ? c->local[v] : NULL, sizeof(int64_t), 7, 7};
	}
	return repair_order(c->rn, c->nn, c->m, c->nm, c->lat, on_moved, c, &c->fail);
}

/* node v's events: corrected times (local times the same), each with bound dp */
static void set_node(struct tcase *c, size_t v, const int64_t *corr, size_t n, double dp)
{
	c->nev[v] = n;
	if (v >= c->nn)
		c->nn = v + 1;
	for (size_t k = 0; k < n; k++) {
		c->corr[v][k] = c->local[v][k] = corr[k];
		c->dplus[v][k] = dp;
	}
}

static void add_msg(struct tcase *c, uint32_t src, size_t se, uint32_t dst, size_t re)
{
	c->m[c->nm++] = (struct repair_msg){src, dst, se, re};
}

/* node v's repaired times are want[0..n) */
static int times_are(const struct tcase *c, size_t v, const int64_t *want, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (c->t[v][k] != want[k])
			return 0;
	return 1;
}

/* ---- hand-made cases ---------------------------------------------------------------- */

static void case_basic(void)
{
	static struct tcase c;
	int64_t a[] = {100}, b[] = {50, 90, 95, 98, 200}, want[] = {50, 100, 100, 100, 200};
	int r;

	memset(&c, 0, sizeof(c));
	set_node(&c, 0, a, 1, 1000);
	set_node(&c, 1, b, 5, 50);
	add_msg(&c, 0, 0, 1, 1);
	r = run(&c);
	TEST_CHECK(r == 0 && times_are(&c, 1, want, 5) && c.t[0][0] == 100,
	           "basic: r %d, b %lld %lld %lld %lld %lld", r, (long long)c.t[1][0],
	           (long long)c.t[1][1], (long long)c.t[1][2], (long long)c.t[1][3],
	           (long long)c.t[1][4]);
	TEST_CHECK(c.rn[1].moved == 3 && c.rn[1].moved_max_ns == 10 && c.rn[0].moved == 0 &&
	           c.rn[0].moved_max_ns == 0 && c.ncalls == 3 && !c.bad_call,
	           "basic: moved %zu max %lld, calls %zu (bad %d)", c.rn[1].moved,
	           (long long)c.rn[1].moved_max_ns, c.ncalls, c.bad_call);
	/* a bound of exactly the shift is enough */
	c.dplus[1][1] = 10;
	r = run(&c);
	TEST_CHECK(r == 0 && times_are(&c, 1, want, 5), "exact bound: r %d", r);
	/* short by half a ns: fails at the receive, named with its message */
	c.dplus[1][1] = 9.5;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == 0 &&
	           c.fail.node == 1 && c.fail.ev == 1 && c.fail.need_ns == 100 && c.t[1][1] == 90,
	           "bound short at the receive: r %d why %d msg %zu at %zu.%zu need %lld", r,
	           c.fail.why, c.fail.msg, c.fail.node, c.fail.ev, (long long)c.fail.need_ns);
	/* short at an event after the receive: that event, the receive's message */
	c.dplus[1][1] = 50;
	c.dplus[1][2] = 4.9;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == 0 &&
	           c.fail.node == 1 && c.fail.ev == 2 && c.fail.need_ns == 100,
	           "bound short after the receive: r %d why %d msg %zu at %zu.%zu", r,
	           c.fail.why, c.fail.msg, c.fail.node, c.fail.ev);
	/* a minimum latency moves it further */
	c.dplus[1][2] = 50;
	c.lat = 7;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][1] == 107 && c.t[1][2] == 107 && c.t[1][3] == 107 &&
	           c.t[1][4] == 200, "latency 7: r %d, %lld", r, (long long)c.t[1][1]);
	/* already in order: nothing moves, no call */
	c.lat = 0;
	c.corr[1][1] = 100;
	c.corr[1][2] = 101;
	c.corr[1][3] = 102;
	r = run(&c);
	TEST_CHECK(r == 0 && c.rn[1].moved == 0 && c.ncalls == 0, "in order: moved %zu",
	           c.rn[1].moved);
	/* a node going backwards without any message: moved by its order alone */
	memset(&c, 0, sizeof(c));
	int64_t back[] = {100, 90, 120};
	set_node(&c, 0, back, 3, 20);
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[0][1] == 100 && c.t[0][2] == 120, "backwards node: r %d", r);
	c.dplus[0][1] = 5;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == NONE &&
	           c.fail.ev == 1, "backwards node, bound short: r %d msg %zu", r, c.fail.msg);
}

static void case_chain(void)
{
	static struct tcase c;
	int64_t a[] = {100}, b[] = {80, 90}, d[] = {85};
	int r;

	/* A -> B, then B -> C: the move travels along */
	memset(&c, 0, sizeof(c));
	set_node(&c, 0, a, 1, 100);
	set_node(&c, 1, b, 2, 100);
	set_node(&c, 2, d, 1, 100);
	add_msg(&c, 1, 1, 2, 0); /* given out of order on purpose */
	add_msg(&c, 0, 0, 1, 0);
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][0] == 100 && c.t[1][1] == 100 && c.t[2][0] == 100 &&
	           c.rn[1].moved == 2 && c.rn[2].moved == 1 && c.rn[2].moved_max_ns == 15,
	           "chain: r %d, %lld %lld %lld", r, (long long)c.t[1][0], (long long)c.t[1][1],
	           (long long)c.t[2][0]);
	c.lat = 5;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][0] == 105 && c.t[1][1] == 105 && c.t[2][0] == 110,
	           "chain, latency 5: r %d, %lld %lld %lld", r, (long long)c.t[1][0],
	           (long long)c.t[1][1], (long long)c.t[2][0]);
	/* the last hop's bound too small: named with the message into C */
	c.dplus[2][0] = 24;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == 0 &&
	           c.fail.node == 2 && c.fail.need_ns == 110, "chain, C short: msg %zu node %zu",
	           c.fail.msg, c.fail.node);
}

static void case_interleave(void)
{
	static struct tcase c;
	/* A: recv from C, send to B; B: recv from A, send to C; C: send to A, recv from B. Node
	 * 0 starts with a receive whose send is C's first event: a pass that finishes node 0
	 * before looking at node 2 would wait forever. */
	int64_t a[] = {50, 60}, b[] = {55, 70}, d[] = {100, 65};
	int r;

	memset(&c, 0, sizeof(c));
	set_node(&c, 0, a, 2, 1000);
	set_node(&c, 1, b, 2, 1000);
	set_node(&c, 2, d, 2, 1000);
	add_msg(&c, 2, 0, 0, 0);
	add_msg(&c, 0, 1, 1, 0);
	add_msg(&c, 1, 1, 2, 1);
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[0][0] == 100 && c.t[0][1] == 100 && c.t[1][0] == 100 &&
	           c.t[1][1] == 100 && c.t[2][1] == 100, "interleave: r %d", r);
	c.lat = 10;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[0][0] == 110 && c.t[0][1] == 110 && c.t[1][0] == 120 &&
	           c.t[1][1] == 120 && c.t[2][1] == 130, "interleave, latency 10: r %d %lld", r,
	           (long long)c.t[2][1]);
}

static void case_cycles(void)
{
	static struct tcase c;
	int64_t a[] = {100, 110}, b[] = {100, 110};
	int r;

	/* A: recv m1, send m0; B: recv m0, send m1: each receive waits for itself */
	memset(&c, 0, sizeof(c));
	set_node(&c, 0, a, 2, 1e9);
	set_node(&c, 1, b, 2, 1e9);
	add_msg(&c, 0, 1, 1, 0);
	add_msg(&c, 1, 1, 0, 0);
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_CYCLE && c.fail.msg <= 1,
	           "cycle: r %d why %d msg %zu", r, c.fail.why, c.fail.msg);
	/* A sends m0 and receives m1 at one local time; B receives m0, then sends m1: an order
	 * of events exists, but not one that keeps A's two events together */
	memset(&c, 0, sizeof(c));
	int64_t a2[] = {100, 100}, b2[] = {90, 95};
	set_node(&c, 0, a2, 2, 1e9);
	set_node(&c, 1, b2, 2, 1e9);
	add_msg(&c, 0, 0, 1, 0);
	add_msg(&c, 1, 1, 0, 1);
	c.ties = 1;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_TIE && c.fail.msg <= 1,
	           "tie cycle: r %d why %d", r, c.fail.why);
	c.ties = 0;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][0] == 100 && c.t[1][1] == 100 && c.t[0][1] == 100 &&
	           c.rn[0].moved == 0, "events apart: r %d", r);
}

static void case_ties(void)
{
	static struct tcase c;
	int64_t a[] = {10, 20, 20, 30}, b[] = {25};
	int64_t want_tied[] = {10, 25, 25, 30}, want_apart[] = {10, 20, 25, 30};
	int r;

	/* A's events 1 and 2 share a local time; its receive (2) moves to 25, and so does 1 */
	memset(&c, 0, sizeof(c));
	set_node(&c, 0, a, 4, 100);
	set_node(&c, 1, b, 1, 100);
	add_msg(&c, 1, 0, 0, 2);
	c.ties = 1;
	r = run(&c);
	TEST_CHECK(r == 0 && times_are(&c, 0, want_tied, 4) && c.rn[0].moved == 2,
	           "ties: r %d, %lld %lld", r, (long long)c.t[0][1], (long long)c.t[0][2]);
	/* the tied event's bound counts too */
	c.dplus[0][1] = 4;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.ev == 1 &&
	           c.fail.msg == 0, "ties, bound short: r %d ev %zu", r, c.fail.ev);
	c.ties = 0;
	r = run(&c);
	TEST_CHECK(r == 0 && times_are(&c, 0, want_apart, 4) && c.rn[0].moved == 1,
	           "apart: r %d", r);
}

static void case_back(void)
{
	static struct tcase c;
	/* node 0 like a reference: its receive cannot move; node 1's send (event 1) is 10 ns
	 * after it and may lie up to 20 ns earlier */
	int64_t ref[] = {90, 200}, a[] = {80, 100, 120}, want[] = {80, 90, 120};
	int r;

	memset(&c, 0, sizeof(c));
	set_node(&c, 0, ref, 2, 0);
	set_node(&c, 1, a, 3, 50);
	for (size_t k = 0; k < 3; k++)
		c.dminus[1][k] = 20;
	add_msg(&c, 1, 1, 0, 0);
	r = run(&c);
	TEST_CHECK(r == 0 && times_are(&c, 1, want, 3) && c.t[0][0] == 90 &&
	           c.rn[1].moved == 1 && c.rn[1].moved_max_ns == 10 && c.rn[0].moved == 0 &&
	           c.ncalls == 1 && !c.bad_call && c.to[1][1] == 90,
	           "send back: r %d, a %lld %lld %lld, moved %zu max %lld, calls %zu", r,
	           (long long)c.t[1][0], (long long)c.t[1][1], (long long)c.t[1][2],
	           c.rn[1].moved, (long long)c.rn[1].moved_max_ns, c.ncalls);
	/* without delta_minus: the forward repair's error, at the receive */
	c.null_dminus = 1;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == 0 &&
	           c.fail.node == 0 && c.fail.ev == 0 && c.fail.need_ns == 100,
	           "forward only: r %d why %d need %lld", r, c.fail.why, (long long)c.fail.need_ns);
	c.null_dminus = 0;
	/* a latency of 5: the send to 85 */
	c.lat = 5;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][1] == 85 && c.t[1][0] == 80 && c.t[1][2] == 120 &&
	           c.rn[1].moved_max_ns == 15, "send back, latency 5: r %d, %lld", r,
	           (long long)c.t[1][1]);
	/* the event before the send at 95: it would follow the moved send, so it moves back too
	 * (to 85), and no further */
	c.corr[1][0] = c.local[1][0] = 95;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][0] == 85 && c.t[1][1] == 85 && c.t[1][2] == 120 &&
	           c.rn[1].moved == 2, "before the send: r %d, %lld %lld", r,
	           (long long)c.t[1][0], (long long)c.t[1][1]);
	/* that event cannot move back: the send cannot either; named at the receive */
	c.dminus[1][0] = 0;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == 0 &&
	           c.fail.node == 0 && c.fail.ev == 0 && c.fail.need_ns == 100 && c.t[1][1] == 100,
	           "held by the event before: r %d why %d need %lld", r, c.fail.why,
	           (long long)c.fail.need_ns);
	/* the send's own lower bound too small: exact passes, short by half a ns fails */
	c.corr[1][0] = c.local[1][0] = 80;
	c.dminus[1][0] = 20;
	c.lat = 0;
	c.dminus[1][1] = 10;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][1] == 90, "exact lower bound: r %d", r);
	c.dminus[1][1] = 9.5;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.msg == 0 &&
	           c.fail.node == 0 && c.fail.ev == 0 && c.fail.need_ns == 91,
	           "lower bound short: r %d why %d need %lld", r, c.fail.why,
	           (long long)c.fail.need_ns);
	/* both ways at once: the send back by 4 (its bound), the receive forward by 6 (its) */
	c.dminus[1][1] = 4;
	c.dplus[0][0] = 6;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][1] == 96 && c.t[0][0] == 96, "4 + 6 ns: r %d, %lld %lld", r,
	           (long long)c.t[1][1], (long long)c.t[0][0]);
	c.dplus[0][0] = 5.5;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == REPAIR_BOUND && c.fail.need_ns == 96 &&
	           c.fail.node == 0 && c.fail.ev == 0, "4 + 5.5 ns < 10 ns: r %d", r);
	/* room enough ahead of the receive: it moves forward, the send stays */
	c.dplus[0][0] = 10;
	r = run(&c);
	TEST_CHECK(r == 0 && c.t[1][1] == 100 && c.t[0][0] == 100 && c.rn[1].moved == 0,
	           "room ahead of the receive: %lld %lld",
	           (long long)c.t[1][1], (long long)c.t[0][0]);
}

static void case_garbage(void)
{
	static struct tcase c;
	int64_t a[] = {1, 2}, b[] = {3};
	int r;

	memset(&c, 0, sizeof(c));
	set_node(&c, 0, a, 2, 10);
	set_node(&c, 1, b, 1, 10);
	struct repair_msg bad[] = {{0, 1, 2, 0}, {0, 2, 0, 0}, {0, 0, 0, 1}, {0, 1, 0, 1}};
	for (size_t i = 0; i < 4; i++) {
		c.nm = 0;
		c.m[c.nm++] = bad[i];
		r = run(&c);
		TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == 0, "bad message %zu: r %d", i, r);
	}
	c.nm = 0;
	add_msg(&c, 0, 0, 1, 0);
	add_msg(&c, 0, 0, 1, 0); /* one event in two messages */
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == 0, "event twice: r %d", r);
	c.nm = 1;
	c.lat = -1;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == 0, "negative latency: r %d", r);
	c.lat = INT64_C(1) << 62;
	r = run(&c);
	TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == 0, "latency 2^62: r %d", r);
	c.lat = 0;
	r = repair_order(NULL, 0, NULL, 0, 0, NULL, NULL, &c.fail);
	TEST_CHECK(r == 0, "no nodes: r %d", r);
}

/* ---- random cases ------------------------------------------------------------------ */

static struct rng g;

static int64_t urand(int64_t lo, int64_t hi) /* [lo, hi] */
{
	return lo + (int64_t)(rng_uniform(&g) * (double)(hi - lo + 1));
}

/* a run of known happens-before: events in true time, messages from earlier to later */
static void random_run(struct tcase *c, int64_t *truth /* [MAXN][MAXE] */)
{
	size_t pend[MAXN * MAXE][2], np = 0; /* sends not received yet: node, event */
	int64_t now = 1000000;

	memset(c, 0, sizeof(*c));
	c->nn = (size_t)urand(2, MAXN);
	for (int step = 0; step < 400; step++) {
		size_t v = (size_t)urand(0, (int64_t)c->nn - 1), k = c->nev[v];
		double what = rng_uniform(&g);
		if (k == MAXE)
			continue;
		now += urand(1, 3000);
		truth[v * MAXE + k] = now;
		/* the local time: a tick of the node's clock, sometimes shared with the event before */
		c->local[v][k] = k && rng_uniform(&g) < 0.1 ? c->local[v][k - 1] : now;
		c->nev[v]++;
		if (what < 0.4) { /* a send */
			pend[np][0] = v;
			pend[np][1] = k;
			np++;
		} else if (what < 0.8 && np) { /* the receive of a pending send from another node */
			size_t i = (size_t)urand(0, (int64_t)np - 1);
			if (pend[i][0] == v)
				continue;
			add_msg(c, (uint32_t)pend[i][0], pend[i][1], (uint32_t)v, k);
			pend[i][0] = pend[--np][0];
			pend[i][1] = pend[np][1];
		}
	}
	/* corrected times off by up to 5 us (equal for equal local times); bounds that hold the
	 * truth with random slack (up to 3 or 50 us), in a third of the cases one cut below it */
	int64_t slack = rng_uniform(&g) < 0.3 ? 3000 : 50000;
	for (size_t v = 0; v < c->nn; v++)
		for (size_t k = 0; k < c->nev[v]; k++) {
			int64_t t = truth[v * MAXE + k];
			c->corr[v][k] = k && c->local[v][k] == c->local[v][k - 1] ? c->corr[v][k - 1] :
			                t + urand(-5000, 5000);
			c->dplus[v][k] = (double)(t > c->corr[v][k] ? t - c->corr[v][k] : 0) +
			                 (double)urand(0, slack) + rng_uniform(&g);
		}
	if (rng_uniform(&g) < 0.3) {
		size_t v = (size_t)urand(0, (int64_t)c->nn - 1);
		if (c->nev[v])
			c->dplus[v][urand(0, (int64_t)c->nev[v] - 1)] = rng_uniform(&g) * 50;
	}
	c->lat = rng_uniform(&g) < 0.5 ? 0 : urand(0, 500);
	c->ties = rng_uniform(&g) < 0.7;
}

/* the groups: events of one local time on a node (every event alone without ties) */
static int same_group(const struct tcase *c, size_t v, size_t k)
{
	return c->ties && k > 0 && c->local[v][k] == c->local[v][k - 1];
}

/* ids of events and their groups, for the searches */
static size_t eid(size_t v, size_t k)
{
	return v * MAXE + k;
}

static size_t gid_of(const struct tcase *c, size_t v, size_t k)
{
	while (same_group(c, v, k))
		k--;
	return eid(v, k);
}

/* the last event of the group of event k of node v */
static size_t group_last(const struct tcase *c, size_t v, size_t k)
{
	while (k + 1 < c->nev[v] && same_group(c, v, k + 1))
		k++;
	return k;
}

/* depth-first search: whether to (!= from) is reachable from from, over events (grp 0) or groups
 * (grp 1); edges: next event (group) on the node, send (its group) -> receive (its group) */
static int reaches(const struct tcase *c, size_t from, size_t to, int grp)
{
	static unsigned char seen[MAXN * MAXE];
	static size_t stack[MAXN * MAXE * 4];
	size_t ns = 0;

	memset(seen, 0, sizeof(seen));
	stack[ns++] = from;
	while (ns) {
		size_t x = stack[--ns], v = x / MAXE, k = x % MAXE, e;
		if (x == to)
			return 1;
		if (seen[x])
			continue;
		seen[x] = 1;
		/* the event after x (after x's group) */
		e = k + 1;
		while (grp && e < c->nev[v] && same_group(c, v, e))
			e++;
		if (e < c->nev[v])
			stack[ns++] = eid(v, e);
		/* messages sent by x (by any event of x's group) */
		for (size_t j = k; j < c->nev[v] && (j == k || (grp && same_group(c, v, j))); j++)
			for (size_t i = 0; i < c->nm; i++)
				if (c->m[i].src == v && c->m[i].se == j)
					stack[ns++] = grp ? gid_of(c, c->m[i].dst, c->m[i].re) :
					                    eid(c->m[i].dst, c->m[i].re);
	}
	return 0;
}

/* message i lies on a cycle of events (grp 0) or groups (grp 1) */
static int on_cycle(const struct tcase *c, size_t i, int grp)
{
	const struct repair_msg *m = &c->m[i];
	size_t r = grp ? gid_of(c, m->dst, m->re) : eid(m->dst, m->re);
	size_t s = grp ? gid_of(c, m->src, m->se) : eid(m->src, m->se);

	return r == s || reaches(c, r, s, grp);
}

static int any_cycle(const struct tcase *c, int grp)
{
	for (size_t i = 0; i < c->nm; i++)
		if (on_cycle(c, i, grp))
			return 1;
	return 0;
}

/* the least solution by brute force (relax every constraint until nothing changes), from
 * the earliest times (corrected - delta_minus), without upper bounds; 0 if it does not
 * settle (a cycle with a latency) */
static int least(const struct tcase *c, int64_t x[MAXN][MAXE])
{
	for (size_t v = 0; v < c->nn; v++)
		for (size_t k = 0; k < c->nev[v]; k++)
			x[v][k] = c->corr[v][k] - (int64_t)c->dminus[v][k];
	for (int pass = 0; pass < MAXN * MAXE + 2; pass++) {
		int changed = 0;
		for (size_t i = 0; i < c->nm; i++) {
			const struct repair_msg *m = &c->m[i];
			if (x[m->dst][m->re] < x[m->src][m->se] + c->lat) {
				x[m->dst][m->re] = x[m->src][m->se] + c->lat;
				changed = 1;
			}
		}
		for (size_t v = 0; v < c->nn; v++) {
			for (size_t k = 1; k < c->nev[v]; k++)
				if (x[v][k] < x[v][k - 1]) {
					x[v][k] = x[v][k - 1];
					changed = 1;
				}
			for (size_t k = c->nev[v]; k-- > 1;) /* a group takes its largest */
				if (same_group(c, v, k) && x[v][k - 1] < x[v][k]) {
					x[v][k - 1] = x[v][k];
					changed = 1;
				}
		}
		if (!changed)
			return 1;
	}
	return 0;
}

/* the invariants of a repaired case */
static void check_repaired(const struct tcase *c, const char *tag)
{
	size_t moved_total = 0;

	for (size_t i = 0; i < c->nm; i++) {
		const struct repair_msg *m = &c->m[i];
		TEST_CHECK(c->t[m->dst][m->re] >= c->t[m->src][m->se] + c->lat,
		           "%s: message %zu received %lld before its send %lld + %lld", tag, i,
		           (long long)c->t[m->dst][m->re], (long long)c->t[m->src][m->se],
		           (long long)c->lat);
	}
	for (size_t v = 0; v < c->nn; v++) {
		size_t moved = 0;
		int64_t mx = 0;
		for (size_t k = 0; k < c->nev[v]; k++) {
			int64_t sh = c->t[v][k] - c->corr[v][k];
			TEST_CHECK(sh >= 0 && (double)sh <= c->dplus[v][k], "%s: %zu.%zu shift %lld, "
			           "bound %.1f", tag, v, k, (long long)sh, c->dplus[v][k]);
			TEST_CHECK(!k || c->t[v][k] >= c->t[v][k - 1], "%s: %zu.%zu out of order", tag,
			           v, k);
			TEST_CHECK(!same_group(c, v, k) || c->t[v][k] == c->t[v][k - 1],
			           "%s: %zu.%zu parted from its local time's group", tag, v, k);
			TEST_CHECK((sh > 0) == (c->to[v][k] != INT64_MIN) &&
			           (sh == 0 || c->to[v][k] == c->t[v][k]),
			           "%s: %zu.%zu moved by %lld, callback %lld", tag, v, k, (long long)sh,
			           (long long)c->to[v][k]);
			moved += sh > 0;
			mx = sh > mx ? sh : mx;
		}
		TEST_CHECK(c->rn[v].moved == moved && c->rn[v].moved_max_ns == mx,
		           "%s: node %zu moved %zu (%zu), max %lld (%lld)", tag, v, c->rn[v].moved,
		           moved, (long long)c->rn[v].moved_max_ns, (long long)mx);
		moved_total += moved;
		/* least: a moved group 1 ns earlier breaks its node's order or a receive's send */
		for (size_t k = 0; k < c->nev[v];) {
			size_t e = k + 1;
			int64_t base = c->corr[v][k];
			int tight;
			while (e < c->nev[v] && same_group(c, v, e))
				e++;
			for (size_t j = k; j < e; j++)
				base = c->corr[v][j] > base ? c->corr[v][j] : base;
			tight = c->t[v][k] == base || (k && c->t[v][k - 1] == c->t[v][k]);
			for (size_t i = 0; i < c->nm; i++)
				if (c->m[i].dst == v && c->m[i].re >= k && c->m[i].re < e &&
				    c->t[c->m[i].src][c->m[i].se] + c->lat == c->t[v][k])
					tight = 1;
			TEST_CHECK(tight, "%s: %zu.%zu moved to %lld, could be earlier", tag, v, k,
			           (long long)c->t[v][k]);
			k = e;
		}
	}
	TEST_CHECK(c->ncalls == moved_total && !c->bad_call, "%s: %zu calls for %zu moved (bad %d)",
	           tag, c->ncalls, moved_total, c->bad_call);
}

static size_t n_repaired, n_moved, n_bound, n_cycle, n_tie;
static int null_dminus; /* random_case with dminus_ns NULL */

static void random_case(void)
{
	static struct tcase c;
	static int64_t truth[MAXN * MAXE], x[MAXN][MAXE];
	int r, ecyc, gcyc, settled;

	random_run(&c, truth);
	c.null_dminus = null_dminus;
	/* now and then pair some receives with other sends of the same two nodes */
	if (rng_uniform(&g) < 0.3)
		for (size_t n = 0; n < 3 && c.nm > 1; n++) {
			size_t i = (size_t)urand(0, (int64_t)c.nm - 1), j = (size_t)urand(0, (int64_t)c.nm - 1);
			if (c.m[i].src == c.m[j].src && c.m[i].dst == c.m[j].dst) {
				size_t t = c.m[i].re;
				c.m[i].re = c.m[j].re;
				c.m[j].re = t;
			}
		}
	ecyc = any_cycle(&c, 0);
	gcyc = any_cycle(&c, 1);
	settled = !gcyc && least(&c, x);
	r = run(&c);
	n_cycle += ecyc;
	n_tie += gcyc && !ecyc;
	if (ecyc || gcyc) {
		TEST_CHECK(r == HCLOCK_EINVAL && c.fail.why == (ecyc ? REPAIR_CYCLE : REPAIR_TIE) &&
		           c.fail.msg < c.nm && on_cycle(&c, c.fail.msg, !ecyc),
		           "cycle (events %d, groups %d): r %d why %d msg %zu", ecyc, gcyc, r,
		           c.fail.why, c.fail.msg);
		return;
	}
	TEST_CHECK(settled, "no cycle, yet the brute force did not settle");
	int need_more = 0;
	for (size_t v = 0; v < c.nn; v++)
		for (size_t k = 0; k < c.nev[v]; k++)
			need_more |= !((double)(x[v][k] - c.corr[v][k]) <= c.dplus[v][k]);
	if (need_more) {
		const struct repair_fail *f = &c.fail;
		n_bound++;
		TEST_CHECK(r == HCLOCK_EINVAL && f->why == REPAIR_BOUND && f->node < c.nn &&
		           f->ev < c.nev[f->node] && f->need_ns == x[f->node][f->ev] &&
		           !((double)(f->need_ns - c.corr[f->node][f->ev]) <=
		             c.dplus[f->node][f->ev]) &&
		           (f->msg == NONE || (c.m[f->msg].dst == f->node &&
		                               c.m[f->msg].re <= group_last(&c, f->node, f->ev))),
		           "a bound too small: r %d why %d at %zu.%zu need %lld (least %lld) msg %zu",
		           r, f->why, f->node, f->ev, (long long)f->need_ns,
		           (long long)(f->node < c.nn && f->ev < MAXE ? x[f->node][f->ev] : 0),
		           f->msg);
		return;
	}
	TEST_CHECK(r == 0, "repairable, yet r %d why %d at %zu.%zu", r, c.fail.why, c.fail.node,
	           c.fail.ev);
	if (r)
		return;
	for (size_t v = 0; v < c.nn; v++)
		for (size_t k = 0; k < c.nev[v]; k++)
			TEST_CHECK(c.t[v][k] == x[v][k], "%zu.%zu repaired %lld, least %lld", v, k,
			           (long long)c.t[v][k], (long long)x[v][k]);
	check_repaired(&c, "random");
	n_repaired++;
	for (size_t v = 0; v < c.nn; v++)
		n_moved += c.rn[v].moved;
}

/* the greatest solution by brute force, from the latest times (corrected + delta_plus),
 * without lower bounds (no cycle: it settles) */
static void greatest(const struct tcase *c, int64_t x[MAXN][MAXE])
{
	for (size_t v = 0; v < c->nn; v++)
		for (size_t k = 0; k < c->nev[v]; k++)
			x[v][k] = c->corr[v][k] + (int64_t)c->dplus[v][k];
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < c->nm; i++) {
			const struct repair_msg *m = &c->m[i];
			if (x[m->src][m->se] > x[m->dst][m->re] - c->lat) {
				x[m->src][m->se] = x[m->dst][m->re] - c->lat;
				changed = 1;
			}
		}
		for (size_t v = 0; v < c->nn; v++)
			for (size_t k = c->nev[v]; k-- > 1;) /* a group takes its least */
				if (x[v][k - 1] > x[v][k] || (same_group(c, v, k) && x[v][k] > x[v][k - 1])) {
					x[v][k - 1] = x[v][k] = x[v][k - 1] < x[v][k] ? x[v][k - 1] : x[v][k];
					changed = 1;
				}
	}
}

static size_t n_both, n_back, n_both_bound;
static int64_t back_max;

/* both ways: bounds below too (holding the truth, with slack), now and then a node that
 * cannot move (a reference: its corrected times the truth, no room); checked against the
 * brute-force earliest and latest solutions */
static void random_case_both(void)
{
	static struct tcase c;
	static int64_t truth[MAXN * MAXE], lo[MAXN][MAXE], hi[MAXN][MAXE];
	size_t ref = rng_uniform(&g) < 0.6 ? 0 : NONE;
	int r;

	random_run(&c, truth);
	int64_t slack = rng_uniform(&g) < 0.3 ? 3000 : 20000;
	for (size_t v = 0; v < c.nn; v++)
		for (size_t k = 0; k < c.nev[v]; k++) {
			int64_t t = truth[v * MAXE + k];
			if (v == ref) {
				c.corr[v][k] = t;
				c.dplus[v][k] = c.dminus[v][k] = 0;
				c.local[v][k] = t; /* no ties: each event its own truth */
				continue;
			}
			c.dminus[v][k] = (double)(c.corr[v][k] > t ? c.corr[v][k] - t : 0) +
			                 (double)urand(0, slack) + rng_uniform(&g);
		}
	if (rng_uniform(&g) < 0.3) {
		size_t v = (size_t)urand(0, (int64_t)c.nn - 1);
		if (c.nev[v])
			c.dminus[v][urand(0, (int64_t)c.nev[v] - 1)] = rng_uniform(&g) * 50;
	}
	if (any_cycle(&c, 1)) /* a round trip within one tick: case_cycles' */
		return;
	TEST_CHECK(least(&c, lo), "both ways: the brute force did not settle");
	greatest(&c, hi);
	r = run(&c);
	int need_more = 0;
	for (size_t v = 0; v < c.nn; v++)
		for (size_t k = 0; k < c.nev[v]; k++)
			need_more |= lo[v][k] > c.corr[v][k] + (int64_t)c.dplus[v][k];
	if (need_more) {
		const struct repair_fail *f = &c.fail;
		n_both_bound++;
		TEST_CHECK(r == HCLOCK_EINVAL && f->why == REPAIR_BOUND && f->node < c.nn &&
		           f->ev < c.nev[f->node] && f->need_ns == lo[f->node][f->ev] &&
		           f->need_ns > c.corr[f->node][f->ev] + (int64_t)c.dplus[f->node][f->ev],
		           "both ways, a bound too small: r %d why %d at %zu.%zu need %lld", r, f->why,
		           f->node, f->ev, (long long)f->need_ns);
		return;
	}
	TEST_CHECK(r == 0, "both ways, repairable, yet r %d why %d at %zu.%zu", r, c.fail.why,
	           c.fail.node, c.fail.ev);
	if (r)
		return;
	n_both++;
	size_t calls = 0;
	for (size_t i = 0; i < c.nm; i++) {
		const struct repair_msg *m = &c.m[i];
		TEST_CHECK(c.t[m->dst][m->re] >= c.t[m->src][m->se] + c.lat,
		           "both ways: message %zu received before its send", i);
	}
	for (size_t v = 0; v < c.nn; v++) {
		size_t moved = 0;
		int64_t mx = 0;
		for (size_t k = 0; k < c.nev[v]; k++) {
			int64_t x = c.t[v][k], t = c.corr[v][k], sh = x > t ? x - t : t - x;
			int pushed = k && c.t[v][k - 1] == x;
			for (size_t i = 0; i < c.nm; i++)
				if (c.m[i].dst == v && c.m[i].re == k &&
				    c.t[c.m[i].src][c.m[i].se] + c.lat == x)
					pushed = 1;
			for (size_t j = k + 1; j < c.nev[v] && same_group(&c, v, j); j++)
				pushed |= 1; /* a group: its members' reasons are checked on the group */
			TEST_CHECK(x >= t - (int64_t)c.dminus[v][k] && x <= t + (int64_t)c.dplus[v][k],
			           "both ways: %zu.%zu at %lld outside [%lld - %.1f, + %.1f]", v, k,
			           (long long)x, (long long)t, c.dminus[v][k], c.dplus[v][k]);
			TEST_CHECK(!k || x >= c.t[v][k - 1], "both ways: %zu.%zu out of order", v, k);
			TEST_CHECK(!same_group(&c, v, k) || x == c.t[v][k - 1],
			           "both ways: %zu.%zu parted from its group", v, k);
			TEST_CHECK(lo[v][k] <= x && x <= hi[v][k], "both ways: %zu.%zu at %lld outside "
			           "the solutions' [%lld, %lld]", v, k, (long long)x, (long long)lo[v][k],
			           (long long)hi[v][k]);
			/* not forced, not moved: forward only to x_lo or when pushed, back only to x_hi */
			TEST_CHECK(x <= t || x == lo[v][k] || pushed || same_group(&c, v, k),
			           "both ways: %zu.%zu moved forward to %lld, nothing forces it", v, k,
			           (long long)x);
			TEST_CHECK(x >= t || x == hi[v][k], "both ways: %zu.%zu moved back to %lld, not "
			           "forced (latest %lld)", v, k, (long long)x, (long long)hi[v][k]);
			TEST_CHECK((x != t) == (c.to[v][k] != INT64_MIN) && (x == t || c.to[v][k] == x),
			           "both ways: %zu.%zu callback", v, k);
			moved += x != t;
			calls += x != t;
			mx = sh > mx ? sh : mx;
			if (x < t) {
				n_back++;
				back_max = t - x > back_max ? t - x : back_max;
			}
		}
		TEST_CHECK(c.rn[v].moved == moved && c.rn[v].moved_max_ns == mx,
		           "both ways: node %zu moved %zu (%zu), max %lld (%lld)", v, c.rn[v].moved,
		           moved, (long long)c.rn[v].moved_max_ns, (long long)mx);
		TEST_CHECK(v != ref || !moved, "both ways: the reference moved");
	}
	TEST_CHECK(c.ncalls == calls && !c.bad_call, "both ways: %zu calls for %zu moved", c.ncalls,
	           calls);
}

int main(int argc, char **argv)
{
	unsigned long long first = 1, last = 40;
	size_t fails_before;

	if (argc > 1) /* test_repair SEED: rerun one seed */
		first = last = strtoull(argv[1], NULL, 10);
	case_basic();
	case_chain();
	case_interleave();
	case_cycles();
	case_ties();
	case_back();
	case_garbage();
	for (test_seed = first; test_seed <= last; test_seed++) {
		rng_seed(&g, test_seed);
		fails_before = (size_t)test_failures;
		for (int i = 0; i < 50 && (size_t)test_failures == fails_before; i++)
			random_case();
		/* the same cases with delta_minus NULL: the same results */
		for (int i = 0; i < 20 && (size_t)test_failures == fails_before; i++) {
			null_dminus = 1;
			random_case();
			null_dminus = 0;
		}
		for (int i = 0; i < 50 && (size_t)test_failures == fails_before; i++)
			random_case_both();
	}
	printf("random cases: %zu repaired (%zu events moved), %zu with a bound too small, %zu "
	       "cycles of events, %zu of local times\n", n_repaired, n_moved, n_bound, n_cycle,
	       n_tie);
	printf("both ways: %zu repaired (%zu events moved back, by up to %lld ns), %zu with a bound "
	       "too small\n", n_both, n_back, (long long)back_max, n_both_bound);
	TEST_CHECK(n_repaired > 100 && n_bound > 100 && n_cycle > 10 && n_tie > 10 &&
	           n_both > 100 && n_back > 100 && n_both_bound > 100,
	           "every kind of random case seen");
	return test_end("test_repair");
}
