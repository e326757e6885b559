/*
 * share.h - followers of a clock (prop in the one-shot spec) share their leader's time
 * source: their continuous clock reads the leader's published state in an MPI
 * shared-memory window, no traffic. Collective set-up and tear-down for the engine
 * (cont/engine.c); PMPI_* calls only (not recorded inside the tracer).
 */
#ifndef HCLOCK_CONT_SHARE_H
#define HCLOCK_CONT_SHARE_H

#include "util/pmpi.h"

#include "model/cont.h"

struct share {
	MPI_Comm comm;  /* the leader (rank 0) and its followers; MPI_COMM_NULL: no group */
	MPI_Win win;
	struct cont_state *state; /* the leader's state in the window, or NULL */
};

/* Collective over comm. tree[2 r] is rank r's parent (-1: none), tree[2 r + 1] 1 if r
 * follows its parent's clock. Leaves sh->state NULL for a process in no group. 0,
 * HCLOCK_EUNSUPP (a follower on another node: the line says what to use instead) or
 * HCLOCK_EMPI. */
int share_create(MPI_Comm comm, const int *tree, struct share *sh);
/* Collective over the group: freeze the shared state (its leader), make clk (a member's
 * continuous clock) read its own copy from now on. No-op outside a group. */
void share_freeze(struct share *sh, hclock_clock *clk);
/* Collective over the group (after share_freeze, or a failed set-up): free the window and
 * the group's communicator. */
void share_free(struct share *sh);

#endif
