/*
 * repair.h - message order repaired within the bounds (hclock align --repair-order): events
 * moved forward in time, each at most to its latest possible time, so that every message is
 * received at or after its send (plus a minimum latency) and every node keeps its order.
 *
 * Per-node arrays of times and a list of messages in, repaired times out: nothing here knows
 * of traces, files or MPI. Memory: one message index per event (8 bytes) and a few words
 * per node, besides the caller's arrays.
 */
#ifndef HCLOCK_ALIGN_REPAIR_H
#define HCLOCK_ALIGN_REPAIR_H

#include <stddef.h>
#include <stdint.h>

/* one node's events, in the node's order */
struct repair_node {
	size_t nev;
	int64_t *t_ns;           /* per event, in: its corrected time, ns, on the common
	                            timeline; out: its repaired time (>= the corrected), ns */
	const double *dplus_ns;  /* per event: how far after the corrected time the true time may
	                            lie, ns; an event moves at most that far (+inf: unbounded) */
	const int64_t *local_ns; /* per event, with local_stride: the node's own time, ns,
	                            non-decreasing; events of equal local time are moved together
	                            (one conversion of local times cannot part them); NULL: every
	                            event on its own */
	size_t local_stride;     /* bytes from one local time to the next (sizeof(int64_t) for a
	                            plain array) */
	size_t moved;            /* out: events moved */
	int64_t moved_max_ns;    /* out: the largest move, ns (0 if none) */
};

/* a matched message: the send is event se of node src, the receive event re of node dst */
struct repair_msg {
	uint32_t src, dst; /* node indexes */
	size_t se, re;     /* event indexes on src (send) and dst (recv) */
};

enum repair_why {
	REPAIR_BOUND = 1, /* an event would have to move past its latest time */
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
	int64_t need_ns;  /* REPAIR_BOUND: the time it would need, ns */
};

/* called for every event moved, as it is moved: from_ns (corrected) to to_ns (repaired);
 * the repair has read the event's delta_plus by then, so the callee may change it */
typedef int (*repair_moved_fn)(void *ctx, size_t node, size_t ev, int64_t from_ns,
                               int64_t to_ns);

/*
 * Repair the order of nodes[0..nn) for the messages m[0..nm): every event gets the least time
 * that is at least its corrected time, at least the repaired time of the event before it on
 * its node, and, for a receive, at least its send's repaired time plus min_latency_ns (>= 0);
 * events of one local time share one time. The events are visited in an order consistent
 * with happens-before (Kahn's algorithm over the node orders and the messages), each once.
 * moved (may be NULL) is called for every event moved; a non-zero return stops the repair
 * and is returned.
 *
 * Returns 0 (every t_ns repaired, moved and moved_max_ns set); HCLOCK_EINVAL with fail->why
 * set when no such times exist (REPAIR_BOUND, REPAIR_CYCLE, REPAIR_TIE, a cycle reported
 * before a bound; t_ns is then partly repaired); HCLOCK_EINVAL with fail->why 0 for a message naming no valid event or its own
 * node, an event in two messages, or min_latency_ns outside [0, 2^62); HCLOCK_ENOMEM; or
 * what moved returned.
 */
int repair_order(struct repair_node *nodes, size_t nn, const struct repair_msg *m, size_t nm,
                 int64_t min_latency_ns, repair_moved_fn moved, void *ctx,
                 struct repair_fail *fail);

#endif
