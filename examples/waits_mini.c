/*
 * waits_mini.c - waiting made on purpose, for the wait-state analysis's known answers (and
 * for a reader of docs/waits.md who wants to see each pattern once). Each round, every
 * pattern once, each after a barrier, the late process sleeping D before its part:
 *   late sender      rank 1 sleeps, then MPI_Send to rank 0, which waits in MPI_Recv;
 *   late sender (nb) rank 3 sleeps, then MPI_Send to rank 2, which waits in MPI_Wait on an
 *                    MPI_Irecv;
 *   late receiver    rank 0 MPI_Ssend to rank 1, which sleeps before its MPI_Recv;
 *   wait at N x N    rank 2 sleeps, then MPI_Allreduce (the others wait in theirs), and rank
 *                    3 sleeps before an MPI_Iallreduce the others complete in MPI_Wait;
 *   wait at barrier  rank 3 sleeps, then MPI_Barrier;
 *   late broadcast   the root (rank 0) sleeps, then MPI_Bcast;
 *   early reduce     every rank but the root (rank 0) sleeps, then MPI_Reduce;
 *   wrong order      rank 2 sends to rank 0 at once, rank 1 after sleeping; rank 0 receives
 *                    rank 1's message first (it waits D for it while rank 2's is there).
 * Each round also begins, right after its first barrier, with an exchange between neighbours
 * (MPI_Sendrecv with rank - 1 and rank + 1, tag 100): messages both ways between every pair of
 * consecutive ranks, so that hclock align finds a path of them from every process to every
 * other (hclock waits --align puts the times on one timeline with it); nobody waits in it for
 * long.
 *
 *   mpirun -np 4 waits_mini [D_MS [ROUNDS]]     (4 ranks or more; default 50 ms, 2 rounds)
 *
 * Ranks above 3 take part in the collectives only. Prints one line per rank 0: the waits it
 * injected, each pattern's count of late parts times D.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* messages both ways with rank - 1 and rank + 1: the even ranks with the next first, then the
 * odd ones with theirs, so that no rank waits for a chain */
static void exchange(int rank, int size)
{
	int x = rank, y;
	for (int step = 0; step < 2; step++) {
		int peer = (rank % 2 == step) ? rank + 1 : rank - 1;
		if (peer >= 0 && peer < size)
			MPI_Sendrecv(&x, 1, MPI_INT, peer, 100, &y, 1, MPI_INT, peer, 100, MPI_COMM_WORLD,
			             MPI_STATUS_IGNORE);
	}
}

static void nap(double ms)
{
	struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000 * (time_t)(ms / 1000)) * 1e6)};
	while (nanosleep(&t, &t))
		;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double d = argc > 1 ? atof(argv[1]) : 50;
	int rounds = argc > 2 ? atoi(argv[2]) : 2;
	if (size < 4 || !(d > 0) || rounds < 1) {
		if (rank == 0)
			fprintf(stderr, "waits_mini: needs 4 ranks or more (got %d), D_MS > 0 and ROUNDS "
			        ">= 1; e.g. mpirun -np 4 waits_mini 50 2\n", size);
		MPI_Finalize();
		return 2;
	}
	int x = rank, y = 0;
	MPI_Request q;
	for (int round = 0; round < rounds; round++) {
		/* late sender: blocking, and through MPI_Irecv + MPI_Wait (after the neighbours'
		   exchange) */
		MPI_Barrier(MPI_COMM_WORLD);
		exchange(rank, size);
		if (rank == 1) {
			nap(d);
			MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		} else if (rank == 0) {
			MPI_Recv(&y, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 3) {
			nap(d);
			MPI_Send(&x, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
		} else if (rank == 2) {
			MPI_Irecv(&y, 1, MPI_INT, 3, 2, MPI_COMM_WORLD, &q);
			MPI_Wait(&q, MPI_STATUS_IGNORE);
		}
		/* late receiver */
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			MPI_Ssend(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
		} else if (rank == 1) {
			nap(d);
			MPI_Recv(&y, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		/* wait at N x N, blocking and nonblocking */
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 2)
			nap(d);
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 3)
			nap(d);
		MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		/* wait at barrier */
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 3)
			nap(d);
		MPI_Barrier(MPI_COMM_WORLD);
		/* late broadcast */
		if (rank == 0)
			nap(d);
		MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
		/* early reduce */
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank != 0)
			nap(d);
		MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
		/* wrong order */
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 2) {
			MPI_Send(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
		} else if (rank == 1) {
			nap(d);
			MPI_Send(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
		} else if (rank == 0) {
			MPI_Recv(&y, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Recv(&y, 1, MPI_INT, 2, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("waits_mini: %d rounds of %.3f ms: late_sender %d, late_receiver %d, wait_nxn %d, "
		       "wait_barrier %d, late_broadcast %d, early_reduce %d, wrong_order %d waits of D\n",
		       rounds, d, 3 * rounds, rounds, 2 * (size - 1) * rounds, (size - 1) * rounds,
		       (size - 1) * rounds, rounds, rounds);
	MPI_Finalize();
	return 0;
}
