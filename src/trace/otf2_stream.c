/*
 * otf2_stream.c - one process's OTF2 event files as its records come (otf2_stream.h).
 *
 * One location per thread of the process. Per location, in time order: Enter at a call's
 * start, MpiSend at the start of a send (nonblocking and persistent ones too: the tracer
 * does not record their completion), MpiRecv where a receive completed, MpiCollectiveBegin
 * and End around a blocking collective, Leave at the call's end. A nonblocking collective is
 * a NonBlockingCollectiveRequest just after the Enter of the call that started it (written
 * from that call's record: an MPI_I<collective> function) and a NonBlockingCollectiveComplete
 * (operation, communicator, root, bytes) just before the Leave of the call that completed
 * it, their request id the start's enter time in ns (one thread's calls never start at the
 * same ns). Both are on the location of the thread that started it, where OTF2's readers pair
 * them by that id: a request completed by another thread's call (MPI_THREAD_MULTIPLE) has its
 * Complete at that call's leave time on the starting thread's location (held there, up to
 * MAX_DUE, until that location's next event after it, so that its time order holds), and
 * nothing of it on the completing one's but the call's Enter and Leave. Peers are world
 * ranks: every communicator is described over the world (the launcher's definitions).
 *
 * The records of a thread come in the order they were made, which is time order but for
 * three things, each put right with at most a few records held:
 *  - a call's record comes at its end, after the sends it started (recorded at their start):
 *    the sends are held (up to MAX_PENDING) until the call's record gives its Enter; but a
 *    persistent send's record comes after its MPI_Start(all)'s (at that call's enter): it is
 *    written inside the held call;
 *  - the receives (and nonblocking collectives) a call completed come after its record, at
 *    its leave time: the call's Leave is held until the thread's next record;
 *  - a nonblocking collective's record (made where it completed) carries its start's time:
 *    its Request was already written from the start call's record.
 * A time still before the location's previous one (a sends' overflow, a cut file) is raised
 * to it: OTF2's readers need each location in time order.
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

#include <otf2/otf2.h>

#include "hclock_api.h"
#include "trace/otf2_stream.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/path.h"

#define MAX_PENDING 64 /* sends held per thread waiting for their call's record */
#define POOL_CHUNKS 2  /* OTF2 chunks in memory per location */
#define MAX_DUE 16     /* another thread's completions of this one's requests held */
#define MAX_SAMPLES 8  /* bound samples held per thread behind a held call (a receive that
                          blocked for long has two: at its enter and at its leave) */

struct otf2s;

struct loc {
	struct otf2s *o;
	OTF2_EvtWriter *w;
	uint64_t t_last;      /* the location's latest time written, ns */
	int64_t t_first;      /* its first event's time, ns */
	struct rec send[MAX_PENDING];
	int nsend;
	int held;             /* a call's Leave held: hold its record */
	struct rec hold;
	int nb;               /* bound samples waiting for the first event later than them */
	struct {
		int64_t t_ns, hw_ns; /* its time and half-width */
	} bq[MAX_SAMPLES];    /* ... in time order */
	struct rec due[MAX_DUE]; /* nonblocking collectives started here and completed by
	                          another thread, by completion time (t2_g): written before
	                          this location's first event at or after it */
	int ndue;
};

struct otf2s {
	int rank;
	char host[40];        /* "": not known */
	uint32_t nfuncs;
	char **names;
	uint8_t *used;        /* per function: a region used */
	int8_t *op;           /* per function: its collective op + 1 (blocking or not), 0 none */
	uint8_t *nb;          /* per function: a nonblocking collective's start */
	char dir[4200];
	OTF2_Archive *ar;
	struct loc *loc[OTF2S_MAX_THREADS];
	uint64_t *comm;       /* the communicators' ids by local ref */
	size_t ncomm, ccap;
	uint64_t nbound;      /* Metric events written (the clock's bound samples) */
	int err;              /* the first OTF2 error */
	char errs[200];
};

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *cd,
                                bool final)
{
	(void)u, (void)ft, (void)l, (void)cd, (void)final;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_cb = {.otf2_pre_flush = pre_flush, .otf2_post_flush = NULL};

/* OTF2 keeps a writer's chunks in memory until it is closed unless its allocator says no:
 * then it writes them out and frees them. Each event writer gets POOL_CHUNKS at a time. */
struct pool {
	void *c[POOL_CHUNKS];
	int n;
};

static void *pool_alloc(void *u, OTF2_FileType ft, OTF2_LocationRef l, void **pb, uint64_t size)
{
	(void)u, (void)ft, (void)l;
	struct pool *p = *pb;
	if (!p && !(p = *pb = calloc(1, sizeof(*p))))
		return NULL;
	if (p->n == POOL_CHUNKS || !(p->c[p->n] = malloc(size)))
		return NULL;
	return p->c[p->n++];
}

static void pool_free_all(void *u, OTF2_FileType ft, OTF2_LocationRef l, void **pb, bool final)
{
	(void)u, (void)ft, (void)l;
	struct pool *p = *pb;
	if (!p)
		return;
	while (p->n > 0)
		free(p->c[--p->n]);
	if (final) {
		free(p);
		*pb = NULL;
	}
}

static OTF2_MemoryCallbacks mem_cb = {.otf2_allocate = pool_alloc,
                                      .otf2_free_all = pool_free_all};

int otf2s_coll_op(const char *name, int nb, int *op)
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

static void ck(struct otf2s *o, OTF2_ErrorCode e, const char *what)
{
	if (e != OTF2_SUCCESS && !o->err) {
		o->err = 1;
		snprintf(o->errs, sizeof(o->errs), "%s: %s", what, OTF2_Error_GetName(e));
	}
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

int otf2s_open(const char *dir, int rank, const char *host, uint32_t nfuncs,
               const char *const *names, struct otf2s **out)
{
	*out = NULL;
	struct otf2s *o = calloc(1, sizeof(*o));
	if (!o)
		return err_set(HCLOCK_ENOMEM, "out of memory for the OTF2 part");
	o->rank = rank;
	snprintf(o->host, sizeof(o->host), "%s", host ? host : "");
	o->nfuncs = nfuncs;
	snprintf(o->dir, sizeof(o->dir), "%s", dir);
	size_t nf = nfuncs ? nfuncs : 1;
	o->names = calloc(nf, sizeof(char *));
	o->used = calloc(nf, 1);
	o->op = calloc(nf, 1);
	o->nb = calloc(nf, 1);
	int rc = o->names && o->used && o->op && o->nb ? 0 : HCLOCK_ENOMEM;
	for (uint32_t i = 0; !rc && i < nfuncs; i++) {
		const char *n = names[i] ? names[i] : "?";
		int op;
		if (!(o->names[i] = strdup(n)))
			rc = HCLOCK_ENOMEM;
		else if (otf2s_coll_op(n, 0, &op))
			o->op[i] = (int8_t)(op + 1);
		else if (otf2s_coll_op(n, 1, &op))
			o->op[i] = (int8_t)(op + 1), o->nb[i] = 1;
	}
	if (rc) {
		otf2s_close(o);
		return err_set(HCLOCK_ENOMEM, "out of memory for the OTF2 part");
	}
	char path[4300];
	snprintf(path, sizeof(path), "%s/parts/otf2.%d", dir, rank);
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (path_mkdirs(path)) {
		rc = err_set(HCLOCK_EIO, "cannot create %s: %s", path, strerror(errno));
		otf2s_close(o);
		return rc;
	}
	o->ar = OTF2_Archive_Open(path, "traces", OTF2_FILEMODE_WRITE, OTF2S_CHUNK,
	                          4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!o->ar) {
		otf2s_close(o);
		return err_set(HCLOCK_EIO, "cannot open an OTF2 archive in %s", path);
	}
	ck(o, OTF2_Archive_SetFlushCallbacks(o->ar, &flush_cb, NULL), "flush callbacks");
	/* HCLOCK_FAULT at=unbounded (tests only): OTF2's own allocation, every chunk kept until
	 * the end, to prove the test of the memory bound bites */
	fault_init(0); /* an MPI process has read it with its rank already */
	if (!fault_mode(FAULT_UNBOUNDED))
		ck(o, OTF2_Archive_SetMemoryCallbacks(o->ar, &mem_cb, NULL), "memory callbacks");
	ck(o, OTF2_Archive_SetSerialCollectiveCallbacks(o->ar), "collective callbacks");
	ck(o, OTF2_Archive_OpenEvtFiles(o->ar), "opening the event files");
	if (o->err) {
		rc = err_set(HCLOCK_EIO, "%s: OTF2 %s", path, o->errs);
		otf2s_close(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* the location of thread t, opened at its first event */
static struct loc *loc_at(struct otf2s *o, uint32_t t)
{
	if (t >= OTF2S_MAX_THREADS)
		t = OTF2S_MAX_THREADS - 1;
	if (o->loc[t])
		return o->loc[t]->w ? o->loc[t] : NULL;
	struct loc *l = o->loc[t] = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->t_first = INT64_MIN;
	l->o = o;
	l->w = OTF2_Archive_GetEvtWriter(
	    o->ar, (OTF2_LocationRef)o->rank * OTF2S_MAX_THREADS + t);
	if (!l->w)
		ck(o, OTF2_ERROR_INVALID, "no event writer");
	return l->w ? l : NULL;
}

/* the communicator's local ref */
static uint32_t comm_ref(struct otf2s *o, uint64_t id)
{
	for (size_t i = o->ncomm; i-- > 0;)
		if (o->comm[i] == id)
			return (uint32_t)i;
	if (o->ncomm == o->ccap) {
		size_t nc = o->ccap ? 2 * o->ccap : 16;
		uint64_t *p = realloc(o->comm, nc * sizeof(*p));
		if (!p) {
			ck(o, OTF2_ERROR_MEM_ALLOC_FAILED, "communicators");
			return 0;
		}
		o->comm = p;
		o->ccap = nc;
	}
	o->comm[o->ncomm] = id;
	return (uint32_t)o->ncomm++;
}

/* a time for location l: not before its previous one */
static OTF2_TimeStamp stamp(struct loc *l, int64_t t)
{
	uint64_t u = t > 0 ? (uint64_t)t : 0;
	if (l->t_first == INT64_MIN)
		l->t_first = (int64_t)u;
	if (u < l->t_last)
		u = l->t_last;
	l->t_last = u;
	return u;
}

static uint32_t root(const struct rec *r)
{
	return r->peer >= 0 ? (uint32_t)r->peer : OTF2_UNDEFINED_UINT32;
}

/* nonblocking collective r's Complete on l, at its completion (t2_g); its request id the
 * start's time */
static void nbc_complete(struct otf2s *o, struct loc *l, const struct rec *r, OTF2_TimeStamp t)
{
	ck(o, OTF2_EvtWriter_NonBlockingCollectiveComplete(
	          l->w, NULL, t, (OTF2_CollectiveOp)(o->op[r->func] - 1), comm_ref(o, r->comm),
	          root(r), r->bytes, r->bytes, (uint64_t)r->t_g),
	   "NonBlockingCollectiveComplete");
}

/* l's held completions due by time t (all: INT64_MAX), in time order */
static void due_until(struct loc *l, int64_t t)
{
	int k = 0;
	while (k < l->ndue && l->due[k].t2_g <= t) {
		nbc_complete(l->o, l, &l->due[k], stamp(l, l->due[k].t2_g));
		k++;
	}
	if (k) {
		memmove(l->due, l->due + k, (size_t)(l->ndue - k) * sizeof(l->due[0]));
		l->ndue -= k;
	}
}

static void metric(struct otf2s *o, struct loc *l);

/* a time for an event of location l: another thread's completions due before it first, and
 * the pending bound sample when it is earlier (read just after a call's enter, it goes after
 * the sends made at that enter, whose records carry the enter's time: written before them,
 * it had raised them to its own time, and traces.otf2 disagreed with trace.json) */
static OTF2_TimeStamp at(struct loc *l, int64_t t)
{
	if (l->ndue)
		due_until(l, t);
	while (l->nb && l->bq[0].t_ns < t)
		metric(l->o, l);
	return stamp(l, t);
}

/* another thread completed nonblocking collective r, started on l: held on l in time order
 * (the oldest written now if MAX_DUE are held) */
static void due_add(struct loc *l, const struct rec *r)
{
	if (l->ndue == MAX_DUE)
		due_until(l, l->due[0].t2_g);
	int k = l->ndue++;
	while (k > 0 && l->due[k - 1].t2_g > r->t2_g) {
		l->due[k] = l->due[k - 1];
		k--;
	}
	l->due[k] = *r;
}

static void send_ev(struct otf2s *o, struct loc *l, const struct rec *r)
{
	if (r->peer >= 0)
		ck(o, OTF2_EvtWriter_MpiSend(l->w, NULL, at(l, r->t_g), (uint32_t)r->peer,
		                             comm_ref(o, r->comm), (uint32_t)r->tag, r->bytes),
		   "MpiSend");
}

static void region(struct otf2s *o, uint16_t f)
{
	if (f < o->nfuncs)
		o->used[f] = 1;
}

/* the pending bound sample as a Metric event (class 0, otf2_assemble.c) */
static void metric(struct otf2s *o, struct loc *l)
{
	if (!l->nb)
		return;
	OTF2_Type ty = OTF2_TYPE_INT64;
	OTF2_MetricValue mv = {.signed_int = l->bq[0].hw_ns};
	int64_t t = l->bq[0].t_ns;
	memmove(&l->bq[0], &l->bq[1], (size_t)--l->nb * sizeof l->bq[0]);
	ck(o, OTF2_EvtWriter_Metric(l->w, NULL, at(l, t), 0, 1, &ty, &mv), "Metric");
	o->nbound++;
}

/* the held call's end: MpiCollectiveEnd for a blocking collective, then its Leave */
static void release(struct otf2s *o, struct loc *l)
{
	if (!l->held)
		return;
	const struct rec *c = &l->hold;
	OTF2_TimeStamp t = at(l, c->t2_g);
	if (c->kind == REC_COLL && c->func < o->nfuncs && o->op[c->func] && !o->nb[c->func])
		ck(o, OTF2_EvtWriter_MpiCollectiveEnd(l->w, NULL, t,
		                                      (OTF2_CollectiveOp)(o->op[c->func] - 1),
		                                      comm_ref(o, c->comm), root(c), c->bytes,
		                                      c->bytes), "MpiCollectiveEnd");
	ck(o, OTF2_EvtWriter_Leave(l->w, NULL, t, c->func), "Leave");
	l->held = 0;
}

static void flush_sends(struct otf2s *o, struct loc *l)
{
	for (int i = 0; i < l->nsend; i++)
		send_ev(o, l, &l->send[i]);
	l->nsend = 0;
}

/* a call (or a blocking collective): its Enter, a nonblocking collective's Request, the
 * sends it started (the bound sample taken at its enter follows, written by at() before the
 * first event later than it); its end held */
static void call(struct otf2s *o, struct loc *l, const struct rec *r)
{
	release(o, l);
	region(o, r->func);
	OTF2_TimeStamp t = at(l, r->t_g);
	ck(o, OTF2_EvtWriter_Enter(l->w, NULL, t, r->func), "Enter");
	int coll = r->func < o->nfuncs && o->op[r->func];
	if (r->kind == REC_COLL && coll && !o->nb[r->func])
		ck(o, OTF2_EvtWriter_MpiCollectiveBegin(l->w, NULL, t), "MpiCollectiveBegin");
	if (r->kind == REC_CALL && coll && o->nb[r->func])
		ck(o, OTF2_EvtWriter_NonBlockingCollectiveRequest(l->w, NULL, t, (uint64_t)r->t_g),
		   "NonBlockingCollectiveRequest");
	flush_sends(o, l);
	l->held = 1;
	l->hold = *r;
}

void otf2s_feed(struct otf2s *o, const struct rec *r, size_t n)
{
	if (!o)
		return;
	for (size_t i = 0; i < n; i++, r++) {
		if (r->kind == REC_BOUND && (r->t2_g || r->t2_l)) {
			/* the clock's bound half-width, ns: metric class 0 (otf2_assemble.c); sampled
			 * at a call's enter, after the previous call's end */
			struct loc *l = loc_at(o, r->tid);
			if (!l)
				continue;
			/* it was read at a call's enter, after the call's start, and its record comes
			 * before the call's: it waits for that call's Enter and the sends made at it
			 * (at() writes it before the first event later than it: written at once, a
			 * later Enter would be moved to its time). Samples not written yet (their call's
			 * later events not come yet, or the call filtered out) go first, but not past a
			 * held call's end (they would move its Leave later): those wait with it, up to
			 * MAX_SAMPLES (beyond, the newest is replaced). */
			while (l->nb && (!l->held || l->bq[0].t_ns <= l->hold.t2_g))
				metric(o, l);
			if (l->nb == MAX_SAMPLES)
				l->nb--;
			l->bq[l->nb].t_ns = r->t_g;
			l->bq[l->nb].hw_ns = (r->t2_l - r->t2_g) / 2;
			l->nb++;
			continue;
		}
		if (r->kind < REC_CALL || r->kind > REC_COLL)
			continue;
		struct loc *l = loc_at(o, r->tid);
		if (!l)
			continue;
		/* what a held call completed comes at its leave time, before its Leave; a persistent
		 * send's record comes after its MPI_Start(all)'s, at that call's enter */
		int sent = l->held && r->kind == REC_SEND && r->func == l->hold.func &&
		           r->t_g >= l->hold.t_g && r->t_g <= l->hold.t2_g;
		int in_held = sent || (l->held &&
		              ((r->kind == REC_RECV && r->t_g == l->hold.t2_g &&
		                r->func == l->hold.func) ||
		               (r->kind == REC_COLL && r->flags & REC_F_NB && r->t2_g == l->hold.t2_g)));
		if (l->held && !in_held)
			release(o, l);
		switch (r->kind) {
		case REC_SEND:
			if (sent) {
				send_ev(o, l, r);
				break;
			}
			if (l->nsend == MAX_PENDING)
				flush_sends(o, l);
			l->send[l->nsend++] = *r;
			break;
		case REC_RECV:
			flush_sends(o, l);
			if (r->peer >= 0)
				ck(o, OTF2_EvtWriter_MpiRecv(l->w, NULL, at(l, r->t_g), (uint32_t)r->peer,
				                             comm_ref(o, r->comm), (uint32_t)r->tag,
				                             r->bytes), "MpiRecv");
			break;
		case REC_COLL:
			if (r->flags & REC_F_NB) {
				if (r->func >= o->nfuncs || !o->nb[r->func])
					break;
				struct loc *s = r->flags & REC_F_TID && (uint32_t)r->tag != r->tid
				                    ? loc_at(o, (uint32_t)r->tag) : l;
				if (s == l)
					nbc_complete(o, l, r, at(l, r->t2_g));
				else if (s)
					due_add(s, r);
				break;
			}
			call(o, l, r);
			break;
		case REC_CALL:
			call(o, l, r);
			break;
		}
	}
}

int otf2s_close(struct otf2s *o)
{
	if (!o)
		return 0;
	char path[4300];
	uint64_t nev[OTF2S_MAX_THREADS] = {0};
	for (int t = 0; t < OTF2S_MAX_THREADS; t++) {
		struct loc *l = o->loc[t];
		if (!l || !l->w)
			continue;
		release(o, l);
		while (l->nb)
			metric(o, l); /* samples whose call's record was lost */
		flush_sends(o, l); /* a file cut short: sends whose call's record was lost */
		due_until(l, INT64_MAX);
		OTF2_EvtWriter_GetNumberOfEvents(l->w, &nev[t]);
		ck(o, OTF2_Archive_CloseEvtWriter(o->ar, l->w), "closing an event file");
	}
	if (o->ar) {
		ck(o, OTF2_Archive_CloseEvtFiles(o->ar), "closing the event files");
		ck(o, OTF2_Archive_Close(o->ar), "closing the archive");
	}
	int rc = 0;
	if (o->ar && o->err)
		rc = err_set(HCLOCK_EIO, "rank %d's OTF2 part in %s/parts: %s", o->rank, o->dir,
		             o->errs);
	/* the definitions the launcher needs */
	snprintf(path, sizeof(path), "%s/parts/rank.%d.otf2", o->dir, o->rank);
	FILE *f = o->ar && !rc ? fopen(path, "w") : NULL;
	if (o->ar && !rc && !f)
		rc = err_set(HCLOCK_EIO, "cannot write %s: %s", path, strerror(errno));
	if (f) {
		fprintf(f, "hclock-otf2 1\nrank %d\nbound %" PRIu64 "\n", o->rank, o->nbound);
		if (o->host[0])
			fprintf(f, "host %s\n", o->host);
		for (int t = 0; t < OTF2S_MAX_THREADS; t++)
			if (o->loc[t] && o->loc[t]->w)
				fprintf(f, "loc %d %" PRIu64 " %" PRId64 " %" PRIu64 "\n", t, nev[t],
				        o->loc[t]->t_first, o->loc[t]->t_last);
		for (uint32_t i = 0; i < o->nfuncs; i++)
			if (o->used[i])
				fprintf(f, "func %u %s\n", i, o->names[i]);
		for (size_t i = 0; i < o->ncomm; i++)
			fprintf(f, "comm %zu %" PRIx64 "\n", i, o->comm[i]);
		if (ferror(f) | fclose(f))
			rc = err_set(HCLOCK_EIO, "cannot write %s: %s", path, strerror(errno));
	}
	for (int t = 0; t < OTF2S_MAX_THREADS; t++)
		free(o->loc[t]);
	for (uint32_t i = 0; o->names && i < o->nfuncs; i++)
		free(o->names[i]);
	free(o->names);
	free(o->used);
	free(o->op);
	free(o->nb);
	free(o->comm);
	free(o);
	return rc;
}
