/*
 * requests.h - the requests libhclock_trace follows (requests.c), shared by the C wrappers
 * (calls.c) and the Fortran ones (fcalls.c, which convert the program's handles with the
 * MPI_*_f2c functions first): requests are keyed by their C handle, so a request a Fortran
 * call starts is followed like one a C call starts.
 */
#ifndef HCLOCK_TRACE_REQUESTS_H
#define HCLOCK_TRACE_REQUESTS_H

#include <stdint.h>

#include "util/pmpi.h"

#include "trace/tracer.h"

enum rq_kind {
	RQ_FREE,  /* an empty slot */
	RQ_RECV,  /* MPI_Irecv, MPI_Imrecv: a receive recorded where it completes, then gone */
	RQ_PRECV, /* MPI_Recv_init: a receive recorded at each completion of an active one */
	RQ_PSEND, /* MPI_*send_init: rec recorded at each start */
	RQ_COLL,  /* a nonblocking collective: rec recorded where it completes, then gone */
	RQ_MSG,   /* (message table) a message of MPI_Mprobe/Improbe: its communicator */
};

/* a request to follow: kind; comm and type (RQ_RECV, RQ_PRECV: the source and count are read
 * at completion); rec (RQ_PSEND, RQ_COLL: the record made at the start; NULL otherwise) */
void rq_add(MPI_Request req, enum rq_kind kind, MPI_Comm comm, MPI_Datatype type,
            const struct rec *rec);
/* whether a completion call has anything to look for (cheap: no lock) */
int rq_pending(void);
/* MPI_Request_free: the request is gone for the tracer too (a receive it had posted may
 * still complete, unseen) */
void rq_forget(MPI_Request req);
/* MPI_Start(all) call c started persistent request req: a send is recorded (at c's enter),
 * a receive becomes active */
void rq_started(const struct trace_call *c, MPI_Request req);
/* After a completion call c: request old (its handle before the call) completed with status
 * st (NULL: it failed; its entry goes, nothing is recorded). */
void rq_done(const struct trace_call *c, MPI_Request old, const MPI_Status *st);
/* rq_done() for request i of a call completing several: rc its result; with
 * MPI_ERR_IN_STATUS each status says whether its request completed (MPI_ERR_PENDING: not
 * yet) */
void rq_done_st(const struct trace_call *c, int rc, MPI_Request old, const MPI_Status *st);
/* a nonblocking collective call c started (request req): recorded where it completes, a
 * REC_COLL with REC_F_NB from c's enter to the completing call's leave */
void rq_coll_started(const struct trace_call *c, MPI_Request req, MPI_Comm comm, int root,
                     uint64_t bytes);
/* the communicator of a message MPI_Mprobe/Improbe gave: remembered, then taken (and
 * forgotten) by MPI_(I)mrecv (MPI_COMM_NULL: unknown) */
void rq_msg_add(MPI_Message msg, MPI_Comm comm);
MPI_Comm rq_msg_take(MPI_Message msg);
/* MPI_Finalize: every request forgotten */
void rq_clear(void);

#endif
