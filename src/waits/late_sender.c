/*
 * late_sender.c - Late Sender (Scalasca's pattern; Geimer et al., "The Scalasca performance
 * toolset architecture", CCPE 2010): a process blocked in a receive (MPI_Recv, or the
 * MPI_Wait* / MPI_Test* that completed an MPI_Irecv) before the matching send started waits
 * w = clip(S - B, 0, D): S the send's start, B the receiving call's enter, D its duration.
 *
 * A call that completes several messages (MPI_Waitall) waited once: its instance is the
 * largest of its messages' (the true wait is the largest of theirs, so its interval is
 * [max lo, max hi], and so is its truth's). The messages of one call come one after the
 * other in its process's receives, told apart from the next call's by the call's id (or,
 * without one, by its enter time and function), and the instance is held until the
 * process's next receive in another call (or waits_finish).
 */
#include "hclock_api.h"
#include "waits/patterns.h"

/* per process: the instance of its last receiving call, held back */
struct held {
	int have;
	uint64_t id;             /* its call's id (waits_call's; 0: none) */
	struct waits_instance in;
};

/* whether receive r completed in the call held */
static int same_call(const struct held *h, const struct waits_recv *r,
                     const struct waits_instance *in)
{
	if (h->id || r->call.id)
		return h->id == r->call.id;
	return h->in.at_ns == in->at_ns && h->in.func == in->func;
}

static int flush(waits *w, struct held *h)
{
	if (!h->have)
		return 0;
	h->have = 0;
	return waits_emit(w, &h->in);
}

static int on_message(waits *w, int self, const struct waits_send *s, const struct waits_recv *r)
{
	struct waits_instance in = {.pattern = self, .proc = r->call.proc, .peer = s->call.proc,
	                            .func = r->call.func, .comm = r->comm};
	struct held *h = waits_slot(w, self, r->call.proc, sizeof(*h));
	if (!h)
		return HCLOCK_ENOMEM;
	int is = waits_interval(&s->call.enter, &r->call, &in);
	if (h->have && same_call(h, r, &in)) {
		/* the same call: the largest */
		if (!is)
			return 0;
		if (in.est_ns > h->in.est_ns) {
			h->in.est_ns = in.est_ns;
			h->in.peer = in.peer;
			h->in.comm = in.comm;
		}
		if (in.lo_ns > h->in.lo_ns)
			h->in.lo_ns = in.lo_ns;
		if (in.hi_ns > h->in.hi_ns)
			h->in.hi_ns = in.hi_ns;
		h->in.has_truth = h->in.has_truth && in.has_truth;
		if (in.true_lo_ns > h->in.true_lo_ns)
			h->in.true_lo_ns = in.true_lo_ns;
		if (in.true_hi_ns > h->in.true_hi_ns)
			h->in.true_hi_ns = in.true_hi_ns;
		return 0;
	}
	int rc = flush(w, h);
	if (rc || !is)
		return rc;
	h->in = in;
	h->id = r->call.id;
	h->have = 1;
	return 0;
}

static int finish(waits *w, int self)
{
	for (int32_t p = 0;; p++) {
		struct held *h = waits_slot_if(w, self, p, sizeof(*h));
		if (!h)
			return 0;
		int rc = flush(w, h);
		if (rc)
			return rc;
	}
}

const struct waits_pattern late_sender_pattern = {
	.name = "late_sender",
	.title = "Late Sender",
	.what = "a receive waited for its message's send to start",
	.on_message = on_message,
	.finish = finish,
};
