/*
 * pingpong_sweep.c - a high-rate MPI program for hclock trace's size benchmarks: 2 ranks
 * bounce messages of 1 to 256 bytes (a sweep, ROUNDS times), each message carrying its
 * sequence number, which the receiver checks.
 *
 *   mpirun -np 2 pingpong_sweep [ROUNDS]     (default 1000; ~60,000 MPI calls per round and
 *                                            process)
 * Prints one line: the rounds, the calls per process, the time.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 117 /* round trips per size: 256 sizes x 117 x 2 calls = 59,904 per round */

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	if (size != 2) {
		if (!rank)
			fprintf(stderr, "pingpong_sweep: run on 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	unsigned char buf[256];
	unsigned seq = 0, bad = 0;
	long calls = 0;
	double t0 = MPI_Wtime();
	for (long r = 0; r < rounds; r++)
		for (int n = 1; n <= 256; n++)
			for (int k = 0; k < REPS; k++, seq++) {
				if (rank == 0) {
					memset(buf, 0, (size_t)n);
					memcpy(buf, &seq, n < 4 ? (size_t)n : 4);
					MPI_Send(buf, n, MPI_BYTE, 1, n, MPI_COMM_WORLD);
					MPI_Recv(buf, n, MPI_BYTE, 1, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(buf, n, MPI_BYTE, 0, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					unsigned got = 0;
					memcpy(&got, buf, n < 4 ? (size_t)n : 4);
					bad += n >= 4 && got != seq;
					MPI_Send(buf, n, MPI_BYTE, 0, n, MPI_COMM_WORLD);
				}
				calls += 2;
			}
	double t = MPI_Wtime() - t0;
	if (rank == 1 && bad)
		fprintf(stderr, "pingpong_sweep: %u messages out of order\n", bad);
	if (rank == 0)
		printf("pingpong_sweep: %ld rounds, %ld MPI calls per process, %.3f s\n", rounds, calls,
		       t);
	MPI_Finalize();
	return bad != 0;
}
