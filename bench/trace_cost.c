/*
 * trace_cost.c - what hclock trace costs a program (bench/trace runs it twice, with and
 * without the tracer, and subtracts).
 *
 *   mpirun -np 2 trace_cost [CALLS [ALLREDUCES]]
 *
 * 1. CALLS times MPI_Comm_rank, each call timed alone with clock_gettime around it: the
 *    distribution of one cheap call, whose traced minus untraced median and p99 is the cost
 *    of recording one event (its clock reads and the append).
 * 2. ALLREDUCES 8 B MPI_Allreduce, timed in chunks of 1000: the median time per call (the
 *    worst case for a tracer: a call of a few microseconds, recorded every time).
 * Rank 0 prints one JSON line: {"call_median_ns", "call_p99_ns", "allreduce_ns"}.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, r;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long calls = argc > 1 ? atol(argv[1]) : 200000, ars = argc > 2 ? atol(argv[2]) : 100000;
	int64_t *d = malloc(sizeof(int64_t) * (size_t)(calls > ars / 1000 ? calls : ars / 1000 + 1));
	for (long i = 0; i < calls; i++) {
		int64_t t0 = now_ns();
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
		d[i] = now_ns() - t0;
	}
	qsort(d, (size_t)calls, sizeof(*d), cmp);
	int64_t med = d[calls / 2], p99 = d[calls * 99 / 100];
	double x = rank, y;
	MPI_Barrier(MPI_COMM_WORLD);
	long nc = 0;
	for (long i = 0; i + 1000 <= ars; i += 1000) {
		int64_t t0 = now_ns();
		for (int k = 0; k < 1000; k++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		d[nc++] = (now_ns() - t0) / 1000;
	}
	qsort(d, (size_t)nc, sizeof(*d), cmp);
	if (rank == 0)
		printf("{\"call_median_ns\": %lld, \"call_p99_ns\": %lld, \"allreduce_ns\": %lld}\n",
		       (long long)med, (long long)p99, (long long)(nc ? d[nc / 2] : 0));
	free(d);
	MPI_Finalize();
	return 0;
}
