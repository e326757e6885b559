/*
 * wrong_order.c - messages received out of send order (after Scalasca's "Late Sender,
 * wrong order"; Geimer et al., CCPE 2010): a process received message m before message m'
 * although m' was sent to it first (its send started earlier). The program's receives asked
 * for m first, so a receiver that waited for m waited while m' may already have been there.
 * An instance per such m, with m's receive's waiting, w = clip(S - B, 0, D) as for a Late
 * Sender (which may be 0: the order is the finding, the time what it cost).
 *
 * Looked for among the last WINDOW messages each process received (bounded memory): a pair
 * further apart in the receiver's sequence is not found.
 */
#include "hclock_api.h"
#include "waits/patterns.h"

#define WINDOW 64

struct seen {
	struct waits_stamp send;  /* the send's start */
	struct waits_call call;   /* the receiving call */
	int64_t src;
	uint64_t comm;
	int64_t done_ns;          /* the receive's completion: its call's leave, ns */
	int said;                 /* reported already */
};

struct ring {
	struct seen s[WINDOW];
	size_t n, next;
	int64_t max_send_ns;     /* at least every send start in the window (evicted ones may
	                            keep it higher: a scan then finds nothing, and lowers it) */
	int64_t max_done_ns;     /* ... and every completion */
};

static int report(waits *w, int self, struct seen *m)
{
	if (m->said)
		return 0;
	m->said = 1;
	struct waits_instance in = {.pattern = self, .proc = m->call.proc, .peer = m->src,
	                            .func = m->call.func, .comm = m->comm};
	waits_interval(&m->send, &m->call, &in);
	return waits_emit(w, &in);
}

static int on_message(waits *w, int self, const struct waits_send *s, const struct waits_recv *r)
{
	struct ring *g = waits_slot(w, self, r->call.proc, sizeof(*g));
	if (!g)
		return HCLOCK_ENOMEM;
	struct seen x = {.send = s->call.enter, .call = r->call, .src = s->call.proc,
	                 .comm = r->comm, .done_ns = r->call.leave.t_ns};
	/* the common case in O(1): x sent and completed after everything in the window (receives
	 * come in completion order) */
	int scan = g->n && (x.send.t_ns < g->max_send_ns || x.done_ns < g->max_done_ns);
	if (scan)
		g->max_send_ns = g->max_done_ns = INT64_MIN;
	for (size_t i = 0; scan && i < g->n; i++) {
		struct seen *m = &g->s[i];
		int rc = 0;
		if (m->done_ns < x.done_ns && m->send.t_ns > x.send.t_ns)
			rc = report(w, self, m);
		else if (x.done_ns < m->done_ns && x.send.t_ns > m->send.t_ns)
			rc = report(w, self, &x);
		if (rc)
			return rc;
		if (m->send.t_ns > g->max_send_ns)
			g->max_send_ns = m->send.t_ns;
		if (m->done_ns > g->max_done_ns)
			g->max_done_ns = m->done_ns;
	}
	if (!g->n || x.send.t_ns > g->max_send_ns)
		g->max_send_ns = x.send.t_ns;
	if (!g->n || x.done_ns > g->max_done_ns)
		g->max_done_ns = x.done_ns;
	g->s[g->next] = x;
	g->next = (g->next + 1) % WINDOW;
	if (g->n < WINDOW)
		g->n++;
	return 0;
}

const struct waits_pattern wrong_order_pattern = {
	.name = "wrong_order",
	.title = "Wrong Order",
	.what = "a message was received before one sent to the same process earlier",
	.also_counted = 1, /* its receive's waiting is a Late Sender's */
	.on_message = on_message,
};
