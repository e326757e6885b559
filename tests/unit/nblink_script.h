/*
 * nblink_script.h - a scripted link (transport/nblink.h) between the processes of one test
 * program, in memory, no MPI: what lets tests/unit/test_engine.c run several engines in one
 * process. A message arrives a scripted delay after its send (a least delay per direction
 * plus an exponential tail), in the true time of the test (*T_ns, which the test's clocks
 * read and advance); it may be lost at random or followed by a garbled copy, and a process
 * may be muted for a while (its messages are lost: a parent that stops answering). Messages between two processes never
 * overtake each other (MPI's rule).
 *
 * The collective steps (agree, allgather, the set-up's blocking receive, the group) need
 * every process at once: the test runs engine_create and engine_stop in one thread per
 * process; everything else may run in one thread.
 */
#ifndef HCLOCK_TEST_NBLINK_SCRIPT_H
#define HCLOCK_TEST_NBLINK_SCRIPT_H

#include <stdint.h>

#include "transport/nblink.h"

#define SCRIPT_MAX 8 /* processes at most */

struct script_cfg {
	int n;                                 /* processes */
	const int64_t *T_ns;                   /* the test's true time, ns (read atomically) */
	double min_ns[SCRIPT_MAX][SCRIPT_MAX]; /* least one-way delay from i to j, ns */
	double tail_ns;                        /* mean of the exponential tail that 70 % of the
	                                          messages add to it, ns */
	double drop;                           /* probability that a message sent from */
	int64_t drop_from_ns;                  /* this true time on is lost, ns (the set-up's
	                                          messages must come) */
	double junk;                           /* probability that a message sent from
	                                          drop_from_ns on is followed by a garbled copy
	                                          (random bytes, half of them of a random length:
	                                          the engine must take it in its stride) */
	int mute;                              /* the process whose messages are lost between */
	int64_t mute_from_ns, mute_to_ns;      /* these true times, ns (-1: none) */
	unsigned long long seed;
};

/* What went over the links. */
struct script_stats {
	long sent, lost, garbled, delivered;
};

struct script_world;

/* A world of cfg->n processes, or NULL (no memory). */
struct script_world *script_world_create(const struct script_cfg *cfg);
/* Process rank's link (its engine takes it: nblink_close and nblink_destroy end it). */
struct nblink *script_link(struct script_world *w, int rank);
void script_world_stats(const struct script_world *w, struct script_stats *st);
/* After every link was destroyed: free the world and the groups' memory. */
void script_world_free(struct script_world *w);

#endif
