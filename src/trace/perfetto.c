/*
 * perfetto.c - the Perfetto writer of one process's stream (perfetto.h).
 *
 * The protobuf (Perfetto's TracePacket stream; field numbers from its published
 * trace_packet.proto, track_event.proto, track_descriptor.proto, clock_snapshot.proto,
 * interned_data.proto): each thread of the process is one packet sequence (trusted
 * sequence id 1 + rank + size x thread: one byte for the main threads of up to 127
 * processes) whose first packet clears its incremental state, declares a sequence-scoped
 * incremental clock (id 64, ns, deltas from the previous packet) tied to the absolute clock
 * 6 (the global clock's ns), and sets the packet defaults (that clock, the thread's track).
 * A call is a slice begin and a slice end of a few bytes each: a delta timestamp, the
 * sequence id, the event type, the interned name (interned once per sequence, its iid
 * counted up in the order of first use: one byte for the first 127 functions). A message's
 * flow ids are varints of 42 bits (flow_ids_old and terminating_flow_ids_old, 8 bytes where
 * the fixed64 fields take 10). A packet whose time is before its sequence's previous one (a
 * nonblocking collective, which is recorded when it completes) carries its absolute time on
 * clock 6.
 * Nonblocking collectives go to lanes, a track each, so that they never partly overlap.
 *
 * A write that fails (a full disk) stops the output (out.h): it is cut back to its last
 * safe point, a packet boundary where no slice of the process is open, so that what is on
 * disk is a valid trace on its own (flows may have lost an end). Where recording stopped
 * an instant event says why; a part cut short before that instant has it again at the cut
 * (pf_stop_tail), over the bytes the output held past what it wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_api.h"
#include "trace/pb.h"
#include "trace/perfetto.h"
#include "trace/tracks.h"
#include "util/err.h"

/* protobuf field numbers */
enum {
	TRACE_PACKET = 1,
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11,
	TP_INTERNED = 12, TP_SEQ_FLAGS = 13, TP_TS_CLOCK = 58, TP_DEFAULTS = 59,
	TP_TRACK_DESC = 60,
	CS_CLOCKS = 1, CLK_ID = 1, CLK_TS = 2, CLK_INCREMENTAL = 3,
	DEF_TS_CLOCK = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11,
	TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_NAME = 23,
	TE_FLOW_OLD = 36, TE_FLOW_END_OLD = 42, /* varints: flow_ids_old, terminating_flow_ids_old */
	ID_EVENT_NAMES = 2, EN_IID = 1, EN_NAME = 2, ID_DEBUG_NAMES = 3, DA_NAME_IID = 1,
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	CD_UNIT = 3, TE_COUNTER_VALUE = 30, TE_DEBUG = 4, DA_INT = 4, DA_NAME = 10,
	PD_PID = 1, PD_NAME = 6, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
};
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { UNIT_TIME_NS = 1 };
enum { SEQ_CLEARED = 1 };
enum { CLOCK_ABS = 6, CLOCK_INC = 64 };

/* a packet into the Trace: field 1 of the outer message */
static void put_packet(struct trace_stream *s, const struct pb *p)
{
	struct pb h = {.n = 0};
	pb_varint(&h, TRACE_PACKET << 3 | 2);
	pb_varint(&h, p->n);
	out_put(&s->pf, h.b, h.n);
	out_put(&s->pf, p->b, p->n);
}

/* process rank's thread t's sequence (of size processes): 1 + rank + size x t, so that a
 * program of up to 127 processes numbers its main threads' sequences in one byte;
 * thread MAX_THREADS is the launcher's message order marks */
static uint32_t seq_of(int size, int rank, int t)
{
	uint32_t n = size > rank ? (uint32_t)size : (uint32_t)rank + 1;
	return 1u + (uint32_t)rank + n * (uint32_t)t;
}

static uint32_t seq_id(const struct trace_stream *s, int t)
{
	return seq_of(s->size, s->rank, t);
}

/* a message's flow id in the protobuf: its 42 low bits, a varint of at most 6 bytes (two
 * flows open at once share an id with odds of 2^-42 a pair; a receive ends its flow, so
 * Perfetto may reuse the id) */
static uint64_t pf_flow(uint64_t id)
{
	id &= (1ULL << 42) - 1;
	return id ? id : 1;
}

static uint64_t proc_uuid(const struct trace_stream *s)
{
	return ((uint64_t)s->rank + 1) << 32;
}

static uint64_t thread_uuid(const struct trace_stream *s, int t)
{
	return proc_uuid(s) + 1 + (uint64_t)t;
}

static uint64_t lane_uuid(const struct trace_stream *s, int l)
{
	return proc_uuid(s) + 0x10000 + (uint64_t)l;
}

static uint64_t bound_uuid(const struct trace_stream *s)
{
	return proc_uuid(s) + 0x20000;
}

/* a track under the process (thread 0: none), described on thread t's sequence; a counter
 * track in ns where uuid is the bound's */
/* A sequence's first packet into p: its id (the state cleared) and a track of the process's
 * named name with uuid, for slices of its own. */
static void seq_track(const struct trace_stream *s, struct pb *p, uint32_t seq, uint64_t uuid,
                      const char *name)
{
	struct pb td = {.n = 0};
	pb_uint(p, TP_SEQ_ID, seq);
	pb_uint(p, TP_SEQ_FLAGS, SEQ_CLEARED);
	pb_uint(&td, TD_UUID, uuid);
	pb_uint(&td, TD_PARENT, proc_uuid(s));
	pb_str(&td, TD_NAME, name);
	pb_msg(p, TP_TRACK_DESC, &td);
}

static void track_desc(struct trace_stream *s, int t, uint64_t uuid, const char *name, int thread)
{
	struct pb p = {.n = 0}, td = {.n = 0}, d = {.n = 0};
	pb_uint(&td, TD_UUID, uuid);
	if (uuid == bound_uuid(s)) {
		pb_uint(&td, TD_PARENT, proc_uuid(s));
		pb_str(&td, TD_NAME, name);
		pb_uint(&d, CD_UNIT, UNIT_TIME_NS);
		pb_msg(&td, TD_COUNTER, &d);
	} else if (thread) {
		pb_uint(&td, TD_PARENT, proc_uuid(s));
		pb_uint(&d, THD_PID, (uint64_t)s->rank + 1);
		pb_uint(&d, THD_TID, (uint64_t)(s->rank + 1) * MAX_THREADS + (uint64_t)thread - 1);
		pb_str(&d, THD_NAME, name);
		pb_msg(&td, TD_THREAD, &d);
	} else if (uuid == proc_uuid(s)) {
		pb_uint(&d, PD_PID, (uint64_t)s->rank + 1);
		pb_str(&d, PD_NAME, name);
		pb_msg(&td, TD_PROCESS, &d);
	} else {
		pb_uint(&td, TD_PARENT, proc_uuid(s));
		pb_str(&td, TD_NAME, name);
	}
	pb_uint(&p, TP_SEQ_ID, seq_id(s, t));
	pb_msg(&p, TP_TRACK_DESC, &td);
	put_packet(s, &p);
}

/* thread t's sequence, started at its first event (time ts) */
struct thr *pf_thread(struct trace_stream *s, int t, int64_t ts)
{
	if (t < 0 || t >= MAX_THREADS)
		t = MAX_THREADS - 1;
	struct thr *h = s->thr[t];
	if (h)
		return h->up ? h : NULL;
	h = s->thr[t] = calloc(1, sizeof(*h));
	if (!h || !(h->iid = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*h->iid))))
		return NULL;
	h->up = 1;
	h->last_ts = ts;
	struct pb p = {.n = 0}, cs = {.n = 0}, c = {.n = 0}, def = {.n = 0}, ted = {.n = 0};
	pb_uint(&p, TP_TIMESTAMP, (uint64_t)ts);
	pb_uint(&p, TP_TS_CLOCK, CLOCK_ABS);
	pb_uint(&p, TP_SEQ_ID, seq_id(s, t));
	pb_uint(&p, TP_SEQ_FLAGS, SEQ_CLEARED);
	pb_uint(&c, CLK_ID, CLOCK_INC);
	pb_uint(&c, CLK_TS, (uint64_t)ts);
	pb_uint(&c, CLK_INCREMENTAL, 1);
	pb_msg(&cs, CS_CLOCKS, &c);
	c.n = 0;
	pb_uint(&c, CLK_ID, CLOCK_ABS);
	pb_uint(&c, CLK_TS, (uint64_t)ts);
	pb_msg(&cs, CS_CLOCKS, &c);
	pb_msg(&p, TP_CLOCK_SNAPSHOT, &cs);
	pb_uint(&def, DEF_TS_CLOCK, CLOCK_INC);
	pb_uint(&ted, TED_TRACK_UUID, thread_uuid(s, t));
	pb_msg(&def, DEF_TRACK_EVENT, &ted);
	pb_msg(&p, TP_DEFAULTS, &def);
	put_packet(s, &p);
	char name[32];
	snprintf(name, sizeof(name), t ? "thread %d" : "main", t);
	track_desc(s, t, thread_uuid(s, t), name, t + 1);
	return h;
}

/* a packet's time ts (a delta on thread t's incremental clock, or absolute on clock 6 when
 * before the sequence's last) and its sequence */
static void packet_head(struct trace_stream *s, int t, struct thr *h, struct pb *p, int64_t ts)
{
	if (ts >= h->last_ts) {
		pb_uint(p, TP_TIMESTAMP, (uint64_t)(ts - h->last_ts));
		h->last_ts = ts;
	} else {
		pb_uint(p, TP_TIMESTAMP, (uint64_t)ts);
		pb_uint(p, TP_TS_CLOCK, CLOCK_ABS);
	}
	pb_uint(p, TP_SEQ_ID, seq_id(s, t));
}

/* a slice event of thread t at ts (track: 0 the thread's own), with the pending flows */
static void slice_event(struct trace_stream *s, int t, struct thr *h, int type, int64_t ts,
                        int func, uint64_t track, const uint64_t *flows, int nflows,
                        const uint64_t *ends, int nends)
{
	struct pb p = {.n = 0}, te = {.n = 0}, in = {.n = 0}, en = {.n = 0};
	packet_head(s, t, h, &p, ts);
	pb_uint(&te, TE_TYPE, (uint64_t)type);
	if (track)
		pb_uint(&te, TE_TRACK_UUID, track);
	if (func >= 0 && (uint32_t)func < s->nfuncs) {
		if (!h->iid[func]) {
			h->iid[func] = ++h->iids;
			pb_uint(&en, EN_IID, h->iid[func]);
			pb_str(&en, EN_NAME, s->names[func]);
			pb_msg(&in, ID_EVENT_NAMES, &en);
			pb_msg(&p, TP_INTERNED, &in);
		}
		pb_uint(&te, TE_NAME_IID, h->iid[func]);
	}
	for (int i = 0; i < nflows; i++)
		pb_uint(&te, TE_FLOW_OLD, pf_flow(flows[i]));
	for (int i = 0; i < nends; i++)
		pb_uint(&te, TE_FLOW_END_OLD, pf_flow(ends[i]));
	pb_msg(&p, TP_TRACK_EVENT, &te);
	put_packet(s, &p);
}

/* track event te of thread t at ts, in a packet of its own (no slice: a safe point after it
 * when none is open) */
static void put_event(struct trace_stream *s, int t, struct thr *h, int64_t ts,
                      const struct pb *te)
{
	struct pb p = {.n = 0};
	packet_head(s, t, h, &p, ts);
	pb_msg(&p, TP_TRACK_EVENT, te);
	put_packet(s, &p);
	if (!s->nheld)
		out_safe(&s->pf);
}

/* a bounds sample: the half-width hw (ns) on the process's counter track at ts */
void pf_bound(struct trace_stream *s, int t, struct thr *h, int64_t ts, int64_t hw)
{
	if (!s->bound_track) {
		s->bound_track = 1;
		track_desc(s, t, bound_uuid(s), "clock bound half-width", 0);
	}
	struct pb te = {.n = 0};
	pb_uint(&te, TE_TYPE, COUNTER);
	pb_uint(&te, TE_TRACK_UUID, bound_uuid(s));
	pb_uint(&te, TE_COUNTER_VALUE, (uint64_t)hw);
	put_event(s, t, h, ts, &te);
}

void pf_stop(struct trace_stream *s, int t, struct thr *h, int64_t ts, const char *what)
{
	struct pb te = {.n = 0};
	pb_uint(&te, TE_TYPE, INSTANT);
	pb_str(&te, TE_NAME, what);
	put_event(s, t, h, ts, &te);
	if (!s->pf.err)
		s->stop_at = s->pf.bytes;
}

/* The protobuf cut short (a full disk) before the end of the stop's instant: the instant
 * again at the cut, on a track "recording" and a sequence of its own (absolute time, its
 * name not interned: it needs nothing that was cut; the process's track described again if
 * that was cut too), written over the bytes the file held past the cut (out.keep), which no
 * other writer can have taken. */
void pf_stop_tail(struct trace_stream *s, const char *what)
{
	struct out *o = &s->pf;
	int err = o->err;
	if (!s->stop_marked || !err || s->stop_at <= o->done || o->fd < 0 || !o->held)
		return;
	uint64_t at = o->done, uuid = proc_uuid(s) + 0x40000;
	uint32_t seq = seq_id(s, MAX_THREADS + 1);
	o->err = 0;
	o->n = 0;
	if (at < s->proc_at)
		track_desc(s, 0, proc_uuid(s), s->name, 0);
	struct pb p = {.n = 0}, te = {.n = 0};
	seq_track(s, &p, seq, uuid, "recording");
	put_packet(s, &p);
	p.n = 0;
	pb_uint(&p, TP_TIMESTAMP, (uint64_t)s->stop_ts);
	pb_uint(&p, TP_TS_CLOCK, CLOCK_ABS);
	pb_uint(&p, TP_SEQ_ID, seq);
	pb_uint(&te, TE_TYPE, INSTANT);
	pb_uint(&te, TE_TRACK_UUID, uuid);
	pb_str(&te, TE_NAME, what);
	pb_msg(&p, TP_TRACK_EVENT, &te);
	put_packet(s, &p);
	if (o->n <= o->held && pwrite(o->fd, o->buf, o->n, (off_t)at) == (ssize_t)o->n &&
	    !ftruncate(o->fd, (off_t)(at + o->n)))
		o->bytes = o->done = o->safe = o->safe_done = at + o->n;
	else if (ftruncate(o->fd, (off_t)at)) /* not written: the part ends at the cut */
		err = errno;
	o->held = 0;
	o->n = 0;
	o->err = err;
}

void pf_nb_coll(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	int l = 0;
	while (l < NB_LANES - 1 && s->lane_end[l] > r->t_g)
		l++;
	if (s->lane_end[l] == 0) {
		char name[48];
		snprintf(name, sizeof(name), "nonblocking collectives %d", l);
		track_desc(s, t, lane_uuid(s, l), name, 0);
	}
	if (r->t2_g > s->lane_end[l])
		s->lane_end[l] = r->t2_g;
	slice_event(s, t, h, SLICE_BEGIN, r->t_g, r->func, lane_uuid(s, l), NULL, 0, NULL, 0);
	slice_event(s, t, h, SLICE_END, r->t2_g, -1, lane_uuid(s, l), NULL, 0, NULL, 0);
}

/* the end of thread t's held call, with the receives it completed */
void pf_release(struct trace_stream *s, int t, struct thr *h)
{
	if (!h || !h->held)
		return;
	slice_event(s, t, h, SLICE_END, h->held_t2, -1, 0, h->hflow, h->nhflow, h->end, h->nend);
	h->held = 0;
	h->nend = 0;
	h->nhflow = 0;
	if (--s->nheld == 0)
		out_safe(&s->pf);
}

void pf_call(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	pf_release(s, t, h);
	slice_event(s, t, h, SLICE_BEGIN, r->t_g, r->func, 0, h->flow, h->nflow, NULL, 0);
	h->nflow = 0;
	h->held = 1;
	s->nheld++;
	h->held_func = r->func;
	h->held_t0 = r->t_g;
	h->held_t2 = r->t2_g;
}

void pf_message(struct thr *h, const struct rec *r, uint64_t id, int send)
{
	if (h && of_held(h, r)) {
		if (!send && h->nend < MAX_PENDING)
			h->end[h->nend++] = id;
		else if (send && h->nhflow < MAX_PENDING)
			h->hflow[h->nhflow++] = id;
		h = NULL; /* taken */
	}
	if (h && !h->nflow && !h->nend) {
		h->p_t0 = r->t_g;
		h->p_func = r->func;
	}
	if (h)
		h->p_t1 = r->t_g;
	if (h && send && h->nflow < MAX_PENDING)
		h->flow[h->nflow++] = id;
	else if (h && !send && h->nend < MAX_PENDING)
		h->end[h->nend++] = id;
}

void pf_process(struct trace_stream *s)
{
	track_desc(s, 0, proc_uuid(s), s->name, 0);
	s->proc_at = s->pf.bytes;
}

/* ---- the launcher's marks of message order ----------------------------------------------------- */

static int order_cmp(const void *a, const void *b)
{
	const struct pf_order *x = a, *y = b;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

/* The launcher's marks: o opened for appending to path, the file's end its last safe point
 * (a failed write takes back every mark: out_flush cuts to it). Returns 0, or HCLOCK_EIO
 * with err_set's line (o->fd then -1, its buffer freed). */
static int append_open(struct out *o, const char *path)
{
	o->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	o->buf = malloc(OUT_CAP);
	off_t end = o->fd < 0 ? -1 : lseek(o->fd, 0, SEEK_END);
	if (end < 0 || !o->buf) {
		int e = o->buf ? errno : ENOMEM;
		if (o->fd >= 0)
			close(o->fd);
		o->fd = -1;
		free(o->buf);
		o->buf = NULL;
		return err_set(HCLOCK_EIO, "cannot append to %s: %s", path, strerror(e));
	}
	o->bytes = o->done = o->safe = o->safe_done = (uint64_t)end;
	return 0;
}

/* ... flushed and closed (if open). Returns 0 or HCLOCK_EIO with err_set's line naming what
 * (the marks). */
static int append_close(struct out *o, const char *what)
{
	if (o->fd < 0)
		return 0;
	out_flush(o);
	if (close(o->fd) && !o->err)
		o->err = errno;
	free(o->buf);
	return o->err ? err_set(HCLOCK_EIO, "appending %s to the Perfetto trace: %s", what,
	                        strerror(o->err)) : 0;
}

int pf_write_order(const char *path, int size, struct pf_order *o, size_t n)
{
	struct trace_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory for the message order marks");
	int rc = append_open(&s->pf, path);
	qsort(o, n, sizeof(*o), order_cmp);
	for (size_t i = 0; !rc && i < n; i++) {
		/* the receiver's process track and a sequence of its own after every process's
		 * threads' */
		s->rank = o[i].dst;
		uint64_t track = proc_uuid(s) + 0x30000;
		uint32_t seq = seq_of(size, o[i].dst, MAX_THREADS);
		struct pb p = {.n = 0}, te = {.n = 0}, da = {.n = 0};
		if (!i || o[i].dst != o[i - 1].dst) {
			/* the sequence's start: its track, the names interned (event names 1 and 2,
			 * the annotation's name 1) */
			struct pb in = {.n = 0}, en = {.n = 0};
			seq_track(s, &p, seq, track, "message order");
			for (int k = 0; k < 3; k++) {
				en.n = 0;
				pb_uint(&en, EN_IID, k < 2 ? (uint64_t)k + 1 : 1);
				pb_str(&en, EN_NAME, k == 0 ? "order proven" : k == 1 ? "order by estimate"
				                                                      : "margin_ns");
				pb_msg(&in, k < 2 ? ID_EVENT_NAMES : ID_DEBUG_NAMES, &en);
			}
			pb_msg(&p, TP_INTERNED, &in);
			put_packet(s, &p);
			p.n = 0;
		}
		pb_uint(&p, TP_TIMESTAMP, (uint64_t)o[i].t_ns);
		pb_uint(&p, TP_TS_CLOCK, CLOCK_ABS);
		pb_uint(&p, TP_SEQ_ID, seq);
		pb_uint(&te, TE_TYPE, INSTANT);
		pb_uint(&te, TE_TRACK_UUID, track);
		pb_uint(&te, TE_NAME_IID, o[i].proven ? 1 : 2);
		pb_uint(&da, DA_NAME_IID, 1);
		pb_uint(&da, DA_INT, (uint64_t)o[i].margin_ns);
		pb_msg(&te, TE_DEBUG, &da);
		pb_msg(&p, TP_TRACK_EVENT, &te);
		put_packet(s, &p);
	}
	int crc = append_close(&s->pf, "the message order marks");
	free(s);
	return rc ? rc : crc;
}

/* ---- the wait states' marks ---- */

struct pf_waits {
	struct trace_stream s;   /* its pf output and the process being written (rank) */
	int size;
	unsigned char *started;  /* per process: its sequence begun */
	const char *const *titles; /* the event names: titles[i] is iid i + 1 */
	int ntitles;
};

/* the debug annotations' names, interned per sequence */
enum { WA_PEER = 1, WA_LO, WA_HI, WA_PROVEN };

struct pf_waits *pf_waits_open(const char *path, int size, const char *const *titles,
                               int ntitles)
{
	struct pf_waits *w = calloc(1, sizeof(*w));
	if (!w || !(w->started = calloc((size_t)(size > 0 ? size : 1), 1))) {
		free(w);
		err_set(HCLOCK_ENOMEM, "out of memory for the wait states' marks");
		return NULL;
	}
	w->size = size;
	w->titles = titles;
	w->ntitles = ntitles;
	if (append_open(&w->s.pf, path)) {
		free(w->started);
		free(w);
		return NULL;
	}
	return w;
}

static void da_int(struct pb *te, uint64_t name, int64_t v)
{
	struct pb da = {.n = 0};
	pb_uint(&da, DA_NAME_IID, name);
	pb_uint(&da, DA_INT, (uint64_t)v);
	pb_msg(te, TE_DEBUG, &da);
}

void pf_waits_add(struct pf_waits *w, int32_t proc, int title, int64_t at_ns, int64_t est_ns,
                  int64_t lo_ns, int64_t hi_ns, int64_t peer)
{
	if (proc < 0 || proc >= w->size || title < 0 || title >= w->ntitles)
		return;
	struct trace_stream *s = &w->s;
	s->rank = proc;
	uint64_t track = proc_uuid(s) + 0x50000; /* after the stop track's 0x40000 */
	uint32_t seq = seq_of(w->size, proc, MAX_THREADS + 1);
	struct pb p = {.n = 0}, te = {.n = 0};
	if (!w->started[proc]) {
		static const char *const names[] = {"waited_for_rank", "lo_ns", "hi_ns", "proven"};
		struct pb in = {.n = 0};
		seq_track(s, &p, seq, track, "wait states");
		for (uint64_t k = 0; k < 4; k++) {
			struct pb en = {.n = 0};
			pb_uint(&en, EN_IID, k + 1);
			pb_str(&en, EN_NAME, names[k]);
			pb_msg(&in, ID_DEBUG_NAMES, &en);
		}
		for (int k = 0; k < w->ntitles; k++) {
			struct pb en = {.n = 0};
			pb_uint(&en, EN_IID, (uint64_t)k + 1);
			pb_str(&en, EN_NAME, w->titles[k]);
			pb_msg(&in, ID_EVENT_NAMES, &en);
		}
		pb_msg(&p, TP_INTERNED, &in);
		put_packet(s, &p);
		p.n = 0;
		w->started[proc] = 1;
	}
	pb_uint(&p, TP_TIMESTAMP, (uint64_t)at_ns);
	pb_uint(&p, TP_TS_CLOCK, CLOCK_ABS);
	pb_uint(&p, TP_SEQ_ID, seq);
	pb_uint(&te, TE_TYPE, est_ns > 0 ? SLICE_BEGIN : INSTANT);
	pb_uint(&te, TE_TRACK_UUID, track);
	pb_uint(&te, TE_NAME_IID, (uint64_t)title + 1);
	da_int(&te, WA_PEER, peer);
	da_int(&te, WA_LO, lo_ns);
	if (hi_ns < INT64_MAX / 4)
		da_int(&te, WA_HI, hi_ns);
	da_int(&te, WA_PROVEN, lo_ns > 0);
	pb_msg(&p, TP_TRACK_EVENT, &te);
	put_packet(s, &p);
	if (est_ns <= 0)
		return;
	p.n = te.n = 0;
	pb_uint(&p, TP_TIMESTAMP, (uint64_t)(at_ns + est_ns));
	pb_uint(&p, TP_TS_CLOCK, CLOCK_ABS);
	pb_uint(&p, TP_SEQ_ID, seq);
	pb_uint(&te, TE_TYPE, SLICE_END);
	pb_uint(&te, TE_TRACK_UUID, track);
	pb_msg(&p, TP_TRACK_EVENT, &te);
	put_packet(s, &p);
}

int pf_waits_close(struct pf_waits *w)
{
	if (!w)
		return 0;
	int rc = append_close(&w->s.pf, "the wait states' marks");
	free(w->started);
	free(w);
	return rc;
}
