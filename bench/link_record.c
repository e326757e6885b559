/*
 * link_record.c - what a link allows a clock model: rank 1 exchanges groups of N back-to-back
 * 8 B ping-pongs with rank 0 for SECONDS and keeps each group's exchange of smallest round trip
 * (as SKaMPI-Offset's fit points do); bench/link-floor fits lines through stretches of them.
 * Both ranks read CLOCK_MONOTONIC directly, no hclock clock in between: run on one machine (over
 * shared memory, or over the kernel's TCP stack with Open MPI's `--mca btl tcp,self`), the two
 * read one clock, so the true offset is exactly 0 at every time and any offset a fit finds is
 * the link's delay asymmetry.
 *
 *   mpirun -np 2 link_record [SECONDS [N [OUT]]]    (default 10 s, 10 ping-pongs a group)
 *
 * Rank 1 writes one line a group to OUT (default stdout): the client's send time, the
 * reference's time, the client's receive time, ns, in CLOCK_MONOTONIC. Other ranks only wait.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	int n = argc > 2 ? atoi(argv[2]) : 10;
	if (np < 2 || seconds <= 0 || seconds > 3600 || n < 1 || n > 1000) {
		if (rank == 0)
			fprintf(stderr, "link_record: needs 2 or more processes, SECONDS in (0, 3600] and N in "
			                "1..1000 (got %d processes, %s s, N %d)\n", np,
			        argc > 1 ? argv[1] : "10", n);
		MPI_Finalize();
		return 2;
	}
	FILE *out = stdout;
	if (rank == 1 && argc > 3 && !(out = fopen(argv[3], "w"))) {
		perror(argv[3]);
		out = NULL;
	}
	int ok = rank != 1 || out, all_ok;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!all_ok) {
		MPI_Finalize();
		return 1;
	}
	int64_t end_ns = now_ns() + (int64_t)(seconds * 1e9), msg[2];
	if (rank == 1) {
		int more = 1;
		while (more) {
			int64_t best[3] = {0, 0, INT64_MAX};
			for (int i = 0; i < n; i++) {
				msg[0] = now_ns();
				msg[1] = i == n - 1 && msg[0] >= end_ns ? 0 : 1; /* the last group says so */
				MPI_Send(msg, 2, MPI_INT64_T, 0, 1, MPI_COMM_WORLD);
				int64_t t2;
				MPI_Recv(&t2, 1, MPI_INT64_T, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				int64_t t3 = now_ns();
				if (t3 - msg[0] < best[2] - best[0]) {
					best[0] = msg[0];
					best[1] = t2;
					best[2] = t3;
				}
				more = (int)msg[1];
			}
			fprintf(out, "%lld %lld %lld\n", (long long)best[0], (long long)best[1],
			        (long long)best[2]);
		}
		if (out != stdout)
			fclose(out);
	} else if (rank == 0) {
		do {
			MPI_Recv(msg, 2, MPI_INT64_T, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			int64_t t2 = now_ns();
			MPI_Send(&t2, 1, MPI_INT64_T, 1, 2, MPI_COMM_WORLD);
		} while (msg[1]);
	}
	MPI_Finalize();
	return 0;
}
