/*
 * repair.h - message order repaired within the bounds (hclock align --repair-order, hclock
 * trace --repair-order): events moved in time, each within [its earliest, its latest
 * possible time], so that every message is received at or after its send (plus a minimum
 * latency) and every node keeps its order. A receive moves forward to its send; a send whose
 * receive cannot move far enough (a receive on the reference, with no room) moves back.
 *
 * Per-node arrays of times and a list of messages in, repaired times out: nothing here knows
 * of traces, files or MPI. Memory: 32 bytes per event (a message index, the earliest and the
 * latest time of its group, a place in the order) and a few words per node, besides the
 * caller's arrays.
 */
#ifndef HCLOCK_ALIGN_REPAIR_H
#define HCLOCK_ALIGN_REPAIR_H

#include <stddef.h>
#include <stdint.h>

/* one node's events, in the node's order */
struct repair_node {
	size_t nev;
	int64_t *t_ns;           /* per event, in: its corrected time, ns, on the common
	                            timeline; out: its repaired time, ns */
	const double *dplus_ns;  /* per event: how far after the corrected time the true time may
	                            lie, ns (>= 0); an event moves forward at most that far (+inf:
	                            unbounded; not > 0, NaN included: not at all) */
	const double *dminus_ns; /* per event: how far before the corrected time the true time may
	                            lie, ns (>= 0); an event moves back at most that far (+inf:
	                            unbounded; not > 0: not at all); NULL: no event moves back
	                            (the forward-only repair) */
	const int64_t *local_ns; /* per event, with local_stride: the node's own time, ns,
	                            non-decreasing; events of equal local time are moved together
	                            (one conversion of local times cannot part them); NULL: every
	                            event on its own */
	size_t local_stride;     /* bytes from one local time to the next (sizeof(int64_t) for a
	                            plain array) */
	size_t moved;            /* out: events moved (either way) */
	int64_t moved_max_ns;    /* out: the largest move, |repaired - corrected|, ns (0 if
	                            none) */
};

/* a matched message: the send is event se of node src, the receive event re of node dst */
struct repair_msg {
	uint32_t src, dst; /* node indexes */
	size_t se, re;     /* event indexes on src (send) and dst (recv) */
};

enum repair_why {
	REPAIR_BOUND = 1, /* an event would have to move past its latest time, even with every
	                     event before it (through node orders and messages) at its earliest */
	REPAIR_CYCLE,     /* a receive precedes, through node orders and messages, its own send:
	                     the pairing of the messages is impossible */
	REPAIR_TIE,       /* a cycle only through events of one local time on a node (moved
	                     together): a round trip within one tick of that node's clock */
};

/* why repair_order failed, for the caller's error line */
struct repair_fail {
	int why;          /* enum repair_why */
	size_t msg;       /* REPAIR_BOUND: the message whose receive started the move, or
	                     (size_t)-1 when only the node's order moved it; REPAIR_CYCLE,
	                     REPAIR_TIE: a message of the cycle */
	size_t node, ev;  /* REPAIR_BOUND: the event that would move too far (its t_ns is still
	                     the corrected time) */
	int64_t need_ns;  /* REPAIR_BOUND: the earliest time it could have, ns: after its latest */
};

/* called for every event moved, as it is moved: from_ns (corrected) to to_ns (repaired;
 * to_ns < from_ns for a move back); the repair has read the event's delta_plus and
 * delta_minus by then, so the callee may change them */
typedef int (*repair_moved_fn)(void *ctx, size_t node, size_t ev, int64_t from_ns,
                               int64_t to_ns);

/*
 * Repair the order of nodes[0..nn) for the messages m[0..nm): every event gets a time in
 * [corrected - delta_minus, corrected + delta_plus], at least the time of the event before it
 * on its node, and, for a receive, at least its send's time plus min_latency_ns (>= 0);
 * events of one local time share one time. Of such times, the one taken (repair.c): each
 * event keeps its corrected time unless it lies before the earliest time the events before
 * it allow (then it moves forward to that, or as far as the event before it or its send
 * pushes it) or after the latest time the events after it allow (then it moves back to
 * that). With every delta_minus 0 (or dminus_ns NULL), the least times at or after the
 * corrected ones. The events are visited in an order consistent with happens-before (Kahn's
 * algorithm over the node orders and the messages), and back. moved (may be NULL) is called
 * for every event moved, once every bound was read; a non-zero return stops the repair and is
 * returned (t_ns then partly repaired).
 *
 * Returns 0 (every t_ns repaired, moved and moved_max_ns set); HCLOCK_EINVAL with fail->why
 * set when no such times exist (REPAIR_BOUND, REPAIR_CYCLE, REPAIR_TIE, a cycle reported
 * before a bound; t_ns then untouched); HCLOCK_EINVAL with fail->why 0 for a message naming
 * no valid event or its own node, an event in two messages, or min_latency_ns outside
 * [0, 2^62); HCLOCK_ENOMEM; or what moved returned.
 */
int repair_order(struct repair_node *nodes, size_t nn, const struct repair_msg *m, size_t nm,
                 int64_t min_latency_ns, repair_moved_fn moved, void *ctx,
                 struct repair_fail *fail);

/* Why a failed repair of one message cannot hold, as one clause for the caller's error line:
 * the send's earliest time earliest_ns (its corrected time less its lower slack; ns), the
 * receive's latest latest_ns, the minimum latency lat_ns (0: none given), and what the
 * send's predecessors lie along ("node", "thread"). */
void repair_why(char *buf, size_t len, int64_t earliest_ns, int64_t latest_ns, int64_t lat_ns,
                const char *along);

#endif
