/*
 * nblink.h - a nonblocking message link between the processes of one run: what the
 * continuous clock's exchanges travel on (cont/engine.c), and all of its set-up and
 * tear-down traffic. Small messages (up to NBLINK_MAX_MSG bytes) with a tag, to a peer, or
 * from any peer; nothing ever blocks: a send is handed over and let go, a receive is a poll
 * that says whether something came. A few collective steps (every process of the link calls
 * them in the same order) set the engine up and take it down: agreement on errors, an
 * all-gather, a blocking receive before the first poll, groups that share memory (the
 * followers of a clock, cont/share.c) and the close.
 *
 * The transport behind it is a small table (struct nblink_ops): MPI by default
 * (transport/nblink_mpi.h: PMPI_* calls on a communicator of its own, so that inside the
 * PMPI tracer, libhclock_trace, the clock's own traffic is never recorded as the program's);
 * the unit tests script one in memory (tests/unit/nblink_script.c). Nothing here names MPI.
 *
 * Errors are HCLOCK_E* codes with hclock_last_error()'s line naming the call.
 */
#ifndef HCLOCK_TRANSPORT_NBLINK_H
#define HCLOCK_TRANSPORT_NBLINK_H

#include <stddef.h>

#define NBLINK_MAX_MSG 128 /* the largest message, bytes */

struct nblink;

struct nblink_ops {
	/* Hand msg (len bytes, copied) to the transport for peer. 0: on its way; 1: dropped
	 * (every send slot still busy: the caller goes on as if it were lost); < 0: an error. */
	int (*send)(struct nblink *l, int peer, int tag, const void *msg, size_t len);
	/* A message that came, if any: 1 and *peer, *tag, buf (cap bytes) and *len filled;
	 * 0: none waiting; < 0: an error. */
	int (*poll)(struct nblink *l, int *peer, int *tag, void *buf, size_t cap, size_t *len);
	/* Stop: receive no more, let the sends in flight go. Messages that still come stay in
	 * the transport until close or destroy (which discard them). */
	void (*quiesce)(struct nblink *l);
	/* Free this process's part (local; after close, or alone: the collective resources,
	 * such as a communicator or a group's memory, then stay with the run). */
	void (*destroy)(struct nblink *l);

	/* ---- collective set-up and tear-down ---- */
	/* Every process returns the first failing process's rc (0 if none failed) and then
	 * holds its error line (the lowest rank's). */
	int (*agree)(struct nblink *l, int rc);
	/* mine (len bytes) from every process into all (size * len bytes, by rank). */
	int (*allgather)(struct nblink *l, const void *mine, size_t len, void *all);
	/* Blocking, for the set-up before the first poll: the next message with tag from peer
	 * (-1: any) into buf (len bytes). A peer that never sends ends the run past the wait
	 * limit (transport/yield.h), as every set-up wait of hclock does. */
	int (*recv)(struct nblink *l, int peer, int tag, void *buf, size_t len);
	/* The processes giving the same color >= 0 form a group (ordered by key; the lowest is
	 * its leader), which shares size bytes the leader allocates (size counts on the leader
	 * only, zero-filled). *mem: the leader's bytes, as this process reaches them; NULL for a
	 * color < 0. *on_node: how many of the group's *members share memory with this process
	 * (all of them: the group works; fewer: HCLOCK_EUNSUPP, *mem NULL, no line set, the
	 * caller says what to do instead). One group per link. */
	int (*group)(struct nblink *l, int color, int key, size_t size, void **mem, int *members,
	             int *on_node);
	/* Collective over the group (no-op outside one): a barrier with an end. */
	void (*group_barrier)(struct nblink *l);
	/* After quiesce and a collective step that makes sure nothing is sent to this process
	 * any more (an agree): take in what is still on the way, free the group's memory and
	 * the link's collective resources. destroy follows. */
	void (*close)(struct nblink *l);
};

struct nblink {
	const struct nblink_ops *ops;
	int rank, size; /* this process in the link, and how many there are */
};

static inline int nblink_send(struct nblink *l, int peer, int tag, const void *msg, size_t len)
{
	return l->ops->send(l, peer, tag, msg, len);
}

static inline int nblink_poll(struct nblink *l, int *peer, int *tag, void *buf, size_t cap,
                              size_t *len)
{
	return l->ops->poll(l, peer, tag, buf, cap, len);
}

static inline void nblink_quiesce(struct nblink *l)
{
	l->ops->quiesce(l);
}

static inline void nblink_destroy(struct nblink *l)
{
	if (l)
		l->ops->destroy(l);
}

static inline int nblink_agree(struct nblink *l, int rc)
{
	return l->ops->agree(l, rc);
}

static inline int nblink_allgather(struct nblink *l, const void *mine, size_t len, void *all)
{
	return l->ops->allgather(l, mine, len, all);
}

static inline int nblink_recv(struct nblink *l, int peer, int tag, void *buf, size_t len)
{
	return l->ops->recv(l, peer, tag, buf, len);
}

static inline int nblink_group(struct nblink *l, int color, int key, size_t size, void **mem,
                               int *members, int *on_node)
{
	return l->ops->group(l, color, key, size, mem, members, on_node);
}

static inline void nblink_group_barrier(struct nblink *l)
{
	l->ops->group_barrier(l);
}

static inline void nblink_close(struct nblink *l)
{
	l->ops->close(l);
}

#endif
