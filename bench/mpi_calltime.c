/*
 * mpi_calltime.c - where an MPI program's time goes, per rank and per MPI call (PMPI).
 *
 *   mpicc.mpich -O2 -shared -fPIC -o calltime.so bench/mpi_calltime.c
 *   mpiexec -n 4 env LD_PRELOAD=$PWD/calltime.so build-mpich/bin/hclock check ...
 *
 * At MPI_Finalize every rank prints to stderr, for each call it made: the count, the total
 * and the longest time spent inside it, and how many calls took over 1 ms (a scheduler
 * time slice lost). CALLTIME_SLOW_US=N also prints every call slower than N us as it ends,
 * with its start time (CLOCK_MONOTONIC modulo 1000 s, ms: comparable across the ranks of one machine). A measuring tool, not part of the library.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { C_BCAST, C_BARRIER, C_REDUCE, C_ALLREDUCE, C_EXSCAN, C_SCATTER, C_COMM_DUP,
       C_COMM_SPLIT, C_COMM_SPLIT_TYPE, C_COMM_FREE, C_SEND, C_SSEND, C_RECV, C_TEST, C_WAIT,
       C_IRECV, C_ISEND, C_ISSEND, C_IALLREDUCE, C_IREDUCE, C_ISCATTER, C_N };
static const char *names[C_N] = {
	"Bcast", "Barrier", "Reduce", "Allreduce", "Exscan", "Scatter", "Comm_dup", "Comm_split",
	"Comm_split_type", "Comm_free", "Send", "Ssend", "Recv", "Test", "Wait", "Irecv", "Isend",
	"Issend", "Iallreduce", "Ireduce", "Iscatter"};
static struct { uint64_t n, slow; int64_t total, max; } st[C_N];
static int64_t t_init;
static long slow_ns = -1;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void note(int c, int64_t t0)
{
	int64_t d = now_ns() - t0;
	st[c].n++;
	st[c].total += d;
	if (d > st[c].max)
		st[c].max = d;
	if (d > 1000000)
		st[c].slow++;
	if (slow_ns >= 0 && d > slow_ns) {
		int r;
		PMPI_Comm_rank(MPI_COMM_WORLD, &r);
		fprintf(stderr, "calltime: rank %d %s at %.3f ms took %.1f us\n", r, names[c],
		        (t0 % 1000000000000) * 1e-6, d * 1e-3);
	}
}

#define WRAP(c, call)                \
	int64_t t0 = now_ns();       \
	int rc = call;               \
	note(c, t0);                 \
	return rc;

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	const char *s = getenv("CALLTIME_SLOW_US");
	if (s)
		slow_ns = atol(s) * 1000;
	t_init = now_ns();
	return rc;
}

int MPI_Finalize(void)
{
	int r;
	PMPI_Comm_rank(MPI_COMM_WORLD, &r);
	char line[4096];
	int len = snprintf(line, sizeof(line), "calltime: rank %d, %.1f ms since MPI_Init:", r,
	                   (now_ns() - t_init) * 1e-6);
	for (int c = 0; c < C_N; c++)
		if (st[c].n && len < (int)sizeof(line))
			len += snprintf(line + len, sizeof(line) - (size_t)len,
			                " %s n=%llu tot=%.2fms max=%.2fms >1ms=%llu;", names[c],
			                (unsigned long long)st[c].n, st[c].total * 1e-6, st[c].max * 1e-6,
			                (unsigned long long)st[c].slow);
	fprintf(stderr, "%s\n", line);
	return PMPI_Finalize();
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{ WRAP(C_BCAST, PMPI_Bcast(b, n, t, root, c)) }
int MPI_Barrier(MPI_Comm c)
{ WRAP(C_BARRIER, PMPI_Barrier(c)) }
int MPI_Reduce(const void *i, void *o, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{ WRAP(C_REDUCE, PMPI_Reduce(i, o, n, t, op, root, c)) }
int MPI_Allreduce(const void *i, void *o, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{ WRAP(C_ALLREDUCE, PMPI_Allreduce(i, o, n, t, op, c)) }
int MPI_Exscan(const void *i, void *o, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{ WRAP(C_EXSCAN, PMPI_Exscan(i, o, n, t, op, c)) }
int MPI_Scatter(const void *i, int ni, MPI_Datatype ti, void *o, int no, MPI_Datatype to,
                int root, MPI_Comm c)
{ WRAP(C_SCATTER, PMPI_Scatter(i, ni, ti, o, no, to, root, c)) }
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *n)
{ WRAP(C_COMM_DUP, PMPI_Comm_dup(c, n)) }
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *n)
{ WRAP(C_COMM_SPLIT, PMPI_Comm_split(c, color, key, n)) }
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *n)
{ WRAP(C_COMM_SPLIT_TYPE, PMPI_Comm_split_type(c, type, key, info, n)) }
int MPI_Comm_free(MPI_Comm *c)
{ WRAP(C_COMM_FREE, PMPI_Comm_free(c)) }
int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{ WRAP(C_SEND, PMPI_Send(b, n, t, d, tag, c)) }
int MPI_Ssend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{ WRAP(C_SSEND, PMPI_Ssend(b, n, t, d, tag, c)) }
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st_)
{ WRAP(C_RECV, PMPI_Recv(b, n, t, s, tag, c, st_)) }
int MPI_Test(MPI_Request *q, int *f, MPI_Status *s)
{ WRAP(C_TEST, PMPI_Test(q, f, s)) }
int MPI_Wait(MPI_Request *q, MPI_Status *s)
{ WRAP(C_WAIT, PMPI_Wait(q, s)) }
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *q)
{ WRAP(C_IRECV, PMPI_Irecv(b, n, t, s, tag, c, q)) }
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *q)
{ WRAP(C_ISEND, PMPI_Isend(b, n, t, d, tag, c, q)) }
int MPI_Issend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *q)
{ WRAP(C_ISSEND, PMPI_Issend(b, n, t, d, tag, c, q)) }
int MPI_Iallreduce(const void *i, void *o, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q)
{ WRAP(C_IALLREDUCE, PMPI_Iallreduce(i, o, n, t, op, c, q)) }
int MPI_Ireduce(const void *i, void *o, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c,
                MPI_Request *q)
{ WRAP(C_IREDUCE, PMPI_Ireduce(i, o, n, t, op, root, c, q)) }
int MPI_Iscatter(const void *i, int ni, MPI_Datatype ti, void *o, int no, MPI_Datatype to,
                 int root, MPI_Comm c, MPI_Request *q)
{ WRAP(C_ISCATTER, PMPI_Iscatter(i, ni, ti, o, no, to, root, c, q)) }
