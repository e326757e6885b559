/*
 * calls.c - the MPI calls libhclock_trace wraps by hand (every other one is generated:
 * trace_wrappers.c records its enter and leave only):
 *   MPI_Init, MPI_Init_thread   the sync, then tracing on (the calls themselves unrecorded)
 *   MPI_Finalize                the drift check and the trace's end (unrecorded)
 *   sends (blocking and not)    a TRACE_SEND at the call's start: peer, tag, bytes, comm
 *   MPI_Recv, MPI_Sendrecv(_replace)  a TRACE_RECV at the call's end, from its status
 *   MPI_Irecv + the Wait and Test families  the receive recorded where it completes
 *   blocking collectives        a TRACE_COLL: root, bytes this process contributes
 *   communicator constructors   the new communicator registered (ranks to world ranks)
 * A status the program ignores (MPI_STATUS_IGNORE) is replaced by the tracer's own where a
 * receive needs it; everything the program passes goes to PMPI_ unchanged. Arguments MPI
 * calls "not significant" (the send side of an MPI_IN_PLACE gather) are never read.
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "trace/tracer.h"

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

int MPI_Finalize(void)
{
	trace_finalize();
	return PMPI_Finalize();
}

/* ---- sends -------------------------------------------------------------------------------- */

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

/* ---- receives ------------------------------------------------------------------------------ */

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
	if (rc == MPI_SUCCESS)
		trace_irecv_posted(*request, comm, datatype);
	return rc;
}

/* ---- completion ---------------------------------------------------------------------------- */

/* The handles before the call and statuses the tracer can read: small arrays on the stack. */
#define SMALL 32
struct done_ctx {
	MPI_Request old_s[SMALL], *old;
	MPI_Status st_s[SMALL], *st;
	int own_st;
};

static int done_begin(struct done_ctx *d, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
	d->old = n <= SMALL ? d->old_s : malloc((size_t)n * sizeof(MPI_Request));
	d->own_st = statuses == MPI_STATUSES_IGNORE;
	d->st = !d->own_st ? statuses : n <= SMALL ? d->st_s : malloc((size_t)n * sizeof(MPI_Status));
	if (!d->old || !d->st) {
		if (d->old != d->old_s)
			free(d->old);
		if (d->own_st && d->st != d->st_s)
			free(d->st);
		return 0;
	}
	memcpy(d->old, reqs, (size_t)n * sizeof(MPI_Request));
	return 1;
}

static void done_end(struct done_ctx *d)
{
	if (d->old != d->old_s)
		free(d->old);
	if (d->own_st && d->st != d->st_s)
		free(d->st);
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
		trace_request_done(&c, old, st);
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
		trace_request_done(&c, old, st);
	return rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Waitall, &c))
		return PMPI_Waitall(count, array_of_requests, array_of_statuses);
	if (!trace_irecv_pending() || !done_begin(&d, count, array_of_requests, array_of_statuses)) {
		int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
		trace_leave(&c);
		return rc;
	}
	int rc = PMPI_Waitall(count, array_of_requests, d.st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		for (int i = 0; i < count; i++)
			trace_request_done(&c, d.old[i], &d.st[i]);
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
	if (!trace_irecv_pending() || !done_begin(&d, count, array_of_requests, array_of_statuses)) {
		int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
		trace_leave(&c);
		return rc;
	}
	int rc = PMPI_Testall(count, array_of_requests, flag, d.st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag)
		for (int i = 0; i < count; i++)
			trace_request_done(&c, d.old[i], &d.st[i]);
	done_end(&d);
	return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Waitany, &c))
		return PMPI_Waitany(count, array_of_requests, index, status);
	if (!trace_irecv_pending() || !done_begin(&d, count, array_of_requests, MPI_STATUSES_IGNORE)) {
		int rc = PMPI_Waitany(count, array_of_requests, index, status);
		trace_leave(&c);
		return rc;
	}
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Waitany(count, array_of_requests, index, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
		trace_request_done(&c, d.old[*index], st);
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
	if (!trace_irecv_pending() || !done_begin(&d, count, array_of_requests, MPI_STATUSES_IGNORE)) {
		int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
		trace_leave(&c);
		return rc;
	}
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Testany(count, array_of_requests, index, flag, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		trace_request_done(&c, d.old[*index], st);
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
	if (!trace_irecv_pending() || !done_begin(&d, incount, array_of_requests,             \
	                                          array_of_statuses)) {                       \
		int rc = PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices,      \
		                     array_of_statuses);                                          \
		trace_leave(&c);                                                                  \
		return rc;                                                                        \
	}                                                                                     \
	int rc = PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices, d.st);   \
	trace_leave(&c);                                                                      \
	if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)                                  \
		for (int i = 0; i < *outcount; i++)                                               \
			trace_request_done(&c, d.old[array_of_indices[i]], &d.st[i]);                 \
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

/* ---- collectives ----------------------------------------------------------------------------- */

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

/* ---- communicators --------------------------------------------------------------------------- */

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
