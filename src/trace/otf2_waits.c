/*
 * otf2_waits.c - the wait states of an OTF2 archive (otf2_waits.h).
 */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "hclock_api.h"
#include "align/otf2_defs.h"
#include "trace/mpiclass.h"
#include "trace/otf2_waits.h"
#include "trace/truthfile.h"
#include "trace/waitplot.h"
#include "util/err.h"
#include "util/grow.h"
#include "util/path.h"

#define MAX_DEPTH 256 /* calls open at once on a location that are analysed (deeper ones are
                         not: a trace whose Leaves went missing) */

/* ---- the global definitions: the shared ones (align/otf2_defs.h), regions, locations ---- */

struct region {
	uint32_t ref, name, paradigm;
	uint32_t func;            /* its function id in the analysis (the name's) */
	int mpi;                  /* an MPI function: counted among the calls */
	struct mpiclass c;
};

struct comm {                 /* a communicator resolved */
	uint32_t ref;
	int32_t size;             /* members; -1: not resolved */
	int32_t *proc;            /* the process id of each rank of its events (nproc of them);
	                             NULL with size 1: a self-like communicator */
	uint32_t nproc;
};

/* ---- the event state ---- */

struct frame {                /* an open call */
	const struct region *reg; /* NULL: a region not defined */
	struct waits_stamp enter;
	int64_t ns;               /* its enter, the archive's ns (the time in MPI) */
	size_t first;             /* its items: loc's it[first ..] */
};

enum { ITEM_SEND, ITEM_RECV, ITEM_COLL };

struct item {                 /* what happened inside a call, fed at its Leave */
	int what, has_start;
	union {
		struct waits_send s;
		struct waits_recv r;
		struct waits_coll c;
	} u;
};

struct nbreq {                /* a nonblocking collective started, not completed yet */
	uint64_t id;
	struct waits_stamp start;
	enum waits_coll_kind kind;
};

enum { EV_NONE, EV_ENTER, EV_LEAVE, EV_SEND, EV_RECV, EV_COLL, EV_NBC_REQUEST,
       EV_NBC_COMPLETE, EV_UNKNOWN };

struct next {                 /* a location's next event, read ahead for the merge */
	int ev;                   /* EV_*, EV_NONE: no more */
	OTF2_TimeStamp t;         /* its time, ticks */
	uint32_t a, b, c;         /* region; peer, comm, tag; op, comm, root */
	uint64_t u;               /* a message's bytes, a request's id */
};

struct loc {
	uint64_t ref;
	uint32_t group;
	size_t proc;              /* index into procs, SIZE_MAX: none */
	struct frame *st;
	size_t depth, scap, deep; /* deep: calls open beyond MAX_DEPTH */
	size_t mpi_at;            /* the depth of its outermost open MPI call, SIZE_MAX none */
	struct item *it;
	size_t nit, icap;
	struct nbreq *rq;
	size_t nrq, rcap;
	OTF2_EvtReader *er;       /* its event reader while the events are read */
	struct next nx;
};

struct proc {
	char *name;
	int rank;                 /* MPI rank, -1 */
	int32_t id;               /* its number in the analysis */
	truthfile *truth;
};

struct otf2_waits {
	struct otf2_defs d;       /* first: the global-definition callbacks' user data */
	char *anchor;
	OTF2_Reader *rdr;         /* open from otf2_waits_open to otf2_waits_free */
	struct region *regs;      /* sorted by ref */
	size_t nregs, capregs;
	struct comm *comms;       /* d.comms resolved, in its order (by ref) */
	size_t ncomms;
	struct loc *locs;
	size_t nlocs, caplocs;
	struct proc *procs;
	size_t nprocs;
	int truth_procs, truth_unreadable;
	int ran;
	int64_t mpi_ns;           /* the outermost MPI calls' durations summed, ns */
	int64_t first_ns, last_ns;/* the first and the last event read, ns since the global
	                             offset */
	/* the run's */
	struct trace_waits *tw;
	const struct otf2_waits_opts *op;
	uint32_t orphan;          /* the function id of events outside every call */
	int64_t seen;             /* events analysed */
};

static OTF2_CallbackCode def_region(void *u, OTF2_RegionRef self, OTF2_StringRef name,
                                    OTF2_StringRef canonical, OTF2_StringRef descr,
                                    OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                    OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin,
                                    uint32_t end)
{
	struct otf2_waits *o = u;
	(void)canonical, (void)descr, (void)role, (void)flags, (void)file, (void)begin, (void)end;
	if (GROW(o->regs, o->nregs, o->capregs))
		return otf2_defs_nomem(&o->d);
	o->regs[o->nregs++] = (struct region){.ref = self, .name = name, .paradigm = paradigm};
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location(void *u, OTF2_LocationRef self, OTF2_StringRef name,
                                      OTF2_LocationType type, uint64_t nev,
                                      OTF2_LocationGroupRef group)
{
	struct otf2_waits *o = u;
	(void)name, (void)type, (void)nev;
	if (GROW(o->locs, o->nlocs, o->caplocs))
		return otf2_defs_nomem(&o->d);
	o->locs[o->nlocs++] = (struct loc){.ref = self, .group = group, .proc = SIZE_MAX,
	                                   .mpi_at = SIZE_MAX};
	return OTF2_CALLBACK_SUCCESS;
}

/* regions and locations are kept sorted by ref and found by bisection */
static int cmp_reg(const void *a, const void *b)
{
	const struct region *x = a, *y = b;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static int cmp_loc(const void *a, const void *b)
{
	const struct loc *x = a, *y = b;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static const struct region *region_of(const struct otf2_waits *o, uint32_t ref)
{
	struct region key = {.ref = ref};
	return o->nregs ? bsearch(&key, o->regs, o->nregs, sizeof(key), cmp_reg) : NULL;
}

static struct loc *loc_of(const struct otf2_waits *o, uint64_t ref)
{
	struct loc key = {.ref = ref};
	return o->nlocs ? bsearch(&key, o->locs, o->nlocs, sizeof(key), cmp_loc) : NULL;
}

/* the process index of a location ref, or SIZE_MAX */
static size_t proc_of_loc(const struct otf2_waits *o, uint64_t ref)
{
	const struct loc *l = loc_of(o, ref);
	return l ? l->proc : SIZE_MAX;
}

/* whether a process made so far has the name */
static int name_taken(const void *ctx, const char *name)
{
	const struct otf2_waits *o = ctx;
	for (size_t k = 0; k < o->nprocs; k++)
		if (!strcmp(o->procs[k].name, name))
			return 1;
	return 0;
}

/* the processes: location groups with locations, in definition order, named as hclock align
 * names its nodes; their ranks and their ids (the ranks when those number them 0 .. n-1, else
 * their order) */
static int make_procs(struct otf2_waits *o)
{
	const struct otf2_defs *d = &o->d;
	qsort(o->locs, o->nlocs, sizeof(*o->locs), cmp_loc);
	for (size_t i = 1; i < o->nlocs; i++)
		if (o->locs[i].ref == o->locs[i - 1].ref)
			return err_set(HCLOCK_EINVAL, "%s: location %" PRIu64 " defined twice; expected "
			               "one definition per location", o->anchor, o->locs[i].ref);
	o->procs = calloc(d->nlgs + 1, sizeof(*o->procs));
	if (!o->procs)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	for (size_t g = 0; g < d->nlgs; g++) {
		int used = 0;
		for (size_t i = 0; i < o->nlocs; i++)
			if (o->locs[i].group == d->lgs[g].ref)
				o->locs[i].proc = o->nprocs, used = 1;
		if (!used)
			continue;
		struct proc *p = &o->procs[o->nprocs];
		if (!(p->name = otf2_defs_node_name(d, g, name_taken, o)))
			return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
		d->lgs[g].node = o->nprocs++;
		int r, end = 0;
		p->rank = sscanf(p->name, "MPI_Rank_%d%n", &r, &end) == 1 && !p->name[end] && r >= 0
		              ? r : -1;
	}
	if (!o->nprocs)
		return err_set(HCLOCK_EINVAL, "%s: no process (a location group with locations); "
		               "expected the definitions of an MPI program's trace", o->anchor);
	const struct otf2_grp *cl = otf2_defs_comm_locations(d, OTF2_PARADIGM_MPI);
	for (uint32_t k = 0; cl && k < cl->n; k++) {
		size_t p = proc_of_loc(o, cl->m[k]);
		if (p != SIZE_MAX && o->procs[p].rank < 0)
			o->procs[p].rank = (int)k;
	}
	/* ids: the ranks if they are 0 .. n-1, each once */
	char *seen = calloc(o->nprocs, 1);
	if (!seen)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	int by_rank = 1;
	for (size_t p = 0; p < o->nprocs && by_rank; p++) {
		int r = o->procs[p].rank;
		by_rank = r >= 0 && (size_t)r < o->nprocs && !seen[r];
		if (by_rank)
			seen[r] = 1;
	}
	free(seen);
	for (size_t p = 0; p < o->nprocs; p++)
		o->procs[p].id = by_rank ? o->procs[p].rank : (int32_t)p;
	return 0;
}

/* each communicator's size and its ranks' processes: through its COMM_GROUP (ranks index the
 * COMM_LOCATIONS group of its paradigm, directly with GLOBAL_MEMBERS) or COMM_SELF */
static int make_comms(struct otf2_waits *o)
{
	const struct otf2_defs *d = &o->d;
	if (!(o->comms = calloc(d->ncomms + 1, sizeof(*o->comms))))
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	o->ncomms = d->ncomms;
	for (size_t i = 0; i < d->ncomms; i++) {
		struct comm *c = &o->comms[i];
		const struct otf2_grp *g = otf2_defs_grp(d, d->comms[i].group);
		*c = (struct comm){.ref = d->comms[i].ref, .size = -1};
		if (g && g->type == OTF2_GROUP_TYPE_COMM_SELF) {
			c->size = 1;
			continue;
		}
		const struct otf2_grp *cl = g && g->type == OTF2_GROUP_TYPE_COMM_GROUP
		                                ? otf2_defs_comm_locations(d, g->paradigm) : NULL;
		if (!cl || g->n > INT32_MAX)
			continue; /* not resolved: an inter-communicator, a group not defined */
		int global = (g->flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS) != 0;
		c->nproc = global ? cl->n : g->n;
		if (!(c->proc = malloc((c->nproc ? c->nproc : 1) * sizeof(*c->proc))))
			return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
		for (uint32_t r = 0; r < c->nproc; r++) {
			uint64_t k = global ? r : g->m[r];
			size_t p = k < cl->n ? proc_of_loc(o, cl->m[k]) : SIZE_MAX;
			c->proc[r] = p == SIZE_MAX ? -1 : o->procs[p].id;
		}
		c->size = (int32_t)g->n;
	}
	return 0;
}

static int cmp_comm(const void *a, const void *b)
{
	const struct comm *x = a, *y = b;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static const struct comm *comm_of(const struct otf2_waits *o, uint32_t ref)
{
	struct comm key = {.ref = ref}; /* o->comms is in d.comms' order: by ref */
	return o->ncomms ? bsearch(&key, o->comms, o->ncomms, sizeof(key), cmp_comm) : NULL;
}

static void more_defs(OTF2_GlobalDefReaderCallbacks *cb)
{
	OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, def_region);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, def_location);
}

int otf2_waits_open(const char *path, otf2_waits **out)
{
	*out = NULL;
	struct otf2_waits *o = calloc(1, sizeof(*o));
	if (!o)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	o->anchor = path_find_one(path, ".otf2");
	size_t l = o->anchor ? strlen(o->anchor) : 0;
	if (!o->anchor || l < 6 || strcmp(o->anchor + l - 5, ".otf2")) {
		free(o->anchor);
		free(o);
		return err_set(HCLOCK_EINVAL, "%s: no OTF2 archive (expected its anchor file "
		               "NAME.otf2, or a directory holding exactly one)", path);
	}
	o->d.anchor = o->anchor;
	OTF2_ErrorCallback prev = otf2_quiet();
	int rc = 0;
	if (!(o->rdr = OTF2_Reader_Open(o->anchor)) ||
	    OTF2_Reader_SetSerialCollectiveCallbacks(o->rdr) != OTF2_SUCCESS)
		rc = err_set(HCLOCK_EINVAL, "%s: not a readable OTF2 archive (OTF2: %s); give the "
		             "anchor file NAME.otf2 of an OTF2 archive, or its directory", o->anchor,
		             otf2_why(OTF2_SUCCESS));
	if (!rc)
		rc = otf2_defs_read(o->rdr, &o->d, more_defs, o);
	OTF2_Error_RegisterCallback(prev, NULL);
	if (!rc) {
		qsort(o->regs, o->nregs, sizeof(*o->regs), cmp_reg);
		rc = make_procs(o);
	}
	if (!rc)
		rc = make_comms(o);
	if (rc) {
		otf2_waits_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

const char *otf2_waits_anchor(const otf2_waits *o)
{
	return o->anchor;
}

size_t otf2_waits_nprocs(const otf2_waits *o)
{
	return o->nprocs;
}

const char *otf2_waits_proc_name(const otf2_waits *o, size_t p)
{
	return p < o->nprocs ? o->procs[p].name : NULL;
}

int otf2_waits_proc_rank(const otf2_waits *o, size_t p)
{
	return p < o->nprocs ? o->procs[p].rank : -1;
}

int otf2_waits_truth(otf2_waits *o, const char *dir)
{
	for (size_t p = 0; p < o->nprocs; p++) {
		if (o->procs[p].rank < 0 || o->procs[p].truth)
			continue;
		int rc = truthfile_load(dir, o->procs[p].rank, &o->procs[p].truth);
		if (rc == HCLOCK_ENOMEM)
			return rc;
		if (rc)
			o->truth_unreadable++;
		else if (o->procs[p].truth)
			o->truth_procs++;
	}
	if (!o->truth_procs)
		return err_set(HCLOCK_EINVAL, "%s/raw: no readable truth file of the archive's ranks "
		               "(%d unreadable); expected truth.R written by hclock trace --emulate ... "
		               "--event-truth for the run the archive is of", dir, o->truth_unreadable);
	return 0;
}

/* ---- events ---- */

/* the stamp of time t (ticks) on location l: its ns since the global offset, its truth, its
 * bounds; 0 or -1 (o->d.failed set) */
static int stamp(struct otf2_waits *o, const struct loc *l, OTF2_TimeStamp t,
                 struct waits_stamp *s, int64_t *ns_out)
{
	int64_t ns, abs_ns;
	if (otf2_defs_ns(o->d.res, (__int128)t - (__int128)o->d.goff, &ns)) {
		otf2_defs_bad(&o->d, "location %" PRIu64 ": time %" PRIu64 " ticks is out of range; "
		              "expected times near the global offset %" PRIu64, l->ref, (uint64_t)t,
		              o->d.goff);
		return -1;
	}
	*s = (struct waits_stamp){.t_ns = ns, .below_ns = WAITS_NO_BOUND, .above_ns = WAITS_NO_BOUND};
	const struct proc *p = &o->procs[l->proc];
	/* the truth is looked up at the tracer's absolute ns (an archive far from that scale has
	   none) */
	if (p->truth && !otf2_defs_ns(o->d.res, (__int128)t, &abs_ns))
		s->has_truth = truthfile_at(p->truth, abs_ns, &s->true_lo_ns, &s->true_hi_ns);
	if (o->op->bound)
		o->op->bound(o->op->ctx, l->proc, s);
	if (!o->seen++ || ns < o->first_ns)
		o->first_ns = ns;
	if (ns > o->last_ns)
		o->last_ns = ns;
	if (ns_out)
		*ns_out = ns;
	return 0;
}

static const struct frame *top(const struct loc *l)
{
	return l->depth && !l->deep ? &l->st[l->depth - 1] : NULL;
}

/* the analysis's failure (HCLOCK_EINVAL: a peer out of range, left out); 0 or -1 */
static int fed(struct otf2_waits *o, int rc)
{
	if (rc && rc != HCLOCK_EINVAL && !o->d.failed)
		o->d.failed = rc == HCLOCK_ENOMEM ? err_set(rc, "%s: out of memory in the wait-state "
		                                          "analysis", o->anchor) : rc;
	return o->d.failed ? -1 : 0;
}

static int feed(struct otf2_waits *o, struct item *it, const struct waits_call *c)
{
	struct trace_waits *tw = o->tw;
	switch (it->what) {
	case ITEM_SEND:
		it->u.s.call = *c;
		if (tw->plot)
			waitplot_message(tw->plot, c->proc, (int)it->u.s.dst, it->u.s.bytes);
		return fed(o, waits_add_send(tw->w, &it->u.s));
	case ITEM_RECV:
		it->u.r.call = *c;
		return fed(o, waits_add_recv(tw->w, &it->u.r));
	default:
		it->u.c.call = *c;
		if (!it->has_start)
			it->u.c.start = c->enter;
		return fed(o, waits_add_coll(tw->w, &it->u.c));
	}
}

/* an item of the call open on l, fed at its Leave; outside every call, a call of no duration
 * at t. 0 or -1 */
static int add_item(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t, const struct item *it)
{
	if (top(l)) {
		if (GROW(l->it, l->nit, l->icap))
			return otf2_defs_nomem(&o->d), -1;
		l->it[l->nit++] = *it;
		return 0;
	}
	if (l->deep)
		return 0; /* beyond MAX_DEPTH: not analysed */
	struct waits_call c = {.proc = o->procs[l->proc].id, .func = o->orphan};
	if (stamp(o, l, t, &c.enter, NULL))
		return -1;
	c.leave = c.enter;
	struct item copy = *it;
	return feed(o, &copy, &c);
}

static int on_enter(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t, uint32_t region)
{
	if (l->depth == MAX_DEPTH || l->deep) {
		l->deep++;
		return 0;
	}
	if (GROW(l->st, l->depth, l->scap))
		return otf2_defs_nomem(&o->d), -1;
	struct frame *f = &l->st[l->depth];
	f->reg = region_of(o, region);
	f->first = l->nit;
	if (stamp(o, l, t, &f->enter, &f->ns))
		return -1;
	if (f->reg && f->reg->mpi) {
		o->tw->calls++;
		if (f->enter.below_ns == WAITS_NO_BOUND || f->enter.above_ns == WAITS_NO_BOUND)
			o->tw->unbounded++;
		if (l->mpi_at == SIZE_MAX)
			l->mpi_at = l->depth;
	}
	l->depth++;
	return 0;
}

/* the call complete: what happened inside it fed with it */
static int on_leave(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t)
{
	if (l->deep) {
		l->deep--;
		return 0;
	}
	if (!l->depth)
		return 0; /* a Leave without its Enter: the trace began inside a call */
	const struct frame *f = &l->st[--l->depth];
	struct waits_call c = {.proc = o->procs[l->proc].id, .enter = f->enter,
	                       .func = f->reg ? f->reg->func : o->orphan};
	int64_t ns;
	if (stamp(o, l, t, &c.leave, &ns))
		return -1;
	if (l->mpi_at == l->depth) {
		o->mpi_ns += ns - f->ns;
		l->mpi_at = SIZE_MAX;
	}
	int rc = 0;
	for (size_t i = f->first; i < l->nit && !rc; i++)
		rc = feed(o, &l->it[i], &c);
	l->nit = f->first;
	return rc;
}

/* the process id of rank `rank` of communicator comm, -1 when not resolved */
static int64_t peer(const struct otf2_waits *o, const struct loc *l, uint32_t comm, uint32_t rank)
{
	const struct comm *c = comm_of(o, comm);
	if (!c || c->size < 1)
		return -1;
	if (!c->proc)
		return rank == 0 ? o->procs[l->proc].id : -1; /* self-like */
	return rank < c->nproc ? c->proc[rank] : -1;
}

static const struct mpiclass *class_of(const struct loc *l)
{
	const struct frame *f = top(l);
	return f && f->reg ? &f->reg->c : NULL;
}

/* a message's end: a send started by the open call (recv 0), or a receive it completed */
static int on_p2p(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t, int recv, uint32_t rank,
                  uint32_t comm, uint32_t tag, uint64_t len)
{
	int64_t other = peer(o, l, comm, rank);
	if (other < 0)
		return 0; /* a peer no group resolves: left out */
	const struct mpiclass *k = class_of(l);
	struct item it = {.what = recv ? ITEM_RECV : ITEM_SEND};
	if (recv)
		it.u.r = (struct waits_recv){.src = other, .comm = comm, .tag = tag,
		                             .posted_in_call = k && k->posting_recv};
	else
		it.u.s = (struct waits_send){.dst = other, .comm = comm, .tag = tag, .bytes = len,
		                             .blocking = k && k->blocking_send,
		                             .synchronous = k && k->synchronous};
	return add_item(o, l, t, &it);
}

/* the wait-state kind of an OTF2 collective operation */
static enum waits_coll_kind op_kind(OTF2_CollectiveOp op)
{
	switch (op) {
	case OTF2_COLLECTIVE_OP_BARRIER:
		return WAITS_COLL_BARRIER;
	case OTF2_COLLECTIVE_OP_BCAST:
	case OTF2_COLLECTIVE_OP_SCATTER:
	case OTF2_COLLECTIVE_OP_SCATTERV:
		return WAITS_COLL_1TON;
	case OTF2_COLLECTIVE_OP_GATHER:
	case OTF2_COLLECTIVE_OP_GATHERV:
	case OTF2_COLLECTIVE_OP_REDUCE:
		return WAITS_COLL_NTO1;
	case OTF2_COLLECTIVE_OP_ALLGATHER:
	case OTF2_COLLECTIVE_OP_ALLGATHERV:
	case OTF2_COLLECTIVE_OP_ALLTOALL:
	case OTF2_COLLECTIVE_OP_ALLTOALLV:
	case OTF2_COLLECTIVE_OP_ALLTOALLW:
	case OTF2_COLLECTIVE_OP_ALLREDUCE:
	case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
	case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
		return WAITS_COLL_NXN;
	default:
		return WAITS_COLL_OTHER;
	}
}

/* a process's part in a collective of kind k (WAITS_COLL_OTHER: the operation's) completed by
 * the call open on l; start: its entry when another call started it (NULL: this call's) */
static int on_coll(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t, enum waits_coll_kind k,
                   uint32_t op, uint32_t comm, uint32_t root, const struct waits_stamp *start)
{
	const struct comm *c = comm_of(o, comm);
	if (!c || c->size < 1) {
		o->tw->colls_unknown++;
		return 0;
	}
	if (k == WAITS_COLL_OTHER)
		k = op_kind(op);
	struct item it = {.what = ITEM_COLL, .has_start = start != NULL};
	it.u.c = (struct waits_coll){.comm = comm, .size = c->size, .root = -1, .kind = k,
	                             .seq = -1};
	if (start)
		it.u.c.start = *start;
	if ((k == WAITS_COLL_1TON || k == WAITS_COLL_NTO1) && root != OTF2_UNDEFINED_UINT32)
		it.u.c.root = root == OTF2_COLLECTIVE_ROOT_SELF ? o->procs[l->proc].id
		                                                : peer(o, l, comm, root);
	return add_item(o, l, t, &it);
}

/* a nonblocking collective started by the open call: its entry, for its completion */
static int on_nbc_request(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t, uint64_t req)
{
	if (GROW(l->rq, l->nrq, l->rcap))
		return otf2_defs_nomem(&o->d), -1;
	const struct frame *f = top(l);
	struct nbreq *q = &l->rq[l->nrq];
	q->id = req;
	q->kind = f && f->reg ? f->reg->c.coll : WAITS_COLL_OTHER;
	if (f)
		q->start = f->enter;
	else if (stamp(o, l, t, &q->start, NULL))
		return -1;
	l->nrq++;
	return 0;
}

static int on_nbc_complete(struct otf2_waits *o, struct loc *l, OTF2_TimeStamp t, uint32_t op,
                           uint32_t comm, uint32_t root, uint64_t req)
{
	for (size_t i = l->nrq; i-- > 0;)
		if (l->rq[i].id == req) {
			struct nbreq q = l->rq[i];
			l->rq[i] = l->rq[--l->nrq];
			return on_coll(o, l, t, q.kind, op, comm, root, &q.start);
		}
	/* its start not seen (the trace began after it): entered at the completing call */
	return on_coll(o, l, t, WAITS_COLL_OTHER, op, comm, root, NULL);
}

/* ---- the locations merged in time order ----
 * Each location's event reader delivers one event at a time into its slot (struct next); a
 * binary heap of the locations by their next event's time (ties: location order) gives the
 * earliest. (libotf2's global event reader does the same, but loops forever on an event file
 * cut short; its local readers report it.) */

static int dispatch(struct otf2_waits *o, struct loc *l)
{
	const struct next *n = &l->nx;
	switch (n->ev) {
	case EV_ENTER: return on_enter(o, l, n->t, n->a);
	case EV_LEAVE: return on_leave(o, l, n->t);
	case EV_SEND: return on_p2p(o, l, n->t, 0, n->a, n->b, n->c, n->u);
	case EV_RECV: return on_p2p(o, l, n->t, 1, n->a, n->b, n->c, n->u);
	case EV_COLL: {
		const struct mpiclass *k = class_of(l);
		return on_coll(o, l, n->t, k ? k->coll : WAITS_COLL_OTHER, n->a, n->b, n->c, NULL);
	}
	case EV_NBC_REQUEST: return on_nbc_request(o, l, n->t, n->u);
	case EV_NBC_COMPLETE: return on_nbc_complete(o, l, n->t, n->a, n->b, n->c, n->u);
	default: return 0;
	}
}

#define SLOT(u, ev_, t_, a_, b_, c_, u_)                                                        \
	do {                                                                                      \
		((struct loc *)(u))->nx = (struct next){(ev_), (t_), (a_), (b_), (c_), (u_)};       \
		return OTF2_CALLBACK_SUCCESS;                                                         \
	} while (0)

static OTF2_CallbackCode pk_enter(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                  OTF2_AttributeList *a, OTF2_RegionRef region)
{
	(void)lr, (void)pos, (void)a;
	SLOT(u, EV_ENTER, t, region, 0, 0, 0);
}

static OTF2_CallbackCode pk_leave(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                  OTF2_AttributeList *a, OTF2_RegionRef region)
{
	(void)lr, (void)pos, (void)a;
	SLOT(u, EV_LEAVE, t, region, 0, 0, 0);
}

static OTF2_CallbackCode pk_send(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                 OTF2_AttributeList *a, uint32_t to, OTF2_CommRef comm,
                                 uint32_t tag, uint64_t len)
{
	(void)lr, (void)pos, (void)a;
	SLOT(u, EV_SEND, t, to, comm, tag, len);
}

static OTF2_CallbackCode pk_isend(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                  OTF2_AttributeList *a, uint32_t to, OTF2_CommRef comm,
                                  uint32_t tag, uint64_t len, uint64_t req)
{
	(void)lr, (void)pos, (void)a, (void)req;
	SLOT(u, EV_SEND, t, to, comm, tag, len);
}

static OTF2_CallbackCode pk_recv(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                 OTF2_AttributeList *a, uint32_t from, OTF2_CommRef comm,
                                 uint32_t tag, uint64_t len)
{
	(void)lr, (void)pos, (void)a;
	SLOT(u, EV_RECV, t, from, comm, tag, len);
}

static OTF2_CallbackCode pk_irecv(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                  OTF2_AttributeList *a, uint32_t from, OTF2_CommRef comm,
                                  uint32_t tag, uint64_t len, uint64_t req)
{
	(void)lr, (void)pos, (void)a, (void)req;
	SLOT(u, EV_RECV, t, from, comm, tag, len);
}

static OTF2_CallbackCode pk_coll(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos, void *u,
                                 OTF2_AttributeList *a, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                 uint32_t root, uint64_t sent, uint64_t got)
{
	(void)lr, (void)pos, (void)a, (void)sent, (void)got;
	SLOT(u, EV_COLL, t, op, comm, root, 0);
}

static OTF2_CallbackCode pk_nbc_request(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos,
                                        void *u, OTF2_AttributeList *a, uint64_t req)
{
	(void)lr, (void)pos, (void)a;
	SLOT(u, EV_NBC_REQUEST, t, 0, 0, 0, req);
}

static OTF2_CallbackCode pk_nbc_complete(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos,
                                         void *u, OTF2_AttributeList *a, OTF2_CollectiveOp op,
                                         OTF2_CommRef comm, uint32_t root, uint64_t sent,
                                         uint64_t got, uint64_t req)
{
	(void)lr, (void)pos, (void)a, (void)sent, (void)got;
	SLOT(u, EV_NBC_COMPLETE, t, op, comm, root, req);
}

/* an event of a type this libotf2 does not know (a newer OTF2, or a file cut short whose
 * garbage is read as events): the archive cannot be read on from there */
static OTF2_CallbackCode pk_unknown(OTF2_LocationRef lr, OTF2_TimeStamp t, uint64_t pos,
                                    void *u, OTF2_AttributeList *a)
{
	(void)lr, (void)t, (void)a;
	((struct loc *)u)->nx = (struct next){.ev = EV_UNKNOWN, .u = pos};
	return OTF2_CALLBACK_INTERRUPT;
}

/* l's next event of a kind the analysis uses into its slot (EV_NONE at the end); 0 or -1 */
static int next_event(struct otf2_waits *o, OTF2_Reader *rdr, struct loc *l)
{
	l->nx.ev = EV_NONE;
	while (l->nx.ev == EV_NONE) {
		uint64_t n = 0;
		OTF2_ErrorCode e = OTF2_Reader_ReadLocalEvents(rdr, l->er, 1, &n);
		if (l->nx.ev == EV_UNKNOWN) {
			otf2_defs_bad(&o->d, "location %" PRIu64 ": event %" PRIu64 " of a type this OTF2 "
			              "library does not know; read it with the OTF2 version that wrote it "
			              "(or the file was cut short)", l->ref, l->nx.u);
			return -1;
		}
		if (e != OTF2_SUCCESS) {
			otf2_defs_bad(&o->d, "location %" PRIu64 ": cannot read its events (OTF2: %s); give a "
			              "complete OTF2 archive", l->ref, otf2_why(e));
			return -1;
		}
		if (!n)
			break;
	}
	return 0;
}

static int earlier(const struct otf2_waits *o, size_t a, size_t b)
{
	const struct loc *x = &o->locs[a], *y = &o->locs[b];
	return x->nx.t < y->nx.t || (x->nx.t == y->nx.t && a < b);
}

static void sift_down(const struct otf2_waits *o, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && earlier(o, h[l], h[m]))
			m = l;
		if (r < n && earlier(o, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		size_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* every location's local definitions (mapping tables, clock offsets) and event reader, then
 * all events in time order */
static int read_events(struct otf2_waits *o, OTF2_Reader *rdr)
{
	OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
	size_t *h = malloc((o->nlocs + 1) * sizeof(*h)), nh = 0;
	if (!cb || !h) {
		free(h);
		if (cb)
			OTF2_EvtReaderCallbacks_Delete(cb);
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	}
	OTF2_EvtReaderCallbacks_SetEnterCallback(cb, pk_enter);
	OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, pk_leave);
	OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, pk_send);
	OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, pk_isend);
	OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, pk_recv);
	OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, pk_irecv);
	OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, pk_coll);
	OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, pk_nbc_request);
	OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, pk_nbc_complete);
	OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, pk_unknown);
	for (size_t i = 0; i < o->nlocs; i++)
		if (o->locs[i].proc != SIZE_MAX)
			OTF2_Reader_SelectLocation(rdr, o->locs[i].ref);
	int defs = OTF2_Reader_OpenDefFiles(rdr) == OTF2_SUCCESS;
	OTF2_ErrorCode e = OTF2_Reader_OpenEvtFiles(rdr);
	for (size_t i = 0; e == OTF2_SUCCESS && i < o->nlocs; i++) {
		struct loc *l = &o->locs[i];
		if (l->proc == SIZE_MAX)
			continue;
		OTF2_DefReader *dr = defs ? OTF2_Reader_GetDefReader(rdr, l->ref) : NULL;
		if (dr) {
			uint64_t n;
			e = OTF2_Reader_ReadAllLocalDefinitions(rdr, dr, &n);
			OTF2_Reader_CloseDefReader(rdr, dr);
		}
		if (e == OTF2_SUCCESS && !(l->er = OTF2_Reader_GetEvtReader(rdr, l->ref)))
			e = OTF2_ERROR_INVALID;
		if (e == OTF2_SUCCESS)
			e = OTF2_Reader_RegisterEvtCallbacks(rdr, l->er, cb, l);
	}
	if (defs)
		OTF2_Reader_CloseDefFiles(rdr);
	OTF2_EvtReaderCallbacks_Delete(cb);
	int rc = e == OTF2_SUCCESS ? 0 : otf2_defs_bad(&o->d, "cannot open the event files (OTF2: "
	                                               "%s); give a complete OTF2 archive",
	                                               otf2_why(e));
	for (size_t i = 0; !rc && i < o->nlocs; i++)
		if (o->locs[i].er && !(rc = next_event(o, rdr, &o->locs[i])) &&
		    o->locs[i].nx.ev != EV_NONE)
			h[nh++] = i;
	for (size_t i = nh / 2; i-- > 0;)
		sift_down(o, h, nh, i);
	while (!rc && nh) {
		struct loc *l = &o->locs[h[0]];
		if (!(rc = dispatch(o, l)) && !(rc = next_event(o, rdr, l)) && l->nx.ev == EV_NONE)
			h[0] = h[--nh];
		sift_down(o, h, nh, 0);
	}
	free(h);
	for (size_t i = 0; i < o->nlocs; i++)
		if (o->locs[i].er) {
			OTF2_Reader_CloseEvtReader(rdr, o->locs[i].er);
			o->locs[i].er = NULL;
		}
	OTF2_Reader_CloseEvtFiles(rdr);
	return rc ? o->d.failed : 0;
}

/* the function ids: one per distinct region name, and one for what is outside every call */
static int intern(struct trace_waits *tw, const char *name, uint32_t *id)
{
	for (size_t i = 0; i < tw->nfnames; i++)
		if (!strcmp(tw->fnames[i], name)) {
			*id = (uint32_t)i;
			return 0;
		}
	char **f = realloc(tw->fnames, (tw->nfnames + 1) * sizeof(*f));
	if (!f)
		return HCLOCK_ENOMEM;
	tw->fnames = f;
	if (!(f[tw->nfnames] = strdup(name)))
		return HCLOCK_ENOMEM;
	*id = (uint32_t)tw->nfnames++;
	return 0;
}

static int functions(struct otf2_waits *o, struct trace_waits *tw)
{
	if (intern(tw, "(outside a call)", &o->orphan))
		return HCLOCK_ENOMEM;
	for (size_t i = 0; i < o->nregs; i++) {
		struct region *r = &o->regs[i];
		const char *n = otf2_defs_str(&o->d, r->name);
		if (!n || !*n)
			n = "?";
		if (intern(tw, n, &r->func))
			return HCLOCK_ENOMEM;
		r->c = mpiclass_of(n);
		r->mpi = r->paradigm == OTF2_PARADIGM_MPI || !strncmp(n, "MPI_", 4);
	}
	return 0;
}

/* an instance as it is found: kept when its truth misses its interval */
static int on_instance(void *ctx, const struct waits_instance *in)
{
	struct trace_waits *tw = ctx;
	if (in->has_truth && (in->true_hi_ns < in->lo_ns || in->true_lo_ns > in->hi_ns) &&
	    tw->noutside < TRACE_WAITS_WORST)
		tw->outside[tw->noutside++] = *in;
	return 0;
}

int otf2_waits_run(otf2_waits *o, const struct otf2_waits_opts *op, struct trace_waits *tw)
{
	memset(tw, 0, sizeof(*tw));
	if (o->ran)
		return err_set(HCLOCK_EINVAL, "%s: the archive was analysed already", o->anchor);
	o->ran = 1;
	struct waits_opts wo = {.worst = TRACE_WAITS_WORST, .on_instance = on_instance, .ctx = tw};
	int rc = 0;
	o->tw = tw;
	o->op = op;
	tw->truth_procs = o->truth_procs;
	tw->truth_unreadable = o->truth_unreadable;
	if (!(tw->w = waits_create(&wo)) || functions(o, tw) ||
	    (op->plot && !(tw->plot = waitplot_create((int)o->nprocs))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory for the wait-state analysis");
	if (!rc) {
		OTF2_ErrorCallback prev = otf2_quiet();
		rc = read_events(o, o->rdr);
		OTF2_Error_RegisterCallback(prev, NULL);
	}
	if (!rc && (rc = waits_finish(tw->w)))
		err_set(rc, "out of memory in the wait-state analysis");
	if (rc) {
		trace_waits_free(tw);
		return rc;
	}
	tw->done = 1;
	return 0;
}

int64_t otf2_waits_mpi_ns(const otf2_waits *o)
{
	return o->mpi_ns;
}

int64_t otf2_waits_span_ns(const otf2_waits *o)
{
	return o->seen ? o->last_ns - o->first_ns : 0;
}

void otf2_waits_free(otf2_waits *o)
{
	if (!o)
		return;
	otf2_defs_free(&o->d);
	for (size_t i = 0; i < o->ncomms; i++)
		free(o->comms[i].proc);
	for (size_t i = 0; i < o->nlocs; i++) {
		free(o->locs[i].st);
		free(o->locs[i].it);
		free(o->locs[i].rq);
	}
	for (size_t p = 0; o->procs && p < o->nprocs; p++) {
		free(o->procs[p].name);
		truthfile_free(o->procs[p].truth);
	}
	free(o->regs);
	free(o->comms);
	free(o->locs);
	free(o->procs);
	free(o->anchor);
	if (o->rdr)
		OTF2_Reader_Close(o->rdr);
	free(o);
}
