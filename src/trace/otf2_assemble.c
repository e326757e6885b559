/*
 * otf2_assemble.c - DIR/traces.otf2 from the processes' OTF2 parts (otf2_stream.h): no
 * event is read or written here, only the definitions.
 *
 * Global definitions: one region per function some process used (named after it), a location
 * group ("MPI Rank R") per process and a location per thread that recorded ("MPI Rank R",
 * "MPI Rank R thread T"; ref R * OTF2S_MAX_THREADS + T, its event count from the part), a
 * COMM_LOCATIONS group of each process's first location, the world's COMM_GROUP, a Comm per
 * communicator id seen (id 0 MPI_COMM_WORLD first), each over the world's group (the
 * records name peers by world rank), ClockProperties at 1 GHz from the earliest event to the
 * latest. Per location, local definitions: the mapping tables from its process's function
 * indices and communicator numbering to the global regions and Comms. Its event file is
 * renamed into the archive. A rank without a part (no records, no raw file) gets its
 * location with an empty event file, so that every rank has one.
 *
 * Written into DIR/.traces.part, then moved into place, the anchor file last: a reader never
 * sees half an archive. The parts are removed once they are in.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "hclock_api.h"
#include "trace/otf2_stream.h"
#include "util/err.h"

struct ploc {
	int tid;
	uint64_t nev;
	int64_t t_first, t_last;
};

struct part {
	int have;
	struct ploc *loc;
	size_t nloc;
	uint32_t *fidx, *freg; /* function index -> global region */
	size_t nf;
	uint64_t *cid;         /* communicator id by local ref */
	size_t nc;
	uint64_t nbound;       /* its Metric events (the clock's bound samples) */
	char host[40];         /* the process's host ("": not known) */
};

struct names {
	char **s;
	size_t n, cap;
};

/* the index of s in t, added if new; SIZE_MAX without memory */
static size_t name_id(struct names *t, const char *s)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->s[i], s))
			return i;
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		char **p = realloc(t->s, nc * sizeof(*p));
		if (!p)
			return SIZE_MAX;
		t->s = p;
		t->cap = nc;
	}
	if (!(t->s[t->n] = strdup(s)))
		return SIZE_MAX;
	return t->n++;
}

static void names_free(struct names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
}

static int grow(void **p, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? 2 * *cap : 16;
	void *q = realloc(*p, nc * sz);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

/* DIR/parts/rank.R.otf2 into p (regions into regs, communicators into comms). Returns 0, 1
 * when there is none, or a negative HCLOCK_E* code. */
static int read_part(const char *dir, int r, struct part *p, struct names *regs,
                     uint64_t **comms, size_t *ncomm, size_t *ccap)
{
	char path[4300], line[600];
	snprintf(path, sizeof(path), "%s/parts/rank.%d.otf2", dir, r);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	size_t lcap = 0, fcap = 0, ccap2 = 0;
	int rc = 0, head = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		int tid;
		unsigned fi;
		size_t ref;
		uint64_t nev, id, tl;
		int64_t tf;
		char nm[512];
		if (!strcmp(line, "hclock-otf2 1")) {
			head = 1;
		} else if (sscanf(line, "bound %" SCNu64, &nev) == 1) {
			p->nbound = nev;
		} else if (sscanf(line, "host %39s", p->host) == 1) {
		} else if (sscanf(line, "loc %d %" SCNu64 " %" SCNd64 " %" SCNu64, &tid, &nev, &tf,
		                  &tl) == 4) {
			if (grow((void **)&p->loc, p->nloc, &lcap, sizeof(*p->loc)))
				rc = HCLOCK_ENOMEM;
			else
				p->loc[p->nloc++] = (struct ploc){tid, nev, tf, (int64_t)tl};
		} else if (sscanf(line, "func %u %511s", &fi, nm) == 2) {
			size_t g = name_id(regs, nm);
			if (g == SIZE_MAX || grow((void **)&p->fidx, p->nf, &fcap, sizeof(uint32_t)) ||
			    !(p->freg = realloc(p->freg, fcap * sizeof(uint32_t))))
				rc = HCLOCK_ENOMEM;
			else
				p->fidx[p->nf] = fi, p->freg[p->nf++] = (uint32_t)g;
		} else if (sscanf(line, "comm %zu %" SCNx64, &ref, &id) == 2) {
			if (ref != p->nc || grow((void **)&p->cid, p->nc, &ccap2, sizeof(uint64_t))) {
				rc = ref != p->nc ? HCLOCK_EINVAL : HCLOCK_ENOMEM;
				break;
			}
			p->cid[p->nc++] = id;
			size_t c = 0;
			while (c < *ncomm && (*comms)[c] != id)
				c++;
			if (c == *ncomm) {
				if (grow((void **)comms, *ncomm, ccap, sizeof(uint64_t)))
					rc = HCLOCK_ENOMEM;
				else
					(*comms)[(*ncomm)++] = id;
			}
		} else if (strncmp(line, "rank ", 5)) {
			rc = HCLOCK_EINVAL;
		}
	}
	fclose(f);
	if (!rc && !head)
		rc = HCLOCK_EINVAL;
	if (rc == HCLOCK_EINVAL)
		return err_set(rc, "%s: not an OTF2 part's definitions (expected the lines "
		               "hclock-otf2 1, rank, loc, func and comm that the tracer writes)", path);
	if (rc)
		return err_set(rc, "out of memory reading %s", path);
	p->have = 1;
	return 0;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

static void rm_rf(const char *p)
{
	nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *cd,
                                bool final)
{
	(void)u, (void)ft, (void)l, (void)cd, (void)final;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_cb = {.otf2_pre_flush = pre_flush, .otf2_post_flush = NULL};

#define CK(x)                                                                                 \
	do {                                                                                      \
		OTF2_ErrorCode e_ = (x);                                                              \
		if (e_ != OTF2_SUCCESS && !rc)                                                        \
			rc = err_set(HCLOCK_EIO, "writing the OTF2 archive: %s: %s", #x,                  \
			             OTF2_Error_GetName(e_));                                             \
	} while (0)

/* whether an MPI function is point-to-point (sends, receives, their starts and completions) */
static int p2p_region(const char *n)
{
	static const char *const pre[] = {"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv",
	                                  "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Issend",
	                                  "MPI_Ibsend", "MPI_Irsend", "MPI_Mrecv", "MPI_Imrecv",
	                                  "MPI_Start", "MPI_Wait", "MPI_Test"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(n, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

/* the global definitions */
static int global_defs(OTF2_Archive *ar, int size, const struct part *ps,
                       const struct names *regs, const uint64_t *comms, size_t ncomm)
{
	int rc = 0;
	OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
	if (!gw)
		return err_set(HCLOCK_EIO, "writing the OTF2 archive: no global definition writer");
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	for (int r = 0; r < size; r++)
		for (size_t i = 0; i < ps[r].nloc; i++)
			if (ps[r].loc[i].nev) {
				t0 = ps[r].loc[i].t_first < t0 ? ps[r].loc[i].t_first : t0;
				t1 = ps[r].loc[i].t_last > t1 ? ps[r].loc[i].t_last : t1;
			}
	if (t0 > t1)
		t0 = t1 = 0;
	CK(OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000, (uint64_t)t0,
	                                             (uint64_t)(t1 - t0) + 1,
	                                             OTF2_UNDEFINED_TIMESTAMP));
	/* strings: 0 "", 1 machine, 2 node, 3 MPI, 4 world, 5 all processes, then the regions',
	 * the processes', the threads', the communicators' */
	static const char *const fixed[] = {"", "machine", "node", "MPI", "MPI_COMM_WORLD",
	                                    "all processes"};
	uint32_t s = 0;
	char nm[96];
	for (size_t i = 0; i < 6; i++)
		CK(OTF2_GlobalDefWriter_WriteString(gw, s++, fixed[i]));
	uint32_t s_reg = s;
	for (size_t i = 0; i < regs->n; i++)
		CK(OTF2_GlobalDefWriter_WriteString(gw, s++, regs->s[i]));
	CK(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI, 3,
	                                      OTF2_PARADIGM_CLASS_PROCESS));
	CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, 1, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	/* a node of the machine per host the processes ran on (1, 2, ... in order of the ranks) */
	uint32_t *tree = calloc((size_t)size, sizeof(*tree)), nhost = 0;
	if (!tree)
		return err_set(HCLOCK_ENOMEM, "out of memory writing the OTF2 archive");
	for (int r = 0; r < size && !rc; r++) {
		if (!ps[r].host[0])
			continue;
		int q = 0;
		while (q < r && strcmp(ps[q].host, ps[r].host))
			q++;
		if (q < r) {
			tree[r] = tree[q];
			continue;
		}
		tree[r] = ++nhost;
		CK(OTF2_GlobalDefWriter_WriteString(gw, s, ps[r].host));
		CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, nhost, s++, 2, 0));
	}
	for (size_t i = 0; i < regs->n; i++) {
		const char *n = regs->s[i];
		OTF2_RegionRole role = p2p_region(n) ? OTF2_REGION_ROLE_POINT2POINT
		                                     : OTF2_REGION_ROLE_FUNCTION;
		int op;
		if (otf2s_coll_op(n, 0, &op) || otf2s_coll_op(n, 1, &op))
			role = op == OTF2_COLLECTIVE_OP_BARRIER ? OTF2_REGION_ROLE_BARRIER
			                                        : OTF2_REGION_ROLE_COLL_ALL2ALL;
		CK(OTF2_GlobalDefWriter_WriteRegion(gw, (uint32_t)i, s_reg + (uint32_t)i,
		                                    s_reg + (uint32_t)i, 0, role, OTF2_PARADIGM_MPI,
		                                    OTF2_REGION_FLAG_NONE, 0, 0, 0));
	}
	for (int r = 0; r < size && !rc; r++) {
		snprintf(nm, sizeof(nm), "MPI Rank %d", r);
		uint32_t s_rank = s++;
		CK(OTF2_GlobalDefWriter_WriteString(gw, s_rank, nm));
		CK(OTF2_GlobalDefWriter_WriteLocationGroup(gw, (uint32_t)r, s_rank,
		                                           OTF2_LOCATION_GROUP_TYPE_PROCESS, tree[r],
		                                           OTF2_UNDEFINED_LOCATION_GROUP));
		int main_seen = 0;
		for (size_t i = 0; i < ps[r].nloc; i++) {
			const struct ploc *l = &ps[r].loc[i];
			uint32_t sn = s_rank;
			if (l->tid) {
				snprintf(nm, sizeof(nm), "MPI Rank %d thread %d", r, l->tid);
				sn = s++;
				CK(OTF2_GlobalDefWriter_WriteString(gw, sn, nm));
			}
			main_seen |= !l->tid;
			CK(OTF2_GlobalDefWriter_WriteLocation(
			    gw, (OTF2_LocationRef)r * OTF2S_MAX_THREADS + (uint64_t)l->tid, sn,
			    OTF2_LOCATION_TYPE_CPU_THREAD, l->nev, (uint32_t)r));
		}
		if (!main_seen)
			CK(OTF2_GlobalDefWriter_WriteLocation(gw, (OTF2_LocationRef)r * OTF2S_MAX_THREADS,
			                                      s_rank, OTF2_LOCATION_TYPE_CPU_THREAD, 0,
			                                      (uint32_t)r));
	}
	free(tree);
	uint64_t *m = malloc(sizeof(uint64_t) * (size_t)size);
	if (!m)
		return err_set(HCLOCK_ENOMEM, "out of memory writing the OTF2 archive");
	for (int r = 0; r < size; r++)
		m[r] = (uint64_t)r * OTF2S_MAX_THREADS;
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 0, 5, OTF2_GROUP_TYPE_COMM_LOCATIONS,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)size,
	                                   m));
	for (int r = 0; r < size; r++)
		m[r] = (uint64_t)r;
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 1, 4, OTF2_GROUP_TYPE_COMM_GROUP,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)size,
	                                   m));
	free(m);
	/* communicators: ranks are world ranks in the events, so each is described with the
	 * world as its group (its members' own numbering is not needed to read the trace) */
	for (size_t c = 0; c < ncomm; c++) {
		uint32_t sn = 4;
		if (comms[c]) {
			snprintf(nm, sizeof(nm), "comm %016" PRIx64, comms[c]);
			sn = s++;
			CK(OTF2_GlobalDefWriter_WriteString(gw, sn, nm));
		}
		CK(OTF2_GlobalDefWriter_WriteComm(gw, (uint32_t)c, sn, 1, OTF2_UNDEFINED_COMM,
		                                  OTF2_COMM_FLAG_NONE));
	}
	/* metric class 0, one member: the clock's bound half-width, asynchronous (otf2_stream.c
	 * writes a Metric event per sample) */
	uint64_t nbound = 0;
	for (int r = 0; r < size; r++)
		nbound += ps[r].nbound;
	if (nbound && !rc) {
		uint32_t s_b = s++, s_bd = s++, s_ns = s++;
		OTF2_MetricMemberRef mm = 0;
		CK(OTF2_GlobalDefWriter_WriteString(gw, s_b, "clock bound half-width"));
		CK(OTF2_GlobalDefWriter_WriteString(gw, s_bd, "half the width of the global clock's "
		                                    "strict bounds (hclock_read), sampled by the tracer"));
		CK(OTF2_GlobalDefWriter_WriteString(gw, s_ns, "ns"));
		CK(OTF2_GlobalDefWriter_WriteMetricMember(gw, 0, s_b, s_bd, OTF2_METRIC_TYPE_OTHER,
		                                          OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64,
		                                          OTF2_BASE_DECIMAL, 0, s_ns));
		CK(OTF2_GlobalDefWriter_WriteMetricClass(gw, 0, 1, &mm, OTF2_METRIC_ASYNCHRONOUS,
		                                         OTF2_RECORDER_KIND_CPU));
	}
	CK(OTF2_Archive_CloseGlobalDefWriter(ar, gw));
	return rc;
}

/* per location its mapping tables; an empty event file for a rank without a part */
static int local_defs(OTF2_Archive *ar, int size, const struct part *ps, const uint64_t *comms,
                      size_t ncomm)
{
	int rc = 0;
	CK(OTF2_Archive_OpenEvtFiles(ar));
	for (int r = 0; r < size && !rc; r++) {
		if (ps[r].have)
			continue;
		OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, (OTF2_LocationRef)r *
		                                                  OTF2S_MAX_THREADS);
		if (!w)
			return err_set(HCLOCK_EIO, "writing the OTF2 archive: no event writer");
		CK(OTF2_Archive_CloseEvtWriter(ar, w));
	}
	CK(OTF2_Archive_CloseEvtFiles(ar));
	CK(OTF2_Archive_OpenDefFiles(ar));
	for (int r = 0; r < size && !rc; r++) {
		const struct part *p = &ps[r];
		if (!p->have) { /* an empty definition file too: readers open one per location */
			OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, (OTF2_LocationRef)r *
			                                                   OTF2S_MAX_THREADS);
			if (!dw)
				return err_set(HCLOCK_EIO, "writing the OTF2 archive: no definition writer");
			CK(OTF2_Archive_CloseDefWriter(ar, dw));
			continue;
		}
		OTF2_IdMap *mr = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, p->nf ? p->nf : 1);
		OTF2_IdMap *mc = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, p->nc ? p->nc : 1);
		if (!mr || !mc)
			rc = err_set(HCLOCK_ENOMEM, "out of memory writing the OTF2 archive");
		for (size_t i = 0; !rc && i < p->nf; i++)
			CK(OTF2_IdMap_AddIdPair(mr, p->fidx[i], p->freg[i]));
		for (size_t i = 0; !rc && i < p->nc; i++) {
			size_t g = 0;
			while (g < ncomm && comms[g] != p->cid[i])
				g++;
			CK(OTF2_IdMap_AddIdPair(mc, i, g));
		}
		for (size_t i = 0; !rc && i < p->nloc; i++) {
			OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(
			    ar, (OTF2_LocationRef)r * OTF2S_MAX_THREADS + (uint64_t)p->loc[i].tid);
			if (!dw) {
				rc = err_set(HCLOCK_EIO, "writing the OTF2 archive: no definition writer");
				break;
			}
			if (p->nf)
				CK(OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, mr));
			if (p->nc)
				CK(OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_COMM, mc));
			CK(OTF2_Archive_CloseDefWriter(ar, dw));
		}
		if (mr)
			OTF2_IdMap_Free(mr);
		if (mc)
			OTF2_IdMap_Free(mc);
	}
	CK(OTF2_Archive_CloseDefFiles(ar));
	return rc;
}

int otf2s_assemble(const char *dir, int size)
{
	char tmp[4300], path[4400], dst[4400];
	struct part *ps = calloc((size_t)size, sizeof(*ps));
	struct names regs = {0};
	uint64_t *comms = NULL;
	size_t ncomm = 0, ccap = 0;
	int rc = ps ? 0 : err_set(HCLOCK_ENOMEM, "out of memory assembling the OTF2 archive");
	if (!rc && (grow((void **)&comms, 0, &ccap, sizeof(uint64_t)) ||
	            !(comms[ncomm++] = 0, 1)))
		rc = err_set(HCLOCK_ENOMEM, "out of memory assembling the OTF2 archive");
	int any = 0;
	for (int r = 0; r < size && !rc; r++) {
		int k = read_part(dir, r, &ps[r], &regs, &comms, &ncomm, &ccap);
		if (k < 0)
			rc = k;
		any |= k == 0;
	}
	if (!rc && !any) { /* nothing new: whatever archive is there stays */
		free(ps);
		free(comms);
		names_free(&regs);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s/.traces.part", dir);
	rm_rf(tmp);
	if (!rc && mkdir(tmp, 0777))
		rc = err_set(HCLOCK_EIO, "cannot create %s: %s", tmp, strerror(errno));
	OTF2_Archive *ar = NULL;
	if (!rc) {
		ar = OTF2_Archive_Open(tmp, "traces", OTF2_FILEMODE_WRITE, OTF2S_CHUNK,
		                       4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
		if (!ar)
			rc = err_set(HCLOCK_EIO, "cannot open an OTF2 archive in %s", tmp);
	}
	if (ar) {
		CK(OTF2_Archive_SetFlushCallbacks(ar, &flush_cb, NULL));
		CK(OTF2_Archive_SetSerialCollectiveCallbacks(ar));
		CK(OTF2_Archive_SetCreator(ar, "hclock trace"));
		if (!rc)
			rc = local_defs(ar, size, ps, comms, ncomm);
		if (!rc)
			rc = global_defs(ar, size, ps, &regs, comms, ncomm);
		CK(OTF2_Archive_Close(ar));
	}
	/* the processes' event files in */
	snprintf(path, sizeof(path), "%s/traces", tmp);
	if (!rc && mkdir(path, 0777) && errno != EEXIST)
		rc = err_set(HCLOCK_EIO, "cannot create %s: %s", path, strerror(errno));
	for (int r = 0; r < size && !rc; r++)
		for (size_t i = 0; i < ps[r].nloc && !rc; i++) {
			uint64_t l = (uint64_t)r * OTF2S_MAX_THREADS + (uint64_t)ps[r].loc[i].tid;
			snprintf(path, sizeof(path), "%s/parts/otf2.%d/traces/%" PRIu64 ".evt", dir, r, l);
			snprintf(dst, sizeof(dst), "%s/traces/%" PRIu64 ".evt", tmp, l);
			if (rename(path, dst))
				rc = err_set(HCLOCK_EIO, "moving %s into the OTF2 archive: %s", path,
				             strerror(errno));
		}
	/* into place: the old archive out, the data, then the anchor */
	static const char *const parts[] = {"traces", "traces.def", "traces.otf2"};
	for (int i = 2; !rc && i >= 0; i--) {
		snprintf(dst, sizeof(dst), "%s/%s", dir, parts[i]);
		rm_rf(dst);
	}
	for (int i = 0; i < 3 && !rc; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, parts[i]);
		snprintf(dst, sizeof(dst), "%s/%s", dir, parts[i]);
		if (rename(path, dst))
			rc = err_set(HCLOCK_EIO, "moving %s into place: %s", path, strerror(errno));
	}
	rm_rf(tmp);
	for (int r = 0; r < size; r++) {
		if (!rc && ps[r].have) {
			snprintf(path, sizeof(path), "%s/parts/otf2.%d", dir, r);
			rm_rf(path);
			snprintf(path, sizeof(path), "%s/parts/rank.%d.otf2", dir, r);
			remove(path);
		}
		if (ps) {
			free(ps[r].loc);
			free(ps[r].fidx);
			free(ps[r].freg);
			free(ps[r].cid);
		}
	}
	free(ps);
	free(comms);
	names_free(&regs);
	return rc;
}
