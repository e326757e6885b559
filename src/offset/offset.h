/*
 * offset.h - the offset estimator family: how a client learns the offset of its clock to a
 * reference's clock from ping-pong exchanges (skampi: Alg. 7; rtt: Alg. 8; min: Cristian's
 * estimate with Dunigan's minimum filter). One algorithm per file, behind struct offset_ops.
 */
#ifndef HCLOCK_OFFSET_OFFSET_H
#define HCLOCK_OFFSET_OFFSET_H

#include <stdint.h>

#include <mpi.h>

#include "hclock.h"

#define HCLOCK_TAG 0x4843 /* every sync message carries this tag on a private communicator */

/* The two ends of one exchange, as seen by the calling process. */
struct pp_link {
	MPI_Comm comm;
	int ref, client;     /* ranks in comm */
	int me;              /* this process's rank in comm */
	hclock_clock *clk;   /* the clock this process timestamps with */
	hclock_emu *emu;     /* emulated jitter, or NULL */
	uint64_t *pingpongs; /* counter of exchanges this process took part in, or NULL */
};

/* One estimate, valid on the client only. */
struct offset_sample {
	int64_t local_ns; /* client clock time the estimate refers to, ns */
	double offset_ns; /* reference minus client at local_ns, ns */
	double rtt_ns;    /* smallest round trip of the exchanges (rtt: the pair's mean), ns */
};

struct offset_alg;

struct offset_ops {
	const char *name;
	/* one measurement (both ends call it); fills *out on the client */
	int (*measure)(struct offset_alg *a, const struct pp_link *l, struct offset_sample *out);
	/* forget per-pair state such as a cached RTT; may be NULL */
	void (*reset)(struct offset_alg *a);
	void (*destroy)(struct offset_alg *a);
};

struct offset_alg {
	const struct offset_ops *ops;
	int nexchanges; /* ping-pongs per measurement */
};

/* Factory: name is skampi, rtt or min; nexchanges >= 1. */
int offset_create(const char *name, int nexchanges, struct offset_alg **out);
static inline int offset_measure(struct offset_alg *a, const struct pp_link *l,
                                 struct offset_sample *out)
{
	return a->ops->measure(a, l, out);
}
void offset_reset(struct offset_alg *a);
void offset_destroy(struct offset_alg *a);

/* Set up a link for a pair; who is not ref or client gets me = -1 semantics via the caller. */
void pp_link_init(struct pp_link *l, MPI_Comm comm, int ref, int client, hclock_clock *clk,
                  uint64_t *pingpongs);

/* Message primitives: a timestamp (int64 ns) to/from the peer; sending first waits the
 * emulated jitter, after the timestamp was taken, so it looks like network delay. */
void pp_send(const struct pp_link *l, int64_t t_ns, int dest);
void pp_ssend(const struct pp_link *l, int64_t t_ns, int dest);
int64_t pp_recv(const struct pp_link *l, int src);
/* The reference's side of n exchanges: answer each message with the current time. */
void pp_serve(const struct pp_link *l, int n);

/* Constructors, one per file. */
int offset_skampi_create(struct offset_alg **out);
int offset_rtt_create(struct offset_alg **out);
int offset_min_create(struct offset_alg **out);

#endif
