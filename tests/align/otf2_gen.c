/*
 * otf2_gen.c - write a synthetic OTF2 archive of an MPI program whose ranks have clocks of
 * known offset and skew, through the OTF2 writer API (no MPI needed).
 *
 * Ranks exchange point-to-point messages (MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv with
 * their completion records) on MPI_COMM_WORLD and on a second communicator whose ranks are
 * reversed, with tags 0-2. Rank 1 has a second (worker thread) location with Enter/Leave
 * events only. Each location has ClockOffset definitions, as a measurement system that ran
 * its own rough synchronisation would write; OTF2 readers add them to the event times.
 *
 * Clock of rank i, as any OTF2 reader sees it (raw ticks plus the ClockOffset), in ns since
 * the archive's global offset:  read_ns = T + offset_ns[i] + skew_ppb[i] * T / 1e9, where T
 * is true time in ns since the global offset. Rank 0 is perfect. The truth is written to
 * DIR/truth.csv as "node,offset_ns,skew_ppb" (node: the name hclock gives the rank).
 *
 * usage: otf2_gen DIR [--ranks N] [--messages M] [--resolution TICKS_PER_S] [--seed S]
 *                     [--no-clock-offsets]
 * writes DIR/traces.otf2 (the anchor), DIR/traces.def, DIR/traces/, DIR/truth.csv
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#define MAXR 64
#define G0 1700000000000000000ULL /* global offset, ticks: a realtime-sized origin */

enum rec { ENTER, LEAVE, SEND, ISEND, ISENDC, IRECVREQ, RECV, IRECV };

struct ev {
	int64_t t; /* true ns since the global offset */
	int rec;
	uint32_t a, comm, tag; /* a: region, or peer rank in comm */
	uint64_t req;
};

struct loc {
	struct ev *ev;
	size_t n, cap;
};

static struct loc locs[MAXR + 1];
static int64_t offset_ns[MAXR], skew_ppb[MAXR], clockoff_ns[MAXR];
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t resolution = 1000000000ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int64_t rnd_range(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void add(int l, int64_t t, int rec, uint32_t a, uint32_t comm, uint32_t tag, uint64_t req)
{
	struct loc *L = &locs[l];

	if (L->n == L->cap) {
		L->cap = L->cap ? 2 * L->cap : 256;
		L->ev = realloc(L->ev, L->cap * sizeof(*L->ev));
		if (!L->ev)
			exit(1);
	}
	L->ev[L->n++] = (struct ev){ t, rec, a, comm, tag, req };
}

static int ev_cmp(const void *x, const void *y)
{
	const struct ev *a = x, *b = y;

	return a->t < b->t ? -1 : a->t > b->t;
}

/* raw ticks of rank r's clock at true time t (before the ClockOffset is added) */
static uint64_t raw_ticks(int r, int64_t t)
{
	__int128 ns = (__int128)t + offset_ns[r] - clockoff_ns[r] + (__int128)skew_ppb[r] * t / 1000000000;

	return G0 + (uint64_t)(ns * (__int128)resolution / 1000000000);
}

static uint64_t clockoff_ticks(int r)
{
	return (uint64_t)((__int128)clockoff_ns[r] * (__int128)resolution / 1000000000);
}

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *cd, bool final)
{
	(void)u, (void)ft, (void)l, (void)cd, (void)final;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_cb = { .otf2_pre_flush = pre_flush, .otf2_post_flush = NULL };

#define CK(x)                                                                       \
	do {                                                                        \
		OTF2_ErrorCode e_ = (x);                                            \
		if (e_ != OTF2_SUCCESS) {                                           \
			fprintf(stderr, "otf2_gen: %s: %s\n", #x, OTF2_Error_GetName(e_)); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

enum { S_EMPTY, S_MACHINE, S_NODE, S_MAIN, S_SEND, S_RECV, S_ISEND, S_IRECV, S_WAIT, S_WORK,
       S_WORLD, S_REV, S_MPI, S_MASTER, S_WORKER, S_COMMLOC, S_RANK0 };

int main(int argc, char **argv)
{
	const char *dir = NULL;
	int ranks = 4, messages = 400, clock_offsets = 1;
	int64_t t = 100000000; /* true time of the first message: 100 ms after the origin */
	uint64_t req = 1, tmin = UINT64_MAX, tmax = 0;
	OTF2_Archive *ar;
	OTF2_GlobalDefWriter *gw;
	char path[4096];
	FILE *truth;
	uint64_t members[MAXR];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
			ranks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--messages") && i + 1 < argc)
			messages = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--resolution") && i + 1 < argc)
			resolution = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rng = strtoull(argv[++i], NULL, 0) | 1;
		else if (!strcmp(argv[i], "--no-clock-offsets"))
			clock_offsets = 0;
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else {
			fprintf(stderr, "usage: otf2_gen DIR [--ranks N] [--messages M] "
			        "[--resolution TICKS_PER_S] [--seed S] [--no-clock-offsets]\n");
			return 2;
		}
	}
	if (!dir || ranks < 2 || ranks > MAXR || messages < 1 || resolution < 1000) {
		fprintf(stderr, "otf2_gen: need DIR, 2 <= ranks <= %d, messages >= 1, resolution >= 1000\n",
		        MAXR);
		return 2;
	}
	/* clocks: rank 0 perfect; others up to +-50 ms and +-50 ppm, of which a rough
	 * synchronisation (the ClockOffset) has removed all but up to +-300 us */
	for (int r = 1; r < ranks; r++) {
		int64_t raw = rnd_range(-50000000, 50000000);

		int64_t residual = rnd_range(-300000, 300000);

		skew_ppb[r] = rnd_range(-50000, 50000);
		offset_ns[r] = clock_offsets ? residual : raw;
		clockoff_ns[r] = clock_offsets ? residual - raw : 0;
	}

	/* one message at a time, 20 us apart: no two records of one location overlap */
	for (int m = 0; m < messages; m++, t += 20000) {
		int s = (int)(rnd() % (uint64_t)ranks), r = (int)(rnd() % (uint64_t)(ranks - 1));
		uint32_t comm = (uint32_t)(rnd() % 2), tag = (uint32_t)(rnd() % 3);
		uint32_t rr, sr;
		int64_t lat = rnd_range(3000, 8000), done = t + lat + rnd_range(0, 1000);

		if (r >= s)
			r++;
		rr = comm ? (uint32_t)(ranks - 1 - r) : (uint32_t)r; /* ranks in comm */
		sr = comm ? (uint32_t)(ranks - 1 - s) : (uint32_t)s;
		if (rnd() % 2) {
			add(s, t - 100, ENTER, S_SEND, 0, 0, 0);
			add(s, t, SEND, rr, comm, tag, 0);
			add(s, t + 300, LEAVE, S_SEND, 0, 0, 0);
		} else {
			add(s, t - 100, ENTER, S_ISEND, 0, 0, 0);
			add(s, t, ISEND, rr, comm, tag, req);
			add(s, t + 200, LEAVE, S_ISEND, 0, 0, 0);
			add(s, done + 1500, ENTER, S_WAIT, 0, 0, 0);
			add(s, done + 1600, ISENDC, 0, 0, 0, req);
			add(s, done + 1700, LEAVE, S_WAIT, 0, 0, 0);
			req++;
		}
		if (rnd() % 2) {
			add(r, t - 2000, ENTER, S_RECV, 0, 0, 0);
			add(r, done, RECV, sr, comm, tag, 0);
			add(r, done + 100, LEAVE, S_RECV, 0, 0, 0);
		} else {
			add(r, t - 5000, ENTER, S_IRECV, 0, 0, 0);
			add(r, t - 4900, IRECVREQ, 0, 0, 0, req);
			add(r, t - 4800, LEAVE, S_IRECV, 0, 0, 0);
			add(r, done - 200, ENTER, S_WAIT, 0, 0, 0);
			add(r, done, IRECV, sr, comm, tag, req);
			add(r, done + 100, LEAVE, S_WAIT, 0, 0, 0);
			req++;
		}
		if (m % 10 == 0) { /* the worker thread of rank 1 */
			add(ranks, t, ENTER, S_WORK, 0, 0, 0);
			add(ranks, t + 15000, LEAVE, S_WORK, 0, 0, 0);
		}
	}

	ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
	                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!ar) {
		fprintf(stderr, "otf2_gen: cannot create the archive in %s\n", dir);
		return 1;
	}
	CK(OTF2_Archive_SetFlushCallbacks(ar, &flush_cb, NULL));
	CK(OTF2_Archive_SetSerialCollectiveCallbacks(ar));
	CK(OTF2_Archive_SetCreator(ar, "hclock tests/align/otf2_gen"));
	CK(OTF2_Archive_OpenEvtFiles(ar));
	for (int l = 0; l <= ranks; l++) {
		int r = l == ranks ? 1 : l; /* the worker thread runs on rank 1's clock */
		OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, (OTF2_LocationRef)l);

		qsort(locs[l].ev, locs[l].n, sizeof(*locs[l].ev), ev_cmp);
		for (size_t i = 0; i < locs[l].n; i++) {
			const struct ev *e = &locs[l].ev[i];
			uint64_t tk = raw_ticks(r, e->t);

			if (tk + clockoff_ticks(r) < tmin)
				tmin = tk + clockoff_ticks(r);
			if (tk + clockoff_ticks(r) > tmax)
				tmax = tk + clockoff_ticks(r);
			switch (e->rec) {
			case ENTER: CK(OTF2_EvtWriter_Enter(w, NULL, tk, e->a - S_MAIN)); break;
			case LEAVE: CK(OTF2_EvtWriter_Leave(w, NULL, tk, e->a - S_MAIN)); break;
			case SEND: CK(OTF2_EvtWriter_MpiSend(w, NULL, tk, e->a, e->comm, e->tag, 64)); break;
			case ISEND:
				CK(OTF2_EvtWriter_MpiIsend(w, NULL, tk, e->a, e->comm, e->tag, 64, e->req));
				break;
			case ISENDC: CK(OTF2_EvtWriter_MpiIsendComplete(w, NULL, tk, e->req)); break;
			case IRECVREQ: CK(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, tk, e->req)); break;
			case RECV: CK(OTF2_EvtWriter_MpiRecv(w, NULL, tk, e->a, e->comm, e->tag, 64)); break;
			case IRECV:
				CK(OTF2_EvtWriter_MpiIrecv(w, NULL, tk, e->a, e->comm, e->tag, 64, e->req));
				break;
			}
		}
		CK(OTF2_Archive_CloseEvtWriter(ar, w));
	}
	CK(OTF2_Archive_CloseEvtFiles(ar));

	CK(OTF2_Archive_OpenDefFiles(ar));
	for (int l = 0; l <= ranks; l++) {
		int r = l == ranks ? 1 : l;
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, (OTF2_LocationRef)l);

		if (clock_offsets) {
			/* a begin and an end offset of equal value: a constant correction */
			CK(OTF2_DefWriter_WriteClockOffset(dw, tmin > G0 ? G0 : tmin,
			                                   (int64_t)clockoff_ticks(r), 1e3));
			CK(OTF2_DefWriter_WriteClockOffset(dw, tmax, (int64_t)clockoff_ticks(r), 1e3));
		}
		CK(OTF2_Archive_CloseDefWriter(ar, dw));
	}
	CK(OTF2_Archive_CloseDefFiles(ar));

	gw = OTF2_Archive_GetGlobalDefWriter(ar);
	CK(OTF2_GlobalDefWriter_WriteClockProperties(gw, resolution, G0, tmax - G0,
	                                             resolution == 1000000000ULL ? G0
	                                                                         : OTF2_UNDEFINED_TIMESTAMP));
	{
		static const char *str[] = { "", "machine", "node", "main", "MPI_Send", "MPI_Recv",
		                             "MPI_Isend", "MPI_Irecv", "MPI_Wait", "work",
		                             "MPI_COMM_WORLD", "comm_reversed", "MPI",
		                             "Master thread", "Worker thread", "comm locations" };

		for (uint32_t i = 0; i < sizeof(str) / sizeof(*str); i++)
			CK(OTF2_GlobalDefWriter_WriteString(gw, i, str[i]));
		for (int r = 0; r < ranks; r++) {
			char name[32];

			snprintf(name, sizeof(name), "MPI Rank %d", r);
			CK(OTF2_GlobalDefWriter_WriteString(gw, (uint32_t)(S_RANK0 + r), name));
		}
	}
	CK(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI, S_MPI,
	                                      OTF2_PARADIGM_CLASS_PROCESS));
	CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, S_MACHINE, S_NODE,
	                                            OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	for (uint32_t reg = S_MAIN; reg <= S_WORK; reg++)
		CK(OTF2_GlobalDefWriter_WriteRegion(gw, reg - S_MAIN, reg, reg, S_EMPTY,
		                                    reg == S_WORK ? OTF2_REGION_ROLE_FUNCTION
		                                                  : OTF2_REGION_ROLE_POINT2POINT,
		                                    reg == S_WORK ? OTF2_PARADIGM_USER
		                                                  : OTF2_PARADIGM_MPI,
		                                    OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0));
	for (int r = 0; r < ranks; r++)
		CK(OTF2_GlobalDefWriter_WriteLocationGroup(gw, (uint32_t)r, (uint32_t)(S_RANK0 + r),
		                                           OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
		                                           OTF2_UNDEFINED_LOCATION_GROUP));
	for (int l = 0; l <= ranks; l++)
		CK(OTF2_GlobalDefWriter_WriteLocation(gw, (OTF2_LocationRef)l,
		                                      l == ranks ? S_WORKER : S_MASTER,
		                                      OTF2_LOCATION_TYPE_CPU_THREAD, locs[l].n,
		                                      (uint32_t)(l == ranks ? 1 : l)));
	for (int r = 0; r < ranks; r++)
		members[r] = (uint64_t)r;
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 0, S_COMMLOC, OTF2_GROUP_TYPE_COMM_LOCATIONS,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
	                                   (uint32_t)ranks, members));
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 1, S_WORLD, OTF2_GROUP_TYPE_COMM_GROUP,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
	                                   (uint32_t)ranks, members));
	for (int r = 0; r < ranks; r++)
		members[r] = (uint64_t)(ranks - 1 - r);
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 2, S_REV, OTF2_GROUP_TYPE_COMM_GROUP,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
	                                   (uint32_t)ranks, members));
	CK(OTF2_GlobalDefWriter_WriteComm(gw, 0, S_WORLD, 1, OTF2_UNDEFINED_COMM,
	                                  OTF2_COMM_FLAG_NONE));
	CK(OTF2_GlobalDefWriter_WriteComm(gw, 1, S_REV, 2, 0, OTF2_COMM_FLAG_NONE));
	CK(OTF2_Archive_CloseGlobalDefWriter(ar, gw));
	CK(OTF2_Archive_Close(ar));

	snprintf(path, sizeof(path), "%s/truth.csv", dir);
	truth = fopen(path, "w");
	if (!truth)
		return 1;
	fprintf(truth, "node,offset_ns,skew_ppb\n");
	for (int r = 0; r < ranks; r++)
		fprintf(truth, "MPI_Rank_%d,%" PRId64 ",%" PRId64 "\n", r, offset_ns[r], skew_ppb[r]);
	fclose(truth);
	for (int l = 0; l <= ranks; l++)
		free(locs[l].ev);
	return 0;
}
