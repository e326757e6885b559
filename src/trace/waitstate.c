/*
 * waitstate.c - the wait states of a traced run from its raw records (waitstate.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_api.h"
#include "trace/mpiclass.h"
#include "trace/perfetto.h"
#include "trace/truthfile.h"
#include "trace/waitplot.h"
#include "trace/waitstate.h"
#include "util/err.h"
#include "util/grow.h"
#include "util/path.h"
#include "util/record.h"
#include "util/timeutil.h"
#include "waits/ktab.h"

#define CHUNK 1024              /* records read at a time per process (64 KiB) */
#define WINDOW_NS 10000000      /* the processes are read together, 10 ms of global time a
                                   round */
#define ISTARTS 64              /* nonblocking collectives' starts remembered per process */
#define MARK_MIN_NS 1000        /* the shortest waiting marked in trace.pftrace: a high-rate
                                   program waits a few hundred ns at most of its receives,
                                   marks of which would double the trace (48 MB beside 38 MB
                                   for 2.4 M events of a ping-pong) and show at no zoom */

/* ---- one process's raw file, read in chunks ---- */

struct pending {             /* a message record or a completed i-collective, waiting for
                                the call record of its thread that follows it */
	struct rec r;
	struct waits_stamp start;/* an i-collective's start */
};

struct istart {              /* a nonblocking collective's start: its call's enter */
	uint32_t tid;
	struct waits_stamp enter;
};

struct proc {
	int rank, fd, done;
	off_t off;               /* the next chunk's file offset */
	struct rec chunk[CHUNK];
	size_t n, k;             /* records in the chunk, the next one */
	uint32_t *gid;           /* global function id by local index */
	uint32_t nfuncs;
	struct pending *pend;
	size_t npend, pend_cap;
	struct istart ist[ISTARTS];
	size_t nist;
	truthfile *truth;        /* the truth of its timestamps (--event-truth), or NULL */
	struct last_call {
		struct rec r;        /* the thread's last call record (kind 0: none) */
		uint64_t id;         /* ... and its id (call_id) */
	} *last;                 /* per thread (tid) */
	size_t nlast;
};

struct run {
	struct trace_waits *tw;
	struct mpiclass *fc;     /* by global id */
	struct ktab comm_size;   /* (id, 0, 0, 0) -> size */
	struct proc *p;
	int size;
};

/* the global id of function name, local index `at` in its process's list (every process of
 * one build lists the same names in the same order: tried first) */
static uint32_t intern(struct run *x, const char *name, uint32_t at)
{
	struct trace_waits *tw = x->tw;
	if (at < tw->nfnames && !strcmp(tw->fnames[at], name))
		return at;
	for (size_t i = 0; i < tw->nfnames; i++)
		if (!strcmp(tw->fnames[i], name))
			return (uint32_t)i;
	char **f = realloc(tw->fnames, (tw->nfnames + 1) * sizeof(*f));
	struct mpiclass *c = realloc(x->fc, (tw->nfnames + 1) * sizeof(*c));
	if (f)
		tw->fnames = f;
	if (c)
		x->fc = c;
	if (!f || !c || !(f[tw->nfnames] = strdup(name)))
		return UINT32_MAX;
	x->fc[tw->nfnames] = mpiclass_of(name);
	return (uint32_t)tw->nfnames++;
}

/* the trailer at the end of a raw file, and the communicators after it, into comm_size */
static void read_comms(struct run *x, int fd, size_t first, int world)
{
	struct stat sb;
	if (fstat(fd, &sb) || (size_t)sb.st_size < first + sizeof(struct rec_trailer))
		return;
	size_t len = (size_t)sb.st_size, tail = len - first > (4u << 20) ? 4u << 20 : len - first;
	/* read from a record boundary */
	size_t from = len - tail;
	from = first + (from - first + sizeof(struct rec) - 1) / sizeof(struct rec) * sizeof(struct rec);
	if (from >= len)
		return;
	size_t n = len - from;
	char *b = malloc(n);
	if (!b || pread(fd, b, n, (off_t)from) != (ssize_t)n) {
		free(b);
		return;
	}
	/* the last record boundary that holds the trailer's magic */
	for (size_t at = (n - sizeof(struct rec_trailer)) / sizeof(struct rec) * sizeof(struct rec) + 1;
	     at-- > 0;) {
		if (at % sizeof(struct rec) || memcmp(b + at, REC_TRAILER_MAGIC, 8))
			continue;
		struct rec_trailer tr;
		memcpy(&tr, b + at, sizeof(tr));
		size_t o = at + sizeof(tr);
		for (uint32_t c = 0; c < tr.ncomms && o + sizeof(struct rec_comm) <= n; c++) {
			struct rec_comm rc;
			memcpy(&rc, b + o, sizeof(rc));
			o += sizeof(rc) + ((size_t)(rc.size > 0 ? rc.size : 0) * 4 + 7) / 8 * 8;
			uint64_t k[4] = {rc.id, 0, 0, 0};
			if (rc.size > 0 && rc.size <= world && !rc.inter) /* else: a corrupt entry */
				ktab_put(&x->comm_size, k, (uint64_t)rc.size);
		}
		break;
	}
	free(b);
}

static int proc_open(struct run *x, const char *dir, int r, struct proc *p)
{
	char path[4300], head[sizeof(struct rec_header)];
	path_fmt(path, sizeof(path), "%s/raw/rank.%d", dir, r);
	p->rank = r;
	p->done = 1;
	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0)
		return 0; /* a process without a file: nothing of it */
	struct rec_header h;
	if (pread(p->fd, head, sizeof(head), 0) != (ssize_t)sizeof(head))
		return 0;
	memcpy(&h, head, sizeof(h));
	if (memcmp(h.magic, REC_MAGIC, 8) || h.names_bytes > (1u << 24))
		return 0;
	size_t first = sizeof(h) + h.names_bytes;
	char *all = malloc(first);
	struct rec_file f = {0};
	int rc = 0;
	if (!all)
		return HCLOCK_ENOMEM;
	if (pread(p->fd, all, first, 0) == (ssize_t)first && !rec_parse(path, all, first, &f)) {
		if (r == 0)
			x->tw->t0_g = f.h.t0_g;
		if (!(p->gid = malloc((f.h.nfuncs + 1) * sizeof(*p->gid))))
			rc = HCLOCK_ENOMEM;
		for (uint32_t i = 0; !rc && i < f.h.nfuncs; i++)
			if ((p->gid[i] = intern(x, f.names[i], i)) == UINT32_MAX)
				rc = HCLOCK_ENOMEM;
		p->nfuncs = f.h.nfuncs;
		p->off = (off_t)first;
		p->done = rc != 0;
		uint64_t k[4] = {0, 0, 0, 0}; /* MPI_COMM_WORLD */
		if (!rc && ktab_put(&x->comm_size, k, (uint64_t)f.h.size))
			rc = HCLOCK_ENOMEM;
		if (!rc)
			read_comms(x, p->fd, first, f.h.size);
	}
	rec_file_free(&f);
	free(all);
	return rc;
}

/* the next record (NULL at the end: the file's end, its trailer, garbage) */
static const struct rec *proc_peek(struct proc *p)
{
	if (p->done)
		return NULL;
	if (p->k == p->n) {
		ssize_t got = pread(p->fd, p->chunk, sizeof(p->chunk), p->off);
		if (got < (ssize_t)sizeof(struct rec)) {
			p->done = 1;
			return NULL;
		}
		p->off += got / (ssize_t)sizeof(struct rec) * (ssize_t)sizeof(struct rec);
		p->n = (size_t)got / sizeof(struct rec);
		p->k = 0;
	}
	const struct rec *r = &p->chunk[p->k];
	if (!memcmp(r, REC_TRAILER_MAGIC, 8) || r->kind < REC_CALL || r->kind > REC_KIND_MAX) {
		p->done = 1;
		return NULL;
	}
	return r;
}

/* ---- records into the analysis ---- */

/* the truth of a timestamp of p, if known */
static void truth_of(const struct proc *p, struct waits_stamp *s)
{
	if (p->truth)
		s->has_truth = truthfile_at(p->truth, s->t_ns, &s->true_lo_ns, &s->true_hi_ns);
}

static struct waits_stamp stamp(const struct rec *r, int leave, struct run *x,
                                const struct proc *p)
{
	struct waits_stamp s = {.t_ns = leave ? r->t2_g : r->t_g, .below_ns = WAITS_NO_BOUND,
	                        .above_ns = WAITS_NO_BOUND};
	truth_of(p, &s);
	if (r->flags & REC_F_HW && !(r->kind == REC_COLL && r->flags & REC_F_NB)) {
		int64_t b = rec_hw_ns(rec_hw_get(r->tag, leave ? 2 : 0)),
		        a = rec_hw_ns(rec_hw_get(r->tag, leave ? 3 : 1));
		if (b >= 0)
			s.below_ns = b;
		if (a >= 0)
			s.above_ns = a;
	}
	if (!leave && (s.below_ns == WAITS_NO_BOUND || s.above_ns == WAITS_NO_BOUND))
		x->tw->unbounded++;
	return s;
}

static uint32_t gid(const struct proc *p, uint16_t f)
{
	return f < p->nfuncs ? p->gid[f] : UINT32_MAX;
}

/* the id of the record being fed (the next of proc_peek): its place in the file, from 1 */
static uint64_t call_id(const struct proc *p)
{
	return (uint64_t)p->off / sizeof(struct rec) - p->n + p->k + 1;
}

static struct waits_call call_of(struct run *x, const struct proc *p, const struct rec *c,
                                 uint64_t id)
{
	return (struct waits_call){.proc = p->rank, .func = gid(p, c->func), .id = id,
	                           .enter = stamp(c, 0, x, p), .leave = stamp(c, 1, x, p)};
}

static int64_t comm_size(struct run *x, uint64_t comm)
{
	uint64_t k[4] = {comm, 0, 0, 0}, *v = ktab_find(&x->comm_size, k);
	return v ? (int64_t)*v : -1;
}

/* a collective: blocking (its own record is the call) or completed by the call c */
static int feed_coll(struct run *x, struct proc *p, const struct rec *r,
                     const struct waits_stamp *start, const struct rec *c, uint64_t cid)
{
	uint32_t f = gid(p, r->func);
	enum waits_coll_kind k = f < x->tw->nfnames ? x->fc[f].coll : WAITS_COLL_OTHER;
	int64_t size = comm_size(x, r->comm);
	if (size < 1) {
		x->tw->colls_unknown++;
		return 0;
	}
	struct waits_coll wc = {.call = call_of(x, p, c, cid), .comm = r->comm, .size = (int32_t)size,
	                        .root = k == WAITS_COLL_1TON || k == WAITS_COLL_NTO1 ? r->peer : -1,
	                        .kind = k, .seq = -1};
	wc.start = start ? *start : wc.call.enter;
	return waits_add_coll(x->tw->w, &wc);
}

/* a message record or a completed i-collective r (start: an i-collective's) with the call c
 * that sent, received or completed it */
static int feed_part(struct run *x, struct proc *p, const struct rec *r,
                     const struct waits_stamp *start, const struct rec *c, uint64_t cid)
{
	uint32_t f = gid(p, c->func);
	int rc = 0;
	if (r->kind == REC_SEND) {
		struct waits_send s = {.call = call_of(x, p, c, cid), .dst = r->peer, .comm = r->comm,
		                       .tag = r->tag, .bytes = r->bytes};
		s.blocking = f < x->tw->nfnames && x->fc[f].blocking_send;
		s.synchronous = f < x->tw->nfnames && x->fc[f].synchronous;
		if (r->peer >= 0)
			rc = waits_add_send(x->tw->w, &s);
		if (r->peer >= 0 && x->tw->plot)
			waitplot_message(x->tw->plot, p->rank, (int)r->peer, r->bytes);
	} else if (r->kind == REC_RECV) {
		struct waits_recv v = {.call = call_of(x, p, c, cid), .src = r->peer, .comm = r->comm,
		                       .tag = r->tag};
		v.posted_in_call = f < x->tw->nfnames && x->fc[f].posting_recv;
		if (r->peer >= 0)
			rc = waits_add_recv(x->tw->w, &v);
	} else {
		rc = feed_coll(x, p, r, start, c, cid);
	}
	return rc == HCLOCK_EINVAL ? 0 : rc; /* a peer out of range: left out */
}

/* the call record c of p's thread: the sends held for it (a send's record comes before its
 * call's), and c kept as the thread's last (a receive's and a completion's come after) */
static int feed_call(struct run *x, struct proc *p, const struct rec *c)
{
	x->tw->calls++;
	uint32_t f = gid(p, c->func);
	if (f < x->tw->nfnames && x->fc[f].istart) {
		/* an i-collective started: its enter, for the completion to come */
		p->ist[p->nist % ISTARTS] = (struct istart){.tid = c->tid, .enter = stamp(c, 0, x, p)};
		p->nist++;
	}
	if (c->tid >= p->nlast) {
		size_t n = p->nlast ? p->nlast : 4;
		while (n <= c->tid)
			n *= 2;
		struct last_call *l = realloc(p->last, n * sizeof(*l));
		if (!l)
			return HCLOCK_ENOMEM;
		memset(l + p->nlast, 0, (n - p->nlast) * sizeof(*l));
		p->last = l;
		p->nlast = n;
	}
	uint64_t cid = call_id(p);
	p->last[c->tid] = (struct last_call){*c, cid};
	int rc = 0;
	size_t keep = 0;
	for (size_t i = 0; i < p->npend; i++) {
		struct pending *q = &p->pend[i];
		if (q->r.tid != c->tid)
			p->pend[keep++] = *q;
		else if (!rc)
			rc = feed_part(x, p, &q->r, &q->start, c, cid);
	}
	p->npend = keep;
	return rc;
}

static int hold(struct proc *p, const struct rec *r, const struct waits_stamp *start)
{
	if (GROW(p->pend, p->npend, p->pend_cap))
		return HCLOCK_ENOMEM;
	p->pend[p->npend] = (struct pending){.r = *r};
	if (start)
		p->pend[p->npend].start = *start;
	p->npend++;
	return 0;
}

/* an i-collective's start: the enter of the i-call of its starting thread at its t_g */
static struct waits_stamp istart_of(const struct proc *p, const struct rec *r)
{
	uint32_t tid = r->flags & REC_F_TID ? (uint32_t)r->tag : r->tid;
	size_t n = p->nist < ISTARTS ? p->nist : ISTARTS;
	for (size_t i = 0; i < n; i++) {
		const struct istart *s = &p->ist[i];
		if (s->enter.t_ns == r->t_g && s->tid == tid)
			return s->enter;
	}
	struct waits_stamp s = {.t_ns = r->t_g, .below_ns = WAITS_NO_BOUND,
	                        .above_ns = WAITS_NO_BOUND};
	truth_of(p, &s);
	return s;
}

static int feed_record(struct run *x, struct proc *p, const struct rec *r)
{
	switch (r->kind) {
	case REC_CALL:
		return feed_call(x, p, r);
	case REC_SEND:
		return hold(p, r, NULL);
	case REC_RECV:
		/* after the call that completed it, at its leave */
		if (r->tid < p->nlast && p->last[r->tid].r.kind && p->last[r->tid].r.t2_g == r->t_g)
			return feed_part(x, p, r, NULL, &p->last[r->tid].r, p->last[r->tid].id);
		return hold(p, r, NULL); /* another order: the next call's */
	case REC_COLL:
		if (r->flags & REC_F_NB) {
			struct waits_stamp s = istart_of(p, r);
			if (r->tid < p->nlast && p->last[r->tid].r.kind &&
			    p->last[r->tid].r.t2_g == r->t2_g)
				return feed_part(x, p, r, &s, &p->last[r->tid].r, p->last[r->tid].id);
			return hold(p, r, &s);
		}
		x->tw->calls++;
		{
			int rc = feed_coll(x, p, r, NULL, r, call_id(p));
			return rc == HCLOCK_EINVAL ? 0 : rc;
		}
	default:
		return 0; /* drops, bound samples */
	}
}

/* an instance as it is found: into the Perfetto trace; kept when its truth misses its
 * interval */
struct seen {
	struct pf_waits *pf;
	struct trace_waits *tw;
};

static int on_instance(void *ctx, const struct waits_instance *in)
{
	struct seen *s = ctx;
	if (s->pf && (in->est_ns >= MARK_MIN_NS || in->lo_ns >= MARK_MIN_NS)) {
		pf_waits_add(s->pf, in->proc, in->pattern, in->at_ns, in->est_ns, in->lo_ns,
		             in->hi_ns, in->peer);
		s->tw->marked++;
	}
	if (in->has_truth && (in->true_hi_ns < in->lo_ns || in->true_lo_ns > in->hi_ns) &&
	    s->tw->noutside < TRACE_WAITS_WORST)
		s->tw->outside[s->tw->noutside++] = *in;
	return 0;
}

int trace_waits_run(const char *dir, int size, const char *pftrace, struct trace_waits *tw)
{
	memset(tw, 0, sizeof(*tw));
	int64_t t0 = real_now_ns();
	struct waits_opts wo = {.worst = TRACE_WAITS_WORST};
	struct run x = {.tw = tw, .size = size};
	int rc = 0, any = 0;
	const char *titles[16];
	int nt = waits_pattern_count() < 16 ? waits_pattern_count() : 16;
	for (int i = 0; i < nt; i++)
		titles[i] = waits_pattern_title(i);
	struct pf_waits *pf = pftrace ? pf_waits_open(pftrace, size, titles, nt) : NULL;
	char pf_why[300] = "";
	if (pftrace && !pf)
		snprintf(pf_why, sizeof(pf_why), "%s", hclock_last_error());
	struct seen seen = {.pf = pf, .tw = tw};
	wo.on_instance = on_instance;
	wo.ctx = &seen;
	tw->plot = waitplot_create(size); /* NULL: no plot of the messages */
	if (!(tw->w = waits_create(&wo)) || !(x.p = calloc((size_t)size, sizeof(*x.p)))) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory for the wait-state analysis");
		goto out;
	}
	for (int r = 0; r < size; r++)
		x.p[r].fd = -1;
	for (int r = 0; r < size && !rc; r++) {
		rc = proc_open(&x, dir, r, &x.p[r]);
		any |= !x.p[r].done;
		if (rc || x.p[r].done)
			continue;
		int trc = truthfile_load(dir, r, &x.p[r].truth);
		if (trc == HCLOCK_ENOMEM)
			rc = trc;
		else if (trc)
			tw->truth_unreadable++; /* cut or not one: the analysis without it */
		else if (x.p[r].truth)
			tw->truth_procs++;
	}
	if (!rc && !any)
		rc = err_set(HCLOCK_EIO, "%s/raw: no readable rank.N file", dir);
	/* all processes together, a window of global time a round */
	int64_t h = INT64_MIN;
	while (!rc) {
		int64_t next = INT64_MAX;
		for (int r = 0; r < size && !rc; r++) {
			const struct rec *q;
			while (!rc && (q = proc_peek(&x.p[r])) && (h == INT64_MIN || q->t_g <= h)) {
				rc = feed_record(&x, &x.p[r], q);
				x.p[r].k++;
				if (h == INT64_MIN)
					break;
			}
			if (q && q->t_g < next)
				next = q->t_g;
		}
		if (next == INT64_MAX)
			break;
		h = h != INT64_MIN && next <= h + WINDOW_NS ? h + WINDOW_NS : next;
	}
	if (!rc)
		rc = waits_finish(tw->w);
	if (rc == HCLOCK_ENOMEM)
		err_set(rc, "out of memory in the wait-state analysis");
out:
	for (int r = 0; x.p && r < size; r++) {
		if (x.p[r].fd >= 0)
			close(x.p[r].fd);
		free(x.p[r].gid);
		free(x.p[r].pend);
		free(x.p[r].last);
		truthfile_free(x.p[r].truth);
	}
	free(x.p);
	free(x.fc);
	ktab_free(&x.comm_size);
	int pf_rc = pf_waits_close(pf);
	if (pf_why[0])
		pf_rc = err_set(HCLOCK_EIO, "%s", pf_why); /* the analysis without its marks */
	if (rc) {
		trace_waits_free(tw);
		return rc;
	}
	tw->done = 1;
	tw->took_ns = real_now_ns() - t0;
	return pf_rc;
}

void trace_waits_free(struct trace_waits *tw)
{
	waits_free(tw->w);
	waitplot_free(tw->plot);
	for (size_t i = 0; i < tw->nfnames; i++)
		free(tw->fnames[i]);
	free(tw->fnames);
	memset(tw, 0, sizeof(*tw));
}

const char *trace_waits_fname(const struct trace_waits *tw, uint32_t f)
{
	return f < tw->nfnames ? tw->fnames[f] : "?";
}
