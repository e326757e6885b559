/*
 * stream.c - one process's outputs as its records come (stream.h): Perfetto's protobuf
 * format, Chrome JSON, the counters.
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
 * A write that fails (a full disk) stops that output: the protobuf is cut back to its last
 * safe point, a packet boundary where no slice of the process is open, so that what is on
 * disk is a valid trace on its own (flows may have lost an end); the JSON part is left out
 * by the launcher. The counters go to a file whose space is taken when the stream opens.
 * Where recording stopped (record.h's REC_F_STOP) an instant event says why; the protobuf
 * holds PF_KEEP bytes of the disk past what it wrote (held ahead after each write, beyond the
 * file's end: util/hold.h), so that a part cut short before that instant can have it
 * again at the cut (stop_tail) whoever else filled the disk.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_api.h"
#include "trace/otf2_stream.h"
#include "trace/stream.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/hold.h"
#include "util/msgmatch.h"
#include "util/path.h"

#define MAX_THREADS 1024   /* a record's thread index above this shares the last track */
#define MAX_PENDING 64     /* flow ids waiting for their call's record, per thread */
#define NB_LANES 16
#define OUT_CAP (1 << 20)  /* bytes buffered per output before a write */
#define OUT_MARKS 64       /* safe points kept per buffer: a cut loses at most OUT_CAP / 64 */
#define HIST_BINS 64       /* message sizes: bin 0 empty, bin k in [2^(k-1), 2^k) */
#define STATS_CAP (64 << 10) /* bytes taken for the counters when the stream opens */
#define PF_KEEP 4096       /* bytes the protobuf part holds past what it wrote, for its tail */

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

struct out {
	int fd;
	char *buf;
	size_t n;
	uint64_t bytes;  /* written and buffered */
	uint64_t done;   /* bytes written */
	uint64_t safe;   /* the last safe point (a byte offset, see above) */
	uint64_t safe_done; /* the last safe point at or before done */
	uint64_t mark[OUT_MARKS]; /* safe points in the buffer, OUT_CAP / OUT_MARKS apart */
	int nmark;
	int err;         /* errno of the first failure; the output stops there */
	uint64_t keep;   /* bytes held past the last safe point (0: none): after a failure the
	                    file keeps them, so that its tail can be written over them */
	uint64_t held;   /* bytes the file holds past done for the tail (after a failure) */
};

struct thr {
	int up;
	int64_t last_ts;           /* the incremental clock's value, ns */
	uint32_t *iid;             /* per function: its name's iid on this sequence (0: not
	                              interned yet); iids count up in the order of first use, so
	                              the functions a program calls take one byte */
	uint32_t iids;             /* iids given so far */
	uint64_t flow[MAX_PENDING], end[MAX_PENDING];
	int nflow, nend;
	int64_t p_t0, p_t1;        /* the pending messages' first and last time, ns */
	uint16_t p_func;
	/* a call's end is held until the thread's next record: the receives it completed
	 * are recorded after it (calls.c), at its leave time, and the persistent sends an
	 * MPI_Start(all) started, at its enter time (their flows leave from its end) */
	int held;
	uint16_t held_func;
	int64_t held_t0, held_t2;
	uint64_t hflow[MAX_PENDING];
	int nhflow;
};

/* record r belongs to thread h's held call: a receive it completed, a persistent send it
 * started */
static int of_held(const struct thr *h, const struct rec *r)
{
	return h->held && r->func == h->held_func &&
	       ((r->kind == REC_RECV && r->t_g == h->held_t2) ||
	        (r->kind == REC_SEND && r->t_g == h->held_t0));
}

struct fprof {
	uint64_t calls;
	int64_t total_ns, max_ns;
};

struct trace_stream {
	int rank, size;
	uint32_t nfuncs;
	char **names;
	int64_t t0;
	uint64_t json_limit;
	char dir[4200];
	struct out pf, js;
	struct otf2s *o2;          /* the OTF2 part (otf2_stream.h) */
	int json_on;
	int stats_fd;              /* DIR/parts/rank.R.stats.part, its space taken */
	unsigned when_full;        /* the raw header's: record.h's enum rec_when_full */
	uint64_t waits;            /* ... the appends that waited for the writer */
	int64_t waited_ns;         /* ... the time they waited, summed over the threads, ns */
	int have_clock;            /* clock holds the continuous clock's statistics */
	struct stream_clock clock;
	int nheld;                 /* threads with a call's end held (slices open) */
	int stopped, stop_errno;   /* recording stopped early: enum rec_stop, errno */
	int stop_marked;           /* the stop's instant event is written */
	int64_t stop_ts;           /* ... at this time, ns (global clock) */
	uint64_t stop_at;          /* the protobuf's bytes up to the end of it (UINT64_MAX:
	                              not put: the output had stopped) */
	uint64_t proc_at;          /* ... up to the end of the process's track description */
	int json_skip_errno;       /* the JSON part left out: its disk is full (this errno) */
	int bound_track;           /* the bound's counter track is described */
	uint64_t bound_samples;    /* REC_BOUND samples */
	int64_t bound_max_ns;      /* their largest half-width, ns */
	struct thr *thr[MAX_THREADS];
	struct msgmatch_chans chans; /* each channel's sends and receives so far: the flow ids */
	int64_t lane_end[NB_LANES];
	uint64_t nb_id;
	/* counters */
	uint64_t records, drops, sends, recvs, coll, calls, json_events;
	int64_t t_first, t_last, mpi_ns;
	struct fprof *prof;
	uint64_t hist[HIST_BINS];
	uint64_t hist_bytes;
};

/* ---- outputs ---------------------------------------------------------------------------------- */

/* the keep bytes past what was written held ahead (hold.h): a write that finds the disk
 * full has written them */
static void out_hold(struct out *o)
{
	if (o->keep && o->fd >= 0)
		(void)hold_ahead(o->fd, o->done, o->keep);
}

static void out_flush(struct out *o)
{
	size_t off = 0, n = o->n;
	int full = fault_hit(FAULT_WRITE); /* tests: a disk full halfway */
	if (full)
		n /= 2;
	while (!o->err && off < n) {
		ssize_t w = write(o->fd, o->buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->err = w < 0 ? errno : ENOSPC;
		else
			off += (size_t)w;
	}
	if (full && !o->err)
		o->err = ENOSPC;
	if (o->err) {
		/* cut back to the last safe point that made it to the file with keep bytes after
		 * it, which the file holds on to (written, or taken ahead: out_hold) */
		uint64_t end = o->done + off, lim = hold_start(end, o->keep);
		uint64_t cut = o->safe <= lim ? o->safe : o->safe_done;
		for (int i = 0; i < o->nmark; i++)
			if (o->mark[i] <= lim && o->mark[i] > cut)
				cut = o->mark[i];
		o->held = o->keep && cut + o->keep <= end ? o->keep : 0;
		if (ftruncate(o->fd, (off_t)(cut + o->held)))
			cut = end, o->held = 0;
		/* a second flush (the close) finds the same point */
		o->bytes = o->done = o->safe = o->safe_done = cut;
	} else {
		o->done += off;
		o->safe_done = o->safe;
		out_hold(o);
	}
	o->nmark = 0;
	o->n = 0;
}

/* here (the bytes put so far) is a safe point */
static void out_safe(struct out *o)
{
	o->safe = o->bytes;
	uint64_t last = o->nmark ? o->mark[o->nmark - 1] : o->safe_done;
	if (o->nmark < OUT_MARKS && o->bytes - last >= OUT_CAP / OUT_MARKS)
		o->mark[o->nmark++] = o->bytes;
}

static void out_put(struct out *o, const void *p, size_t n)
{
	if (o->err || o->fd < 0)
		return;
	if (o->n + n > OUT_CAP)
		out_flush(o);
	memcpy(o->buf + o->n, p, n);
	o->n += n;
	o->bytes += n;
}

static int out_open(struct out *o, const char *path)
{
	o->buf = malloc(OUT_CAP);
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (!o->buf || o->fd < 0)
		return -1;
	return 0;
}

static int out_close(struct out *o)
{
	if (o->fd >= 0) {
		out_flush(o);
		/* the bytes held past the end given back */
		if (o->keep && ftruncate(o->fd, (off_t)o->done) && !o->err)
			o->err = errno;
		if (close(o->fd) && !o->err)
			o->err = errno;
		o->fd = -1;
	}
	free(o->buf);
	o->buf = NULL;
	return o->err;
}

/* ---- protobuf encoding ----------------------------------------------------------------------- */

/* a message under construction (packets are small: 1 KiB covers the largest, a first packet
 * with its interned names; longer names are cut) */
struct pb {
	uint8_t b[1024];
	size_t n;
};

static void pb_varint(struct pb *p, uint64_t v)
{
	while (v >= 0x80 && p->n < sizeof(p->b)) {
		p->b[p->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	if (p->n < sizeof(p->b))
		p->b[p->n++] = (uint8_t)v;
}

static void pb_uint(struct pb *p, int field, uint64_t v)
{
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

static void pb_bytes(struct pb *p, int field, const void *d, size_t n)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, n);
	if (p->n + n <= sizeof(p->b)) {
		memcpy(p->b + p->n, d, n);
		p->n += n;
	}
}

static void pb_msg(struct pb *p, int field, const struct pb *m)
{
	pb_bytes(p, field, m->b, m->n);
}

static void pb_str(struct pb *p, int field, const char *s)
{
	size_t n = strlen(s);
	pb_bytes(p, field, s, n > 200 ? 200 : n);
}

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
static struct thr *thread_at(struct trace_stream *s, int t, int64_t ts)
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

/* ---- JSON ------------------------------------------------------------------------------------- */

static void js_printf(struct trace_stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void js_printf(struct trace_stream *s, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_put(&s->js, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}

/* microseconds with three decimals since t0: the ns exactly */
static void js_us(struct trace_stream *s, int64_t ns)
{
	ns -= s->t0;
	js_printf(s, "%s%" PRId64 ".%03d", ns < 0 ? "-" : "", (ns < 0 ? -ns : ns) / 1000,
	          (int)((ns < 0 ? -ns : ns) % 1000));
}

static const char *fname(const struct trace_stream *s, unsigned f)
{
	return f < s->nfuncs ? s->names[f] : "?";
}

/* ---- messages --------------------------------------------------------------------------------- */


static void message(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	int send = r->kind == REC_SEND;
	if (send) {
		s->sends++;
		int b = r->bytes ? 64 - __builtin_clzll(r->bytes) : 0;
		s->hist[b < HIST_BINS ? b : HIST_BINS - 1]++;
		s->hist_bytes += r->bytes;
	} else {
		s->recvs++;
	}
	if (r->peer < 0)
		return;
	int32_t src = send ? s->rank : r->peer, dst = send ? r->peer : s->rank;
	int64_t n = msgmatch_next(&s->chans, r->comm, src, dst, r->tag, !send);
	if (n < 0)
		return;
	uint64_t id = msgmatch_id(r->comm, src, dst, r->tag, (uint64_t)n);
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
	if (s->json_on) {
		s->json_events += 1;
		if (send) {
			js_printf(s, ",\n{\"ph\":\"s\",\"cat\":\"p2p\",\"name\":\"message\",\"id\":%" PRIu64
			          ",\"pid\":%d,\"tid\":%d,\"ts\":", id >> 11, s->rank, t);
			js_us(s, r->t_g);
			js_printf(s, ",\"args\":{\"to\":%d,\"tag\":%d,\"bytes\":%" PRIu64 "}}", r->peer,
			          r->tag, r->bytes);
		} else {
			js_printf(s, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"p2p\",\"name\":\"message\","
			          "\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":", id >> 11, s->rank, t);
			js_us(s, r->t_g);
			/* the receive's own view (its status): a test can hold it against the send's */
			js_printf(s, ",\"args\":{\"from\":%d,\"tag\":%d,\"bytes\":%" PRIu64 "}}", r->peer,
			          r->tag, r->bytes);
		}
	}
}

/* ---- records ---------------------------------------------------------------------------------- */

static const char *stop_text(int why, int e)
{
	if (why == REC_STOP_SIZE)
		return "recording stopped: max-size reached";
	return e == ENOSPC || e == EDQUOT ? "recording stopped: disk full"
	                                  : "recording stopped: a write failed";
}

/* an instant event where recording stopped (thread t at ts) */
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

/* a bounds sample: the half-width on the process's counter track */
static void bound_sample(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	int64_t hw = (r->t2_l - r->t2_g) / 2;
	s->bound_samples++;
	if (hw > s->bound_max_ns)
		s->bound_max_ns = hw;
	if (h) {
		if (!s->bound_track) {
			s->bound_track = 1;
			track_desc(s, t, bound_uuid(s), "clock bound half-width", 0);
		}
		struct pb te = {.n = 0};
		pb_uint(&te, TE_TYPE, COUNTER);
		pb_uint(&te, TE_TRACK_UUID, bound_uuid(s));
		pb_uint(&te, TE_COUNTER_VALUE, (uint64_t)hw);
		put_event(s, t, h, r->t_g, &te);
	}
	if (s->json_on) {
		s->json_events++;
		js_printf(s, ",\n{\"ph\":\"C\",\"name\":\"clock bound half-width\",\"pid\":%d,"
		          "\"tid\":%d,\"ts\":", s->rank, t);
		js_us(s, r->t_g);
		js_printf(s, ",\"args\":{\"ns\":%" PRId64 "}}", hw);
	}
}

static void stop_mark(struct trace_stream *s, int t, struct thr *h, int64_t ts)
{
	s->stop_marked = 1;
	s->stop_ts = ts;
	s->stop_at = UINT64_MAX;
	const char *what = stop_text(s->stopped, s->stop_errno);
	if (h) {
		struct pb te = {.n = 0};
		pb_uint(&te, TE_TYPE, INSTANT);
		pb_str(&te, TE_NAME, what);
		put_event(s, t, h, ts, &te);
		if (!s->pf.err)
			s->stop_at = s->pf.bytes;
	}
	if (s->json_on) {
		s->json_events++;
		js_printf(s, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"hclock\",\"name\":\"%s\","
		          "\"pid\":%d,\"tid\":%d,\"ts\":", what, s->rank, t);
		js_us(s, ts);
		js_printf(s, ",\"args\":{\"errno\":%d}}", s->stop_errno);
	}
}

/* The protobuf cut short (a full disk) before the end of the stop's instant: the instant
 * again at the cut, on a track "recording" and a sequence of its own (absolute time, its
 * name not interned: it needs nothing that was cut; the process's track described again if
 * that was cut too), written over the bytes the file held past the cut (out.keep), which no
 * other writer can have taken. */
static void stop_tail(struct trace_stream *s)
{
	struct out *o = &s->pf;
	int err = o->err;
	if (!s->stop_marked || !err || s->stop_at <= o->done || o->fd < 0 || !o->held)
		return;
	uint64_t at = o->done, uuid = proc_uuid(s) + 0x40000;
	uint32_t seq = seq_id(s, MAX_THREADS + 1);
	o->err = 0;
	o->n = 0;
	if (at < s->proc_at) {
		char name[32];
		snprintf(name, sizeof(name), "rank %d", s->rank);
		track_desc(s, 0, proc_uuid(s), name, 0);
	}
	struct pb p = {.n = 0}, td = {.n = 0}, te = {.n = 0};
	pb_uint(&p, TP_SEQ_ID, seq);
	pb_uint(&p, TP_SEQ_FLAGS, SEQ_CLEARED);
	pb_uint(&td, TD_UUID, uuid);
	pb_uint(&td, TD_PARENT, proc_uuid(s));
	pb_str(&td, TD_NAME, "recording");
	pb_msg(&p, TP_TRACK_DESC, &td);
	put_packet(s, &p);
	p.n = 0;
	pb_uint(&p, TP_TIMESTAMP, (uint64_t)s->stop_ts);
	pb_uint(&p, TP_TS_CLOCK, CLOCK_ABS);
	pb_uint(&p, TP_SEQ_ID, seq);
	pb_uint(&te, TE_TYPE, INSTANT);
	pb_uint(&te, TE_TRACK_UUID, uuid);
	pb_str(&te, TE_NAME, stop_text(s->stopped, s->stop_errno));
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

static void profile_call(struct trace_stream *s, const struct rec *r)
{
	int64_t d = r->t2_g - r->t_g;
	s->calls++;
	s->mpi_ns += d;
	if (r->func < s->nfuncs) {
		struct fprof *f = &s->prof[r->func];
		f->calls++;
		f->total_ns += d;
		if (d > f->max_ns)
			f->max_ns = d;
	}
}

static void nb_coll(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
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
	if (s->json_on) {
		s->json_events += 2;
		uint64_t id = (uint64_t)s->rank << 32 | s->nb_id++;
		js_printf(s, ",\n{\"ph\":\"b\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
		          ",\"pid\":%d,\"tid\":%d,\"ts\":", fname(s, r->func), id, s->rank, t);
		js_us(s, r->t_g);
		js_printf(s, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
		          "\"}}", r->peer, r->bytes, r->comm);
		js_printf(s, ",\n{\"ph\":\"e\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
		          ",\"pid\":%d,\"tid\":%d,\"ts\":", fname(s, r->func), id, s->rank, t);
		js_us(s, r->t2_g);
		js_printf(s, "}");
	}
}

/* the end of thread t's held call, with the receives it completed */
static void release(struct trace_stream *s, int t, struct thr *h)
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

static void call(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	profile_call(s, r);
	if (h) {
		release(s, t, h);
		slice_event(s, t, h, SLICE_BEGIN, r->t_g, r->func, 0, h->flow, h->nflow, NULL, 0);
		h->nflow = 0;
		h->held = 1;
		s->nheld++;
		h->held_func = r->func;
		h->held_t0 = r->t_g;
		h->held_t2 = r->t2_g;
	}
	if (s->json_on) {
		s->json_events++;
		js_printf(s, ",\n{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
		          "\"ts\":", fname(s, r->func), s->rank, t);
		js_us(s, r->t_g);
		int64_t d = r->t2_g - r->t_g;
		js_printf(s, ",\"dur\":%" PRId64 ".%03d", d / 1000, (int)(d % 1000));
		if (r->kind == REC_COLL)
			js_printf(s, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
			          "\"}", r->peer, r->bytes, r->comm);
		else if (r->flags & REC_F_CUT)
			js_printf(s, ",\"args\":{\"returned\":false}");
		js_printf(s, "}");
	}
}

/* thread t's pending message records whose call's record is not there: a call around them,
 * so that every message lies inside a call; cut: the file ended (a program killed), marked as
 * not returned, else its record was dropped (full buffers) */
static void orphans(struct trace_stream *s, int t, struct thr *h, int cut)
{
	struct rec c = {.kind = REC_CALL, .flags = cut ? REC_F_CUT : 0, .func = h->p_func,
	                .peer = -1, .t_g = h->p_t0, .t2_g = h->p_t1};
	call(s, &c, t, h);
}

void stream_feed(struct trace_stream *s, const struct rec *r, size_t n)
{
	otf2s_feed(s->o2, r, n);
	for (size_t i = 0; i < n; i++, r++) {
		if (r->kind == REC_DROP) {
			s->drops += r->bytes;
			if ((r->flags & REC_F_STOP) && !s->stop_marked) {
				int t = (int)r->tid < MAX_THREADS ? (int)r->tid : MAX_THREADS - 1;
				struct thr *h = thread_at(s, t, r->t_g);
				release(s, t, h);
				s->stopped = r->tag;
				s->stop_errno = r->peer;
				stop_mark(s, t, h, r->t_g);
			}
			continue;
		}
		if (r->kind == REC_BOUND) {
			int t = (int)r->tid < MAX_THREADS ? (int)r->tid : MAX_THREADS - 1;
			if (r->t2_g || r->t2_l) /* else not known (an aligned trace) */
				bound_sample(s, r, t, thread_at(s, t, r->t_g));
			continue;
		}
		s->records++;
		if (s->json_on && s->json_limit && s->records > s->json_limit)
			s->json_on = 0; /* too big for JSON: the launcher leaves it out */
		int t = (int)r->tid;
		struct thr *h = thread_at(s, t, r->t_g);
		if (t < 0 || t >= MAX_THREADS)
			t = MAX_THREADS - 1;
		if (r->t_g < s->t_first)
			s->t_first = r->t_g;
		int64_t end = r->kind == REC_CALL || r->kind == REC_COLL ? r->t2_g : r->t_g;
		if (end > s->t_last)
			s->t_last = end;
		if (h && h->held && !of_held(h, r))
			release(s, t, h);
		switch (r->kind) {
		case REC_SEND:
		case REC_RECV:
			message(s, r, t, h);
			break;
		case REC_COLL:
			s->coll++;
			if (r->flags & REC_F_NB) {
				if (h)
					nb_coll(s, r, t, h);
				break;
			}
			/* fall through */
		case REC_CALL:
			/* sends pending for another call (theirs made before this one began, or by
			 * another function), or receives whose call ended before them: their call's
			 * record was dropped */
			if (h && ((h->nflow && (h->p_func != r->func || h->p_t0 < r->t_g)) ||
			          (h->nend && !h->held)))
				orphans(s, t, h, 0);
			call(s, r, t, h);
			break;
		default:
			break;
		}
	}
}

/* ---- open and close --------------------------------------------------------------------------- */

static int part_path(char *out, size_t len, const char *dir, int rank, const char *ext)
{
	int n = snprintf(out, len, "%s/parts/rank.%d.%s", dir, rank, ext);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int stream_open(const struct stream_opts *o, struct trace_stream **out)
{
	*out = NULL;
	struct trace_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory for the trace's outputs");
	s->rank = o->rank;
	s->size = o->size;
	s->nfuncs = o->nfuncs;
	s->t0 = o->t0_g;
	s->json_limit = o->json_limit;
	s->json_on = 1;
	s->pf.fd = s->js.fd = s->stats_fd = -1;
	s->t_first = INT64_MAX;
	s->t_last = INT64_MIN;
	snprintf(s->dir, sizeof(s->dir), "%s", o->dir);
	s->names = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(char *));
	s->prof = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*s->prof));
	int rc = s->names && s->prof ? 0 : err_set(HCLOCK_ENOMEM, "out of memory for the outputs");
	for (uint32_t i = 0; !rc && i < s->nfuncs; i++)
		if (!(s->names[i] = strdup(o->names[i] ? o->names[i] : "?")))
			rc = err_set(HCLOCK_ENOMEM, "out of memory for the outputs");
	char path[4300];
	snprintf(path, sizeof(path), "%s/parts", o->dir);
	if (!rc && path_mkdirs(path))
		rc = err_set(HCLOCK_EIO, "cannot create %s: %s", path, strerror(errno));
	if (!rc && (part_path(path, sizeof(path), o->dir, o->rank, "pftrace") ||
	            out_open(&s->pf, path)))
		rc = err_set(HCLOCK_EIO, "cannot write %s: %s", path, strerror(errno));
	if (!rc) {
		s->pf.keep = PF_KEEP;
		out_hold(&s->pf);
	}
	if (!rc && (part_path(path, sizeof(path), o->dir, o->rank, "json") ||
	            out_open(&s->js, path)))
		rc = err_set(HCLOCK_EIO, "cannot write %s: %s", path, strerror(errno));
	/* the counters' file first gets its space: they are written whatever else fills it */
	if (!rc && !part_path(path, sizeof(path), o->dir, o->rank, "stats.part") &&
	    (s->stats_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0)
		posix_fallocate(s->stats_fd, 0, STATS_CAP);
	if (!rc)
		rc = otf2s_open(o->dir, o->rank, o->nfuncs, o->names, &s->o2);
	if (rc) {
		stream_close(s, NULL, 0);
		return rc;
	}
	char name[32];
	snprintf(name, sizeof(name), "rank %d", s->rank);
	track_desc(s, 0, proc_uuid(s), name, 0);
	s->proc_at = s->pf.bytes;
	js_printf(s, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
	          "\"args\":{\"name\":\"rank %d\"}}", s->rank, s->rank);
	js_printf(s, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
	          "\"args\":{\"sort_index\":%d}}", s->rank, s->rank);
	out_safe(&s->pf);
	*out = s;
	return 0;
}

static void write_stats(struct trace_stream *s, const struct rec_trailer *tr, uint64_t raw_bytes,
                        int pf_err, int js_err, char *path)
{
	char tmp[4400];
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = s->stats_fd >= 0 ? fdopen(s->stats_fd, "w") : fopen(tmp, "w");
	if (!f)
		return;
	s->stats_fd = -1;
	fprintf(f, "hclock-trace-stats 1\nrank %d\nsize %d\n", s->rank, s->size);
	fprintf(f, "records %" PRIu64 "\ndropped %" PRIu64 "\nfinished %d\n", s->records,
	        tr ? tr->dropped : s->drops, tr != NULL);
	fprintf(f, "stopped %d\nstop_errno %d\n", s->stopped, s->stop_errno);
	fprintf(f, "when_full %u\nwaits %" PRIu64 "\nwaited_ns %" PRId64 "\n", s->when_full,
	        s->waits, s->waited_ns);
	fprintf(f, "bound_samples %" PRIu64 "\nbound_max_ns %" PRId64 "\n", s->bound_samples,
	        s->bound_max_ns);
	fprintf(f, "raw_bytes %" PRIu64 "\npftrace_bytes %" PRIu64 "\npftrace_error %d\n", raw_bytes,
	        s->pf.bytes, pf_err);
	fprintf(f, "json %d\njson_bytes %" PRIu64 "\njson_error %d\n", s->json_on && !js_err,
	        s->js.bytes, js_err);
	fprintf(f, "sends %" PRIu64 "\nrecvs %" PRIu64 "\ncalls %" PRIu64 "\n", s->sends, s->recvs,
	        s->calls);
	fprintf(f, "t_first %" PRId64 "\nt_last %" PRId64 "\nmpi_ns %" PRId64 "\n",
	        s->records ? s->t_first : 0, s->records ? s->t_last : 0, s->mpi_ns);
	if (tr)
		fprintf(f, "overhead_ns %" PRId64 "\nrec_cost_ns %" PRId32 "\ndrift_max %.17g\n"
		        "drift_unc %.9g\ndrift_true %.17g\n", tr->overhead_ns, tr->rec_cost_ns,
		        tr->drift_max_ns, (double)tr->drift_unc_ns, tr->drift_true_ns);
	if (s->have_clock)
		fprintf(f, "clock_exchanges %" PRIu64 "\nclock_timeouts %" PRIu64 "\n"
		        "clock_thread_cpu_us %" PRId64 "\n", s->clock.exchanges, s->clock.timeouts,
		        s->clock.thread_cpu_us);
	for (uint32_t i = 0; i < s->nfuncs; i++)
		if (s->prof[i].calls)
			fprintf(f, "func %s %" PRIu64 " %" PRId64 " %" PRId64 "\n", s->names[i],
			        s->prof[i].calls, s->prof[i].total_ns, s->prof[i].max_ns);
	fprintf(f, "hist_bytes %" PRIu64 "\n", s->hist_bytes);
	for (int b = 0; b < HIST_BINS; b++)
		if (s->hist[b])
			fprintf(f, "hist %d %" PRIu64 "\n", b, s->hist[b]);
	int bad = fflush(f) || ferror(f);
	long len = ftell(f);
	if (!bad && (len < 0 || ftruncate(fileno(f), len))) /* the space taken at open, given back */
		bad = 1;
	if (!fclose(f) && !bad)
		rename(tmp, path);
	else
		remove(tmp);
}

int stream_close(struct trace_stream *s, const struct rec_trailer *tr, uint64_t raw_bytes)
{
	if (!s)
		return 0;
	/* a file cut short (SIGKILL loses the buffer being filled) can end in message records
	 * whose call's record was lost: a call marked cut around them, so that every message
	 * lies inside its call */
	for (int t = 0; t < MAX_THREADS; t++) {
		struct thr *h = s->thr[t];
		if (h && h->up && (h->nflow || (h->nend && !h->held)))
			orphans(s, t, h, 1);
		if (h && h->up)
			release(s, t, h);
	}
	if (tr && tr->stopped && !s->stop_marked) {
		/* the stop's marker did not reach the file (a full disk): at the last record */
		s->stopped = tr->stopped;
		s->stop_errno = tr->stop_errno;
		stop_mark(s, 0, s->records ? thread_at(s, 0, s->t_last) : NULL,
		          s->records ? s->t_last : 0);
	}
	if (s->pf.fd >= 0) {
		out_flush(&s->pf);
		stop_tail(s);
	}
	int pf_err = out_close(&s->pf), js_err = out_close(&s->js);
	if (!js_err && s->json_skip_errno)
		js_err = s->json_skip_errno; /* in the counters, not an error of this stream */
	char path[4300];
	int rc = otf2s_close(s->o2);
	if (s->names && s->prof && !part_path(path, sizeof(path), s->dir, s->rank, "stats"))
		write_stats(s, tr, raw_bytes, pf_err, js_err, path);
	if (!rc && (pf_err || (js_err && js_err != s->json_skip_errno)))
		rc = err_set(HCLOCK_EIO, "rank %d's outputs in %s/parts: %s", s->rank, s->dir,
		             strerror(pf_err ? pf_err : js_err));
	for (int t = 0; t < MAX_THREADS; t++) {
		if (s->thr[t])
			free(s->thr[t]->iid);
		free(s->thr[t]);
	}
	for (uint32_t i = 0; s->names && i < s->nfuncs; i++)
		free(s->names[i]);
	free(s->names);
	free(s->prof);
	msgmatch_chans_free(&s->chans);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s);
	return rc;
}

/* ---- from a raw file -------------------------------------------------------------------------- */

int stream_convert_raw(const char *dir, int rank, uint64_t json_limit,
                       const struct rec_trailer *known, const struct stream_clock *clock)
{
	enum { CHUNK = 16384 }; /* records per read: 1 MiB */
	char path[4300];
	snprintf(path, sizeof(path), "%s/raw/rank.%d", dir, rank);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(HCLOCK_EIO, "%s: %s", path, strerror(errno));
	struct rec_header h;
	char *head = NULL;
	struct rec *chunk = malloc(CHUNK * sizeof(struct rec));
	struct rec_file f = {0};
	struct trace_stream *s = NULL;
	int rc = HCLOCK_EIO;
	if (!chunk) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory converting %s", path);
		goto out;
	}
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.names_bytes > (1u << 24)) {
		rc = err_set(HCLOCK_EINVAL, "%s: no header of a raw trace", path);
		goto out;
	}
	size_t first = sizeof(h) + h.names_bytes;
	if (!(head = malloc(first))) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory converting %s", path);
		goto out;
	}
	if (pread(fd, head, first, 0) != (ssize_t)first) {
		rc = err_set(HCLOCK_EINVAL, "%s: cut inside its header", path);
		goto out;
	}
	if ((rc = rec_parse(path, head, first, &f)))
		goto out;
	if (f.h.rank != rank) {
		rc = err_set(HCLOCK_EINVAL, "%s: the header says rank %d", path, (int)f.h.rank);
		goto out;
	}
	struct stream_opts o = {.dir = dir, .rank = rank, .size = f.h.size, .nfuncs = f.h.nfuncs,
	                        .names = f.names, .t0_g = f.h.t0_g, .json_limit = json_limit};
	if ((rc = stream_open(&o, &s)))
		goto out;
	if (clock) {
		s->have_clock = 1;
		s->clock = *clock;
	}
	s->when_full = f.h.when_full;
	s->waits = f.h.waits;
	s->waited_ns = f.h.waited_ns;
	if (known && known->stopped == REC_STOP_DISK) {
		/* its disk is full: the protobuf first, no JSON to compete for what is left (the
		 * launcher would leave trace.json out anyway) */
		s->json_on = 0;
		s->json_skip_errno = known->stop_errno ? known->stop_errno : ENOSPC;
	}
	struct rec_trailer tr;
	int have_tr = 0;
	off_t off = (off_t)first;
	for (;;) {
		ssize_t got = pread(fd, chunk, CHUNK * sizeof(struct rec), off);
		if (got <= 0)
			break;
		size_t n = (size_t)got / sizeof(struct rec), k = 0;
		for (; k < n; k++) {
			const unsigned char *b = (const unsigned char *)&chunk[k];
			if (!memcmp(b, REC_TRAILER_MAGIC, 8)) {
				memcpy(&tr, b, sizeof(tr));
				have_tr = 1;
				break;
			}
			if (b[0] < REC_CALL || b[0] > REC_KIND_MAX)
				break;
		}
		stream_feed(s, chunk, k);
		if (k < n || (size_t)got < CHUNK * sizeof(struct rec))
			break;
		off += got;
	}
	struct stat sb;
	rc = stream_close(s, have_tr ? &tr : known, fstat(fd, &sb) ? 0 : (uint64_t)sb.st_size);
out:
	rec_file_free(&f);
	free(head);
	free(chunk);
	close(fd);
	return rc;
}

/* ---- the launcher's marks of message order ----------------------------------------------------- */

static int order_cmp(const void *a, const void *b)
{
	const struct stream_order *x = a, *y = b;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

int stream_write_order(const char *path, int size, struct stream_order *o, size_t n)
{
	struct trace_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory for the message order marks");
	s->pf.fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	s->pf.buf = malloc(OUT_CAP);
	int rc = 0;
	off_t end = s->pf.fd < 0 ? -1 : lseek(s->pf.fd, 0, SEEK_END);
	if (end < 0 || !s->pf.buf)
		rc = err_set(HCLOCK_EIO, "cannot append to %s: %s", path, strerror(errno));
	/* a failed write takes back all the marks (out_flush cuts to the last safe point) */
	s->pf.bytes = s->pf.done = s->pf.safe = s->pf.safe_done = end < 0 ? 0 : (uint64_t)end;
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
			struct pb td = {.n = 0}, in = {.n = 0}, en = {.n = 0};
			pb_uint(&p, TP_SEQ_ID, seq);
			pb_uint(&p, TP_SEQ_FLAGS, SEQ_CLEARED);
			pb_uint(&td, TD_UUID, track);
			pb_uint(&td, TD_PARENT, proc_uuid(s));
			pb_str(&td, TD_NAME, "message order");
			pb_msg(&p, TP_TRACK_DESC, &td);
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
	if (s->pf.fd >= 0) {
		out_flush(&s->pf);
		if (close(s->pf.fd) && !s->pf.err)
			s->pf.err = errno;
		if (!rc && s->pf.err)
			rc = err_set(HCLOCK_EIO, "appending to %s: %s", path, strerror(s->pf.err));
	}
	free(s->pf.buf);
	free(s);
	return rc;
}
