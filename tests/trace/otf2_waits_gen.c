/*
 * otf2_waits_gen.c - write an OTF2 archive of three MPI processes whose wait states are known,
 * through the OTF2 writer API (no MPI): the input of otf2_waits_test.py, which checks what
 * hclock waits finds in it.
 *
 * Times in us since the global offset, at 10 MHz (100 ns ticks) and a global offset of 1e17
 * ticks (so that a reader that left out the offset or the resolution is seen). Three processes
 * "MPI Rank 0..2" (rank 1 with a second thread that runs a user function only), and a fourth
 * location group without locations (no process). Communicators: 0 the world, 1 a pair whose
 * ranks are world ranks 2 and 0 (rank 0 of it is world rank 2). The wait states:
 *  - late sender, blocking: rank 0 in MPI_Recv from 1000, rank 1's MPI_Send enters at 1500:
 *    500 us;
 *  - late sender through MPI_Irecv + MPI_Wait (as Score-P writes it: MpiIrecvRequest in
 *    MPI_Irecv, MpiIrecv in the MPI_Wait that completed it): rank 2 in MPI_Wait from 2100,
 *    rank 0's MPI_Isend enters at 2700: 600 us;
 *  - wait at barrier: entries 3000, 3100, 3400: ranks 0 and 1 wait 400 and 300 us;
 *  - late broadcast on communicator 1, root its rank 0 (world rank 2) entering at 4500,
 *    world rank 0 at 4000: 500 us;
 *  - wait at N x N through MPI_Iallreduce (NonBlockingCollectiveRequest at its enter, as hclock
 *    trace writes it) completed in MPI_Wait (NonBlockingCollectiveComplete): entries 5000,
 *    5050, 5600, the waits entered at 5100 and 5200: ranks 0 and 1 wait 500 and 400 us.
 * With --unknown-comm the barrier names a communicator that is not defined: it is not
 * analysed (3 collectives of unknown size), and no Wait at Barrier is found.
 *
 * usage: otf2_waits_gen DIR [--unknown-comm]   writes DIR/traces.otf2, DIR/traces.def,
 * DIR/traces/
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#define RES 10000000ULL                  /* ticks per second */
#define G0 100000000000000000ULL         /* the global offset, ticks */
#define TICKS(us) (G0 + (uint64_t)(us) * (RES / 1000000))

/* regions */
enum { R_MAIN, R_SEND, R_RECV, R_ISEND, R_IRECV, R_WAIT, R_BARRIER, R_BCAST, R_IALLREDUCE,
       R_WORK, NREG };
static const char *const reg_name[NREG] = {"main", "MPI_Send", "MPI_Recv", "MPI_Isend",
                                           "MPI_Irecv", "MPI_Wait", "MPI_Barrier", "MPI_Bcast",
                                           "MPI_Iallreduce", "work"};

enum { ENTER, LEAVE, SEND, ISEND, RECV, IRECVREQ, IRECV, CBEGIN, CEND, NBREQ, NBDONE };

struct ev {
	int us, what;
	uint32_t a, comm, b; /* a: region, peer rank, collective op; b: tag, root */
	uint64_t req;
};

#define E(us, r) {us, ENTER, r, 0, 0, 0}
#define L(us, r) {us, LEAVE, r, 0, 0, 0}
#define END {-1, 0, 0, 0, 0, 0}

/* one location's events, in time order; comm 9 stands for the barrier's communicator */
static const struct ev rank0[] = {
	E(0, R_MAIN),
	E(1000, R_RECV), {1600, RECV, 1, 0, 7, 0}, L(1600, R_RECV),
	E(2700, R_ISEND), {2700, ISEND, 2, 0, 8, 11}, L(2710, R_ISEND),
	E(3000, R_BARRIER), {3000, CBEGIN, 0, 0, 0, 0},
	{3450, CEND, OTF2_COLLECTIVE_OP_BARRIER, 9, OTF2_UNDEFINED_UINT32, 0}, L(3450, R_BARRIER),
	E(4000, R_BCAST), {4000, CBEGIN, 0, 0, 0, 0},
	{4550, CEND, OTF2_COLLECTIVE_OP_BCAST, 1, 0, 0}, L(4550, R_BCAST),
	E(5000, R_IALLREDUCE), {5000, NBREQ, 0, 0, 0, 500}, L(5010, R_IALLREDUCE),
	E(5100, R_WAIT), {5700, NBDONE, OTF2_COLLECTIVE_OP_ALLREDUCE, 0, OTF2_UNDEFINED_UINT32, 500},
	L(5700, R_WAIT),
	L(6000, R_MAIN), END};

static const struct ev rank1[] = {
	E(0, R_MAIN),
	E(1500, R_SEND), {1500, SEND, 0, 0, 7, 0}, L(1510, R_SEND),
	E(3100, R_BARRIER), {3100, CBEGIN, 0, 0, 0, 0},
	{3450, CEND, OTF2_COLLECTIVE_OP_BARRIER, 9, OTF2_UNDEFINED_UINT32, 0}, L(3450, R_BARRIER),
	E(5050, R_IALLREDUCE), {5050, NBREQ, 0, 0, 0, 501}, L(5060, R_IALLREDUCE),
	E(5200, R_WAIT), {5700, NBDONE, OTF2_COLLECTIVE_OP_ALLREDUCE, 0, OTF2_UNDEFINED_UINT32, 501},
	L(5700, R_WAIT),
	L(6000, R_MAIN), END};

static const struct ev rank1_thread[] = {E(200, R_WORK), L(5800, R_WORK), END};

static const struct ev rank2[] = {
	E(0, R_MAIN),
	E(2000, R_IRECV), {2000, IRECVREQ, 0, 0, 0, 21}, L(2010, R_IRECV),
	E(2100, R_WAIT), {2800, IRECV, 0, 0, 8, 21}, L(2800, R_WAIT),
	E(3400, R_BARRIER), {3400, CBEGIN, 0, 0, 0, 0},
	{3450, CEND, OTF2_COLLECTIVE_OP_BARRIER, 9, OTF2_UNDEFINED_UINT32, 0}, L(3450, R_BARRIER),
	E(4500, R_BCAST), {4500, CBEGIN, 0, 0, 0, 0},
	{4550, CEND, OTF2_COLLECTIVE_OP_BCAST, 1, 0, 0}, L(4550, R_BCAST),
	E(5600, R_IALLREDUCE), {5600, NBREQ, 0, 0, 0, 502}, L(5610, R_IALLREDUCE),
	E(5650, R_WAIT), {5700, NBDONE, OTF2_COLLECTIVE_OP_ALLREDUCE, 0, OTF2_UNDEFINED_UINT32, 502},
	L(5700, R_WAIT),
	L(6000, R_MAIN), END};

/* location refs as hclock trace gives them (rank * 1024 + thread) and their groups */
static const struct {
	uint64_t ref;
	uint32_t group;
	const struct ev *ev;
} locs[] = {{0, 0, rank0}, {1024, 1, rank1}, {1025, 1, rank1_thread}, {2048, 2, rank2}};
#define NLOC (sizeof(locs) / sizeof(locs[0]))

static int failed;

static void ck(OTF2_ErrorCode e, const char *what)
{
	if (e != OTF2_SUCCESS && !failed) {
		fprintf(stderr, "otf2_waits_gen: %s: %s\n", what, OTF2_Error_GetName(e));
		failed = 1;
	}
}
#define CK(x) ck((x), #x)

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *cd,
                                bool final)
{
	(void)u, (void)ft, (void)l, (void)cd, (void)final;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_cb = {.otf2_pre_flush = pre_flush, .otf2_post_flush = NULL};

static uint64_t events(const struct ev *e)
{
	uint64_t n = 0;
	while (e[n].us >= 0)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (argc == 3 && strcmp(argv[2], "--unknown-comm")) || argc > 3) {
		fprintf(stderr, "usage: otf2_waits_gen DIR [--unknown-comm]\n");
		return 2;
	}
	uint32_t barrier_comm = argc == 3 ? 7 : 0; /* 7: no such communicator */
	OTF2_Archive *ar = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
	                                     4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
	                                     OTF2_COMPRESSION_NONE);
	if (!ar) {
		fprintf(stderr, "otf2_waits_gen: cannot create the archive in %s\n", argv[1]);
		return 1;
	}
	CK(OTF2_Archive_SetFlushCallbacks(ar, &flush_cb, NULL));
	CK(OTF2_Archive_SetSerialCollectiveCallbacks(ar));
	CK(OTF2_Archive_SetCreator(ar, "hclock tests/trace/otf2_waits_gen"));
	CK(OTF2_Archive_OpenEvtFiles(ar));
	for (size_t l = 0; l < NLOC; l++) {
		OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, locs[l].ref);
		for (const struct ev *e = locs[l].ev; e->us >= 0; e++) {
			uint64_t t = TICKS(e->us);
			uint32_t comm = e->comm == 9 ? barrier_comm : e->comm;
			switch (e->what) {
			case ENTER: CK(OTF2_EvtWriter_Enter(w, NULL, t, e->a)); break;
			case LEAVE: CK(OTF2_EvtWriter_Leave(w, NULL, t, e->a)); break;
			case SEND: CK(OTF2_EvtWriter_MpiSend(w, NULL, t, e->a, comm, e->b, 8)); break;
			case ISEND:
				CK(OTF2_EvtWriter_MpiIsend(w, NULL, t, e->a, comm, e->b, 8, e->req));
				break;
			case RECV: CK(OTF2_EvtWriter_MpiRecv(w, NULL, t, e->a, comm, e->b, 8)); break;
			case IRECVREQ: CK(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, e->req)); break;
			case IRECV:
				CK(OTF2_EvtWriter_MpiIrecv(w, NULL, t, e->a, comm, e->b, 8, e->req));
				break;
			case CBEGIN: CK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t)); break;
			case CEND:
				CK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, e->a, comm, e->b, 8, 8));
				break;
			case NBREQ:
				CK(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t, e->req));
				break;
			case NBDONE:
				CK(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, NULL, t, e->a, comm, e->b,
				                                                 8, 8, e->req));
				break;
			}
		}
		CK(OTF2_Archive_CloseEvtWriter(ar, w));
	}
	CK(OTF2_Archive_CloseEvtFiles(ar));

	OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
	CK(OTF2_GlobalDefWriter_WriteClockProperties(gw, RES, G0, TICKS(6000) - G0,
	                                             OTF2_UNDEFINED_TIMESTAMP));
	/* strings: the regions', then the rest */
	static const char *const more[] = {"", "machine", "node", "MPI", "MPI Rank 0", "MPI Rank 1",
	                                   "MPI Rank 2", "a group with no location", "thread",
	                                   "MPI_COMM_WORLD", "pair", "comm locations"};
	enum { S_EMPTY = NREG, S_MACHINE, S_NODE, S_MPI, S_RANK0, S_NOLOC = S_RANK0 + 3, S_THREAD,
	       S_WORLD, S_PAIR, S_LOCS };
	for (uint32_t i = 0; i < NREG; i++)
		CK(OTF2_GlobalDefWriter_WriteString(gw, i, reg_name[i]));
	for (uint32_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		CK(OTF2_GlobalDefWriter_WriteString(gw, NREG + i, more[i]));
	CK(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI, S_MPI,
	                                      OTF2_PARADIGM_CLASS_PROCESS));
	CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, S_MACHINE, S_NODE,
	                                            OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	for (uint32_t r = 0; r < NREG; r++)
		CK(OTF2_GlobalDefWriter_WriteRegion(gw, r, r, r, S_EMPTY, OTF2_REGION_ROLE_FUNCTION,
		                                    r == R_MAIN || r == R_WORK ? OTF2_PARADIGM_USER
		                                                                : OTF2_PARADIGM_MPI,
		                                    OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0));
	for (uint32_t g = 0; g < 4; g++)
		CK(OTF2_GlobalDefWriter_WriteLocationGroup(gw, g, g < 3 ? S_RANK0 + g : S_NOLOC,
		                                           OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
		                                           OTF2_UNDEFINED_LOCATION_GROUP));
	for (size_t l = 0; l < NLOC; l++)
		CK(OTF2_GlobalDefWriter_WriteLocation(gw, locs[l].ref,
		                                      locs[l].ref % 1024 ? S_THREAD
		                                                         : S_RANK0 + locs[l].group,
		                                      OTF2_LOCATION_TYPE_CPU_THREAD,
		                                      events(locs[l].ev), locs[l].group));
	uint64_t m[3] = {0, 1024, 2048};
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 0, S_LOCS, OTF2_GROUP_TYPE_COMM_LOCATIONS,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 3, m));
	uint64_t world[3] = {0, 1, 2}, pair[2] = {2, 0};
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 1, S_WORLD, OTF2_GROUP_TYPE_COMM_GROUP,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 3, world));
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 2, S_PAIR, OTF2_GROUP_TYPE_COMM_GROUP,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, pair));
	CK(OTF2_GlobalDefWriter_WriteComm(gw, 0, S_WORLD, 1, OTF2_UNDEFINED_COMM,
	                                  OTF2_COMM_FLAG_NONE));
	CK(OTF2_GlobalDefWriter_WriteComm(gw, 1, S_PAIR, 2, 0, OTF2_COMM_FLAG_NONE));
	CK(OTF2_Archive_CloseGlobalDefWriter(ar, gw));
	CK(OTF2_Archive_Close(ar));
	return failed;
}
