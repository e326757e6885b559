#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "transport/yield.h"
#include "util/timeutil.h"

#define SPIN_BEFORE_YIELD_NS 20000 /* 20 us */

/* Yield only where ranks share cores: more ranks on this node (as the launcher tells,
 * Open MPI or MPICH) than online CPUs, or unknown. On dedicated cores a waiting rank that
 * yields gains nothing and its wake-up adds delay noise to the exchanges. */
#ifndef HCLOCK_SMPI
static int oversubscribed(void)
{
	static int cached = -1; /* same answer for every rank of a process: benign if shared */
	if (cached < 0) {
		const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
		if (!v)
			v = getenv("MPI_LOCALNRANKS");
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		cached = !v || cpus < 1 || atol(v) > cpus;
	}
	return cached;
}
#endif

int yield_wait(MPI_Request *req)
{
#ifdef HCLOCK_SMPI
	return MPI_Wait(req, MPI_STATUS_IGNORE);
#else
	int done = 0, rc, yield = oversubscribed();
	int64_t t0 = 0;
	for (unsigned n = 0;; n++) {
		if ((rc = MPI_Test(req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || done)
			return rc;
		if (!yield)
			continue;
		if (n == 64)
			t0 = real_now_ns(); /* not before: most waits end within the first polls */
		else if (n > 64 && real_now_ns() - t0 > SPIN_BEFORE_YIELD_NS)
			sched_yield();
	}
#endif
}

int yield_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm)
{
#ifndef HCLOCK_SMPI
	if (!oversubscribed())
		return MPI_Recv(buf, count, type, src, tag, comm, MPI_STATUS_IGNORE);
#endif
	MPI_Request req;
	int rc = MPI_Irecv(buf, count, type, src, tag, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req);
}

int yield_ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
#ifndef HCLOCK_SMPI
	if (!oversubscribed())
#endif
		return MPI_Ssend(buf, count, type, dest, tag, comm);
	MPI_Request req;
	int rc = MPI_Issend(buf, count, type, dest, tag, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req);
}

int yield_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return MPI_Allreduce(in, out, count, type, op, comm);
#endif
	MPI_Request req;
	int rc = MPI_Iallreduce(in, out, count, type, op, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req);
}

int yield_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return MPI_Reduce(in, out, count, type, op, root, comm);
#endif
	MPI_Request req;
	int rc = MPI_Ireduce(in, out, count, type, op, root, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req);
}

int yield_scatter(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                  MPI_Datatype outtype, int root, MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return MPI_Scatter(in, incount, intype, out, outcount, outtype, root, comm);
#endif
	MPI_Request req;
	int rc = MPI_Iscatter(in, incount, intype, out, outcount, outtype, root, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req);
}
