/*
 * share.h - followers of a clock (prop in the one-shot spec) share their leader's time
 * source: their continuous clock reads the leader's published state in memory the link's
 * group shares (transport/nblink.h: an MPI shared-memory window over MPI), no traffic.
 * Collective set-up and freeze for the engine (cont/engine.c); no MPI here.
 */
#ifndef HCLOCK_CONT_SHARE_H
#define HCLOCK_CONT_SHARE_H

#include "model/cont.h"
#include "transport/nblink.h"

struct share {
	struct nblink *link;      /* its group is the link's (freed by nblink_close) */
	int member;               /* 1: in a group (the leader or a follower) */
	int leader;               /* 1: its leader */
	struct cont_state *state; /* the leader's state in the shared memory, or NULL */
};

/* Collective over the link. tree[2 r] is rank r's parent (-1: none), tree[2 r + 1] 1 if r
 * follows its parent's clock; tree NULL: take part in the collective step without a group
 * (a process that failed before). Leaves sh->state NULL for a process in no group. 0,
 * HCLOCK_EUNSUPP (a follower on another node: the line says what to use instead) or the
 * link's error. */
int share_create(struct nblink *l, const int *tree, struct share *sh);
/* Collective over the group: freeze the shared state (its leader), make clk (a member's
 * continuous clock) read its own copy from now on. No-op outside a group. */
void share_freeze(struct share *sh, hclock_clock *clk);

#endif
