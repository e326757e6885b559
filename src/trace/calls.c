/*
 * calls.c - the MPI calls libhclock_trace wraps by hand (every other one is generated:
 * trace_wrappers.c records its enter and leave only):
 *   MPI_Init, MPI_Init_thread   the sync, then tracing on (the calls themselves unrecorded)
 *   MPI_Finalize                the drift check and the trace's end (unrecorded)
 *   MPI_Abort                   recorded as ending where it was called, the records in
 *                               memory written out, one line (tracer.c, "a program that dies")
 *   sends (blocking and not)    a REC_SEND at the call's start: peer, tag, bytes, comm
 *   MPI_Recv, MPI_Sendrecv(_replace), MPI_Mrecv  a REC_RECV at the call's end, from its
 *                               status
 *   MPI_Irecv, MPI_Imrecv + the Wait and Test families  the receive recorded where it
 *                               completes (not if it was cancelled)
 *   persistent requests         MPI_*send_init: a REC_SEND at every MPI_Start/Startall of
 *                               it; MPI_Recv_init: a REC_RECV at every completion of a start
 *   MPI_Mprobe, MPI_Improbe     the message's communicator remembered for MPI_(I)mrecv
 *   MPI_Request_free            the request forgotten
 *   blocking collectives        a REC_COLL: root, bytes this process contributes
 *   nonblocking collectives     a REC_COLL (REC_F_NB) where the request completes, from
 *                               the start's enter to the completing call's leave
 *   communicator constructors   the new communicator registered (ranks to world ranks)
 * A status the program ignores (MPI_STATUS_IGNORE) is replaced by the tracer's own where a
 * receive needs it; everything the program passes goes to PMPI_ unchanged. Arguments MPI
 * calls "not significant" (the send side of an MPI_IN_PLACE gather) are never read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/pmpi.h"

#include "trace/args.h"
#include "trace/requests.h"
#include "trace/tracer.h"

/* ---- init and finalize ------------------------------------------------------------------- */

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		trace_init();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		trace_init();
	return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
	struct trace_call c;
	trace_abort(trace_enter(TF_MPI_Abort, &c) ? &c : NULL, errorcode);
	return PMPI_Abort(comm, errorcode);
}

int MPI_Finalize(void)
{
	trace_finalize();
	rq_clear();
	return trace_shutdown(PMPI_Finalize);
}

/* ---- sends ------------------------------------------------------------------------------- */

#define SEND(NAME, ...)                                                                   \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	trace_send(&c, comm, dest, tag, count, datatype);                                     \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_leave(&c);                                                                      \
	return rc;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Send, buf, count, datatype, dest, tag, comm)
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Ssend, buf, count, datatype, dest, tag, comm)
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Bsend, buf, count, datatype, dest, tag, comm)
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Rsend, buf, count, datatype, dest, tag, comm)
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
	SEND(Isend, buf, count, datatype, dest, tag, comm, request)
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	SEND(Issend, buf, count, datatype, dest, tag, comm, request)
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	SEND(Ibsend, buf, count, datatype, dest, tag, comm, request)
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	SEND(Irsend, buf, count, datatype, dest, tag, comm, request)
}

/* persistent sends: the send is recorded at each MPI_Start/Startall (rq_started) */
#define SEND_INIT(NAME)                                                                   \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(buf, count, datatype, dest, tag, comm, request);               \
	int rc = PMPI_##NAME(buf, count, datatype, dest, tag, comm, request);                 \
	trace_leave(&c);                                                                      \
	if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL) {                                     \
		struct rec r;                                                                     \
		trace_prepare(&r, REC_SEND, comm, dest, tag, nbytes(count, datatype));              \
		rq_add(*request, RQ_PSEND, comm, datatype, &r);                                   \
	}                                                                                     \
	return rc;

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Send_init)
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Ssend_init)
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Bsend_init)
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Rsend_init)
}

/* ---- receives ---------------------------------------------------------------------------- */

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Recv, &c))
		return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		trace_recv(&c, comm, st, datatype);
	return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Sendrecv, &c))
		return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
		                     recvtype, source, recvtag, comm, status);
	trace_send(&c, comm, dest, sendtag, sendcount, sendtype);
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
	                       recvtype, source, recvtag, comm, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		trace_recv(&c, comm, st, recvtype);
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Sendrecv_replace, &c))
		return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
		                             status);
	trace_send(&c, comm, dest, sendtag, count, datatype);
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		trace_recv(&c, comm, st, datatype);
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Irecv, &c))
		return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		rq_add(*request, RQ_RECV, comm, datatype, NULL);
	return rc;
}

/* a persistent receive: recorded at each completion of a start (rq_started, done) */
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Recv_init, &c))
		return PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
	int rc = PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		rq_add(*request, RQ_PRECV, comm, datatype, NULL);
	return rc;
}

/* matched probes: the message handle remembers its communicator (recorded even when the
 * probe itself is filtered out: the receive needs it) */
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Mprobe, &c))
		return PMPI_Mprobe(source, tag, comm, message, status);
	int rc = PMPI_Mprobe(source, tag, comm, message, status);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		rq_msg_add(*message, comm);
	return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Improbe, &c))
		return PMPI_Improbe(source, tag, comm, flag, message, status);
	int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag)
		rq_msg_add(*message, comm);
	return rc;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Mrecv, &c))
		return PMPI_Mrecv(buf, count, type, message, status);
	MPI_Comm comm = rq_msg_take(*message); /* before: the call frees the handle */
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Mrecv(buf, count, type, message, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
		trace_recv(&c, comm, st, type);
	return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Imrecv, &c))
		return PMPI_Imrecv(buf, count, type, message, request);
	MPI_Comm comm = rq_msg_take(*message);
	int rc = PMPI_Imrecv(buf, count, type, message, request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
		rq_add(*request, RQ_RECV, comm, type, NULL);
	return rc;
}

/* ---- persistent starts, frees ------------------------------------------------------------ */

int MPI_Start(MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Start, &c))
		return PMPI_Start(request);
	MPI_Request req = *request;
	int rc = PMPI_Start(request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		rq_started(&c, req);
	return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Startall, &c))
		return PMPI_Startall(count, array_of_requests);
	int rc = PMPI_Startall(count, array_of_requests);
	trace_leave(&c);
	/* a persistent request's handle stays what it was */
	for (int i = 0; rc == MPI_SUCCESS && i < count; i++)
		rq_started(&c, array_of_requests[i]);
	return rc;
}

int MPI_Request_free(MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Request_free, &c))
		return PMPI_Request_free(request);
	rq_forget(*request); /* before: once freed, MPI may hand the handle out again */
	int rc = PMPI_Request_free(request);
	trace_leave(&c);
	return rc;
}

/* ---- completion -------------------------------------------------------------------------- */

/* The handles before the call and statuses the tracer can read: small arrays on the stack. */
#define SMALL 32
struct done_ctx {
	MPI_Request old_s[SMALL], *old;
	MPI_Status st_s[SMALL], *st;
	int own_st;
};

static void done_end(struct done_ctx *d)
{
	if (d->old != d->old_s)
		free(d->old);
	if (d->own_st && d->st != d->st_s)
		free(d->st);
}

/* statuses: the program's array or MPI_STATUSES_IGNORE (the tracer's own then), if many
 * (a call that returns one status needs none) */
static int done_begin(struct done_ctx *d, int n, const MPI_Request *reqs, MPI_Status *statuses,
                      int many)
{
	size_t m = n > 0 ? (size_t)n : 0;
	d->old = m <= SMALL ? d->old_s : malloc(m * sizeof(MPI_Request));
	d->own_st = many && statuses == MPI_STATUSES_IGNORE;
	d->st = !d->own_st ? statuses : m <= SMALL ? d->st_s : malloc(m * sizeof(MPI_Status));
	if (!d->old || (d->own_st && !d->st)) {
		done_end(d);
		return 0;
	}
	memcpy(d->old, reqs, m * sizeof(MPI_Request));
	return 1;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Wait, &c))
		return PMPI_Wait(request, status);
	MPI_Request old = *request;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Wait(request, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		rq_done(&c, old, st);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Test, &c))
		return PMPI_Test(request, flag, status);
	MPI_Request old = *request;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Test(request, flag, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag)
		rq_done(&c, old, st);
	return rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Waitall, &c))
		return PMPI_Waitall(count, array_of_requests, array_of_statuses);
	if (!rq_pending() || !done_begin(&d, count, array_of_requests, array_of_statuses, 1)) {
		int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
		trace_leave(&c);
		return rc;
	}
	int rc = PMPI_Waitall(count, array_of_requests, d.st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
		for (int i = 0; i < count; i++)
			rq_done_st(&c, rc, d.old[i], &d.st[i]);
	done_end(&d);
	return rc;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Testall, &c))
		return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
	if (!rq_pending() || !done_begin(&d, count, array_of_requests, array_of_statuses, 1)) {
		int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
		trace_leave(&c);
		return rc;
	}
	int rc = PMPI_Testall(count, array_of_requests, flag, d.st);
	trace_leave(&c);
	if ((rc == MPI_SUCCESS && *flag) || rc == MPI_ERR_IN_STATUS)
		for (int i = 0; i < count; i++)
			rq_done_st(&c, rc, d.old[i], &d.st[i]);
	done_end(&d);
	return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Waitany, &c))
		return PMPI_Waitany(count, array_of_requests, index, status);
	if (!rq_pending() || !done_begin(&d, count, array_of_requests, NULL, 0)) {
		int rc = PMPI_Waitany(count, array_of_requests, index, status);
		trace_leave(&c);
		return rc;
	}
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Waitany(count, array_of_requests, index, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
		rq_done(&c, d.old[*index], st);
	done_end(&d);
	return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Testany, &c))
		return PMPI_Testany(count, array_of_requests, index, flag, status);
	if (!rq_pending() || !done_begin(&d, count, array_of_requests, NULL, 0)) {
		int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
		trace_leave(&c);
		return rc;
	}
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Testany(count, array_of_requests, index, flag, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		rq_done(&c, d.old[*index], st);
	done_end(&d);
	return rc;
}

/* Waitsome and Testsome: the same arguments, the same bookkeeping */
#define SOME(NAME)                                                                        \
	struct trace_call c;                                                                  \
	struct done_ctx d;                                                                    \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices,        \
		                   array_of_statuses);                                            \
	if (!rq_pending() ||                                                                     \
	    !done_begin(&d, incount, array_of_requests, array_of_statuses, 1)) {              \
		int rc = PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices,      \
		                     array_of_statuses);                                          \
		trace_leave(&c);                                                                  \
		return rc;                                                                        \
	}                                                                                     \
	int rc = PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices, d.st);   \
	trace_leave(&c);                                                                      \
	if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)     \
		for (int i = 0; i < *outcount; i++)                                               \
			rq_done_st(&c, rc, d.old[array_of_indices[i]], &d.st[i]);                        \
	done_end(&d);                                                                         \
	return rc;

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
	SOME(Waitsome)
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
	SOME(Testsome)
}

/* ---- collectives ------------------------------------------------------------------------- */

#define COLL(NAME, ROOT, COUNT, TYPE, ...)                                                \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_coll(&c, comm, ROOT, COUNT, TYPE);                                              \
	return rc;

int MPI_Barrier(MPI_Comm comm)
{
	COLL(Barrier, -1, 0, MPI_DATATYPE_NULL, comm)
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	COLL(Bcast, root, count, datatype, buffer, count, datatype, root, comm)
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
	COLL(Reduce, root, count, datatype, sendbuf, recvbuf, count, datatype, op, root, comm)
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
	COLL(Allreduce, -1, count, datatype, sendbuf, recvbuf, count, datatype, op, comm)
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE; /* then the send arguments are not significant */
	COLL(Gather, root, ip ? recvcount : sendcount, ip ? recvtype : sendtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, root, comm)
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Gatherv, root, ip ? 0 : sendcount, ip ? MPI_DATATYPE_NULL : sendtype, sendbuf,
	     sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm)
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int ip = recvbuf == MPI_IN_PLACE; /* then the receive arguments are not significant */
	COLL(Scatter, root, ip ? sendcount : recvcount, ip ? sendtype : recvtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, root, comm)
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
	int ip = recvbuf == MPI_IN_PLACE;
	COLL(Scatterv, root, ip ? 0 : recvcount, ip ? MPI_DATATYPE_NULL : recvtype, sendbuf,
	     sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm)
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Allgather, -1, ip ? recvcount : sendcount, ip ? recvtype : sendtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, comm)
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Allgatherv, -1, ip ? 0 : sendcount, ip ? MPI_DATATYPE_NULL : sendtype, sendbuf,
	     sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Alltoall, -1, ip ? recvcount : sendcount, ip ? recvtype : sendtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, comm)
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	COLL(Reduce_scatter_block, -1, recvcount, datatype, sendbuf, recvbuf, recvcount, datatype, op,
	     comm)
}

/* the v-variants without one count: all of the process's counts together (args.h) */
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Alltoallv, -1, clamp(sum(ip ? recvcounts : sendcounts, peers(comm))),
	     ip ? recvtype : sendtype, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
	     rdispls, recvtype, comm)
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	/* this process's block, like MPI_Reduce_scatter_block's recvcount */
	COLL(Reduce_scatter, -1, recvcounts[my_rank(comm)], datatype, sendbuf, recvbuf, recvcounts,
	     datatype, op, comm)
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
	COLL(Scan, -1, count, datatype, sendbuf, recvbuf, count, datatype, op, comm)
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
	COLL(Exscan, -1, count, datatype, sendbuf, recvbuf, count, datatype, op, comm)
}

/* ---- nonblocking collectives ------------------------------------------------------------- */

/* Recorded where the request completes (done): a REC_COLL with REC_F_NB from this call's
 * enter to the completing call's leave, root and bytes as the blocking one's, the
 * communicator resolved and the bytes counted now. Nothing is kept for a call filtered out
 * (its c.func is not its own index then). */
#define ICOLL(NAME, ROOT, BYTES, ...)                                                     \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_leave(&c);                                                                      \
	if (rc == MPI_SUCCESS && c.func == TF_MPI_##NAME)                                     \
		rq_coll_started(&c, *request, comm, ROOT, BYTES);                                    \
	return rc;

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Ibarrier, -1, 0, comm, request)
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
	ICOLL(Ibcast, root, nbytes(count, datatype), buffer, count, datatype, root, comm, request)
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Ireduce, root, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, root,
	      comm, request)
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Iallreduce, -1, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, comm,
	      request)
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Igather, root, ip ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype), sendbuf,
	      sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request)
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Igatherv, root, ip ? 0 : nbytes(sendcount, sendtype), sendbuf, sendcount, sendtype,
	      recvbuf, recvcounts, displs, recvtype, root, comm, request)
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
	int ip = recvbuf == MPI_IN_PLACE;
	ICOLL(Iscatter, root, ip ? nbytes(sendcount, sendtype) : nbytes(recvcount, recvtype),
	      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request)
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
	int ip = recvbuf == MPI_IN_PLACE;
	ICOLL(Iscatterv, root, ip ? 0 : nbytes(recvcount, recvtype), sendbuf, sendcounts, displs,
	      sendtype, recvbuf, recvcount, recvtype, root, comm, request)
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Iallgather, -1, ip ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype),
	      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Iallgatherv, -1, ip ? 0 : nbytes(sendcount, sendtype), sendbuf, sendcount, sendtype,
	      recvbuf, recvcounts, displs, recvtype, comm, request)
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Ialltoall, -1, ip ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype),
	      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Ialltoallv, -1,
	      (uint64_t)sum(ip ? recvcounts : sendcounts, peers(comm)) *
	          type_size(ip ? recvtype : sendtype),
	      sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
	      request)
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Ireduce_scatter, -1, nbytes(recvcounts[my_rank(comm)], datatype), sendbuf, recvbuf,
	      recvcounts, datatype, op, comm, request)
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
	ICOLL(Ireduce_scatter_block, -1, nbytes(recvcount, datatype), sendbuf, recvbuf, recvcount,
	      datatype, op, comm, request)
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Iscan, -1, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, comm,
	      request)
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Iexscan, -1, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, comm,
	      request)
}

/* ---- communicators ----------------------------------------------------------------------- */

#define CREATE(NAME, PARENT, NEWCOMM, ...)                                                \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_leave(&c);                                                                      \
	trace_comm_created(PARENT, rc == MPI_SUCCESS ? *(NEWCOMM) : MPI_COMM_NULL);          \
	return rc;

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	CREATE(Comm_dup, comm, newcomm, comm, newcomm)
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	CREATE(Comm_split, comm, newcomm, comm, color, key, newcomm)
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	CREATE(Comm_split_type, comm, newcomm, comm, split_type, key, info, newcomm)
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	CREATE(Comm_create, comm, newcomm, comm, group, newcomm)
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
	CREATE(Cart_create, comm_old, comm_cart, comm_old, ndims, dims, periods, reorder, comm_cart)
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	CREATE(Cart_sub, comm, newcomm, comm, remain_dims, newcomm)
}
