/*
 * threads_mini.c - a small MPI program at MPI_THREAD_MULTIPLE: THREADS threads per process,
 * each with a communicator of its own (duplicated by the main thread first), exchange with
 * both ring neighbours (MPI_Isend/MPI_Irecv, MPI_Waitall) and reduce (MPI_Allreduce), all at
 * once. Then each thread starts HANDOFF MPI_Iallreduce on its communicator, which the main
 * thread completes with MPI_Wait once the threads are joined: requests completed by another
 * thread than the one that started them. The input of trace_test.py's "threads" case: every
 * thread's calls on a track of its own, none lost, every message paired.
 *
 *   mpirun -np P threads_mini [ITERATIONS] [THREADS] [HANDOFF]
 *                                       (default 200 iterations, 4 threads, 0 handed off)
 *
 * Every received value and every sum is checked; rank 0 prints one line (the same traced and
 * untraced) and the program exits 1 if anything was wrong or the library gave less than
 * MPI_THREAD_MULTIPLE.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* MPI_STATUSES_IGNORE: GCC takes MPICH's, (MPI_Status *)1, for an array too small */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define MAXT 16
#define MAXH 8

static int rank, size, iters = 200, handoff;
static MPI_Comm comm[MAXT];
static int wrong[MAXT];
static double hin[MAXT][MAXH], hout[MAXT][MAXH];
static MPI_Request hreq[MAXT][MAXH];

static void *work(void *arg)
{
	int t = (int)(long)arg, right = (rank + 1) % size, left = (rank + size - 1) % size;

	for (int it = 0; it < iters; it++) {
		double out[2] = {rank * 1000.0 + t * 100 + it, -(rank * 1000.0 + t * 100 + it)};
		double in[2] = {0, 0}, s = 0, want = 0;
		MPI_Request rq[4];
		MPI_Irecv(&in[0], 1, MPI_DOUBLE, left, t, comm[t], &rq[0]);
		MPI_Irecv(&in[1], 1, MPI_DOUBLE, right, t, comm[t], &rq[1]);
		MPI_Isend(&out[0], 1, MPI_DOUBLE, right, t, comm[t], &rq[2]);
		MPI_Isend(&out[1], 1, MPI_DOUBLE, left, t, comm[t], &rq[3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		wrong[t] += in[0] != left * 1000.0 + t * 100 + it ||
		            in[1] != -(right * 1000.0 + t * 100 + it);
		double mine = rank + t + it;
		MPI_Allreduce(&mine, &s, 1, MPI_DOUBLE, MPI_SUM, comm[t]);
		for (int r = 0; r < size; r++)
			want += r + t + it;
		wrong[t] += s != want;
	}
	for (int h = 0; h < handoff; h++) {
		hin[t][h] = rank + t + h;
		MPI_Iallreduce(&hin[t][h], &hout[t][h], 1, MPI_DOUBLE, MPI_SUM, comm[t], &hreq[t][h]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, nt = argc > 2 ? atoi(argv[2]) : 4, bad = 0, all = 0;
	pthread_t th[MAXT];

	if (argc > 1)
		iters = atoi(argv[1]);
	if (argc > 3)
		handoff = atoi(argv[3]);
	if (nt < 1 || nt > MAXT || iters < 1 || handoff < 0 || handoff > MAXH) {
		fprintf(stderr, "usage: threads_mini [ITERATIONS >= 1] [THREADS 1..%d] "
		        "[HANDOFF 0..%d]\n", MAXT, MAXH);
		return 2;
	}
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, "threads_mini: the MPI library gives thread level %d, not "
			        "MPI_THREAD_MULTIPLE\n", provided);
		MPI_Finalize();
		return 1;
	}
	for (int t = 0; t < nt; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comm[t]);
	for (int t = 0; t < nt; t++)
		pthread_create(&th[t], NULL, work, (void *)(long)t);
	for (int t = 0; t < nt; t++) {
		pthread_join(th[t], NULL);
		bad += wrong[t];
	}
	for (int t = 0; t < nt; t++)
		for (int h = 0; h < handoff; h++) {
			double want = 0;
			MPI_Wait(&hreq[t][h], MPI_STATUS_IGNORE);
			for (int r = 0; r < size; r++)
				want += r + t + h;
			bad += hout[t][h] != want;
		}
	for (int t = 0; t < nt; t++)
		MPI_Comm_free(&comm[t]);
	MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("threads_mini: %d threads x %d iterations, %d wrong\n", nt, iters, all);
	MPI_Finalize();
	return all ? 1 : 0;
}
