/*
 * yield.h - completing an MPI request without hogging a shared core.
 *
 * With more ranks than cores, a rank that waits inside MPI (MPICH's progress loop never
 * yields) burns the core its partner needs, and every exchange stalls for a scheduler time
 * slice: milliseconds of one-way delay that no offset estimator can see through. hclock's
 * waits therefore poll, spin for a short while (a reply on a dedicated core arrives within
 * a few us, so then nothing changes) and then yield the core between polls.
 */
#ifndef HCLOCK_TRANSPORT_YIELD_H
#define HCLOCK_TRANSPORT_YIELD_H

#include "util/pmpi.h"

/* MPI_Wait, politely, and never for longer than the wait limit (HCLOCK_TIMEOUT,
 * util/timeutil.h): past it the peers are gone or stuck and nothing can be agreed with them
 * any more, so the process prints one line naming its rank and step (what, and peer's rank
 * in comm when peer >= 0) and aborts the run (MPI_Abort, the last resort). Plain MPI_Wait
 * under SimGrid SMPI, where time is simulated. */
int yield_wait_on(MPI_Request *req, const char *what, int peer, MPI_Comm comm);
/* The same with PMPI_Test: for the continuous clock's own messages, which the PMPI tracer
 * (libhclock_trace) must not record as the program's. */
int yield_pwait_on(MPI_Request *req, const char *what, int peer, MPI_Comm comm);
static inline int yield_wait(MPI_Request *req, const char *what)
{
	return yield_wait_on(req, what, -1, MPI_COMM_NULL);
}

/* Blocking forms built on it (with the same end). */
int yield_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm);
int yield_ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int yield_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm);
int yield_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm);
int yield_scatter(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                  MPI_Datatype outtype, int root, MPI_Comm comm);
int yield_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int yield_barrier(MPI_Comm comm);
int yield_gather(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                 MPI_Datatype outtype, int root, MPI_Comm comm);
/* Under SimGrid SMPI the blocking collectives are used (its nonblocking ones are linear,
 * minutes of wall time at 1,024 ranks; there is no core to share in simulated time). */

#endif
