/*
 * reorder.c - the tracer's raw files with no receive before its send, within the clock's
 * bounds (reorder.h).
 *
 * Every pass over a file goes through one walker (walk_*), which reads the records a chunk at
 * a time and ties each to its thread's events the same way every time: a thread's records
 * gather into a unit (the sends made before a call, the call, the sends a persistent start
 * made, the receives and nonblocking collectives the call completed), and a unit's events
 * are given out, in that order, when the thread's next unit begins. The passes:
 *   collect  each event's time, its own upper bound and its tie; each message record's end;
 *   then     each thread's bounds swept (an event is no later than any later event of its
 *            thread, no earlier than any earlier one), the ends paired (util/msgmatch.h), align's repair_order;
 *   write    the moved events' records patched in place and DIR/moved.csv, once the whole
 *            repair succeeded;
 *   locate   after a failure, the records of the events the error line names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_api.h"
#include "align/repair.h"
#include "trace/mpiclass.h"
#include "trace/reorder.h"
#include "util/err.h"
#include "util/msgmatch.h"
#include "util/path.h"
#include "util/record.h"
#include "waits/ktab.h"

#define CHUNK 1024                     /* records read at a time (64 KiB) */
#define MAX_TID 65536                  /* threads a process may have */
#define LATENCY_LIMIT (INT64_C(1) << 62) /* ns, as repair.c's */
#define NONE ((size_t)-1)
#define NO_NODE UINT32_MAX

/* what an event is to its record */
enum role { EV_ENTER, EV_LEAVE, EV_SEND, EV_RECV, EV_NB };
static const char *const role_name[] = {"enter", "leave", "send", "receive", "completion"};

/* one thread's events: a node of the repair */
struct tnode {
	int rank;
	uint32_t tid;
	size_t nev, cap;
	int64_t *t;      /* per event: its recorded time, then its repaired one, ns */
	double *dplus;   /* per event: its own upper bound's distance, then (swept) how far after
	                    t its true time may lie, ns; +inf: no bound */
	double *dminus;  /* per event: its own lower bound's distance (+inf: none), then (swept)
	                    how far before t its true time may lie, ns; 0: no bound known, the
	                    event never moves back */
	int64_t *key;    /* per event: its tie, non-decreasing (one key: moved together) */
	uint64_t tail;   /* enters and leaves since its last event with an upper bound */
};

/* where a message end's event is */
struct endloc {
	uint32_t node;   /* NO_NODE: tied to no call (no event) */
	size_t ev;
};

struct reorder {
	const char *dir;
	int size;
	struct tnode *node;
	size_t nn, ncap;
	uint32_t **node_of;       /* [rank][tid]: its node, NO_NODE: none */
	size_t *ntid;             /* [rank]: entries of node_of[rank] */
	struct msgmatch_end *end; /* the message records' ends */
	struct endloc *at;        /* ... and their events */
	size_t nend, endcap;
	struct repair_msg *msg;   /* the messages of the repair */
	size_t nmsg;
	size_t moved_any;         /* events the repair moved, of any role */
	struct trace_reorder_result *res;
};

/* ---- the walker ------------------------------------------------------------------------- */

/* a record of a thread's open unit */
struct held {
	struct rec r;   /* a copy; the write pass patches it */
	size_t idx;     /* its index among the file's records */
	size_t end;     /* its message end (collect), or NONE */
	uint8_t role;   /* enum role; the call itself EV_ENTER */
	uint8_t dirty;  /* patched: to be written back */
};

struct wthread {
	uint32_t node;
	size_t nev;     /* its events so far */
	int64_t key;    /* its last tie */
	struct held *h; /* its open unit, in the order of the records */
	size_t nh, cap;
	size_t call;    /* the call's place in h, NONE: no call yet */
};

struct walk;

struct walk_ops {
	/* a message record, its order among the process's sends (receives): *end its end
	 * (collect), or NONE */
	int (*end)(struct walk *w, const struct rec *r, int recv, int64_t order, size_t *end);
	/* event ev of node with tie key: role of record h (a call gives its enter and leave) */
	int (*event)(struct walk *w, uint32_t node, size_t ev, int64_t key, struct held *h,
	             int role);
	/* a call record as it comes; its enter will be event enter of node */
	int (*call)(struct walk *w, const struct rec *r, uint32_t node, size_t enter);
	/* a completed nonblocking collective h, completed by the call whose leave is event leave
	 * of node (NONE: by no call found) */
	int (*nb)(struct walk *w, struct held *h, uint32_t node, size_t leave);
	int write;      /* the patched records written back */
};

struct walk {
	struct reorder *x;
	const struct walk_ops *ops;
	void *ctx;
	int rank, fd;
	char path[4200];
	size_t first;            /* byte offset of the first record */
	unsigned char *istart;   /* per function: it starts a nonblocking collective */
	uint32_t nfuncs;
	struct rec chunk[CHUNK];
	size_t base, n;          /* the chunk's first record's index, its records */
	int dirty;               /* the chunk was patched */
	struct wthread *th;      /* by tid */
	size_t nth;
	int64_t sends, recvs;    /* message records so far */
};

static off_t rec_off(const struct walk *w, size_t idx)
{
	return (off_t)(w->first + idx * sizeof(struct rec));
}

/* room for item i in the array *a of *cap items of size bytes (doubled, from 4) */
static int room(void *a, size_t *cap, size_t i, size_t size)
{
	size_t c = *cap ? *cap : 4;
	void *p;
	if (i < *cap)
		return 0;
	while (c <= i)
		c *= 2;
	if (!(p = realloc(*(void **)a, c * size)))
		return HCLOCK_ENOMEM;
	*(void **)a = p;
	*cap = c;
	return 0;
}

/* the node of thread tid of the walk's process, made on first sight */
static int node_get(struct reorder *x, int rank, uint32_t tid, uint32_t *out)
{
	size_t had = x->ntid[rank];
	if (room(&x->node_of[rank], &x->ntid[rank], tid, sizeof(uint32_t)))
		return HCLOCK_ENOMEM;
	for (size_t i = had; i < x->ntid[rank]; i++)
		x->node_of[rank][i] = NO_NODE;
	if (x->node_of[rank][tid] == NO_NODE) {
		if (room(&x->node, &x->ncap, x->nn, sizeof(*x->node)))
			return HCLOCK_ENOMEM;
		x->node[x->nn] = (struct tnode){.rank = rank, .tid = tid};
		x->node_of[rank][tid] = (uint32_t)x->nn++;
	}
	*out = x->node_of[rank][tid];
	return 0;
}

static int thread(struct walk *w, const struct rec *r, size_t idx, struct wthread **out)
{
	size_t had = w->nth;
	*out = NULL;
	if (r->tid >= MAX_TID)
		return err_set(HCLOCK_EINVAL, "%s: record %zu: thread %" PRIu32 ", above the %d a "
		               "process may have: a corrupt file", w->path, idx, r->tid, MAX_TID);
	if (room(&w->th, &w->nth, r->tid, sizeof(*w->th)))
		return HCLOCK_ENOMEM;
	for (size_t i = had; i < w->nth; i++)
		w->th[i] = (struct wthread){.node = NO_NODE, .call = NONE};
	struct wthread *t = &w->th[r->tid];
	int rc = t->node == NO_NODE ? node_get(w->x, w->rank, r->tid, &t->node) : 0;
	*out = t;
	return rc;
}

static int hold(struct wthread *t, const struct rec *r, size_t idx, size_t end, int role)
{
	if (room(&t->h, &t->cap, t->nh, sizeof(*t->h)))
		return HCLOCK_ENOMEM;
	t->h[t->nh++] = (struct held){.r = *r, .idx = idx, .end = end, .role = (uint8_t)role};
	return 0;
}

/* a patched record back: into the chunk if it is there, else onto the file */
static int put(struct walk *w, struct held *h)
{
	if (!h->dirty || !w->ops->write)
		return 0;
	h->dirty = 0;
	if (h->idx >= w->base && h->idx < w->base + w->n) {
		w->chunk[h->idx - w->base] = h->r;
		w->dirty = 1;
		return 0;
	}
	if (pwrite(w->fd, &h->r, sizeof(h->r), rec_off(w, h->idx)) != (ssize_t)sizeof(h->r))
		return err_set(HCLOCK_EIO, "%s: writing record %zu failed: %s; the raw files are "
		               "partly repaired", w->path, h->idx, strerror(errno ? errno : EIO));
	return 0;
}

/* the thread's unit ends: its events given out (a unit without a call has none: its sends
 * are tied to no call), its patched records written back */
static int close_unit(struct walk *w, struct wthread *t)
{
	const struct walk_ops *o = w->ops;
	int rc = 0;
	if (t->call != NONE) {
		struct held *c = &t->h[t->call];
		int64_t k = ++t->key;
		rc = o->event(w, t->node, t->nev++, k, c, EV_ENTER);
		for (size_t i = 0; !rc && i < t->nh; i++)
			if (t->h[i].role == EV_SEND)
				rc = o->event(w, t->node, t->nev++, k, &t->h[i], EV_SEND);
		size_t leave = t->nev++;
		k = ++t->key;
		if (!rc)
			rc = o->event(w, t->node, leave, k, c, EV_LEAVE);
		for (size_t i = 0; !rc && i < t->nh; i++)
			if (t->h[i].role == EV_RECV)
				rc = o->event(w, t->node, t->nev++, k, &t->h[i], EV_RECV);
			else if (t->h[i].role == EV_NB && o->nb)
				rc = o->nb(w, &t->h[i], t->node, leave);
	}
	for (size_t i = 0; !rc && i < t->nh; i++)
		rc = put(w, &t->h[i]);
	t->nh = 0;
	t->call = NONE;
	return rc;
}

static int end_of(struct walk *w, const struct rec *r, int recv, size_t *end)
{
	int64_t order = recv ? w->recvs++ : w->sends++;
	*end = NONE;
	return w->ops->end ? w->ops->end(w, r, recv, order, end) : 0;
}

/* a call record (or a blocking collective's): the unit before it ends, a new one begins */
static int begin_call(struct walk *w, struct wthread *t, const struct rec *r, size_t idx)
{
	int rc = t->call != NONE ? close_unit(w, t) : 0;
	if (!rc && w->ops->call)
		rc = w->ops->call(w, r, t->node, t->nev);
	t->call = t->nh;
	return rc ? rc : hold(t, r, idx, NONE, EV_ENTER);
}

/* a completed nonblocking collective: with the call that completed it (at its leave), or
 * alone */
static int nb_done(struct walk *w, struct wthread *t, const struct rec *r, size_t idx)
{
	const struct held *c = t->call != NONE ? &t->h[t->call] : NULL;
	if (c && r->t2_g == c->r.t2_g)
		return hold(t, r, idx, NONE, EV_NB);
	struct held h = {.r = *r, .idx = idx, .end = NONE, .role = EV_NB};
	int rc = w->ops->nb ? w->ops->nb(w, &h, t->node, NONE) : 0;
	return rc ? rc : put(w, &h);
}

/* one record, its index idx */
static int step(struct walk *w, const struct rec *r, size_t idx)
{
	struct wthread *t;
	const struct held *c;
	size_t end;
	int rc;

	if (r->kind == REC_DROP || r->kind == REC_BOUND)
		return 0;
	if ((rc = thread(w, r, idx, &t)))
		return rc;
	c = t->call != NONE ? &t->h[t->call] : NULL;
	switch (r->kind) {
	case REC_SEND:
		if ((rc = end_of(w, r, 0, &end)))
			return rc;
		/* a persistent send's record comes after its MPI_Start(all)'s, at its enter; any
		 * other send's before its call's: the unit ends */
		if (c && !(r->func == c->r.func && r->t_g == c->r.t_g) && (rc = close_unit(w, t)))
			return rc;
		return hold(t, r, idx, end, EV_SEND);
	case REC_RECV:
		if ((rc = end_of(w, r, 1, &end)))
			return rc;
		/* after the call that completed it, at its leave; else tied to no call */
		return c && r->t_g == c->r.t2_g ? hold(t, r, idx, end, EV_RECV) : 0;
	case REC_COLL:
		return r->flags & REC_F_NB ? nb_done(w, t, r, idx) : begin_call(w, t, r, idx);
	case REC_CALL:
		return begin_call(w, t, r, idx);
	default:
		return 0;
	}
}

static int flush(struct walk *w)
{
	size_t len = w->n * sizeof(struct rec);
	w->dirty = 0;
	if (pwrite(w->fd, w->chunk, len, rec_off(w, w->base)) != (ssize_t)len)
		return err_set(HCLOCK_EIO, "%s: writing records %zu-%zu failed: %s; the raw files "
		               "are partly repaired", w->path, w->base, w->base + w->n,
		               strerror(errno ? errno : EIO));
	return 0;
}

/* every record of the file, then the units still open */
static int walk_records(struct walk *w)
{
	int rc = 0, more = 1;
	for (size_t base = 0; !rc && more; base += CHUNK) {
		ssize_t got = pread(w->fd, w->chunk, sizeof(w->chunk), rec_off(w, base));
		if (got < 0)
			return err_set(HCLOCK_EIO, "%s: %s", w->path, strerror(errno));
		size_t n = (size_t)got / sizeof(struct rec), k;
		w->base = base;
		w->n = n;
		for (k = 0; !rc && k < n; k++) {
			const struct rec *r = &w->chunk[k];
			if (!memcmp(r, REC_TRAILER_MAGIC, 8) || r->kind < REC_CALL || r->kind > REC_KIND_MAX)
				break; /* the trailer, or garbage: the records end */
			rc = step(w, r, base + k);
		}
		more = k == CHUNK;
		w->n = k;
		if (!rc && w->dirty)
			rc = flush(w);
	}
	w->n = 0;
	for (size_t i = 0; !rc && i < w->nth; i++)
		rc = close_unit(w, &w->th[i]);
	return rc;
}

/* the header and names of rank's file; fd -1: no file (a process without records) */
static int walk_open(struct walk *w, int rank, int rw)
{
	struct rec_header h;
	struct rec_file f;
	char *buf;
	int rc;

	w->rank = rank;
	if (path_fmt(w->path, sizeof(w->path), "%s/raw/rank.%d", w->x->dir, rank))
		return err_set(HCLOCK_EIO, "%s/raw/rank.%d: the path is too long", w->x->dir, rank);
	w->fd = open(w->path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (w->fd < 0)
		return errno == ENOENT ? 0 : err_set(HCLOCK_EIO, "cannot open %s: %s", w->path,
		                                     strerror(errno));
	if (pread(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		memset(&h, 0, sizeof(h));
	w->first = sizeof(h) + (h.names_bytes < (1u << 24) ? h.names_bytes : 0);
	if (!(buf = malloc(w->first)))
		return HCLOCK_ENOMEM;
	if (pread(w->fd, buf, w->first, 0) != (ssize_t)w->first)
		memset(buf, 0, w->first);
	if ((rc = rec_parse(w->path, buf, w->first, &f))) {
		free(buf);
		return rc;
	}
	if (f.h.rank != rank)
		rc = err_set(HCLOCK_EINVAL, "%s: the header says rank %d: not this file's",
		             w->path, (int)f.h.rank);
	if (!rc && !(w->istart = calloc(f.h.nfuncs + 1, 1)))
		rc = HCLOCK_ENOMEM;
	for (uint32_t i = 0; !rc && i < f.h.nfuncs; i++)
		w->istart[i] = mpiclass_of(f.names[i]).istart;
	w->nfuncs = f.h.nfuncs;
	rec_file_free(&f);
	free(buf);
	return rc;
}

/* the files of every rank (only >= 0: that rank's) through ops */
static int walk_all(struct reorder *x, const struct walk_ops *ops, void *ctx, int rw, int only)
{
	int rc = 0;
	for (int r = only < 0 ? 0 : only; !rc && r < (only < 0 ? x->size : only + 1); r++) {
		struct walk *w = calloc(1, sizeof(*w));
		if (!w)
			return HCLOCK_ENOMEM;
		w->x = x;
		w->ops = ops;
		w->ctx = ctx;
		w->fd = -1;
		rc = walk_open(w, r, rw);
		if (!rc && w->fd >= 0)
			rc = walk_records(w);
		if (w->fd >= 0)
			close(w->fd);
		for (size_t i = 0; i < w->nth; i++)
			free(w->th[i].h);
		free(w->th);
		free(w->istart);
		free(w);
	}
	return rc;
}

/* ---- collect: the events and the message ends ------------------------------------------- */

static int collect_end(struct walk *w, const struct rec *r, int recv, int64_t order,
                       size_t *end)
{
	struct reorder *x = w->x;
	if (r->peer < 0) {
		x->res->left_out++;
		return 0;
	}
	size_t cap = x->endcap;
	if (room(&x->end, &cap, x->nend, sizeof(*x->end)) ||
	    room(&x->at, &x->endcap, x->nend, sizeof(*x->at)))
		return HCLOCK_ENOMEM;
	x->end[x->nend] = (struct msgmatch_end){.src = recv ? r->peer : w->rank,
	                                        .dst = recv ? w->rank : r->peer, .comm = r->comm,
	                                        .tag = r->tag, .order = order, .recv = recv,
	                                        .who = x->nend};
	x->at[x->nend] = (struct endloc){NO_NODE, 0};
	*end = x->nend++;
	return 0;
}

/* an event's time, and how far above and below it its own bounds lie (ns; +inf: none) */
static int64_t event_time(const struct rec *r, int role, double *above, double *below)
{
	*above = *below = INFINITY;
	if (role <= EV_LEAVE && r->flags & REC_F_HW) {
		int64_t a = rec_hw_ns(rec_hw_get(r->tag, role == EV_ENTER ? 1 : 3));
		int64_t b = rec_hw_ns(rec_hw_get(r->tag, role == EV_ENTER ? 0 : 2));
		if (a >= 0)
			*above = (double)a;
		if (b >= 0)
			*below = (double)b;
	} else if (role == EV_SEND && r->t2_g) {
		int64_t a;
		if (!__builtin_sub_overflow(r->t2_g, r->t_g, &a))
			*above = (double)a; /* the latest it could have been, as the send recorded it */
	}
	return role == EV_LEAVE ? r->t2_g : r->t_g;
}

static int collect_event(struct walk *w, uint32_t node, size_t ev, int64_t key, struct held *h,
                         int role)
{
	struct reorder *x = w->x;
	struct tnode *n = &x->node[node];
	size_t c1 = n->cap, c2 = n->cap, c3 = n->cap;
	double above, below;

	if (ev != n->nev)
		return err_set(HCLOCK_EINVAL, "%s: events out of step (internal error)", w->path);
	if (room(&n->t, &c1, ev, sizeof(*n->t)) || room(&n->dplus, &c2, ev, sizeof(*n->dplus)) ||
	    room(&n->dminus, &c3, ev, sizeof(*n->dminus)) ||
	    room(&n->key, &n->cap, ev, sizeof(*n->key)))
		return HCLOCK_ENOMEM;
	n->t[ev] = event_time(&h->r, role, &above, &below);
	n->dplus[ev] = above;
	n->dminus[ev] = below;
	n->key[ev] = key;
	n->nev++;
	if (isfinite(above))
		n->tail = 0;
	else if (role <= EV_LEAVE)
		n->tail++;
	if (role <= EV_LEAVE)
		x->res->events++;
	if (h->end != NONE)
		x->at[h->end] = (struct endloc){node, ev};
	return 0;
}

static const struct walk_ops collect_ops = {.end = collect_end, .event = collect_event};

/* each event's latest time: its own bound or any later event's on its thread, the least;
 * its earliest: its own or any earlier event's, the largest (none known: 0, no move back) */
static void sweep(struct reorder *x)
{
	for (size_t v = 0; v < x->nn; v++) {
		struct tnode *n = &x->node[v];
		int64_t next = INT64_MAX, prev = INT64_MIN, up, lo, d;
		for (size_t e = 0; e < n->nev; e++) {
			double own = n->dminus[e]; /* |own| < 2^63 or inf: event_time's */
			if (!(own < 9e18) || __builtin_sub_overflow(n->t[e], (int64_t)own, &lo))
				lo = INT64_MIN;
			if (prev > lo)
				lo = prev;
			if (lo == INT64_MIN || __builtin_sub_overflow(n->t[e], lo, &d))
				n->dminus[e] = 0;
			else
				n->dminus[e] = (double)d; /* < 0: repair.c's 0 */
			prev = lo;
		}
		for (size_t e = n->nev; e-- > 0;) {
			double own = n->dplus[e]; /* |own| < 2^63 or inf: event_time's */
			if (!(own < 9e18) || __builtin_add_overflow(n->t[e], (int64_t)own, &up))
				up = INT64_MAX;
			if (next < up)
				up = next;
			if (up == INT64_MAX || __builtin_sub_overflow(up, n->t[e], &d))
				n->dplus[e] = up > n->t[e] ? INFINITY : -INFINITY;
			else
				n->dplus[e] = (double)d;
			next = up;
		}
		x->res->unbounded += n->tail;
	}
}

/* ---- the messages ----------------------------------------------------------------------- */

static int pair(void *ctx, const struct msgmatch_end *s, const struct msgmatch_end *r)
{
	struct reorder *x = ctx;
	struct endloc a = x->at[s->who], b = x->at[r->who];
	if (a.node == NO_NODE || b.node == NO_NODE || a.node == b.node) {
		x->res->left_out += 2;
		return 0;
	}
	x->msg[x->nmsg++] = (struct repair_msg){a.node, b.node, a.ev, b.ev};
	x->res->messages++;
	x->res->inverted += x->node[b.node].t[b.ev] < x->node[a.node].t[a.ev];
	return 0;
}

static int pair_all(struct reorder *x)
{
	size_t left = 0;
	x->msg = malloc((x->nend / 2 + 1) * sizeof(*x->msg));
	if (!x->msg)
		return HCLOCK_ENOMEM;
	msgmatch(x->end, x->nend, pair, NULL, x, &left);
	x->res->left_out += left;
	free(x->end);
	free(x->at);
	x->end = NULL;
	x->at = NULL;
	return 0;
}

/* ---- the error line --------------------------------------------------------------------- */

/* an event the line names, found again in its file */
struct spot {
	uint32_t node;
	size_t ev;
	int found, role;
	size_t idx;
	struct rec r;
};

struct finder {
	struct spot *s;
	size_t n;
};

static int locate_event(struct walk *w, uint32_t node, size_t ev, int64_t key, struct held *h,
                        int role)
{
	struct finder *f = w->ctx;
	(void)key;
	for (size_t i = 0; i < f->n; i++)
		if (f->s[i].node == node && f->s[i].ev == ev)
			f->s[i] = (struct spot){node, ev, 1, role, h->idx, h->r};
	return 0;
}

static const struct walk_ops locate_ops = {.event = locate_event};

static void locate(struct reorder *x, struct spot *s, size_t n)
{
	struct finder f = {s, n};
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= x->node[s[j].node].rank == x->node[s[i].node].rank;
		if (!seen)
			walk_all(x, &locate_ops, &f, 0, x->node[s[i].node].rank);
	}
}

/* "rank R thread T (record I, ROLE at NS ns)" */
static const char *spot_text(const struct reorder *x, const struct spot *s, char *b, size_t len)
{
	const struct tnode *n = &x->node[s->node];
	if (!s->found)
		snprintf(b, len, "rank %d thread %" PRIu32 " (its event %zu)", n->rank, n->tid, s->ev);
	else
		snprintf(b, len, "rank %d thread %" PRIu32 " (record %zu, %s at %" PRId64 " ns)",
		         n->rank, n->tid, s->idx, role_name[s->role],
		         s->role == EV_LEAVE ? s->r.t2_g : s->r.t_g);
	return b;
}

/* the first event of the send's tie: its call's enter, whose record has the lower bound */
static size_t tie_start(const struct tnode *n, size_t e)
{
	while (e > 0 && n->key[e - 1] == n->key[e])
		e--;
	return e;
}

static int bound_line(struct reorder *x, const struct repair_fail *f, int64_t lat)
{
	const struct tnode *n = &x->node[f->node];
	double room = n->dplus[f->ev];
	int64_t latest = n->t[f->ev] + (isfinite(room) && fabs(room) < 9e18 ? (int64_t)floor(room) : 0);
	int64_t past = f->need_ns - latest;
	char a[200], b[200], c[512], why[400] = "";

	if (f->msg == NONE) {
		struct spot s = {.node = (uint32_t)f->node, .ev = f->ev};
		locate(x, &s, 1);
		return err_set(HCLOCK_EINVAL, "--repair-order: %s would have to move to %" PRId64
		               " ns to follow the events before it on its thread, %" PRId64 " ns past "
		               "its latest time (%" PRId64 " ns): the thread's recorded times go back "
		               "by more than its bounds allow", spot_text(x, &s, a, sizeof(a)),
		               f->need_ns, past, latest);
	}
	const struct repair_msg *m = &x->msg[f->msg];
	struct spot s[4] = {{.node = m->src, .ev = m->se}, {.node = m->dst, .ev = m->re},
	                    {.node = (uint32_t)f->node, .ev = f->ev},
	                    {.node = m->src, .ev = tie_start(&x->node[m->src], m->se)}};
	locate(x, s, 4);
	int64_t below = s[3].found && s[3].r.flags & REC_F_HW ?
	                rec_hw_ns(rec_hw_get(s[3].r.tag, 0)) : -1;
	char moved[64] = "";
	if (s[0].found && x->node[m->src].t[m->se] != s[0].r.t_g)
		snprintf(moved, sizeof(moved), ", repaired to %" PRId64 " ns",
		         x->node[m->src].t[m->se]);
	if (below >= 0) {
		repair_why(why, sizeof(why), s[3].r.t_g - below, latest, lat, "thread");
	} else {
		snprintf(why, sizeof(why), "the send's earliest time is not known (no bounds "
		         "recorded at its call)");
	}
	if (f->node == m->dst && n->key[f->ev] == n->key[m->re]) /* the receive, or tied to it */
		snprintf(c, sizeof(c), "the receive would have to move to %" PRId64 " ns", f->need_ns);
	else
		snprintf(c, sizeof(c), "the event at %s, which may not precede the receive, would "
		         "have to move to %" PRId64 " ns", spot_text(x, &s[2], a, sizeof(a)),
		         f->need_ns);
	return err_set(HCLOCK_EINVAL, "--repair-order: message from %s%s to %s: %s, %" PRId64
	               " ns past its latest time (%" PRId64 " ns); %s",
	               spot_text(x, &s[0], a, sizeof(a)), moved, spot_text(x, &s[1], b, sizeof(b)),
	               c, past, latest, why);
}

static int fail_line(struct reorder *x, const struct repair_fail *f, int64_t lat)
{
	char a[200], b[200];
	if (f->why == REPAIR_BOUND)
		return bound_line(x, f, lat);
	const struct repair_msg *m = &x->msg[f->msg];
	struct spot s[2] = {{.node = m->src, .ev = m->se}, {.node = m->dst, .ev = m->re}};
	locate(x, s, 2);
	spot_text(x, &s[0], a, sizeof(a));
	spot_text(x, &s[1], b, sizeof(b));
	if (f->why == REPAIR_TIE)
		return err_set(HCLOCK_EINVAL, "--repair-order: the receive of the message from %s to "
		               "%s waits, through events tied to one call, for itself: the repair "
		               "moves such events together and cannot order them", a, b);
	return err_set(HCLOCK_EINVAL, "--repair-order: the receive of the message from %s to %s "
	               "comes, through the order of the threads' events and other messages, before "
	               "its own send: no run can pair the messages so (records dropped while "
	               "tracing shift the pairing of the messages after them)", a, b);
}

static int run_repair(struct reorder *x, int64_t lat)
{
	struct repair_node *rn = calloc(x->nn ? x->nn : 1, sizeof(*rn));
	struct repair_fail f;
	int rc;

	if (!rn)
		return HCLOCK_ENOMEM;
	for (size_t v = 0; v < x->nn; v++) {
		struct tnode *n = &x->node[v];
		rn[v] = (struct repair_node){n->nev, n->t, n->dplus, n->dminus, n->key,
		                             sizeof(int64_t), 0, 0};
	}
	rc = repair_order(rn, x->nn, x->msg, x->nmsg, lat, NULL, NULL, &f);
	for (size_t v = 0; !rc && v < x->nn; v++)
		x->moved_any += rn[v].moved;
	free(rn);
	if (rc == HCLOCK_EINVAL)
		return f.why ? fail_line(x, &f, lat)
		             : err_set(rc, "--repair-order: the messages of the raw files name no "
		                       "valid events (internal error)");
	return rc;
}

/* ---- write: the moved records patched, DIR/moved.csv ------------------------------------ */

struct writer {
	FILE *csv;
	struct ktab starts;      /* a moved i-call's enter: (tid, recorded t_g) -> repaired */
};

/* REC_F_HW's half-widths of the enter (leave 0) or leave (1) taken again at the new time to,
 * the absolute bounds they gave at from kept (rec_hw_code rounds up: they may widen) */
static int32_t hw_moved(int32_t tag, int leave, int64_t from, int64_t to)
{
	uint8_t c[4];
	for (int i = 0; i < 4; i++)
		c[i] = rec_hw_get(tag, i);
	int64_t below = rec_hw_ns(c[2 * leave]), above = rec_hw_ns(c[2 * leave + 1]);
	if (below >= 0)
		c[2 * leave] = rec_hw_code(to - (from - below));
	if (above >= 0)
		c[2 * leave + 1] = rec_hw_code(from + above - to);
	return (int32_t)rec_hw_pack(c[0], c[1], c[2], c[3]);
}

static int changed(const struct walk *w)
{
	return err_set(HCLOCK_EIO, "%s changed while it was repaired; the raw files are partly "
	               "repaired", w->path);
}

static int write_event(struct walk *w, uint32_t node, size_t ev, int64_t key, struct held *h,
                       int role)
{
	struct writer *wr = w->ctx;
	const struct tnode *n = &w->x->node[node];
	struct trace_reorder_result *res = w->x->res;
	struct rec *r = &h->r;
	int64_t *at = role == EV_LEAVE ? &r->t2_g : &r->t_g, from = *at, to;

	(void)key;
	if (ev >= n->nev)
		return changed(w);
	to = n->t[ev];
	if (to == from)
		return 0;
	*at = to;
	h->dirty = 1;
	if (role > EV_LEAVE)
		return 0;
	if (r->flags & REC_F_HW)
		r->tag = hw_moved(r->tag, role == EV_LEAVE, from, to);
	res->moved++;
	if (llabs(to - from) > res->moved_max_ns)
		res->moved_max_ns = llabs(to - from);
	res->unbounded_moved += to > from && isinf(n->dplus[ev]);
	fprintf(wr->csv, "%d,%" PRIu32 ",%zu,%s,%" PRId64 ",%" PRId64 ",%" PRId64 "\n", n->rank,
	        n->tid, h->idx, role_name[role], from, to, to - from);
	return 0;
}

/* an i-call's enter, repaired: for the record of the collective it starts, which comes when
 * the collective completes */
static int write_call(struct walk *w, const struct rec *r, uint32_t node, size_t enter)
{
	struct writer *wr = w->ctx;
	const struct tnode *n = &w->x->node[node];
	if (r->func >= w->nfuncs || !w->istart[r->func] || enter >= n->nev || n->t[enter] == r->t_g)
		return 0;
	uint64_t k[4] = {r->tid, (uint64_t)r->t_g, 0, 0};
	return ktab_put(&wr->starts, k, (uint64_t)n->t[enter]) ? HCLOCK_ENOMEM : 0;
}

static int write_nb(struct walk *w, struct held *h, uint32_t node, size_t leave)
{
	struct writer *wr = w->ctx;
	const struct tnode *n = &w->x->node[node];
	struct rec *r = &h->r;
	uint64_t k[4] = {r->flags & REC_F_TID ? (uint32_t)r->tag : r->tid, (uint64_t)r->t_g, 0, 0};
	const uint64_t *v = ktab_find(&wr->starts, k);

	if (leave != NONE && leave >= n->nev)
		return changed(w);
	if (leave != NONE && n->t[leave] != r->t2_g) {
		r->t2_g = n->t[leave];
		h->dirty = 1;
	}
	if (v) {
		r->t_g = (int64_t)*v;
		h->dirty = 1;
		ktab_del(&wr->starts, k);
	}
	return 0;
}

static const struct walk_ops write_ops = {.event = write_event, .call = write_call,
                                          .nb = write_nb, .write = 1};

static int write_csv(void *ctx, FILE *f)
{
	struct reorder *x = ctx;
	struct writer wr = {.csv = f};
	fprintf(f, "rank,thread,record,time,corrected_ns,repaired_ns,shift_ns\n");
	int rc = x->moved_any ? walk_all(x, &write_ops, &wr, 1, -1) : 0;
	ktab_free(&wr.starts);
	return rc;
}

/* ---- all of it -------------------------------------------------------------------------- */

int trace_reorder(const char *dir, int size, int64_t min_latency_ns,
                  struct trace_reorder_result *res)
{
	struct reorder x = {.dir = dir, .size = size, .res = res};
	char path[4200];
	int rc;

	memset(res, 0, sizeof(*res));
	if (min_latency_ns < 0 || min_latency_ns >= LATENCY_LIMIT)
		return err_set(HCLOCK_EINVAL, "--min-latency %" PRId64 " ns: expected 0 to 2^62 ns",
		               min_latency_ns);
	if (size < 1)
		return err_set(HCLOCK_EINVAL, "%s/raw: no processes to repair", dir);
	x.node_of = calloc((size_t)size, sizeof(*x.node_of));
	x.ntid = calloc((size_t)size, sizeof(*x.ntid));
	rc = x.node_of && x.ntid ? walk_all(&x, &collect_ops, NULL, 0, -1) : HCLOCK_ENOMEM;
	if (!rc) {
		sweep(&x);
		rc = pair_all(&x);
	}
	if (!rc)
		rc = run_repair(&x, min_latency_ns);
	if (!rc && path_fmt(path, sizeof(path), "%s/moved.csv", dir))
		rc = err_set(HCLOCK_EIO, "%s/moved.csv: the path is too long", dir);
	if (!rc)
		rc = path_write(path, write_csv, &x);
	if (rc == HCLOCK_ENOMEM)
		err_set(rc, "--repair-order: out of memory for the events of %zu threads (about 72 "
		        "bytes an event, 80 a message record)", x.nn);
	for (size_t v = 0; v < x.nn; v++) {
		free(x.node[v].t);
		free(x.node[v].dplus);
		free(x.node[v].dminus);
		free(x.node[v].key);
	}
	for (int r = 0; x.node_of && r < size; r++)
		free(x.node_of[r]);
	free(x.node_of);
	free(x.ntid);
	free(x.node);
	free(x.end);
	free(x.at);
	free(x.msg);
	if (rc) {
		struct trace_reorder_result keep = {0};
		*res = keep;
	}
	return rc;
}
