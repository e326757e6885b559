/*
 * otf2_out.c - the trace as an OTF2 archive (merge.h, rec_write_otf2): DIR/traces.otf2 with
 * DIR/traces.def and DIR/traces/, readable by otf2-print and by hclock align.
 *
 * One location group ("MPI Rank R") and one location per process; one region per MPI
 * function that occurs; a COMM_LOCATIONS group of all processes and, per communicator seen,
 * a Comm per communicator seen (MPI_COMM_WORLD first), all over the world's group: the
 * records name peers by world rank. Times are the global clock's ns (timer resolution 1 GHz),
 * ClockProperties giving the earliest event as the global offset and the length. Per
 * location, in time order: Enter at a call's start, MpiSend at the start of a send
 * (nonblocking and persistent ones too: the tracer does not record their completion),
 * MpiRecv where a receive completed, MpiCollectiveBegin/End around a blocking collective,
 * Leave at the call's end, Metric (class 0: the clock's bound half-width, ns, asynchronous)
 * at each of the tracer's bound samples. A nonblocking collective (REC_F_NB) is a
 * NonBlockingCollectiveRequest just after the Enter of the call that started it and a
 * NonBlockingCollectiveComplete (operation, communicator, root, bytes, the same request id:
 * the record's index) just before the Leave of the call that completed it (in flight
 * together, they overlap one another: MpiCollectiveBegin/End, without an id and within one
 * region, could not say which is which).
 *
 * Written serially into DIR/.traces.part, then moved into place, the anchor file last: a
 * reader never sees half an archive.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "hclock_api.h"
#include "trace/merge.h"
#include "util/err.h"

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *cd,
                                bool final)
{
	(void)u, (void)ft, (void)l, (void)cd, (void)final;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_cb = {.otf2_pre_flush = pre_flush, .otf2_post_flush = NULL};

/* ---- a small string table ---------------------------------------------------------------- */

struct strtab {
	char **s;
	size_t n, cap;
};

static uint32_t str_id(struct strtab *t, const char *s)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->s[i], s))
			return (uint32_t)i;
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		char **p = realloc(t->s, nc * sizeof(*p));
		if (!p)
			return 0;
		t->s = p;
		t->cap = nc;
	}
	t->s[t->n] = strdup(s);
	return (uint32_t)t->n++;
}

/* ---- per-location events in time order -------------------------------------------------- */

enum { E_METRIC, E_ENTER, E_SEND, E_COLLB, E_RECV, E_COLLE, E_LEAVE };

struct oev {
	int64_t t;
	int cls;      /* order at equal times: enter, send, begin, recv, end, leave */
	size_t rec;   /* record index (ties: record order); E_METRIC: index in the bound samples */
};

static int cmp_oev(const void *a, const void *b)
{
	const struct oev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* the collective operation of an MPI function name; 0 if it is not one of the recorded
 * collectives (nb: the nonblocking one's name, MPI_Iallreduce for MPI_Allreduce) */
static int coll_op(const char *name, int nb, OTF2_CollectiveOp *op)
{
	static const struct {
		const char *n;
		OTF2_CollectiveOp op;
	} t[] = {{"MPI_Barrier", OTF2_COLLECTIVE_OP_BARRIER},
	         {"MPI_Bcast", OTF2_COLLECTIVE_OP_BCAST},
	         {"MPI_Gather", OTF2_COLLECTIVE_OP_GATHER},
	         {"MPI_Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
	         {"MPI_Scatter", OTF2_COLLECTIVE_OP_SCATTER},
	         {"MPI_Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
	         {"MPI_Allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
	         {"MPI_Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
	         {"MPI_Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
	         {"MPI_Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
	         {"MPI_Reduce", OTF2_COLLECTIVE_OP_REDUCE},
	         {"MPI_Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
	         {"MPI_Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
	         {"MPI_Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
	         {"MPI_Scan", OTF2_COLLECTIVE_OP_SCAN},
	         {"MPI_Exscan", OTF2_COLLECTIVE_OP_EXSCAN}};
	if (nb && strncmp(name, "MPI_I", 5))
		return 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (nb ? !strcasecmp(t[i].n + 4, name + 5) : !strcmp(t[i].n, name)) {
			*op = t[i].op;
			return 1;
		}
	return 0;
}

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

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

static void rm_rf(const char *p)
{
	nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

#define CK(x)                                                                                 \
	do {                                                                                      \
		OTF2_ErrorCode e_ = (x);                                                              \
		if (e_ != OTF2_SUCCESS && !rc) {                                                      \
			rc = err_set(HCLOCK_EIO, "writing the OTF2 archive: %s: %s", #x,                  \
			             OTF2_Error_GetName(e_));                                             \
		}                                                                                     \
	} while (0)

int rec_write_otf2(const struct rec_set *ts, const char *dir)
{
	char tmp[4300], path[4400], dst[4400];
	snprintf(tmp, sizeof(tmp), "%s/.traces.part", dir);
	rm_rf(tmp);
	if (mkdir(tmp, 0777))
		return err_set(HCLOCK_EIO, "cannot create %s: %s", tmp, strerror(errno));
	int rc = 0;
	OTF2_Archive *ar = OTF2_Archive_Open(tmp, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
	                                     4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
	                                     OTF2_COMPRESSION_NONE);
	if (!ar)
		return err_set(HCLOCK_EIO, "cannot open an OTF2 archive in %s", tmp);
	CK(OTF2_Archive_SetFlushCallbacks(ar, &flush_cb, NULL));
	CK(OTF2_Archive_SetSerialCollectiveCallbacks(ar));
	CK(OTF2_Archive_SetCreator(ar, "hclock trace"));
	CK(OTF2_Archive_OpenEvtFiles(ar));
	/* regions: per function name; comms: per id (index = OTF2 ref; 0 = world) */
	struct strtab regions = {0};
	uint64_t *comm_ids = malloc(sizeof(uint64_t) * 64);
	size_t ncomm = 1, ccap = 64;
	if (!comm_ids) {
		OTF2_Archive_Close(ar);
		return err_set(HCLOCK_ENOMEM, "out of memory");
	}
	comm_ids[0] = 0;
	uint64_t *nevents = calloc((size_t)ts->size, sizeof(uint64_t)), nbound = 0;
	for (int r = 0; r < ts->size && !rc; r++) {
		const struct rec_proc *p = &ts->p[r];
		OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, (OTF2_LocationRef)r);
		if (!w) {
			rc = err_set(HCLOCK_EIO, "OTF2: no event writer for location %d", r);
			break;
		}
		struct oev *v = malloc((p->nrec * 2 + p->nbound + 1) * sizeof(*v));
		size_t nv = 0;
		for (size_t i = 0; v && i < p->nbound; i++)
			v[nv++] = (struct oev){p->bound[i].t_g, E_METRIC, i};
		nbound += p->nbound;
		for (size_t i = 0; v && i < p->nrec; i++) {
			const struct rec *x = &p->rec[i];
			switch (x->kind) {
			case REC_CALL:
				v[nv++] = (struct oev){x->t_g, E_ENTER, i};
				v[nv++] = (struct oev){x->t2_g, E_LEAVE, i};
				break;
			case REC_COLL:
				if (x->flags & REC_F_NB) { /* inside the calls that start and complete it */
					v[nv++] = (struct oev){x->t_g, E_COLLB, i};
					v[nv++] = (struct oev){x->t2_g, E_COLLE, i};
				} else {
					v[nv++] = (struct oev){x->t_g, E_ENTER, i};
					v[nv++] = (struct oev){x->t2_g, E_LEAVE, i};
				}
				break;
			case REC_SEND:
				v[nv++] = (struct oev){x->t_g, E_SEND, i};
				break;
			case REC_RECV:
				v[nv++] = (struct oev){x->t_g, E_RECV, i};
				break;
			}
		}
		if (!v) {
			rc = err_set(HCLOCK_ENOMEM, "out of memory");
			break;
		}
		qsort(v, nv, sizeof(*v), cmp_oev);
		for (size_t k = 0; k < nv && !rc; k++) {
			OTF2_TimeStamp t = (OTF2_TimeStamp)(v[k].t > 0 ? v[k].t : 0);
			if (v[k].cls == E_METRIC) { /* the clock's bound half-width, ns */
				const struct rec *b = &p->bound[v[k].rec];
				OTF2_Type ty = OTF2_TYPE_INT64;
				OTF2_MetricValue mv = {.signed_int = (b->t2_l - b->t2_g) / 2};
				CK(OTF2_EvtWriter_Metric(w, NULL, t, 0, 1, &ty, &mv));
				continue;
			}
			const struct rec *x = &p->rec[v[k].rec];
			/* the communicator's ref */
			size_t c = 0;
			if (x->kind != REC_CALL) {
				while (c < ncomm && comm_ids[c] != x->comm)
					c++;
				if (c == ncomm) {
					uint64_t *nc = ncomm == ccap ? realloc(comm_ids, 2 * ccap * sizeof(*nc))
					                             : comm_ids;
					if (!nc) {
						rc = err_set(HCLOCK_ENOMEM, "out of memory");
						break;
					}
					ccap = nc == comm_ids ? ccap : 2 * ccap;
					comm_ids = nc;
					comm_ids[ncomm++] = x->comm;
				}
			}
			uint32_t reg = str_id(&regions, rec_func_name(p, x));
			switch (v[k].cls) {
			case E_ENTER: {
				OTF2_CollectiveOp op;
				CK(OTF2_EvtWriter_Enter(w, NULL, t, reg));
				if (x->kind == REC_COLL && coll_op(rec_func_name(p, x), 0, &op))
					CK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t));
				break;
			}
			case E_LEAVE: {
				OTF2_CollectiveOp op = OTF2_COLLECTIVE_OP_BARRIER;
				if (x->kind == REC_COLL && coll_op(rec_func_name(p, x), 0, &op))
					CK(OTF2_EvtWriter_MpiCollectiveEnd(
					    w, NULL, t, op, (OTF2_CommRef)c,
					    x->peer >= 0 ? (uint32_t)x->peer : OTF2_UNDEFINED_UINT32, x->bytes,
					    x->bytes));
				CK(OTF2_EvtWriter_Leave(w, NULL, t, reg));
				break;
			}
			case E_COLLB: {
				OTF2_CollectiveOp op;
				if (coll_op(rec_func_name(p, x), 1, &op))
					CK(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t, v[k].rec));
				break;
			}
			case E_COLLE: {
				OTF2_CollectiveOp op;
				if (coll_op(rec_func_name(p, x), 1, &op))
					CK(OTF2_EvtWriter_NonBlockingCollectiveComplete(
					    w, NULL, t, op, (OTF2_CommRef)c,
					    x->peer >= 0 ? (uint32_t)x->peer : OTF2_UNDEFINED_UINT32, x->bytes,
					    x->bytes, v[k].rec));
				break;
			}
			case E_SEND:
				if (x->peer >= 0)
					CK(OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)x->peer, (OTF2_CommRef)c,
					                          (uint32_t)x->tag, x->bytes));
				break;
			case E_RECV:
				if (x->peer >= 0)
					CK(OTF2_EvtWriter_MpiRecv(w, NULL, t, (uint32_t)x->peer, (OTF2_CommRef)c,
					                          (uint32_t)x->tag, x->bytes));
				break;
			}
		}
		free(v);
		uint64_t n = 0;
		OTF2_EvtWriter_GetNumberOfEvents(w, &n);
		nevents[r] = n;
		CK(OTF2_Archive_CloseEvtWriter(ar, w));
	}
	CK(OTF2_Archive_CloseEvtFiles(ar));
	/* definitions */
	CK(OTF2_Archive_OpenDefFiles(ar));
	for (int r = 0; r < ts->size; r++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, (OTF2_LocationRef)r);
		if (dw)
			CK(OTF2_Archive_CloseDefWriter(ar, dw));
	}
	CK(OTF2_Archive_CloseDefFiles(ar));
	OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
	int64_t tmax = ts->t0_g;
	for (int r = 0; r < ts->size; r++)
		for (size_t i = 0; i < ts->p[r].nrec; i++) {
			const struct rec *x = &ts->p[r].rec[i];
			int64_t e = x->kind == REC_CALL || x->kind == REC_COLL ? x->t2_g : x->t_g;
			tmax = e > tmax ? e : tmax;
		}
	CK(OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000, (uint64_t)(ts->t0_g > 0 ? ts->t0_g : 0),
	                                             (uint64_t)(tmax - ts->t0_g) + 1,
	                                             OTF2_UNDEFINED_TIMESTAMP));
	struct strtab strs = {0};
	uint32_t s_empty = str_id(&strs, ""), s_machine = str_id(&strs, "machine"),
	         s_node = str_id(&strs, "node"), s_mpi = str_id(&strs, "MPI"),
	         s_world = str_id(&strs, "MPI_COMM_WORLD"), s_locs = str_id(&strs, "all processes"),
	         s_bound = str_id(&strs, "clock bound half-width"),
	         s_bound_d = str_id(&strs, "half the width of the global clock's strict bounds "
	                                   "(hclock_read), sampled by the tracer"),
	         s_ns = str_id(&strs, "ns");
	uint32_t *reg_str = calloc(regions.n + 1, sizeof(uint32_t));
	for (size_t i = 0; reg_str && i < regions.n; i++)
		reg_str[i] = str_id(&strs, regions.s[i]);
	uint32_t *rank_str = calloc((size_t)ts->size, sizeof(uint32_t));
	for (int r = 0; rank_str && r < ts->size; r++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "MPI Rank %d", r);
		rank_str[r] = str_id(&strs, nm);
	}
	uint32_t *comm_str = calloc(ncomm, sizeof(uint32_t));
	for (size_t c = 1; comm_str && c < ncomm; c++) {
		char nm[48];
		snprintf(nm, sizeof(nm), "comm %016" PRIx64, comm_ids[c]);
		comm_str[c] = str_id(&strs, nm);
	}
	for (size_t i = 0; i < strs.n; i++)
		CK(OTF2_GlobalDefWriter_WriteString(gw, (uint32_t)i, strs.s[i]));
	CK(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI, s_mpi,
	                                      OTF2_PARADIGM_CLASS_PROCESS));
	CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, s_machine, s_node,
	                                            OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	for (size_t i = 0; reg_str && i < regions.n; i++) {
		const char *n = regions.s[i];
		OTF2_RegionRole role = p2p_region(n) ? OTF2_REGION_ROLE_POINT2POINT
		                                     : OTF2_REGION_ROLE_FUNCTION;
		OTF2_CollectiveOp op;
		if (coll_op(n, 0, &op) || coll_op(n, 1, &op))
			role = op == OTF2_COLLECTIVE_OP_BARRIER ? OTF2_REGION_ROLE_BARRIER
			                                        : OTF2_REGION_ROLE_COLL_ALL2ALL;
		CK(OTF2_GlobalDefWriter_WriteRegion(gw, (uint32_t)i, reg_str[i], reg_str[i], s_empty,
		                                    role, OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
		                                    s_empty, 0, 0));
	}
	if (nbound) { /* metric class 0, one member: the bound's half-width, asynchronous */
		OTF2_MetricMemberRef mm = 0;
		CK(OTF2_GlobalDefWriter_WriteMetricMember(gw, 0, s_bound, s_bound_d,
		                                          OTF2_METRIC_TYPE_OTHER,
		                                          OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64,
		                                          OTF2_BASE_DECIMAL, 0, s_ns));
		CK(OTF2_GlobalDefWriter_WriteMetricClass(gw, 0, 1, &mm, OTF2_METRIC_ASYNCHRONOUS,
		                                         OTF2_RECORDER_KIND_CPU));
	}
	for (int r = 0; rank_str && r < ts->size; r++) {
		CK(OTF2_GlobalDefWriter_WriteLocationGroup(gw, (uint32_t)r, rank_str[r],
		                                           OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
		                                           OTF2_UNDEFINED_LOCATION_GROUP));
		CK(OTF2_GlobalDefWriter_WriteLocation(gw, (OTF2_LocationRef)r, rank_str[r],
		                                      OTF2_LOCATION_TYPE_CPU_THREAD, nevents[r],
		                                      (uint32_t)r));
	}
	uint64_t *all = malloc(sizeof(uint64_t) * (size_t)ts->size);
	for (int r = 0; all && r < ts->size; r++)
		all[r] = (uint64_t)r;
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 0, s_locs, OTF2_GROUP_TYPE_COMM_LOCATIONS,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
	                                   (uint32_t)ts->size, all));
	CK(OTF2_GlobalDefWriter_WriteGroup(gw, 1, s_world, OTF2_GROUP_TYPE_COMM_GROUP,
	                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
	                                   (uint32_t)ts->size, all));
	CK(OTF2_GlobalDefWriter_WriteComm(gw, 0, s_world, 1, OTF2_UNDEFINED_COMM,
	                                  OTF2_COMM_FLAG_NONE));
	/* other communicators: ranks are world ranks in the records, so each is described with
	 * the world as its group (its members' own numbering is not needed to read the trace) */
	for (size_t c = 1; comm_str && c < ncomm; c++)
		CK(OTF2_GlobalDefWriter_WriteComm(gw, (uint32_t)c, comm_str[c], 1, OTF2_UNDEFINED_COMM,
		                                  OTF2_COMM_FLAG_NONE));
	CK(OTF2_Archive_CloseGlobalDefWriter(ar, gw));
	CK(OTF2_Archive_Close(ar));
	for (size_t i = 0; i < strs.n; i++)
		free(strs.s[i]);
	for (size_t i = 0; i < regions.n; i++)
		free(regions.s[i]);
	free(strs.s);
	free(regions.s);
	free(reg_str);
	free(rank_str);
	free(comm_str);
	free(comm_ids);
	free(nevents);
	free(all);
	if (rc) {
		rm_rf(tmp);
		return rc;
	}
	/* into place: the old archive out, the data, then the anchor */
	static const char *const parts[] = {"traces", "traces.def", "traces.otf2"};
	for (int i = 2; i >= 0; i--) {
		snprintf(dst, sizeof(dst), "%s/%s", dir, parts[i]);
		rm_rf(dst);
	}
	for (int i = 0; i < 3 && !rc; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, parts[i]);
		snprintf(dst, sizeof(dst), "%s/%s", dir, parts[i]);
		if (rename(path, dst)) {
			rc = err_set(HCLOCK_EIO, "moving %s into place: %s", path, strerror(errno));
		}
	}
	rm_rf(tmp);
	return rc;
}
