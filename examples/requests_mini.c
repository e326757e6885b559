/*
 * requests_mini.c - a small MPI program that makes known numbers of every kind of request
 * hclock trace follows: persistent sends (MPI_Send/Ssend/Bsend/Rsend_init) and
 * receives (MPI_Recv_init) started by MPI_Start/MPI_Startall, nonblocking collectives,
 * matched probes (MPI_Mprobe/Mrecv, MPI_Improbe/Imrecv), MPI_Request_free and MPI_Cancel.
 * The input of trace_test.py's "requests" case.
 *
 *   mpirun -np P requests_mini [ITERATIONS]      (P >= 2; default 20 iterations)
 *
 * Each iteration, on every rank (right and left: its ring neighbours):
 *   - 4 persistent sends to the right (tags 1-4: standard, synchronous, buffered, ready),
 *     into 4 persistent receives from the left, started by MPI_Startall or MPI_Start and
 *     completed in turn by MPI_Waitall, a MPI_Testall loop, MPI_Waitany, MPI_Waitsome, and
 *     MPI_Wait/MPI_Test per request;
 *   - MPI_Iallreduce (8 B), MPI_Ibcast (16 B, root 0) and MPI_Ibarrier started together,
 *     completed by MPI_Waitall or MPI_Test loops (last started first);
 *   - a message (tag 10) received by MPI_Mprobe + MPI_Mrecv and one (tag 11) by a
 *     MPI_Improbe loop + MPI_Imrecv + MPI_Wait (sent by MPI_Isend);
 *   - a message (tag 12) sent by MPI_Isend and MPI_Request_free, received by MPI_Recv.
 * Then once: the 13 other nonblocking collectives started together and completed by one
 * MPI_Waitall, blocking MPI_Alltoallv and MPI_Reduce_scatter, a MPI_Irecv cancelled and
 * completed by MPI_Wait, a persistent receive started, cancelled and completed, a MPI_Irecv
 * on a duplicate of MPI_COMM_WORLD cancelled and freed by MPI_Request_free, a message (tag
 * 14) exchanged by MPI_Irecv and MPI_Isend (the freed handle may come back here), and a
 * persistent send (tag 13) started and freed while active, received by MPI_Recv.
 * So every rank sends 7 x ITERATIONS + 2 messages, all received; the cancelled receives
 * receive nothing. Every received value is checked; rank 0 prints one line (the same traced
 * and untraced) and the program exits 1 if anything was wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* MPI_STATUSES_IGNORE on purpose (the tracer then supplies statuses of its own); GCC takes
 * MPICH's, (MPI_Status *)1, for an array too small */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define N 16 /* doubles per message */

static double val(int rank, int it, int k, int i)
{
	return rank * 1000.0 + it * 10.0 + k + i * 0.5; /* exact in binary: sums are too */
}

static int bad; /* values that were not what was sent */

static double got(const double *b, int from, int it, int k)
{
	double s = 0;
	for (int i = 0; i < N; i++) {
		bad += b[i] != val(from, it, k, i);
		s += b[i];
	}
	return s;
}

/* the 8 persistent requests of one iteration completed in one of five ways */
static void complete(MPI_Request *req, int how)
{
	MPI_Status st[8];
	int flag = 0, n = 0, idx, done[8];
	switch (how) {
	case 0:
		MPI_Waitall(8, req, st);
		break;
	case 1:
		while (!flag)
			MPI_Testall(8, req, &flag, MPI_STATUSES_IGNORE);
		break;
	case 2:
		for (int j = 0; j < 8; j++)
			MPI_Waitany(8, req, &idx, MPI_STATUS_IGNORE);
		break;
	case 3:
		while (n < 8) {
			int out = 0;
			MPI_Waitsome(8, req, &out, done, st);
			n += out;
		}
		break;
	default:
		for (int j = 0; j < 8; j++) {
			if (j % 2) {
				MPI_Wait(&req[j], &st[j]);
				continue;
			}
			for (flag = 0; !flag;)
				MPI_Test(&req[j], &flag, MPI_STATUS_IGNORE);
		}
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm comm = MPI_COMM_WORLD;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	if (size < 2 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np P requests_mini [ITERATIONS]  (P >= 2)\n");
		MPI_Finalize();
		return 2;
	}
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	double sbuf[4][N], rbuf[4][N], m[N], check = 0;
	double *fire = malloc((size_t)iters * N * sizeof(double)); /* tag 12's, never reused */
	int bsz = 0;
	MPI_Pack_size(N, MPI_DOUBLE, comm, &bsz);
	bsz = 2 * (bsz + MPI_BSEND_OVERHEAD);
	char *battach = malloc((size_t)bsz);
	if (!fire || !battach)
		MPI_Abort(comm, 1);
	MPI_Buffer_attach(battach, bsz);

	/* req[0..3] receive tags 1-4 from the left, req[4..7] send them to the right */
	MPI_Request req[8];
	for (int k = 0; k < 4; k++)
		MPI_Recv_init(rbuf[k], N, MPI_DOUBLE, left, 1 + k, comm, &req[k]);
	MPI_Send_init(sbuf[0], N, MPI_DOUBLE, right, 1, comm, &req[4]);
	MPI_Ssend_init(sbuf[1], N, MPI_DOUBLE, right, 2, comm, &req[5]);
	MPI_Bsend_init(sbuf[2], N, MPI_DOUBLE, right, 3, comm, &req[6]);
	MPI_Rsend_init(sbuf[3], N, MPI_DOUBLE, right, 4, comm, &req[7]);

	for (int it = 0; it < iters; it++) {
		for (int k = 0; k < 4; k++)
			for (int i = 0; i < N; i++)
				sbuf[k][i] = val(rank, it, k, i);
		MPI_Startall(4, req);
		MPI_Barrier(comm); /* every receive posted: the ready send may go */
		if (it % 2)
			MPI_Startall(4, req + 4);
		else
			for (int k = 4; k < 8; k++)
				MPI_Start(&req[k]);
		complete(req, it % 5);
		for (int k = 0; k < 4; k++)
			check += (k + 1) * got(rbuf[k], left, it, k);

		/* nonblocking collectives */
		double x = rank + it, xs = 0;
		int b[4] = {0, 0, 0, 0};
		if (rank == 0)
			for (int j = 0; j < 4; j++)
				b[j] = it + j;
		MPI_Request nb[3];
		MPI_Iallreduce(&x, &xs, 1, MPI_DOUBLE, MPI_SUM, comm, &nb[0]);
		MPI_Ibcast(b, 4, MPI_INT, 0, comm, &nb[1]);
		MPI_Ibarrier(comm, &nb[2]);
		if (it % 2)
			MPI_Waitall(3, nb, MPI_STATUSES_IGNORE);
		else
			for (int j = 2; j >= 0; j--)
				for (int flag = 0; !flag;)
					MPI_Test(&nb[j], &flag, MPI_STATUS_IGNORE);
		bad += xs != size * (double)it + size * (size - 1) / 2.0;
		for (int j = 0; j < 4; j++)
			bad += b[j] != it + j;
		check += xs;

		/* matched probes */
		MPI_Request sr[2], ir;
		MPI_Message msg;
		MPI_Status st;
		MPI_Isend(sbuf[0], N, MPI_DOUBLE, right, 10, comm, &sr[0]);
		MPI_Isend(sbuf[1], N, MPI_DOUBLE, right, 11, comm, &sr[1]);
		MPI_Mprobe(MPI_ANY_SOURCE, 10, comm, &msg, &st);
		bad += st.MPI_SOURCE != left;
		MPI_Mrecv(m, N, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
		check += got(m, left, it, 0);
		for (int flag = 0; !flag;)
			MPI_Improbe(left, 11, comm, &flag, &msg, &st);
		MPI_Imrecv(m, N, MPI_DOUBLE, &msg, &ir);
		MPI_Wait(&ir, MPI_STATUS_IGNORE);
		check += got(m, left, it, 1);
		MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);

		/* fire and forget */
		double *f = fire + (size_t)it * N;
		for (int i = 0; i < N; i++)
			f[i] = val(rank, it, 5, i);
		MPI_Isend(f, N, MPI_DOUBLE, right, 12, comm, &ir);
		MPI_Request_free(&ir);
		MPI_Recv(m, N, MPI_DOUBLE, left, 12, comm, MPI_STATUS_IGNORE);
		check += got(m, left, it, 5);
	}

	/* the other nonblocking collectives, once, all in flight together */
	int one[64], cnt[64], dsp[64];
	if (size > 64)
		MPI_Abort(comm, 2);
	for (int j = 0; j < size; j++) {
		one[j] = rank * 100 + j;
		cnt[j] = 1;
		dsp[j] = j;
	}
	int r_red = 0, r_gat[64], r_gatv[64], r_sca = 0, r_scav = 0, r_ag[64], r_agv[64], r_a2a[64],
	    r_a2av[64], r_rs = 0, r_rsb = 0, r_scan = 0, r_exscan = 0;
	MPI_Request q[13];
	MPI_Ireduce(&rank, &r_red, 1, MPI_INT, MPI_SUM, 1, comm, &q[0]);
	MPI_Igather(&rank, 1, MPI_INT, r_gat, 1, MPI_INT, 0, comm, &q[1]);
	MPI_Igatherv(&rank, 1, MPI_INT, r_gatv, cnt, dsp, MPI_INT, 0, comm, &q[2]);
	MPI_Iscatter(one, 1, MPI_INT, &r_sca, 1, MPI_INT, 0, comm, &q[3]);
	MPI_Iscatterv(one, cnt, dsp, MPI_INT, &r_scav, 1, MPI_INT, 1, comm, &q[4]);
	MPI_Iallgather(&rank, 1, MPI_INT, r_ag, 1, MPI_INT, comm, &q[5]);
	MPI_Iallgatherv(&rank, 1, MPI_INT, r_agv, cnt, dsp, MPI_INT, comm, &q[6]);
	MPI_Ialltoall(one, 1, MPI_INT, r_a2a, 1, MPI_INT, comm, &q[7]);
	MPI_Ialltoallv(one, cnt, dsp, MPI_INT, r_a2av, cnt, dsp, MPI_INT, comm, &q[8]);
	MPI_Ireduce_scatter(one, &r_rs, cnt, MPI_INT, MPI_SUM, comm, &q[9]);
	MPI_Ireduce_scatter_block(one, &r_rsb, 1, MPI_INT, MPI_SUM, comm, &q[10]);
	MPI_Iscan(&rank, &r_scan, 1, MPI_INT, MPI_SUM, comm, &q[11]);
	MPI_Iexscan(&rank, &r_exscan, 1, MPI_INT, MPI_SUM, comm, &q[12]);
	MPI_Waitall(13, q, MPI_STATUSES_IGNORE);
	int ranks = size * (size - 1) / 2;
	bad += rank == 1 && r_red != ranks;
	bad += r_sca != rank || r_scav != 100 + rank || r_scan != rank * (rank + 1) / 2;
	bad += rank > 0 && r_exscan != rank * (rank - 1) / 2;
	bad += r_rs != r_rsb || r_rs != ranks * 100 + size * rank;
	for (int j = 0; j < size; j++) {
		bad += rank == 0 && (r_gat[j] != j || r_gatv[j] != j);
		bad += r_ag[j] != j || r_agv[j] != j || r_a2a[j] != j * 100 + rank || r_a2av[j] != r_a2a[j];
	}
	/* blocking ones without a single count */
	MPI_Alltoallv(one, cnt, dsp, MPI_INT, r_a2av, cnt, dsp, MPI_INT, comm);
	MPI_Reduce_scatter(one, &r_rs, cnt, MPI_INT, MPI_SUM, comm);
	for (int j = 0; j < size; j++)
		bad += r_a2av[j] != j * 100 + rank;
	bad += r_rs != r_rsb;

	/* cancelled receives: nothing arrives on tags 98, 99 or (any more) 1 */
	MPI_Request cr, ex[2];
	MPI_Status cst;
	int ncancelled = 0, flag = 0;
	MPI_Irecv(m, N, MPI_DOUBLE, left, 99, comm, &cr);
	MPI_Cancel(&cr);
	MPI_Wait(&cr, &cst);
	MPI_Test_cancelled(&cst, &flag);
	ncancelled += flag;
	MPI_Start(&req[0]);
	MPI_Cancel(&req[0]);
	MPI_Wait(&req[0], &cst);
	MPI_Test_cancelled(&cst, &flag);
	ncancelled += flag;
	MPI_Comm dup;
	MPI_Comm_dup(comm, &dup);
	MPI_Irecv(m, N, MPI_DOUBLE, left, 98, dup, &cr);
	MPI_Cancel(&cr);
	MPI_Request_free(&cr);
	/* a receive on another communicator next: should MPI hand the freed handle out again
	 * (Open MPI and MPICH do), a stale entry for it would record this receive on dup */
	MPI_Irecv(m, N, MPI_DOUBLE, left, 14, comm, &ex[1]);
	MPI_Isend(sbuf[3], N, MPI_DOUBLE, right, 14, comm, &ex[0]);
	MPI_Wait(&ex[0], MPI_STATUS_IGNORE);
	MPI_Wait(&ex[1], MPI_STATUS_IGNORE);
	MPI_Comm_free(&dup);
	check += got(m, left, iters - 1, 3);
	/* a persistent send freed while active */
	MPI_Request ps;
	MPI_Send_init(sbuf[2], N, MPI_DOUBLE, right, 13, comm, &ps);
	MPI_Start(&ps);
	MPI_Request_free(&ps);
	MPI_Recv(m, N, MPI_DOUBLE, left, 13, comm, MPI_STATUS_IGNORE);
	check += got(m, left, iters - 1, 2);
	MPI_Barrier(comm); /* every message received: the buffers are free again */
	for (int k = 0; k < 8; k++)
		MPI_Request_free(&req[k]);
	MPI_Buffer_detach(&battach, &bsz);

	double tcheck = 0;
	int tbad = 0, tcanc = 0;
	MPI_Reduce(&check, &tcheck, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
	MPI_Reduce(&bad, &tbad, 1, MPI_INT, MPI_SUM, 0, comm);
	MPI_Reduce(&ncancelled, &tcanc, 1, MPI_INT, MPI_SUM, 0, comm);
	if (rank == 0)
		printf("requests_mini: %d ranks, %d iterations, %d messages, %d receives cancelled, "
		       "%d wrong values, checksum %.1f\n", size, iters, size * (7 * iters + 2), tcanc,
		       tbad, tcheck);
	free(fire);
	free(battach);
	MPI_Finalize();
	return tbad != 0 && rank == 0;
}
