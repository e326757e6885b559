/*
 * nblink.h - a nonblocking message link between the processes of one run: what the
 * continuous clock's exchanges travel on (cont/engine.c). Small messages (up to
 * NBLINK_MAX_MSG bytes) with a tag, to a peer, or from any peer; nothing ever blocks:
 * a send is handed over and let go, a receive is a poll that says whether something came.
 *
 * The transport behind it is a small table (struct nblink_ops): MPI by default
 * (nblink_mpi_create: PMPI_* calls on a communicator of its own, so that inside the PMPI
 * tracer, libhclock_trace, the clock's own traffic is never recorded as the program's);
 * tests may script one.
 *
 * Errors are HCLOCK_E* codes with hclock_last_error()'s line naming the call.
 */
#ifndef HCLOCK_TRANSPORT_NBLINK_H
#define HCLOCK_TRANSPORT_NBLINK_H

#include <stddef.h>

#include "util/pmpi.h"

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
	 * the transport until destroy (which discards them). */
	void (*quiesce)(struct nblink *l);
	/* Free (after quiesce); the peers must have quiesced too (a collective step between
	 * the two calls makes sure: nothing is sent to this process any more). */
	void (*destroy)(struct nblink *l);
};

struct nblink {
	const struct nblink_ops *ops;
};

/* A link over MPI on comm (which the caller owns and frees after nblink_destroy; hclock's
 * messages should have it to themselves). Local; 0, HCLOCK_ENOMEM or HCLOCK_EMPI. */
int nblink_mpi_create(MPI_Comm comm, struct nblink **out);

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

#endif
