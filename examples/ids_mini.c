/*
 * ids_mini.c - a small MPI program that tries to break the tracer's message pairing (both
 * ends of a message compute the same id from the channel and its sequence number): every
 * rank but 0 sends rank 0 messages on 5 tags interleaved and on two communicators, and rank 0
 * receives them with wildcards (MPI_ANY_SOURCE, MPI_ANY_TAG) in every way MPI offers:
 * MPI_Recv, MPI_Probe + MPI_Recv, MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv, batches of
 * MPI_Irecv completed out of order by MPI_Waitany, MPI_Waitsome and MPI_Testsome (posted in
 * reverse order with specific sources and tags), and a persistent wildcard receive; plus a
 * cancelled wildcard receive. The input of trace_test.py's "ids" case.
 *
 *   mpirun -np P ids_mini [ITERATIONS]      (P >= 2, 3 makes the wildcards matter; default 8)
 *
 * Every message carries its sender, tag, communicator and its number on its channel (sender,
 * receiver, tag, communicator) and has a length unique on its channel (3 + that number
 * doubles), so a flow of the trace that joins the wrong send and receive shows as a length or
 * tag that differs at its two ends. Rank 0 checks every message against MPI's non-overtaking
 * rule and prints one line (the same traced and untraced); exit 1 if anything was wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI_STATUSES_IGNORE: GCC takes MPICH's, (MPI_Status *)1, for an array too small */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define NTAG 5   /* tags 100..104 */
#define PER 10   /* messages per sender per iteration */
#define MAXLEN (3 + 8 * PER * 64) /* doubles, more than any message */

static int nwrong;

struct chan {
	int next[2][NTAG]; /* the next number on (communicator, tag), per sender */
};

/* a message's header: sender, tag, communicator index, number on its channel */
static void check_msg(struct chan *ch, const double *b, const MPI_Status *st, int comm_ix)
{
	int src = st->MPI_SOURCE, tag = st->MPI_TAG, n;

	MPI_Get_count(st, MPI_DOUBLE, &n);
	if (tag < 100 || tag >= 100 + NTAG || (int)b[0] != src || (int)b[1] != tag ||
	    (int)b[2] != comm_ix * 100000 + ch[src].next[comm_ix][tag - 100] ||
	    n != 3 + ch[src].next[comm_ix][tag - 100]) {
		if (nwrong++ < 5)
			fprintf(stderr, "ids_mini: wrong message from %d tag %d: header %g %g %g, %d "
			        "doubles\n", src, tag, b[0], b[1], b[2], n);
		return;
	}
	ch[src].next[comm_ix][tag - 100]++;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 8, received = 0, cancelled = 0;
	MPI_Comm dup;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (rank) {
		/* a sender: the j-th message of an iteration on tag (j * 3 + rank) % NTAG, every
		 * third on the duplicate; blocking, synchronous and nonblocking sends mixed */
		static double buf[PER][MAXLEN];
		int next[2][NTAG] = {{0}};
		MPI_Request rq[PER];
		for (int it = 0; it < iters; it++) {
			int nrq = 0;
			for (int j = 0; j < PER; j++) {
				int tag = 100 + (j * 3 + rank + it) % NTAG, c = j % 3 == 2, n;
				MPI_Comm comm = c ? dup : MPI_COMM_WORLD;
				n = next[c][tag - 100]++;
				buf[j][0] = rank;
				buf[j][1] = tag;
				buf[j][2] = c * 100000 + n;
				if (j % 4 == 1)
					MPI_Isend(buf[j], 3 + n, MPI_DOUBLE, 0, tag, comm, &rq[nrq++]);
				else if (j % 4 == 3)
					MPI_Ssend(buf[j], 3 + n, MPI_DOUBLE, 0, tag, comm);
				else
					MPI_Send(buf[j], 3 + n, MPI_DOUBLE, 0, tag, comm);
			}
			MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
		}
	} else {
		struct chan *ch = calloc((size_t)size, sizeof(*ch));
		double (*b)[MAXLEN] = malloc(sizeof(double[8][MAXLEN]));
		int total = (size - 1) * PER * iters, way = 0;
		MPI_Request rq[8], prq;
		MPI_Status st[8];
		int idx[8];
		/* the duplicate's messages: one wildcard receive at a time, on the side */
		int dup_total = 0;
		for (int r = 1; r < size; r++)
			for (int it = 0; it < iters; it++)
				for (int j = 0; j < PER; j++)
					dup_total += j % 3 == 2;
		total -= dup_total;
		MPI_Recv_init(b[7], MAXLEN, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
		              &prq);
		/* a cancelled wildcard receive: nothing is ever sent on tag 999 */
		MPI_Irecv(b[0], MAXLEN, MPI_DOUBLE, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq[0]);
		MPI_Cancel(&rq[0]);
		MPI_Wait(&rq[0], &st[0]);
		{
			int flag;
			MPI_Test_cancelled(&st[0], &flag);
			cancelled += flag;
		}
		while (received < total || dup_total) {
			if (dup_total) { /* interleave the duplicate's */
				int flag;
				MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st[0]);
				if (flag || received >= total) {
					MPI_Recv(b[0], MAXLEN, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, dup,
					         &st[0]);
					check_msg(ch, b[0], &st[0], 1);
					dup_total--;
					continue;
				}
			}
			switch (way++ % 7) {
			case 0: /* MPI_Recv, wildcards */
				MPI_Recv(b[0], MAXLEN, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
				         &st[0]);
				check_msg(ch, b[0], &st[0], 0);
				received++;
				break;
			case 1: { /* MPI_Probe, then MPI_Recv of exactly that source and tag */
				MPI_Status ps;
				MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ps);
				MPI_Recv(b[0], MAXLEN, MPI_DOUBLE, ps.MPI_SOURCE, ps.MPI_TAG, MPI_COMM_WORLD,
				         &st[0]);
				check_msg(ch, b[0], &st[0], 0);
				received++;
				break;
			}
			case 2: { /* MPI_Mprobe + MPI_Mrecv */
				MPI_Message m;
				MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st[0]);
				MPI_Mrecv(b[0], MAXLEN, MPI_DOUBLE, &m, &st[0]);
				check_msg(ch, b[0], &st[0], 0);
				received++;
				break;
			}
			case 3: { /* MPI_Improbe loop + MPI_Imrecv + MPI_Wait */
				MPI_Message m;
				int flag = 0;
				while (!flag)
					MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st[0]);
				MPI_Imrecv(b[0], MAXLEN, MPI_DOUBLE, &m, &rq[0]);
				MPI_Wait(&rq[0], &st[0]);
				check_msg(ch, b[0], &st[0], 0);
				received++;
				break;
			}
			case 4:
			case 5: { /* a batch of wildcard MPI_Irecv completed out of order by MPI_Waitany,
				   * MPI_Waitsome or MPI_Testsome; MPI matches wildcard receives in the
				   * order they were posted, so they are checked in that order */
				MPI_Status sti[8];
				int n = total - received < 4 ? total - received : 4, done = 0, how = way % 3;
				for (int k = 0; k < n; k++)
					MPI_Irecv(b[k], MAXLEN, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG,
					          MPI_COMM_WORLD, &rq[k]);
				while (done < n) {
					int out = 0, i;
					if (how == 0) {
						MPI_Waitany(n, rq, &i, &st[0]);
						idx[0] = i;
						out = 1;
					} else if (how == 1) {
						MPI_Waitsome(n, rq, &out, idx, st);
					} else {
						MPI_Testsome(n, rq, &out, idx, st);
					}
					for (int k = 0; k < out; k++)
						sti[idx[k]] = st[k];
					done += out;
				}
				for (int k = 0; k < n; k++)
					check_msg(ch, b[k], &sti[k], 0);
				received += n;
				break;
			}
			case 6: /* the persistent wildcard receive */
				MPI_Start(&prq);
				MPI_Wait(&prq, &st[0]);
				check_msg(ch, b[7], &st[0], 0);
				received++;
				break;
			}
		}
		MPI_Request_free(&prq);
		printf("ids_mini: %d messages received, %d receive cancelled, %d wrong\n",
		       (size - 1) * PER * iters, cancelled, nwrong);
		free(b);
		free(ch);
	}
	MPI_Comm_free(&dup);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return nwrong ? 1 : 0;
}
