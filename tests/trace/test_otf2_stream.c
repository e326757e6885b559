/*
 * test_otf2_stream.c DIR - the OTF2 writer (src/trace/otf2_stream.c, otf2_assemble.c) on
 * records made by hand, in the order the tracer makes them: DIR/traces.otf2 for
 * otf2_stream_test.py to read back with otf2-print and hold against the events expected.
 *
 * Rank 0 (functions 0 MPI_Send, 1 MPI_Start, 2 MPI_Iallreduce, 3 MPI_Allreduce, 4 MPI_Waitall,
 * 5 MPI_Wait), thread 0: an MPI_Send whose send record comes before its call's; an
 * MPI_Start whose persistent send's record comes after it (at its enter); an
 * MPI_Iallreduce; a blocking MPI_Allreduce on communicator 0xabc; an MPI_Waitall that
 * completed a receive and the MPI_Iallreduce (their records after its own, at its leave);
 * an MPI_Wait completing thread 1's MPI_Iallreduce (MPI_THREAD_MULTIPLE); a send whose
 * call's record was lost (the file cut there). Thread 1, its records between thread 0's: one
 * MPI_Wait, an MPI_Iallreduce, an MPI_Waitall whose record comes after the completion of
 * that MPI_Iallreduce by thread 0 (which its location gets inside this call). Rank 1 (functions 0 MPI_Wait, 1 MPI_Send: another numbering):
 * an MPI_Send on 0xabc, its send record at the call's enter time as the tracer makes it, with
 * a bound sample read just after that enter (the send goes before the sample), then an
 * MPI_Wait that blocked for long, with a bound sample at its enter and one at its leave, both
 * before its record and while the MPI_Send's end is held (both written, in time order). Rank 2: no records at all (an empty location). Three of thread 0's
 * calls have a bound sample taken at their enter, so a little after it (its record comes
 * before the call's): the MPI_Send, the MPI_Start (its persistent send, at the enter's time,
 * goes before the sample) and the MPI_Allreduce.
 */
#include <stdio.h>
#include <string.h>

#include "hclock_api.h"
#include "trace/otf2_stream.h"

static struct rec R(int kind, int func, int tid, int peer, int tag, uint64_t comm, int64_t t,
                    int64_t t2)
{
	return (struct rec){.kind = (uint8_t)kind, .func = (uint16_t)func, .tid = (uint32_t)tid,
	                    .peer = peer, .tag = tag, .comm = comm, .t_g = t, .t2_g = t2,
	                    .bytes = 8};
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_otf2_stream DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	static const char *const n0[] = {"MPI_Send", "MPI_Start", "MPI_Iallreduce",
	                                 "MPI_Allreduce", "MPI_Waitall", "MPI_Wait"};
	static const char *const n1[] = {"MPI_Wait", "MPI_Send"};
	struct rec r0[] = {
	    R(REC_BOUND, 0, 0, -1, 0, 0, 102, 0),
	    R(REC_SEND, 0, 0, 1, 5, 0, 110, 0),
	    R(REC_CALL, 5, 1, -1, 0, 0, 105, 115), /* thread 1 */
	    R(REC_CALL, 0, 0, -1, 0, 0, 100, 120),
	    R(REC_BOUND, 0, 0, -1, 0, 0, 201, 0),
	    R(REC_CALL, 1, 0, -1, 0, 0, 200, 210),
	    R(REC_SEND, 1, 0, 1, 6, 0, 200, 0),
	    R(REC_CALL, 2, 0, -1, 0, 0, 300, 310),
	    R(REC_BOUND, 0, 0, -1, 0, 0, 403, 0),
	    R(REC_COLL, 3, 0, -1, 0, 0xabc, 400, 450),
	    R(REC_CALL, 4, 0, -1, 0, 0, 500, 520),
	    R(REC_RECV, 4, 0, 1, 7, 0, 520, 0),
	    R(REC_COLL, 2, 0, -1, 0, 0, 300, 520),
	    R(REC_CALL, 2, 1, -1, 0, 0, 700, 710), /* thread 1 starts, thread 0 completes */
	    R(REC_CALL, 5, 0, -1, 0, 0, 800, 820),
	    R(REC_COLL, 2, 0, -1, 1, 0, 700, 820),
	    R(REC_CALL, 4, 1, -1, 0, 0, 790, 850),
	    R(REC_SEND, 0, 0, 1, 8, 0, 900, 0),
	};
	for (size_t i = 0; i < sizeof(r0) / sizeof(r0[0]); i++)
		if (r0[i].kind == REC_BOUND) { /* bounds +-50 ns: a half-width of 50 */
			r0[i].t2_g = r0[i].t_g - 50;
			r0[i].t2_l = r0[i].t_g + 50;
		}
	r0[12].flags = REC_F_NB;
	r0[15].flags = REC_F_NB | REC_F_TID;
	struct rec r1[] = {
	    R(REC_BOUND, 0, 0, -1, 0, 0, 132, 0),
	    R(REC_SEND, 1, 0, 0, 9, 0xabc, 130, 0),
	    R(REC_CALL, 1, 0, -1, 0, 0, 130, 140),
	    R(REC_BOUND, 0, 0, -1, 0, 0, 152, 0),
	    R(REC_BOUND, 0, 0, -1, 0, 0, 302, 0),
	    R(REC_CALL, 0, 0, -1, 0, 0, 150, 300),
	};
	for (size_t i = 0; i < sizeof(r1) / sizeof(r1[0]); i++)
		if (r1[i].kind == REC_BOUND) {
			r1[i].t2_g = r1[i].t_g - 50;
			r1[i].t2_l = r1[i].t_g + 50;
		}
	struct otf2s *o;
	if (otf2s_open(dir, 0, "hostA", 6, n0, &o))
		goto bad;
	otf2s_feed(o, r0, 3);
	otf2s_feed(o, r0 + 3, sizeof(r0) / sizeof(r0[0]) - 3); /* fed in two pieces */
	if (otf2s_close(o) || otf2s_open(dir, 1, "", 2, n1, &o))
		goto bad;
	otf2s_feed(o, r1, sizeof(r1) / sizeof(r1[0]));
	if (otf2s_close(o) || otf2s_assemble(dir, 3))
		goto bad;
	return 0;
bad:
	fprintf(stderr, "test_otf2_stream: %s\n", hclock_last_error());
	return 1;
}
