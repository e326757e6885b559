/*
 * offset.h - the offset estimator family: how a client learns the offset of its clock to a
 * reference's clock from ping-pong exchanges over a link (transport/link.h). One estimator
 * per file, each described by one struct offset_type (its ops and state size) listed once
 * in offset/types.def:
 * adding an estimator is one new file and one line there (and the file in
 * src/CMakeLists.txt's source list).
 *
 * Every measure() runs its whole exchange whatever fails on the way (the link records
 * errors and goes on), so the peer is never left waiting, and returns the first error.
 */
#ifndef HCLOCK_OFFSET_OFFSET_H
#define HCLOCK_OFFSET_OFFSET_H

#include <stdint.h>

#include "hclock.h"
#include "numerics/hull_learner.h"
#include "transport/link.h"

/* One estimate, valid on the client only. */
struct offset_sample {
	int64_t local_ns; /* client clock time the estimate refers to, ns */
	double offset_ns; /* reference minus client at local_ns, ns */
	double rtt_ns;    /* smallest round trip of the exchanges (rtt: the larger of the pair's
	                     mean RTT and the round trip of the exchange that gave the median
	                     offset), ns */
};

struct offset_alg;

struct offset_ops {
	/* one measurement (both ends call it); fills *out on the client */
	int (*measure)(struct offset_alg *a, struct pp_link *l, struct offset_sample *out);
	/* forget per-pair state such as a cached RTT; may be NULL */
	void (*reset)(struct offset_alg *a);
	/* both ends, before a retake of a measurement that went through a stall: forget what it
	   learned of this pair (its cached RTT may hold the stall); may be NULL */
	void (*retake)(struct offset_alg *a, const struct pp_link *l);
	/* may be NULL: free(a) */
	void (*destroy)(struct offset_alg *a);
};

struct offset_alg {
	const struct offset_ops *ops;
	const struct offset_type *type;
	int nexchanges;     /* ping-pongs per measurement */
	hull_learner *sink; /* estimators that keep their exchanges (hull): each ping-pong's
	                       timestamps are also fed to it when not NULL (client side) */
	int sink_rc;        /* the first error feeding sink (HCLOCK_ENOMEM), 0 if none */
	int paper;          /* 1: the papers' algorithm exactly (spec key paper): no retakes */
	/* client side: the floor of the current pair, the smallest round trip its measurements
	 * had, ns (0: none yet), and which pair that is */
	double floor_ns;
	MPI_Comm floor_comm;
	int floor_ref, floor_client;
	int futile; /* client side: retakes in a row that went through a stall again */
};

/* One line of the family's table. */
struct offset_type {
	const char *name; /* as written in a spec: "skampi" */
	const char *help; /* one line for --help, error lines and `hclock specs` */
	const struct offset_ops *ops;
	size_t size;      /* bytes of its state, which starts with struct offset_alg (0: just
	                     that); offset_create allocates it zeroed */
	int hull;         /* its exchanges go to a sink: the model learners fit them with
	                     convex hulls (strict bounds) instead of a regression */
};

/* The table, in offset/types.def order, NULL-terminated. */
extern const struct offset_type *const offset_types[];
/* The type called name (n characters), or NULL. */
const struct offset_type *offset_type_find(const char *name, size_t n);
/* "skampi, rtt or min", from the table. */
const char *offset_type_names(void);

/* Factory: nexchanges >= 1. */
int offset_create(const struct offset_type *t, int nexchanges, struct offset_alg **out);

/*
 * One offset measurement (both ends call it; the client's result in *out), retaken when it
 * went through a stall (numerics/stall.h): its round trip far above the pair's floor. The
 * first measurement of a pair (no floor yet) is always taken twice, and one whose round trip
 * shows the floor so far to have been a stall once more (so that two stalled ones in a row
 * cannot set the floor). At most OFFSET_RETAKES retakes; *out is the measurement with the
 * smallest round trip. After OFFSET_FUTILE retakes in a row that went through a stall again
 * (a machine whose every wait costs a scheduler slice: retakes only lengthen the sync), a
 * stalled measurement is kept as it is until one comes out clean. After each measurement the
 * client tells the reference whether another follows (one message). Every ping-pong of
 * every retake reaches a->sink. With a->paper: exactly one measurement, no message.
 */
#define OFFSET_RETAKES 3
#define OFFSET_FUTILE 4
int offset_measure(struct offset_alg *a, struct pp_link *l, struct offset_sample *out);
void offset_reset(struct offset_alg *a);
/* SKaMPI-Offset's exchange (skampi.c), shared by the estimators built on it: n ping-pongs,
 * the client's *out the midpoint of the tightest bounds; every ping-pong also fed to
 * a->sink when set. */
int offset_skampi_measure(struct offset_alg *a, struct pp_link *l, struct offset_sample *out);
void offset_destroy(struct offset_alg *a);

#endif
