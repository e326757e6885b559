#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "transport/rank.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/timeutil.h"

#define SPIN_BEFORE_YIELD_NS 20000 /* 20 us */

/* Ranks share cores: more ranks on this node (as the launcher tells, Open MPI or MPICH) than
 * online CPUs, or unknown. On dedicated cores the blocking calls are MPI's own, unless a wait
 * limit is set (the default): then they poll too, and yield after the same spin as MPI's
 * blocking calls do with Open MPI's mpi_yield_when_idle (a yield with nothing else to run
 * returns at once; with a continuous clock's thread or other jobs on the cores, a poll that
 * never yields took the core they needed: the bounds of mpi_tcp_np2_bounds_cont grew 100x). */
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

/* the wait limit passed: one line, then the run ends (no agreement is possible with a peer
 * that does not answer) */
static void give_up(const char *what, int peer, MPI_Comm comm, int64_t limit)
{
	int w = -1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &w);
	if (peer >= 0 && comm != MPI_COMM_NULL)
		err_line("hclock", "rank %d: %s rank %d did not complete within %g s (HCLOCK_TIMEOUT): "
		         "that process is gone or stuck; aborting the run", w, what,
		         comm_world_rank(comm, peer), (double)limit * 1e-9);
	else
		err_line("hclock", "rank %d: %s did not complete within %g s (HCLOCK_TIMEOUT): some "
		         "process is gone or stuck; aborting the run", w, what, (double)limit * 1e-9);
	/* the launcher forwards the line before the abort tears its output down (MPICH's hydra
	 * dropped it in 1 of 2 launches without this pause) */
	real_sleep_ns(500000000);
	PMPI_Abort(MPI_COMM_WORLD, 1);
	_exit(1);
}
#endif

typedef int test_fn(MPI_Request *req, int *flag, MPI_Status *status);

static int wait_on(test_fn *test, MPI_Request *req, const char *what, int peer, MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	(void)test;
	(void)what;
	(void)peer;
	(void)comm;
	return PMPI_Wait(req, MPI_STATUS_IGNORE);
#else
	int done = 0, rc;
	int64_t t0 = 0, limit = wait_limit_ns();
	for (unsigned n = 0;; n++) {
		if ((rc = test(req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || done)
			return rc;
		if (n == 64) {
			t0 = real_now_ns(); /* not before: most waits end within the first polls */
		} else if (n > 64) {
			int64_t waited = real_now_ns() - t0;
			if (waited > limit)
				give_up(what, peer, comm, limit);
			if (waited > SPIN_BEFORE_YIELD_NS)
				sched_yield();
		}
	}
#endif
}

int yield_wait_on(MPI_Request *req, const char *what, int peer, MPI_Comm comm)
{
	return wait_on(MPI_Test, req, what, peer, comm);
}

int yield_pwait_on(MPI_Request *req, const char *what, int peer, MPI_Comm comm)
{
	return wait_on(PMPI_Test, req, what, peer, comm);
}

/* The blocking forms: a plain blocking call on dedicated cores when no wait limit is set
 * (HCLOCK_TIMEOUT=0), a nonblocking one and yield_wait_on otherwise (under SimGrid SMPI as
 * before: the receive nonblocking, the send blocking). */
#ifndef HCLOCK_SMPI
#define PLAIN (!oversubscribed() && wait_limit_ns() == INT64_MAX)
#endif

int yield_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm)
{
#ifndef HCLOCK_SMPI
	if (PLAIN)
		return PMPI_Recv(buf, count, type, src, tag, comm, MPI_STATUS_IGNORE);
#endif
	MPI_Request req;
	int rc = PMPI_Irecv(buf, count, type, src, tag, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait_on(&req, "MPI_Recv from", src, comm);
}

int yield_ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
#ifndef HCLOCK_SMPI
	if (PLAIN)
#endif
		return PMPI_Ssend(buf, count, type, dest, tag, comm);
	MPI_Request req;
	int rc = PMPI_Issend(buf, count, type, dest, tag, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait_on(&req, "MPI_Ssend to", dest, comm);
}

/* Under SimGrid SMPI the collectives block (its nonblocking ones are linear, minutes of wall
 * time at 1,024 ranks; there is no core to share in simulated time). */
int yield_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return PMPI_Allreduce(in, out, count, type, op, comm);
#endif
	MPI_Request req;
	int rc = PMPI_Iallreduce(in, out, count, type, op, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req, "MPI_Allreduce");
}

int yield_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return PMPI_Reduce(in, out, count, type, op, root, comm);
#endif
	MPI_Request req;
	int rc = PMPI_Ireduce(in, out, count, type, op, root, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait_on(&req, "MPI_Reduce to", root, comm);
}

int yield_scatter(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                  MPI_Datatype outtype, int root, MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return PMPI_Scatter(in, incount, intype, out, outcount, outtype, root, comm);
#endif
	MPI_Request req;
	int rc = PMPI_Iscatter(in, incount, intype, out, outcount, outtype, root, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait_on(&req, "MPI_Scatter from", root, comm);
}

int yield_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return PMPI_Bcast(buf, count, type, root, comm);
#endif
	MPI_Request req;
	int rc = PMPI_Ibcast(buf, count, type, root, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait_on(&req, "MPI_Bcast from", root, comm);
}

int yield_barrier(MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return PMPI_Barrier(comm);
#endif
	MPI_Request req;
	int rc = PMPI_Ibarrier(comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait(&req, "MPI_Barrier");
}

int yield_gather(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                 MPI_Datatype outtype, int root, MPI_Comm comm)
{
#ifdef HCLOCK_SMPI
	return PMPI_Gather(in, incount, intype, out, outcount, outtype, root, comm);
#endif
	MPI_Request req;
	int rc = PMPI_Igather(in, incount, intype, out, outcount, outtype, root, comm, &req);
	return rc != MPI_SUCCESS ? rc : yield_wait_on(&req, "MPI_Gather to", root, comm);
}
