/*
 * late_receiver.c - Late Receiver (Scalasca's pattern): a blocking send (MPI_Send of a
 * message the library sends by rendezvous, MPI_Ssend) that has to wait until the receiver
 * posts its receive waits w = clip(P - S, 0, D) when the receive was posted while the send
 * was still in its call (P < L), else 0 (the library took the message eagerly): S the
 * send's start, P the post, L and D the sending call's leave and duration. A synchronous
 * send cannot end before the post, so for it w = clip(P - S, 0, D) always.
 *
 * The post is known for blocking receives only (MPI_Recv's enter); a message received
 * through MPI_Irecv has no instance (its post is not in the trace's message records).
 * Strictness: the interval's lower end is above 0 only when the bounds prove P < L, its
 * upper end 0 when they prove P >= L.
 */
#include "waits/patterns.h"

/* a send that may have been taken eagerly: the interval [*lo, *hi] of its waiting from
 * the bounds of the post p and the send's leave l */
static void eager(const struct waits_stamp *p, const struct waits_stamp *l, int64_t *lo,
                  int64_t *hi)
{
	if (!(waits_hi(p) < waits_lo(l)) || p->above_ns >= WAITS_NO_BOUND ||
	    l->below_ns >= WAITS_NO_BOUND)
		*lo = 0; /* not proven posted before the send's end */
	if (waits_lo(p) >= waits_hi(l) && p->below_ns < WAITS_NO_BOUND &&
	    l->above_ns < WAITS_NO_BOUND)
		*hi = 0; /* proven posted after it: taken eagerly */
}

static int on_message(waits *w, int self, const struct waits_send *s, const struct waits_recv *r)
{
	if (!s->blocking || !r->posted_in_call)
		return 0;
	const struct waits_stamp *p = &r->call.enter, *l = &s->call.leave;
	struct waits_instance in = {.pattern = self, .proc = s->call.proc, .peer = r->call.proc,
	                            .func = s->call.func, .comm = s->comm};
	waits_interval(p, &s->call, &in);
	if (!s->synchronous) {
		if (p->t_ns >= l->t_ns)
			in.est_ns = 0;
		eager(p, l, &in.lo_ns, &in.hi_ns);
		if (in.has_truth) {
			struct waits_stamp pt = waits_truth_stamp(p), lt = waits_truth_stamp(l);
			eager(&pt, &lt, &in.true_lo_ns, &in.true_hi_ns);
		}
	}
	if (in.est_ns > 0 || in.lo_ns > 0)
		return waits_emit(w, &in);
	return 0;
}

const struct waits_pattern late_receiver_pattern = {
	.name = "late_receiver",
	.title = "Late Receiver",
	.what = "a blocking send waited for its receive to be posted",
	.on_message = on_message,
};
