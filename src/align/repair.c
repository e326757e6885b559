/*
 * repair.c - message order repaired within the bounds, both ways in time (repair.h).
 *
 * With lo(e) = t(e) - delta_minus(e) and up(e) = t(e) + delta_plus(e), the constraints
 *     lo(e) <= x(e) <= up(e)                       (inside the bounds)
 *     x(e) >= x(e') for e' before e on its node    (each node keeps its order)
 *     x(r) >= x(s) + L for every message s -> r    (no receive before its send)
 *     x(e) == x(e') for e, e' of one local time on a node
 * are difference constraints; three passes over the groups of equal local time g, in an
 * order consistent with happens-before and back:
 *  1. x_lo(g) = max(max lo(g), x_lo(previous group), max over receives r in g of
 *     x_lo(send(r)) + L), forward: the least solution without the upper bounds. Times exist
 *     exactly when x_lo(g) <= up(e) for every e of every g (x_lo is below any solution; if it
 *     keeps the upper bounds it is one): otherwise the failure, x_lo(g) the time e needs.
 *  2. x_hi(g) = min(min up(g), x_hi(next group), min over sends s in g of
 *     x_hi(recv(s)) - L), backward: the greatest solution without the lower bounds.
 *  3. x(g) = max(clamp(t(g), x_lo(g), x_hi(g)), x(previous group), max over receives r in g
 *     of x(send(r)) + L), forward, with t(g) the largest t of g. By induction
 *     x_lo(g) <= x(g) <= x_hi(g): the previous group's and the sends' x are at most their
 *     x_hi, which pass 2 made at most x_hi(g) (minus L). A group neither pushed nor outside
 *     [x_lo, x_hi] keeps its time; one moves forward only when t(g) < x_lo(g) or a previous
 *     event or a send pushes it, back only when t(g) > x_hi(g), as far as that. With every
 *     delta_minus 0, x_lo(g) >= t(g) and x = x_lo: the least forward repair.
 *
 * Order: Kahn's algorithm over the graph whose edges are the node orders and the messages,
 * without building it; pass 1 records the order of the groups, passes 2 and 3 follow it back
 * and forth. Each node has a cursor at its first group not yet placed; a group is
 * ready when the send of each of its receives lies before its node's cursor. A node is
 * retried only when a group holding a send to it was placed, and resumes the readiness check
 * where it stopped, so the work is linear in events and messages. A receive placed before its
 * own send in a node's order (a receive whose send follows, on its node, an event that
 * depends on that receive) never becomes ready: when no node can go on, following the
 * blocking messages from any stuck node comes back to a stuck node, and its blocking message
 * lies on a cycle. The same pass over single events (no groups) then tells an impossible
 * pairing (a cycle of events) from one made only by moving equal local times together. A
 * cycle is reported before a bound: after a move past a bound, a pass without times looks
 * for one.
 *
 * Scalasca's controlled logical clock (Becker, Rabenseifner, Wolf, Linford, "Scalable
 * timestamp synchronization for event traces of message-passing applications", 2009) makes
 * pass 1 alone and moves events forward without bounds, spreading (amortizing) each jump
 * over the events around it; here nothing is amortized, the bounds are the limit, and a send
 * may move back within its own to let its receive stay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "align/repair.h"

#define NONE ((size_t)-1)
#define LATENCY_LIMIT (INT64_C(1) << 62) /* ns; times and latencies below it add up in int64 */

struct rstate {
	struct repair_node *n;
	size_t nn;
	const struct repair_msg *m;
	int64_t lat;       /* minimum latency, ns */
	int ties;          /* events of one local time form one group */
	int place;         /* compute times (0: only the order, to classify a cycle) */
	int64_t *lo;       /* per event: x_lo of its group, ns (pass 1) */
	int64_t *hi;       /* per event: x_hi of its group, ns (pass 2) */
	size_t *order;     /* the groups as pass 1 placed them: their first events' indexes
	                      into msgof */
	size_t norder;
	size_t *base;      /* [nn + 1]: node v's events are msgof[base[v] ...] */
	size_t *msgof;     /* per event: the message it sends or receives, or NONE */
	size_t *cur;       /* per node: first event of its first group not placed */
	size_t *scan;      /* per node: first event of that group not yet found ready */
	size_t *gend;      /* per node: end of that group */
	int64_t *run;      /* per node: time of its last group placed, ns */
	size_t *cause;     /* per node: the message whose receive moved it last, or NONE */
	size_t *stack;     /* nodes to retry */
	size_t nstack;
	unsigned char *queued;
	repair_moved_fn moved;
	void *ctx;
	struct repair_fail *fail;
};

static int64_t local_at(const struct repair_node *n, size_t k)
{
	return *(const int64_t *)(const void *)((const char *)n->local_ns + k * n->local_stride);
}

/* t + k, t - k for k >= 0, saturated at the ends of int64 */
static int64_t plus(int64_t t, int64_t k)
{
	return t > INT64_MAX - k ? INT64_MAX : t + k;
}

static int64_t minus(int64_t t, int64_t k)
{
	return t < INT64_MIN + k ? INT64_MIN : t - k;
}

/* floor(d) of a bound d, ns: how far an event may move; a bound that is not > 0 (0,
 * negative, NaN) gives no room, +inf all */
static int64_t room_ns(double d)
{
	return !(d > 0) ? 0 : d >= 0x1p63 ? INT64_MAX : (int64_t)d;
}

/* end of the group starting at event k of node v */
static size_t group_end(const struct rstate *s, size_t v, size_t k)
{
	const struct repair_node *n = &s->n[v];
	size_t e = k + 1;

	if (s->ties && n->local_ns)
		while (e < n->nev && local_at(n, e) == local_at(n, k))
			e++;
	return e;
}

static void push(struct rstate *s, size_t v)
{
	if (!s->queued[v]) {
		s->queued[v] = 1;
		s->stack[s->nstack++] = v;
	}
}

/* pass 1: x_lo of the group [gs, ge) of node v, checked against every upper bound */
static int place_group(struct rstate *s, size_t v, size_t gs, size_t ge)
{
	const struct repair_node *n = &s->n[v];
	int64_t val = INT64_MIN, *lo = s->lo + s->base[v];
	size_t cause = NONE;

	for (size_t p = gs; p < ge; p++) {
		int64_t l = minus(n->t_ns[p], room_ns(n->dminus_ns ? n->dminus_ns[p] : 0));
		if (l > val)
			val = l;
	}
	if (s->run[v] > val) {
		val = s->run[v];
		cause = s->cause[v];
	}
	for (size_t p = gs; p < ge; p++) {
		size_t i = s->msgof[s->base[v] + p];
		int64_t t;
		if (i == NONE || s->m[i].dst != v)
			continue;
		t = plus(s->lo[s->base[s->m[i].src] + s->m[i].se], s->lat);
		if (t > val) {
			val = t;
			cause = i;
		}
	}
	for (size_t p = gs; p < ge; p++) {
		if (val > plus(n->t_ns[p], room_ns(n->dplus_ns[p]))) {
			*s->fail = (struct repair_fail){REPAIR_BOUND, cause, v, p, val};
			return HCLOCK_EINVAL;
		}
		lo[p] = val;
	}
	s->order[s->norder++] = s->base[v] + gs;
	s->run[v] = val;
	s->cause[v] = cause;
	return 0;
}

/* the node of event g (an index into msgof) */
static size_t node_at(const struct rstate *s, size_t g)
{
	size_t a = 0, b = s->nn; /* base[a] <= g < base[b] */

	while (b - a > 1) {
		size_t c = a + (b - a) / 2;
		if (s->base[c] <= g)
			a = c;
		else
			b = c;
	}
	return a;
}

/* pass 2: x_hi of every group, in the reverse of pass 1's order */
static void latest(struct rstate *s)
{
	int64_t *next = s->run; /* per node: x_hi of the group after the one at hand */

	for (size_t v = 0; v < s->nn; v++)
		next[v] = INT64_MAX;
	for (size_t k = s->norder; k-- > 0;) {
		size_t v = node_at(s, s->order[k]), gs = s->order[k] - s->base[v];
		size_t ge = group_end(s, v, gs);
		const struct repair_node *n = &s->n[v];
		int64_t val = next[v];
		for (size_t p = gs; p < ge; p++) {
			size_t i = s->msgof[s->base[v] + p];
			int64_t u = plus(n->t_ns[p], room_ns(n->dplus_ns[p]));
			if (u < val)
				val = u;
			if (i != NONE && s->m[i].src == v) {
				u = minus(s->hi[s->base[s->m[i].dst] + s->m[i].re], s->lat);
				if (u < val)
					val = u;
			}
		}
		for (size_t p = gs; p < ge; p++)
			s->hi[s->base[v] + p] = val;
		next[v] = val;
	}
}

/* pass 3: every group at its time, in pass 1's order; the moves reported */
static int settle(struct rstate *s)
{
	int64_t *prev = s->run; /* per node: x of the group before the one at hand */

	for (size_t v = 0; v < s->nn; v++)
		prev[v] = INT64_MIN;
	for (size_t k = 0; k < s->norder; k++) {
		size_t v = node_at(s, s->order[k]), gs = s->order[k] - s->base[v];
		size_t ge = group_end(s, v, gs), b = s->base[v];
		struct repair_node *n = &s->n[v];
		int64_t val = INT64_MIN;
		for (size_t p = gs; p < ge; p++)
			if (n->t_ns[p] > val)
				val = n->t_ns[p];
		val = val < s->lo[b + gs] ? s->lo[b + gs] : val > s->hi[b + gs] ? s->hi[b + gs] : val;
		if (prev[v] > val)
			val = prev[v];
		for (size_t p = gs; p < ge; p++) {
			size_t i = s->msgof[b + p];
			int64_t t;
			if (i == NONE || s->m[i].dst != v)
				continue;
			t = plus(s->n[s->m[i].src].t_ns[s->m[i].se], s->lat);
			if (t > val)
				val = t;
		}
		for (size_t p = gs; p < ge; p++) {
			uint64_t d = val > n->t_ns[p] ? (uint64_t)val - (uint64_t)n->t_ns[p] :
			             (uint64_t)n->t_ns[p] - (uint64_t)val;
			int64_t shift = d > INT64_MAX ? INT64_MAX : (int64_t)d;
			int r;
			if (val == n->t_ns[p])
				continue;
			if (s->moved && (r = s->moved(s->ctx, v, p, n->t_ns[p], val)))
				return r;
			n->moved++;
			if (shift > n->moved_max_ns)
				n->moved_max_ns = shift;
			n->t_ns[p] = val;
		}
		prev[v] = val;
	}
	return 0;
}

/* place node v's groups while they are ready; the nodes its sends go to are retried */
static int advance(struct rstate *s, size_t v)
{
	const struct repair_node *n = &s->n[v];

	while (s->cur[v] < n->nev) {
		size_t gs = s->cur[v], ge = s->gend[v], p;
		int r;
		for (p = s->scan[v]; p < ge; p++) {
			size_t i = s->msgof[s->base[v] + p];
			if (i != NONE && s->m[i].dst == v && s->m[i].se >= s->cur[s->m[i].src])
				break; /* a receive whose send is not placed yet */
		}
		s->scan[v] = p;
		if (p < ge)
			return 0;
		if (s->place && (r = place_group(s, v, gs, ge)))
			return r;
		s->cur[v] = s->scan[v] = ge;
		s->gend[v] = ge < n->nev ? group_end(s, v, ge) : ge;
		for (p = gs; p < ge; p++) {
			size_t i = s->msgof[s->base[v] + p];
			if (i != NONE && s->m[i].src == v)
				push(s, s->m[i].dst);
		}
	}
	return 0;
}

/* Kahn's pass: 0 with *stuck the first node left unfinished (nn if none), or a failure */
static int kahn(struct rstate *s, size_t *stuck)
{
	int r = 0;

	s->nstack = 0;
	s->norder = 0;
	for (size_t v = 0; v < s->nn; v++) {
		s->cur[v] = s->scan[v] = 0;
		s->gend[v] = s->n[v].nev ? group_end(s, v, 0) : 0;
		s->run[v] = INT64_MIN;
		s->cause[v] = NONE;
		s->queued[v] = 0;
	}
	for (size_t v = s->nn; v-- > 0;)
		push(s, v);
	while (!r && s->nstack) {
		size_t v = s->stack[--s->nstack];
		s->queued[v] = 0;
		r = advance(s, v);
	}
	for (*stuck = 0; !r && *stuck < s->nn && s->cur[*stuck] == s->n[*stuck].nev; (*stuck)++)
		;
	return r;
}

/* After a pass that left node v stuck: a message on a cycle. Each stuck node waits for a
 * send on a node that is stuck too; following them from v comes back to a node seen. */
static size_t cycle_msg(struct rstate *s, size_t v)
{
	size_t i;

	for (;;) {
		i = s->msgof[s->base[v] + s->scan[v]];
		if (s->queued[v])
			break;
		s->queued[v] = 1;
		v = s->m[i].src;
	}
	memset(s->queued, 0, s->nn);
	return i;
}

/* every event's message, and the messages checked */
static int index_messages(struct rstate *s, size_t nm)
{
	for (size_t v = 0; v < s->nn; v++)
		s->base[v + 1] = s->base[v] + s->n[v].nev;
	for (size_t k = 0; k < s->base[s->nn]; k++)
		s->msgof[k] = NONE;
	for (size_t i = 0; i < nm; i++) {
		const struct repair_msg *x = &s->m[i];
		size_t *se, *re;
		if (x->src >= s->nn || x->dst >= s->nn || x->src == x->dst ||
		    x->se >= s->n[x->src].nev || x->re >= s->n[x->dst].nev)
			return HCLOCK_EINVAL;
		se = &s->msgof[s->base[x->src] + x->se];
		re = &s->msgof[s->base[x->dst] + x->re];
		if (*se != NONE || *re != NONE)
			return HCLOCK_EINVAL;
		*se = *re = i;
	}
	return 0;
}

int repair_order(struct repair_node *nodes, size_t nn, const struct repair_msg *m, size_t nm,
                 int64_t min_latency_ns, repair_moved_fn moved, void *ctx,
                 struct repair_fail *fail)
{
	struct rstate s = {.n = nodes, .nn = nn, .m = m, .lat = min_latency_ns, .ties = 1,
	                   .place = 1, .moved = moved, .ctx = ctx, .fail = fail};
	size_t nev = 0, stuck, i;
	int r;

	memset(fail, 0, sizeof(*fail));
	if (min_latency_ns < 0 || min_latency_ns >= LATENCY_LIMIT)
		return HCLOCK_EINVAL;
	for (size_t v = 0; v < nn; v++) {
		nev += nodes[v].nev;
		nodes[v].moved = 0;
		nodes[v].moved_max_ns = 0;
	}
	s.base = malloc((nn + 1) * sizeof(size_t));
	s.msgof = malloc((nev ? nev : 1) * sizeof(size_t));
	s.cur = malloc((nn ? nn : 1) * 5 * sizeof(size_t));
	s.run = malloc((nn ? nn : 1) * sizeof(int64_t));
	s.queued = malloc(nn ? nn : 1);
	s.lo = malloc((nev ? nev : 1) * 2 * sizeof(int64_t));
	s.order = malloc((nev ? nev : 1) * sizeof(size_t));
	if (!s.base || !s.msgof || !s.cur || !s.run || !s.queued || !s.lo || !s.order) {
		r = HCLOCK_ENOMEM;
		goto out;
	}
	s.scan = s.cur + nn;
	s.gend = s.scan + nn;
	s.cause = s.gend + nn;
	s.stack = s.cause + nn;
	s.hi = s.lo + nev;
	s.base[0] = 0;
	if ((r = index_messages(&s, nm)))
		goto out;
	r = kahn(&s, &stuck);
	if (r == HCLOCK_EINVAL && fail->why == REPAIR_BOUND) {
		/* a pairing that no order allows is the more basic error: look for a cycle */
		struct repair_fail bound = *fail;
		s.place = 0;
		kahn(&s, &stuck);
		if (stuck == nn)
			*fail = bound;
		else
			r = 0;
	}
	if (!r && stuck == nn) {
		latest(&s);
		r = settle(&s);
	}
	if (r || stuck == nn)
		goto out;
	/* stuck: a cycle; of events (impossible pairing), or only of groups of one local time */
	i = cycle_msg(&s, stuck);
	s.ties = 0;
	s.place = 0;
	kahn(&s, &stuck);
	if (stuck < nn)
		i = cycle_msg(&s, stuck);
	*fail = (struct repair_fail){stuck < nn ? REPAIR_CYCLE : REPAIR_TIE, i, 0, 0, 0};
	r = HCLOCK_EINVAL;
out:
	free(s.base);
	free(s.msgof);
	free(s.cur);
	free(s.run);
	free(s.queued);
	free(s.lo);
	free(s.order);
	return r;
}

void repair_why(char *buf, size_t len, int64_t earliest_ns, int64_t latest_ns, int64_t lat_ns,
                const char *along)
{
	if (earliest_ns + lat_ns > latest_ns)
		snprintf(buf, len, "the bounds%s were wrong: even the send's earliest time (%lld ns)%s "
		         "is after that", lat_ns && earliest_ns <= latest_ns ? ", or --min-latency," : "",
		         (long long)earliest_ns, lat_ns ? " plus --min-latency" : "");
	else
		snprintf(buf, len, "the send's earliest time (%lld ns)%s is not after it, but the "
		         "events that must precede the send (on its %s or through other messages) "
		         "cannot move back far enough to let it go there: their bounds were wrong",
		         (long long)earliest_ns, lat_ns ? " plus --min-latency" : "", along);
}
