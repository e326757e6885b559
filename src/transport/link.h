/*
 * link.h - the ping-pong link between two processes: the only way the offset estimators
 * talk. Messages are one int64 timestamp each, on the private communicator.
 *
 * Errors never cut an exchange short: a failing send or receive (an MPI error, an injected
 * fault) is recorded in the link (rc, the first one) and the exchange goes on with dummy
 * values, so the peer is never left waiting; the estimator returns l->rc at its end.
 *
 * The transport behind a link is a small table (struct link_ops): MPI by default; the unit
 * tests script one with known delays and asymmetry (tests/unit/test_offset.c).
 */
#ifndef HCLOCK_TRANSPORT_LINK_H
#define HCLOCK_TRANSPORT_LINK_H

#include <stdint.h>

#include "util/pmpi.h"

#include "hclock.h"

#define HCLOCK_TAG 0x4843 /* the tag of every exchange message (on the private communicator) */

struct pp_link;

struct link_ops {
	/* send timestamp t_ns to dest; sync: synchronous send (completes when received) */
	int (*send)(struct pp_link *l, int64_t t_ns, int dest, int sync);
	/* receive a timestamp from src */
	int (*recv)(struct pp_link *l, int src, int64_t *t_ns);
};

/* The two ends of one exchange, as seen by the calling process. */
struct pp_link {
	const struct link_ops *ops;
	void *ctx;           /* the transport's own state (scripted transports) */
	MPI_Comm comm;       /* MPI transport: hclock's private communicator */
	int ref, client;     /* ranks in comm */
	int me;              /* this process's rank in comm */
	hclock_clock *clk;   /* the clock this process timestamps with */
	uint64_t *pingpongs; /* counter of exchanges this process took part in, or NULL */
	uint64_t *retakes;   /* counter of measurements retaken after a stall (offset_measure),
	                        or NULL (pp_link_init) */
	int64_t stall_ns;    /* test only (HCLOCK_FAULT at=stall): every receive of the current
	                        measurement is handed over this late, ns (0: not stalled) */
	int rc;              /* first error on this link (0: none) */
};

/* A link over MPI on comm between ref and client, timestamping with clk. */
void pp_link_init(struct pp_link *l, MPI_Comm comm, int ref, int client, hclock_clock *clk,
                  uint64_t *pingpongs);

/* Send a timestamp; the clock's pre-send hook (emulated jitter) runs first, after the
 * timestamp was taken, so it looks like network delay. */
void pp_send(struct pp_link *l, int64_t t_ns, int dest);
void pp_ssend(struct pp_link *l, int64_t t_ns, int dest);
/* Receive a timestamp (0 after a failure). */
int64_t pp_recv(struct pp_link *l, int src);
/* The reference's side of n exchanges: answer each message with the current time. */
void pp_serve(struct pp_link *l, int n);
/* Count n finished exchanges. */
void pp_count(struct pp_link *l, int n);

#endif
