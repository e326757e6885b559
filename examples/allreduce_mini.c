/*
 * allreduce_mini.c - a mini application with AMG2013's communication profile (Hunold &
 * Carpen-Amarie, Section V.C): most of its MPI time in 8-byte MPI_Allreduce calls (the solver's dot
 * products and norms), between compute phases of uneven length, plus a small halo exchange
 * with both ring neighbours. The input of hclock trace's tests and of the Gantt chart.
 *
 *   mpirun -np P allreduce_mini [ITERATIONS [WORK_US [EXIT_CODE]]]
 *
 * Each iteration: compute for about WORK_US microseconds (more on some ranks, varying from
 * one iteration to the next, as a solver's load imbalance does), exchange 64 doubles with
 * both ring neighbours (MPI_Isend/MPI_Irecv/MPI_Waitall), then four 8 B MPI_Allreduce (a
 * residual norm, two dot products, a convergence test). Prints one checksum line on rank 0
 * that depends only on the arithmetic (traced and untraced runs print the same), and exits
 * with EXIT_CODE (default 0; for the tests of exit codes passing through). EXIT_CODE -1:
 * rank 0 calls MPI_Abort(MPI_COMM_WORLD, 7) halfway; -11: rank 0 dies of SIGSEGV halfway;
 * -2: rank 0 calls exit(5) halfway, without MPI_Finalize (the tests of programs that die
 * while traced). Built with ALLREDUCE_MINI_INIT_THREAD defined to a thread level it starts
 * MPI with MPI_Init_thread at that level (allreduce_mini_linked, allreduce_mini_mt).
 */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double work(double us, double seed)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double x = seed;
	for (;;) {
		for (int i = 0; i < 200; i++)
			x = x * 0.999999 + 1e-7 * sin(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) * 1e-3 >= us)
			break;
	}
	return x;
}

int main(int argc, char **argv)
{
#ifdef ALLREDUCE_MINI_INIT_THREAD
	int provided;
	MPI_Init_thread(&argc, &argv, ALLREDUCE_MINI_INIT_THREAD, &provided);
#else
	MPI_Init(&argc, &argv);
#endif
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	double work_us = argc > 2 ? atof(argv[2]) : 50;
	int code = argc > 3 ? atoi(argv[3]) : 0;
	double halo_out[64], halo_l[64], halo_r[64], sum = 0;
	for (int i = 0; i < 64; i++)
		halo_out[i] = rank + i * 1e-3;
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	for (int it = 0; it < iters; it++) {
		if (rank == 0 && it == iters / 2 && code == -1)
			MPI_Abort(MPI_COMM_WORLD, 7);
		if (rank == 0 && it == iters / 2 && code == -11)
			raise(SIGSEGV);
		if (rank == 0 && it == iters / 2 && code == -2)
			exit(5);
		/* uneven work: rank r does (1 + (r + it) % 3 / 2) x the base */
		(void)work(work_us * (1 + ((rank + it) % 3) * 0.5), rank + it);
		MPI_Request q[4];
		MPI_Irecv(halo_l, 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(halo_r, 64, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[1]);
		MPI_Isend(halo_out, 64, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &q[2]);
		MPI_Isend(halo_out, 64, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[3]);
		/* the statuses ignored on even iterations, read on odd ones (both of the tracer's
		 * paths); GCC takes MPICH's MPI_STATUSES_IGNORE, (MPI_Status *)1, for an array */
		MPI_Status st[4];
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
		MPI_Waitall(4, q, it % 2 ? st : MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
		double local = halo_l[it % 64] + halo_r[(it + 1) % 64], r1, r2, r3, r4;
		MPI_Allreduce(&local, &r1, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double d = local * 0.5;
		MPI_Allreduce(&d, &r2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(&r1, &r3, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		int conv = it == iters - 1, all;
		MPI_Allreduce(&conv, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
		r4 = all;
		sum += r1 + r2 + r3 + r4;
	}
	if (rank == 0)
		printf("allreduce_mini: %d ranks, %d iterations, checksum %.6f\n", size, iters, sum);
	MPI_Finalize();
	return code;
}
