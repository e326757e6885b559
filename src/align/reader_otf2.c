/*
 * reader_otf2.c - OTF2 archives as traces: MPI point-to-point records matched between
 * processes. The archive is written back with every timestamp converted by writer_otf2.c;
 * the state both share is struct otf2_set (otf2_set.h).
 *
 * Input: one archive, given as its anchor file (NAME.otf2) or the directory holding it.
 *
 * Node: one location group (an MPI process), named after its definition with every character
 * outside [A-Za-z0-9._-] replaced by '_' ("MPI Rank 3" -> "MPI_Rank_3"). All locations
 * (threads) of a process share its clock, so its events are merged, in time order, into one
 * node; messages are matched between locations and attributed to their processes.
 *
 * Time: event times as any OTF2 reader sees them (raw ticks plus the archive's ClockOffset
 * corrections, interpolated by libotf2), converted exactly to ns since the archive's global
 * offset: ns = floor((ticks - globalOffset) * 1e9 / timerResolution), in 128-bit integers.
 *
 * Messages: MpiSend and MpiIsend are sends (at their record time, when the send started),
 * MpiRecv and MpiIrecv receives (at their record time, when the receive completed); rank and
 * communicator are resolved to locations through the Comm, COMM_GROUP and COMM_LOCATIONS
 * definitions; a message's own end is taken at its process's member of COMM_LOCATIONS too
 * (its peer names a rank, not a thread: a thread's messages pair with the rank's). Sends and receives are paired first-in first-out per (sender, receiver,
 * communicator, tag), MPI's non-overtaking rule: sends in the order they were started,
 * receives in the order they were posted (an MpiIrecv at the time of its MpiIrecvRequest).
 * Cancelled sends, messages within one process and messages on communicators that cannot be
 * resolved (inter-communicators) are carried as TRACE_OTHER. A channel with more sends than
 * receives (or fewer) is an error: first-in first-out pairing would go wrong from there on.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "align/otf2_copy.h"
#include "align/otf2_set.h"
#include "align/format.h"
#include "align/trace.h"
#include "util/msgmatch.h"
#include "util/grow.h"
#include "util/path.h"

/* one send or receive, until matched */
struct p2p {
	int recv;
	uint32_t self, other; /* location indices: the sender's and receiver's for a send */
	uint32_t comm, tag;
	int64_t order;        /* sends: start time; receives: posting time (ns) */
	uint64_t seq;         /* arrival order, to break ties */
	size_t node, ev;      /* where the event ended up */
	int cancelled;
};

/* a node's event before sorting, with where it came from */
struct tev {
	struct trace_event e;
	uint32_t loc;
	uint64_t pos;
	size_t p2p; /* index + 1 into the p2p array, or 0 */
};

struct pending {
	uint32_t loc;
	uint64_t req;
	int64_t t;
	size_t p2p;
};

/* reading state */
struct rd {
	struct otf2_defs d;  /* first: the global-definition callbacks' user data is rd */
	struct trace_set *set;
	struct otf2_set *o;
	size_t caplocs;
	struct tev **tev;   /* per node */
	size_t *ntev, *captev;
	struct p2p *p2p;
	size_t np2p, capp2p;
	struct pending *pend;
	size_t npend, cappend;
	uint32_t cur;       /* location being read */
	struct otf2_copy copy;
};

static int rd_nomem(struct rd *r)
{
	return otf2_defs_nomem(&r->d);
}

/* ---- global definitions needed to resolve messages and name nodes (otf2_defs.h), and the
 * locations ---- */

static OTF2_CallbackCode def_location(void *u, OTF2_LocationRef self, OTF2_StringRef name,
                                      OTF2_LocationType type, uint64_t nev,
                                      OTF2_LocationGroupRef group)
{
	struct rd *r = u;
	struct loc *l;

	(void)name, (void)type;
	if (GROW(r->o->locs, r->o->nlocs, r->caplocs))
		return rd_nomem(r);
	l = &r->o->locs[r->o->nlocs++];
	memset(l, 0, sizeof(*l));
	l->ref = self;
	l->group = group;
	l->nev = nev;
	l->proc = -1;
	return OTF2_CALLBACK_SUCCESS;
}

/* location index of rank `rank` of communicator `comm`, or -1 */
static long rank_loc(const struct rd *r, uint32_t comm, uint32_t rank)
{
	const struct otf2_grp *g = otf2_defs_comm_group(&r->d, comm), *cl;

	if (!g || g->type != OTF2_GROUP_TYPE_COMM_GROUP || rank >= g->n)
		return -1;
	cl = otf2_defs_comm_locations(&r->d, g->paradigm);
	if (!cl || g->m[rank] >= cl->n)
		return -1;
	return otf2_find_loc(r->o, cl->m[g->m[rank]]);
}

/* the location index messages of location cur are matched at: its process's member of
 * the COMM_LOCATIONS group (a thread's messages name their peers by rank, which the group
 * resolves to that member), else cur itself */
static uint32_t proc_loc(struct rd *r, uint32_t cur)
{
	struct loc *l = &r->o->locs[cur];
	if (l->proc >= 0)
		return (uint32_t)l->proc;
	l->proc = cur;
	for (size_t i = 0; i < r->d.ngrps; i++) {
		if (r->d.grps[i].type != OTF2_GROUP_TYPE_COMM_LOCATIONS)
			continue;
		for (size_t k = 0; k < r->d.grps[i].n; k++) {
			long m = otf2_find_loc(r->o, r->d.grps[i].m[k]);
			if (m >= 0 && r->o->locs[m].group == l->group) {
				l->proc = m;
				return (uint32_t)m;
			}
		}
	}
	return cur;
}

/* ---- events, first pass: collect ---- */

static int add_tev(struct rd *r, uint64_t ticks, enum trace_kind kind, size_t p2p)
{
	const struct loc *l = &r->o->locs[r->cur];
	size_t n = l->node;
	struct tev *t;
	int64_t ns;

	if (otf2_ticks_to_ns(r->o, ticks, &ns))
		return otf2_defs_bad(&r->d, "location %" PRIu64 ", event %" PRIu64 ": time %" PRIu64
		                     " ticks is out of range; expected times near the global offset %"
		                     PRIu64, l->ref, r->copy.position, ticks, r->o->goff);
	if (GROW(r->tev[n], r->ntev[n], r->captev[n]))
		return rd_nomem(r);
	t = &r->tev[n][r->ntev[n]++];
	t->e.time_ns = ns;
	t->e.kind = kind;
	t->e.msg = 0;
	t->e.peer = -1;
	t->e.record = (size_t)r->copy.position;
	t->e.line = r->copy.position > UINT32_MAX ? UINT32_MAX : (uint32_t)r->copy.position;
	t->loc = r->cur;
	t->pos = r->copy.position;
	t->p2p = p2p;
	return 0;
}

/* every event not handled below: TRACE_OTHER */
static int stamp_other(struct otf2_copy *c, OTF2_LocationRef loc, OTF2_TimeStamp *t, int is_event)
{
	struct rd *r = c->user;

	(void)loc;
	if (!is_event)
		return 1;
	return add_tev(r, *t, TRACE_OTHER, 0) ? -1 : 1;
}

static OTF2_CallbackCode p2p_event(struct rd *r, OTF2_TimeStamp time, uint64_t pos, int recv,
                                   uint32_t rank, OTF2_CommRef comm, uint32_t tag,
                                   int64_t order_ns, int has_order, uint64_t req)
{
	long other = rank_loc(r, comm, rank);
	struct p2p *p;
	int64_t ns;

	r->copy.position = pos;
	if (other < 0 || r->o->locs[other].node == r->o->locs[r->cur].node)
		return add_tev(r, time, TRACE_OTHER, 0) ? OTF2_CALLBACK_INTERRUPT
		                                        : OTF2_CALLBACK_SUCCESS;
	if (otf2_ticks_to_ns(r->o, time, &ns))
		return add_tev(r, time, TRACE_OTHER, 0), OTF2_CALLBACK_INTERRUPT;
	if (GROW(r->p2p, r->np2p, r->capp2p))
		return rd_nomem(r);
	p = &r->p2p[r->np2p];
	p->recv = recv;
	p->self = recv ? (uint32_t)other : proc_loc(r, r->cur);
	p->other = recv ? proc_loc(r, r->cur) : (uint32_t)other;
	p->comm = comm;
	p->tag = tag;
	p->order = has_order ? order_ns : ns;
	p->seq = r->np2p;
	p->cancelled = 0;
	r->np2p++;
	if (!recv && req != UINT64_MAX) { /* an Isend: remember it, it may be cancelled */
		if (GROW(r->pend, r->npend, r->cappend))
			return rd_nomem(r);
		r->pend[r->npend++] = (struct pending){ r->cur | 0x80000000u, req, ns, r->np2p };
	}
	return add_tev(r, time, recv ? TRACE_RECV : TRACE_SEND, r->np2p) ? OTF2_CALLBACK_INTERRUPT
	                                                                  : OTF2_CALLBACK_SUCCESS;
}

/* the event callbacks get the struct otf2_copy of the generated ones as userData */
#define RD(u) ((struct rd *)((struct otf2_copy *)(u))->user)

static OTF2_CallbackCode ev_send(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos, void *u,
                                 OTF2_AttributeList *a, uint32_t receiver, OTF2_CommRef comm,
                                 uint32_t tag, uint64_t len)
{
	(void)l, (void)a, (void)len;
	return p2p_event(RD(u), t, pos, 0, receiver, comm, tag, 0, 0, UINT64_MAX);
}

static OTF2_CallbackCode ev_isend(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos, void *u,
                                  OTF2_AttributeList *a, uint32_t receiver, OTF2_CommRef comm,
                                  uint32_t tag, uint64_t len, uint64_t req)
{
	(void)l, (void)a, (void)len;
	return p2p_event(RD(u), t, pos, 0, receiver, comm, tag, 0, 0, req);
}

static OTF2_CallbackCode ev_recv(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos, void *u,
                                 OTF2_AttributeList *a, uint32_t sender, OTF2_CommRef comm,
                                 uint32_t tag, uint64_t len)
{
	(void)l, (void)a, (void)len;
	return p2p_event(RD(u), t, pos, 1, sender, comm, tag, 0, 0, UINT64_MAX);
}

/* the posting time of request req on the current location, removed from the pending list */
static int take_pending(struct rd *r, uint32_t key, uint64_t req, struct pending *out)
{
	for (size_t i = r->npend; i-- > 0;)
		if (r->pend[i].loc == key && r->pend[i].req == req) {
			*out = r->pend[i];
			r->pend[i] = r->pend[--r->npend];
			return 1;
		}
	return 0;
}

static OTF2_CallbackCode ev_irecv(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos, void *u,
                                  OTF2_AttributeList *a, uint32_t sender, OTF2_CommRef comm,
                                  uint32_t tag, uint64_t len, uint64_t req)
{
	struct rd *r = RD(u);
	struct pending p;
	int has = take_pending(r, r->cur, req, &p);

	(void)l, (void)a, (void)len;
	return p2p_event(r, t, pos, 1, sender, comm, tag, has ? p.t : 0, has, UINT64_MAX);
}

static OTF2_CallbackCode ev_irecv_request(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos,
                                          void *u, OTF2_AttributeList *a, uint64_t req)
{
	struct rd *r = RD(u);
	int64_t ns;

	(void)l, (void)a;
	r->copy.position = pos;
	if (otf2_ticks_to_ns(r->o, t, &ns) == 0) {
		if (GROW(r->pend, r->npend, r->cappend))
			return rd_nomem(r);
		r->pend[r->npend++] = (struct pending){ r->cur, req, ns, 0 };
	}
	return add_tev(r, t, TRACE_OTHER, 0) ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_isend_complete(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos,
                                           void *u, OTF2_AttributeList *a, uint64_t req)
{
	struct rd *r = RD(u);
	struct pending p;

	(void)l, (void)a;
	r->copy.position = pos;
	take_pending(r, r->cur | 0x80000000u, req, &p);
	return add_tev(r, t, TRACE_OTHER, 0) ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_cancelled(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos,
                                      void *u, OTF2_AttributeList *a, uint64_t req)
{
	struct rd *r = RD(u);
	struct pending p;

	(void)l, (void)a;
	r->copy.position = pos;
	if (take_pending(r, r->cur | 0x80000000u, req, &p) && p.p2p)
		r->p2p[p.p2p - 1].cancelled = 1;
	return add_tev(r, t, TRACE_OTHER, 0) ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static int tev_cmp(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;

	if (x->e.time_ns != y->e.time_ns)
		return x->e.time_ns < y->e.time_ns ? -1 : 1;
	if (x->loc != y->loc)
		return x->loc < y->loc ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* a channel with unmatched messages (util/msgmatch.h): an error naming it, both sides
 * counted */
static int channel_error(void *ctx, const struct msgmatch_end *x, size_t nsend, size_t nrecv)
{
	const struct rd *r = ctx;
	return err_set(HCLOCK_EINVAL, "%s: %zu messages sent from location %"
	               PRIu64 " to location %" PRIu64 " (communicator %" PRIu64 ", tag %" PRId64
	               ") but %zu received; every MpiSend/MpiIsend needs its MpiRecv/MpiIrecv "
	               "(incomplete or filtered trace?)", r->o->anchor, nsend,
	               r->o->locs[x->src].ref, r->o->locs[x->dst].ref, x->comm, x->tag, nrecv);
}

/* the k-th send and receive of a channel: one message, numbered from 1 */
struct numbering {
	struct rd *r;
	uint64_t msg;
};

static int number_pair(void *ctx, const struct msgmatch_end *a, const struct msgmatch_end *b)
{
	struct numbering *nb = ctx;
	const struct p2p *s = &nb->r->p2p[a->who], *v = &nb->r->p2p[b->who];
	struct trace_event *se = &nb->r->set->nodes[s->node].ev[s->ev];
	struct trace_event *re = &nb->r->set->nodes[v->node].ev[v->ev];
	se->msg = re->msg = ++nb->msg;
	se->peer = (int)v->node;
	re->peer = (int)s->node;
	return 0;
}

/* Pair sends and receives first-in first-out per channel (sender, receiver, communicator,
 * tag; then posting order, arrival order); mark the node events. */
static int match(struct rd *r)
{
	struct trace_set *set = r->set;
	struct msgmatch_end *ends = malloc((r->np2p + 1) * sizeof(*ends));
	struct numbering nb = {r, 0};
	size_t nends = 0;
	int ret;

	if (!ends)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", r->o->anchor);
	for (size_t k = 0; k < r->np2p; k++) {
		const struct p2p *p = &r->p2p[k];
		if (!p->cancelled)
			ends[nends++] = (struct msgmatch_end){.src = p->self, .dst = p->other,
			                                      .comm = p->comm, .tag = p->tag,
			                                      .order = p->order, .order2 = p->seq,
			                                      .recv = p->recv, .who = k};
	}
	ret = msgmatch(ends, nends, number_pair, channel_error, &nb, NULL);
	free(ends);
	if (ret)
		return ret;
	/* cancelled sends and anything left: TRACE_OTHER */
	for (size_t n = 0; n < set->nnodes; n++)
		for (size_t k = 0; k < set->nodes[n].nev; k++) {
			struct trace_event *e = &set->nodes[n].ev[k];

			if ((e->kind == TRACE_SEND || e->kind == TRACE_RECV) && e->msg == 0)
				e->kind = TRACE_OTHER;
		}
	if (nb.msg == 0)
		return err_set(HCLOCK_EINVAL, "%s: no MPI point-to-point message "
		               "between two processes; hclock align needs MpiSend/MpiIsend and "
		               "MpiRecv/MpiIrecv records", r->o->anchor);
	return 0;
}

/* ---- archive paths ---- */

/* the anchor file of path (itself, or the one NAME.otf2 inside the directory), malloc'd */
static char *find_anchor(const char *path)
{
	return path_find_one(path, ".otf2");
}

static int otf2_probe(const char *path)
{
	char *a = find_anchor(path);
	char head[64];
	size_t n = 0, l;
	FILE *f;
	int ok = 0;

	if (!a)
		return 0;
	l = strlen(a);
	f = l > 5 && !strcmp(a + l - 5, ".otf2") ? fopen(a, "rb") : NULL;
	if (f) {
		n = fread(head, 1, sizeof(head), f);
		fclose(f);
		for (size_t i = 0; i + 4 <= n && !ok; i++)
			ok = !memcmp(head + i, "OTF2", 4);
	}
	free(a);
	return ok;
}

static void free_rd(struct rd *r)
{
	otf2_defs_free(&r->d);
	if (r->tev)
		for (size_t n = 0; n < r->set->nnodes; n++)
			free(r->tev[n]);
	free(r->tev);
	free(r->ntev);
	free(r->captev);
	free(r->p2p);
	free(r->pend);
}

static void otf2_release(struct trace_set *set)
{
	struct otf2_set *o = set->priv;

	for (size_t i = 0; i < set->nnodes; i++) {
		free(set->nodes[i].name);
		free(set->nodes[i].path);
		free(set->nodes[i].ev);
	}
	free(set->nodes);
	if (o) {
		free(o->anchor);
		free(o->dirname);
		free(o->name);
		free(o->locs);
		free(o);
	}
	set->nodes = NULL;
	set->nnodes = 0;
	set->priv = NULL;
}

static int loc_cmp(const void *a, const void *b)
{
	const struct loc *x = a, *y = b;

	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/* whether a node made so far has the name */
static int name_taken(const void *ctx, const char *name)
{
	const struct trace_set *set = ctx;

	for (size_t k = 0; k < set->nnodes; k++)
		if (!strcmp(set->nodes[k].name, name))
			return 1;
	return 0;
}

/* every location to its node; the per-node event lists of the first pass */
static int assign_locations(struct rd *r)
{
	struct otf2_set *o = r->o;
	size_t nn = r->set->nnodes;

	for (size_t i = 0; i < o->nlocs; i++) {
		o->locs[i].node = SIZE_MAX;
		for (size_t g = 0; g < r->d.nlgs; g++)
			if (r->d.lgs[g].ref == o->locs[i].group)
				o->locs[i].node = r->d.lgs[g].node;
		if (o->locs[i].node == SIZE_MAX)
			return err_set(HCLOCK_EINVAL, "%s: location %" PRIu64
			               " belongs to location group %" PRIu32 ", which is not defined; "
			               "expected a LocationGroup definition for it", o->anchor,
			               o->locs[i].ref, o->locs[i].group);
	}
	if (nn < 2)
		return err_set(HCLOCK_EINVAL, "%s: %zu process(es) with "
		               "locations; hclock align needs at least two (location groups)",
		               o->anchor, nn);
	r->tev = calloc(nn, sizeof(*r->tev));
	r->ntev = calloc(nn, sizeof(*r->ntev));
	r->captev = calloc(nn, sizeof(*r->captev));
	if (!r->tev || !r->ntev || !r->captev)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	return 0;
}

/* nodes from location groups that have locations */
static int make_nodes(struct rd *r)
{
	struct trace_set *set = r->set;
	struct otf2_set *o = r->o;

	if (o->nlocs)
		qsort(o->locs, o->nlocs, sizeof(*o->locs), loc_cmp);
	for (size_t i = 1; i < o->nlocs; i++)
		if (o->locs[i].ref == o->locs[i - 1].ref)
			return err_set(HCLOCK_EINVAL, "%s: location %" PRIu64
			               " defined twice; expected one definition per location",
			               o->anchor, o->locs[i].ref);
	set->nodes = calloc(r->d.nlgs + 1, sizeof(*set->nodes));
	if (!set->nodes)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	for (size_t g = 0; g < r->d.nlgs; g++) {
		struct trace_node *nd;
		int used = 0;

		for (size_t i = 0; i < o->nlocs; i++)
			used |= o->locs[i].group == r->d.lgs[g].ref;
		if (!used)
			continue;
		nd = &set->nodes[set->nnodes];
		nd->name = otf2_defs_node_name(&r->d, g, name_taken, set);
		if (!nd->name)
			return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
		nd->path = strdup(o->anchor);
		r->d.lgs[g].node = set->nnodes++;
		if (!nd->path)
			return err_set(HCLOCK_ENOMEM, "%s: out of memory", o->anchor);
	}
	return assign_locations(r);
}

static int set_paths(struct otf2_set *o, const char *anchor)
{
	char *real = realpath(anchor, NULL);
	char *slash, *base, *dot;

	if (!real)
		return -1;
	o->anchor = strdup(anchor);
	slash = strrchr(real, '/');
	base = slash ? slash + 1 : real;
	o->name = strdup(base);
	if (o->name && (dot = strrchr(o->name, '.')) && dot != o->name)
		*dot = 0;
	if (slash && slash != real) {
		*slash = 0;
		slash = strrchr(real, '/');
		o->dirname = strdup(slash ? slash + 1 : real);
	} else {
		o->dirname = strdup(o->name ? o->name : "otf2");
	}
	free(real);
	return o->anchor && o->name && o->dirname ? 0 : -1;
}

/* the archive behind paths (one anchor, or the directory holding it) and the set's state */
static int open_set(const char *const *paths, size_t npaths, struct trace_set *set,
                    struct otf2_set **out)
{
	struct otf2_set *o;
	char *anchor;
	int e;

	if (npaths != 1)
		return err_set(HCLOCK_EINVAL, "%s: %zu OTF2 inputs; give one archive "
		               "(its .otf2 anchor file or its directory)", npaths ? paths[0] : "otf2",
		               npaths);
	anchor = find_anchor(paths[0]);
	if (!anchor)
		return err_set(HCLOCK_EINVAL, "%s: no OTF2 archive (expected an anchor "
		               "file NAME.otf2, or a directory holding exactly one)", paths[0]);
	o = calloc(1, sizeof(*o));
	set->priv = o;
	errno = 0;
	e = !o ? ENOMEM : set_paths(o, anchor) ? (errno ? errno : ENOMEM) : 0;
	free(anchor);
	if (e)
		return err_set(e == ENOMEM ? HCLOCK_ENOMEM : HCLOCK_EIO, "%s: %s",
		               paths[0], strerror(e));
	*out = o;
	return 0;
}

static int read_error(const struct rd *r, OTF2_ErrorCode e)
{
	return err_set(HCLOCK_EINVAL, "%s: cannot read the archive (OTF2: "
	               "%s); give a complete archive", r->o->anchor, otf2_why(e));
}

static void more_defs(OTF2_GlobalDefReaderCallbacks *cb)
{
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, def_location);
}

/* the global definitions that name the nodes and resolve messages; the clock's into the set */
static int read_global_defs(struct rd *r, OTF2_Reader *rdr)
{
	struct otf2_set *o = r->o;
	int ret;

	r->d.anchor = o->anchor;
	if ((ret = otf2_defs_read(rdr, &r->d, more_defs, r)))
		return ret;
	o->res = r->d.res;
	o->goff = r->d.goff;
	o->tlen = r->d.tlen;
	o->realtime = r->d.realtime;
	o->have_clock = r->d.have_clock;
	return 0;
}

/* the events of location i, after its local definitions (mapping tables, clock offsets) */
static int read_location(struct rd *r, OTF2_Reader *rdr, OTF2_EvtReaderCallbacks *ecb, size_t i,
                         int defs)
{
	const struct loc *l = &r->o->locs[i];
	OTF2_EvtReader *er;
	OTF2_ErrorCode e;
	uint64_t nread;

	if (defs) {
		OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rdr, l->ref);

		if (dr) {
			e = OTF2_Reader_ReadAllLocalDefinitions(rdr, dr, &nread);
			OTF2_Reader_CloseDefReader(rdr, dr);
			if (e != OTF2_SUCCESS)
				return read_error(r, e);
		}
	}
	er = OTF2_Reader_GetEvtReader(rdr, l->ref);
	if (!er)
		return read_error(r, OTF2_SUCCESS);
	r->cur = (uint32_t)i;
	r->npend = 0;
	OTF2_Reader_RegisterEvtCallbacks(rdr, er, ecb, &r->copy);
	e = OTF2_Reader_ReadAllLocalEvents(rdr, er, &nread);
	OTF2_Reader_CloseEvtReader(rdr, er);
	if (r->d.failed)
		return r->d.failed;
	if (r->copy.unknown)
		return err_set(HCLOCK_EINVAL, "%s: location %" PRIu64 ": event %"
		               PRIu64 " of a type this OTF2 library does not know; read it with the "
		               "OTF2 version that wrote it", r->o->anchor, l->ref,
		               r->copy.position + 1);
	if (e != OTF2_SUCCESS)
		return read_error(r, e);
	return 0;
}

/* first pass over every location's events: collect them and the messages */
static int read_events(struct rd *r, OTF2_Reader *rdr)
{
	const struct otf2_set *o = r->o;
	OTF2_EvtReaderCallbacks *ecb;
	OTF2_ErrorCode e;
	int defs, ret = 0;

	if ((e = otf2_open_locations(rdr, o, &defs)) != OTF2_SUCCESS)
		return read_error(r, e);
	ecb = OTF2_EvtReaderCallbacks_New();
	if (!ecb)
		return read_error(r, OTF2_SUCCESS);
	otf2_copy_evt_callbacks(ecb);
	OTF2_EvtReaderCallbacks_SetMpiSendCallback(ecb, ev_send);
	OTF2_EvtReaderCallbacks_SetMpiIsendCallback(ecb, ev_isend);
	OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(ecb, ev_isend_complete);
	OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(ecb, ev_irecv_request);
	OTF2_EvtReaderCallbacks_SetMpiRecvCallback(ecb, ev_recv);
	OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(ecb, ev_irecv);
	OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(ecb, ev_cancelled);
	r->copy.stamp = stamp_other;
	r->copy.user = r;
	for (size_t i = 0; !ret && i < o->nlocs; i++)
		ret = read_location(r, rdr, ecb, i, defs);
	OTF2_EvtReaderCallbacks_Delete(ecb);
	if (ret)
		return ret;
	if (defs)
		OTF2_Reader_CloseDefFiles(rdr);
	OTF2_Reader_CloseEvtFiles(rdr);
	return 0;
}

/* nodes: the events of all their locations in time order */
static int node_events(struct rd *r)
{
	struct trace_set *set = r->set;

	for (size_t n = 0; n < set->nnodes; n++) {
		struct trace_node *nd = &set->nodes[n];

		if (r->ntev[n])
			qsort(r->tev[n], r->ntev[n], sizeof(*r->tev[n]), tev_cmp);
		nd->ev = malloc((r->ntev[n] + 1) * sizeof(*nd->ev));
		if (!nd->ev)
			return err_set(HCLOCK_ENOMEM, "%s: out of memory",
			               r->o->anchor);
		nd->nev = r->ntev[n];
		for (size_t k = 0; k < r->ntev[n]; k++) {
			nd->ev[k] = r->tev[n][k].e;
			if (r->tev[n][k].p2p) {
				r->p2p[r->tev[n][k].p2p - 1].node = n;
				r->p2p[r->tev[n][k].p2p - 1].ev = k;
			}
		}
	}
	return 0;
}

static int otf2_read(const char *const *paths, size_t npaths, struct trace_set *set)
{
	struct rd r = {.set = set};
	OTF2_Reader *rdr = NULL;
	OTF2_ErrorCallback prev;
	OTF2_ErrorCode e;
	int ret;

	set->fmt = &trace_format_otf2;
	if ((ret = open_set(paths, npaths, set, &r.o))) {
		otf2_release(set);
		return ret;
	}
	prev = otf2_quiet();
	rdr = OTF2_Reader_Open(r.o->anchor);
	if (!rdr)
		ret = err_set(HCLOCK_EINVAL, "%s: not a readable OTF2 archive (OTF2: %s); "
		              "give the anchor file written by an OTF2 producer", r.o->anchor,
		              otf2_why(OTF2_SUCCESS));
	else if ((e = OTF2_Reader_SetSerialCollectiveCallbacks(rdr)) != OTF2_SUCCESS)
		ret = read_error(&r, e);
	if (!ret)
		ret = read_global_defs(&r, rdr);
	if (!ret)
		ret = make_nodes(&r);
	if (!ret)
		ret = read_events(&r, rdr);
	if (!ret)
		ret = node_events(&r);
	if (!ret)
		ret = match(&r);
	if (rdr)
		OTF2_Reader_Close(rdr);
	OTF2_Error_RegisterCallback(prev, NULL);
	free_rd(&r);
	if (ret)
		otf2_release(set);
	return ret;
}

const struct trace_format trace_format_otf2 = {
	.name = "otf2",
	.usage = "one OTF2 archive: NAME.otf2 or its directory",
	.probe = otf2_probe,
	.read = otf2_read,
	.write = otf2_write,
	.release = otf2_release,
};
