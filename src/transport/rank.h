/*
 * rank.h - a process named in messages: its rank in MPI_COMM_WORLD. Below comm.c and
 * yield.c, which both name processes in their error lines.
 */
#ifndef HCLOCK_TRANSPORT_RANK_H
#define HCLOCK_TRANSPORT_RANK_H

#include "util/pmpi.h"

/* Rank r of comm as a rank of MPI_COMM_WORLD (r itself if it cannot be translated), for
 * messages that name processes. */
int comm_world_rank(MPI_Comm comm, int r);

#endif
