/*
 * tracer.c - libhclock_trace's runtime (tracer.h): the clock, the record buffers and their
 * writer thread, the raw file (record.h), what a program that dies leaves; MPI_Init and
 * MPI_Finalize. The communicator registry is comms.c's, the signals and exit of a program
 * that dies crash.c's, the drift check and --event-truth's summary at MPI_Finalize
 * finish.c's.
 *
 * Its settings come from the environment, HCLOCK_TRACE_* (settings.h: `hclock trace` sets
 * them from its options), read and checked at MPI_Init; a bad value ends the program there
 * (settings_or_exit). HCLOCK_TRACE_TRUTH=1 costs two more emulated reads per reading;
 * HCLOCK_TRACE_TEST_SLOW_WRITER lets the tests try the drop policy below, and
 * HCLOCK_FAULT=rank=all,at=shift moves every timestamp later by the two half-widths of the
 * clock's last bounds and 2 us, out of its bounds (wrong on purpose: --event-truth must find
 * every reading outside them; util/fault.h).
 *
 * Buffers (recbuf.h): records are appended to the current buffer without a lock (one atomic
 * add reserves a slot, storing the record's kind last publishes it); a full buffer is handed
 * to the writer thread (plain write(2), no MPI) and the other one filled meanwhile. When the
 * writer has not finished the previous buffer yet, new records are dropped and counted (the
 * trailer and the summary report the count, REC_DROP records where they went missing): the
 * program is never stalled. With --when-full wait (HCLOCK_TRACE_WHEN_FULL=wait) the thread
 * waits for the writer instead, at most TRACE_WAIT_MAX_NS a wait: one that reaches it (a
 * writer stuck on a disk that hangs) turns waiting off with a line, and records are dropped
 * from then on; the header's when_full, waits and waited_ns, written at MPI_Finalize, say
 * what happened. Threads at MPI_THREAD_MULTIPLE record at once; a signal that
 * ends the program writes the records published by then (flush_now), a record whose append
 * the signal interrupted is counted dropped.
 *
 * Size: the raw file stops at --max-size (HCLOCK_TRACE_MAX_SIZE): the writer writes the
 * records that fit, then a stop marker (record.h's REC_F_STOP), and recording stops; a write
 * that fails (a full disk, an I/O error) stops it the same way, the marker written over the
 * bytes the failed write had put on the disk (one record given up for it if need be; the
 * file takes the next record's place ahead of each write, hold_next) and the file cut back
 * to it. Records made after the stop are counted as dropped (the trailer says why it
 * stopped) and the program runs on. Each process holds back STREAM_RESERVE_BYTES of the disk
 * (DIR/raw/reserve.R, allocated at MPI_Init and removed at MPI_Finalize before the trailer),
 * so that after a full disk the trailer, the counters and the start of its outputs still fit.
 *
 * The clock's bounds: at a call's enter, at most every BOUND_CHECK_NS, the global clock is
 * read with its bounds (hclock_read; lock-free); a sample (REC_BOUND) is recorded when the
 * half-width changed by more than a tenth since the last one recorded, or BOUND_REPEAT_NS
 * after it. Message records carry their end's own bound (rec_bounds: the clock's bounds at
 * that reading, from its model now, no clock read): a send the latest, a receive the earliest
 * time the reference could have had. Not the half-widths last read: a continuous clock
 * slewing a correction in moves its reading against its bounds by up to its slew rate
 * (500 ppm) in between, 500 ns a millisecond.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check/truth.h"
#include "clock/clock.h"
#include "hclock.h"
#include "trace/comms.h"
#include "trace/crash.h"
#include "trace/filter.h"
#include "trace/finish.h"
#include "trace/mpiclass.h"
#include "trace/recbuf.h"
#include "trace/settings.h"
#include "trace/stream.h"
#include "trace/tracer.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/finwatch.h"
#include "util/hold.h"
#include "util/path.h"
#include "util/timeutil.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define FILTERED 0xffff
#define PROGRESS_MAX_NS 1000000 /* a drive=progress clock is driven when its exchanges have
                                  work (hclock_sync_progress_due), and at least this often */
#define BOUND_CHECK_NS 1000000    /* the clock's bounds read at most this often (base clock) */
#define ENABLED_BOUNDS 2          /* T.enabled: the call's record carries its bounds */
#define DERIVE_MIN_NS 500         /* call_bounds widens an enter's bound by up to this much
                                     (or an eighth) rather than evaluate the model again */
#define BOUND_REPEAT_NS 100000000 /* a sample recorded at least this often while they are read */

/* this thread runs the tracer's own work (its set-up, the clock it drives, its finish): an
 * MPI call reached from there is not the program's (the library's calls go to PMPI_* anyway,
 * util/pmpi.h), and a crash there cuts no call of the program's */
static TLS int in_tracer;
static TLS int my_tid = -1; /* this thread's index in the records (record.h's tid) */
static atomic_int next_tid = 1;

static struct {
	int on;
	int rank, size;
	hclock_emu *emu;
	hclock_clock *base, *g;
	hclock_sync *s;
	int progress;
	int map1;                   /* the global clock is a map of T.base's readings */
	int64_t last_progress_ns;
	uint8_t *enabled;           /* per function: recorded (non-zero), its bounds too
	                               (ENABLED_BOUNDS) */
	int fd;
	/* buffers */
	recbuf *rb;
	size_t cap;                  /* records per buffer */
	pthread_t writer;
	int writer_up;
	uint64_t max_size;           /* settings.h's max_size, bytes; 0: none */
	uint64_t raw_bytes;          /* the raw file's bytes written, whole records */
	uint64_t lost;               /* events not written because recording had stopped */
	_Atomic int64_t bound_due;   /* base clock time of the next bounds check, ns */
	_Atomic int64_t hw_lo, hw_hi;/* the last bounds read: the reference's time lay within
	                                [now - hw_lo, now + hw_hi], ns; -1: not known */
	int64_t hw_said, said_l;     /* the half-width last recorded and when (base clock), ns */
	atomic_int stopped;          /* enum rec_stop (set by the thread that writes) */
	int stop_errno;              /* REC_STOP_DISK: the failed write's errno */
	char reserve_path[4200];     /* DIR/raw/reserve.R ("": none) */
	int64_t slow_writer_ns;      /* settings.h's slow_writer_ns, ns (tests only) */
	int when_full_wait;          /* settings.h's when_full_wait */
	int64_t wait_max_ns;         /* settings.h's wait_max_ns, ns */
	atomic_int wait_warned;      /* the line that waiting gave up said */
	int test_shift;              /* HCLOCK_FAULT at=shift (tests only) */
	char dir[4100];              /* the trace's directory */
	uint64_t json_limit;         /* stream.h's json_limit */
	uint64_t records;            /* events handed to put_records (lost ones included) */
	atomic_uint_fast64_t dropped_stopped; /* events made after recording stopped */
	int64_t rec_cost_ns, overhead_ns, sync_ns;
	int64_t t0_g;                /* record.h's header t0_g, ns */
	_Atomic int64_t progress_ns; /* time in the clock's progress calls (drive), ns */
	int truth;                   /* --event-truth: each reading's truth noted (finish.h) */
} T = {.fd = -1, .hw_lo = -1, .hw_hi = -1, .bound_due = INT64_MAX};

int trace_on(void)
{
	return T.on;
}

__attribute__((format(printf, 1, 2))) static void warn_line(const char *fmt, ...)
{
	if (T.rank == 0) {
		va_list ap;
		va_start(ap, fmt);
		err_vline("hclock trace", fmt, ap);
		va_end(ap);
	}
}

/* ---- recording ------------------------------------------------------------------------------ */

uint32_t trace_tid(void)
{
	if (my_tid < 0)
		my_tid = atomic_fetch_add_explicit(&next_tid, 1, memory_order_relaxed);
	return (uint32_t)my_tid;
}

/* --when-full wait: a wait for the writer reached its deadline; said once, by the process */
static __attribute__((noinline)) void wait_gave_up(void)
{
	struct recbuf_waits w;
	recbuf_waits(T.rb, &w);
	if (!w.gave_up || atomic_exchange(&T.wait_warned, 1))
		return;
	char line[300];
	int n = snprintf(line, sizeof(line), "hclock trace (rank %d): --when-full wait: the writer "
	                 "thread kept its buffer more than %.0f s (a disk that hangs?); records are "
	                 "dropped and counted from here on\n", T.rank, T.wait_max_ns * 1e-9);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void append(const struct rec *r)
{
	if (atomic_load_explicit(&T.stopped, memory_order_relaxed))
		atomic_fetch_add_explicit(&T.dropped_stopped, 1, memory_order_relaxed);
	else if (!recbuf_append(T.rb, r, trace_tid(), 0) && T.when_full_wait)
		wait_gave_up();
}

/* n bytes from p to fd; 0, or -1 (errno set) with the bytes that were written in *done
 * (NULL: not wanted) */
static int write_some(int fd, const void *p, size_t n, size_t *done)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = ENOSPC;
			if (done)
				*done = (size_t)(c - (const char *)p);
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	return write_some(fd, p, n, NULL);
}

/* the raw file's next record's place held ahead (hold.h): a write that then finds the disk
 * full has at least that much, over which the stop marker goes (put_records) */
static void hold_next(void)
{
	(void)hold_ahead(T.fd, T.raw_bytes, sizeof(struct rec));
}

/* the events among records b[0..n) (the records count: no REC_DROP or REC_BOUND) */
static uint64_t events_in(const struct rec *b, size_t n)
{
	uint64_t e = 0;
	for (size_t i = 0; i < n; i++)
		e += b[i].kind != REC_DROP && b[i].kind != REC_BOUND;
	return e;
}

/* Records b[0..n) to the raw file, within max_size: what does not fit, or follows a failed
 * write, is counted lost, and recording stops with a marker (record.h's REC_F_STOP) after
 * the last record kept. One caller at a time (the writer thread; MPI_Finalize after it
 * stopped; flush_now when it is idle). Async-signal-safe. */
static void put_records(const struct rec *b, size_t n)
{
	T.records += events_in(b, n);
	if (atomic_load_explicit(&T.stopped, memory_order_relaxed) || T.fd < 0) {
		T.lost += events_in(b, n);
		return;
	}
	size_t k = n, rs = sizeof(struct rec);
	int why = REC_STOP_NONE, e = 0;
	if (T.max_size && T.raw_bytes + (n + 1) * rs > T.max_size) {
		uint64_t room = T.max_size > T.raw_bytes ? (T.max_size - T.raw_bytes) / rs : 0;
		k = room ? (size_t)room - 1 : 0; /* one place for the marker */
		why = REC_STOP_SIZE;
	}
	size_t done = 0;
	if (k && write_some(T.fd, b, k * rs, &done)) {
		e = errno ? errno : EIO;
		why = REC_STOP_DISK;
		/* the marker goes over bytes the file has (a full disk takes no more): the bytes
		 * written, or the place held ahead; so in the last whole record's place within them
		 * (what follows the whole records written is less than one) */
		k = (size_t)(hold_start(done > rs ? done : rs, rs) / rs);
	}
	T.raw_bytes += k * rs;
	if (why == REC_STOP_NONE) {
		hold_next();
		return;
	}
	T.lost += events_in(b + k, n - k);
	const struct rec *last = k ? &b[k - 1] : n ? &b[0] : NULL;
	struct rec m = {.kind = REC_DROP, .flags = REC_F_STOP, .tag = why, .peer = e,
	                .tid = last ? last->tid : 0};
	if (last) { /* at the end of the last record kept (a call's leave) */
		m.t_g = last->t2_g > last->t_g ? last->t2_g : last->t_g;
		m.t_l = last->t2_l > last->t_l ? last->t2_l : last->t_l;
	}
	/* the marker over the bytes of a partial write (or the place held ahead), then the file
	 * cut back to it; where it does not fit, to the last whole record */
	if (pwrite(T.fd, &m, rs, (off_t)T.raw_bytes) == (ssize_t)rs)
		T.raw_bytes += rs;
	if (!ftruncate(T.fd, (off_t)T.raw_bytes))
		lseek(T.fd, (off_t)T.raw_bytes, SEEK_SET);
	T.stop_errno = e;
	atomic_store_explicit(&T.stopped, why, memory_order_relaxed);
}

static void *writer_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	const struct rec *b;
	size_t n;
	while ((b = recbuf_take(T.rb, &n, 1))) {
		if (T.slow_writer_ns)
			real_sleep_ns(T.slow_writer_ns);
		put_records(b, n);
		recbuf_written(T.rb);
	}
	return NULL;
}

/* The bounds of a reading g (global ns) the clock has now: the reference's time at it lay in
 * [*lo_g, *hi_g] (rounded outwards). 0 when the clock has none. */
static int rec_bounds(int64_t g, int64_t *lo_g, int64_t *hi_g)
{
	if (atomic_load_explicit(&T.hw_lo, memory_order_relaxed) < 0)
		return 0; /* no bounds read yet, or none */
	double lo, hi;
	if (hclock_clock_bounds(T.g, g, &lo, &hi))
		return 0;
	*lo_g = g + (int64_t)floor(lo);
	*hi_g = g + (int64_t)ceil(hi);
	return 1;
}

/* the global clock's latest reading in this thread, ns: a thread's timestamps never go back
 * (with real clocks they cannot; an emulated clock's read noise could make a call end before
 * it began, which trace viewers drop) */
static TLS int64_t last_g = INT64_MIN;
/* the recorded call this thread is in (NULL: none), for a program ended inside it; the
 * MPI_Init thread's also in main_call, for a signal that another thread (an MPI library's
 * own, Open MPI's for one) happens to handle */
static TLS struct trace_call *cur_call;
static TLS int main_thread;
static struct trace_call *_Atomic main_call;

static inline void set_cur(struct trace_call *c)
{
	cur_call = c;
	if (main_thread)
		atomic_store_explicit(&main_call, c, memory_order_release);
}

/* both clocks now, ns: one base reading mapped through the global clock's chain (map1), or
 * two reads (async-signal-safe) */
static inline void read2(int64_t *g, int64_t *l)
{
	*l = hclock_now(T.base);
	*g = T.map1 ? clock_apply_chain(T.g, *l) : hclock_now(T.g);
}

/* a timestamp: read2, never before this thread's previous one, the truth noted */
static inline void now2(int64_t *g, int64_t *l)
{
	int64_t ref1 = T.truth ? finish_truth_ref() : 0;
	read2(g, l);
	if (T.test_shift) {
		int64_t lo = atomic_load_explicit(&T.hw_lo, memory_order_relaxed);
		int64_t hi = atomic_load_explicit(&T.hw_hi, memory_order_relaxed);
		if (lo >= 0 && hi >= 0)
			*g += lo + hi + 2000;
	}
	if (*g < last_g)
		*g = last_g;
	last_g = *g;
	if (T.truth)
		finish_truth_note(*g, ref1, rec_bounds);
}

/* A drive=progress clock's turn at a call's enter or leave (base time tl, ns): when its
 * exchanges are due, or at least every PROGRESS_MAX_NS. Returns whether it ran. */
static inline int drive(int64_t tl)
{
	if (!T.progress ||
	    (tl < hclock_sync_progress_due(T.s) && tl - T.last_progress_ns <= PROGRESS_MAX_NS))
		return 0;
	T.last_progress_ns = tl;
	in_tracer = 1;
	int64_t t0 = real_now_ns();
	hclock_sync_progress(T.s); /* its error comes back at the stop in MPI_Finalize */
	atomic_fetch_add_explicit(&T.progress_ns, real_now_ns() - t0, memory_order_relaxed);
	in_tracer = 0;
	return 1;
}

/* A bounds sample r: appended like a record, but no event (not counted; skipped when
 * there is no room). */
static void append_sample(const struct rec *r)
{
	if (!atomic_load_explicit(&T.stopped, memory_order_relaxed))
		recbuf_append(T.rb, r, trace_tid(), 1);
}

/* The clock's bounds now (base time tl, ns): the half-widths the message records use, and a
 * sample when they changed by more than a tenth or BOUND_REPEAT_NS after the last. */
static void bound_check(int64_t tl)
{
	atomic_store_explicit(&T.bound_due, tl + BOUND_CHECK_NS, memory_order_relaxed);
	hclock_reading rd;
	if (hclock_read(T.g, &rd) || rd.status == HCLOCK_BOUNDS_NONE) {
		atomic_store_explicit(&T.bound_due, INT64_MAX, memory_order_relaxed); /* none */
		return;
	}
	int64_t lo = rd.now_ns - rd.earliest_ns, hi = rd.latest_ns - rd.now_ns;
	if (lo < 0 || hi < 0)
		return;
	atomic_store_explicit(&T.hw_lo, lo, memory_order_relaxed);
	atomic_store_explicit(&T.hw_hi, hi, memory_order_relaxed);
	int64_t hw = (lo + hi) / 2;
	if (T.hw_said >= 0 && 10 * llabs(hw - T.hw_said) <= T.hw_said &&
	    tl - T.said_l < BOUND_REPEAT_NS)
		return;
	T.hw_said = hw;
	T.said_l = tl;
	struct rec r = {.kind = REC_BOUND, .peer = -1, .tag = rd.status, .t_g = rd.now_ns,
	                .t_l = tl, .t2_g = rd.earliest_ns, .t2_l = rd.latest_ns};
	append_sample(&r);
}

int trace_enter(enum trace_func f, struct trace_call *c)
{
	if (!T.on || in_tracer)
		return 0;
	c->func = T.enabled[f] ? (uint16_t)f : FILTERED;
	c->prev = cur_call;
	now2(&c->t_g, &c->t_l);
	if (drive(c->t_l))
		now2(&c->t_g, &c->t_l); /* the call starts after the clock's work */
	if (c->t_l >= atomic_load_explicit(&T.bound_due, memory_order_relaxed))
		bound_check(c->t_l);
	set_cur(c);
	return 1;
}

/* the record of call c, from its enter to its t2 */
static inline struct rec call_rec(const struct trace_call *c, uint8_t flags)
{
	return (struct rec){.kind = REC_CALL, .flags = flags, .func = c->func, .peer = -1,
	                    .t_g = c->t_g, .t_l = c->t_l, .t2_g = c->t2_g, .t2_l = c->t2_l};
}

/* this thread's last leave whose bounds were computed: its reading and lower half-width, ns */
static TLS int64_t prev_t2 = INT64_MIN, prev_below;

/* A call's record gets the clock's bounds at its enter and its leave (REC_F_HW: the
 * wait-state analysis's intervals need both ends of each call that sends, receives, completes
 * or takes part in a collective; T.enabled's ENABLED_BOUNDS). The leave's come from the model
 * now (rec_bounds, a few tens of ns); the enter's too unless two facts give them within an
 * eighth of the half-widths or DERIVE_MIN_NS, strictly and for free: the reference's time
 * never goes back, so
 * at the enter it was at most the leave's latest (the leave's upper half-width plus the
 * call's duration), and at least the previous leave's earliest (that one's lower half-width
 * plus the gap since). A short call right after another (a loop of them, the costly case)
 * takes one model evaluation instead of two. */
static int64_t derive_max(int64_t hw)
{
	return hw / 8 > DERIVE_MIN_NS ? hw / 8 : DERIVE_MIN_NS;
}

static void call_bounds(struct rec *r)
{
	int64_t lo1, hi1, lo2, hi2;
	if (!(T.enabled[r->func] & ENABLED_BOUNDS) || !rec_bounds(r->t2_g, &lo2, &hi2))
		return;
	int64_t b2 = r->t2_g - lo2, a2 = hi2 - r->t2_g, d = r->t2_g - r->t_g,
	        gap = prev_t2 == INT64_MIN ? -1 : r->t_g - prev_t2;
	if (d >= 0 && d <= derive_max(a2) && gap >= 0 && gap <= derive_max(prev_below)) {
		lo1 = r->t_g - (prev_below + gap);
		hi1 = r->t_g + (a2 + d);
	} else if (!rec_bounds(r->t_g, &lo1, &hi1)) {
		return;
	}
	prev_t2 = r->t2_g;
	prev_below = b2;
	r->tag = (int32_t)rec_hw_pack(rec_hw_code(r->t_g - lo1), rec_hw_code(hi1 - r->t_g),
	                              rec_hw_code(b2), rec_hw_code(a2));
	r->flags |= REC_F_HW;
}

void trace_leave(struct trace_call *c)
{
	set_cur(c->prev);
	now2(&c->t2_g, &c->t2_l);
	/* at leave too: a ping that arrived while this process was blocked in the call (a
	 * collective waiting for the very process that pinged) is answered now, not at the
	 * next call; with the clock driven at enter only, the pings' legs held the call's wait
	 * and the pongs' did not, a bias of half a collective's latency */
	drive(c->t2_l);
	if (c->func == FILTERED)
		return;
	struct rec r = call_rec(c, 0);
	call_bounds(&r);
	append(&r);
}

/* ---- a program that dies ---------------------------------------------------------------------- */

static void put_cb(const struct rec *b, size_t n, void *ctx)
{
	(void)ctx;
	put_records(b, n);
}

/* When the program ends without MPI_Finalize (a signal, its exit: crash.c catches them) or
 * calls MPI_Abort: write the current buffer now (async-signal-safe: atomics, nanosleep,
 * write, reading the clocks; the writer's buffer is waited for up to 2 s); cut: the program
 * is being ended, and a call this thread is inside (not the tracer's own work) is recorded
 * as ending now (REC_F_CUT) */
static void flush_now(int cut)
{
	if (!T.on || T.fd < 0)
		return;
	/* this thread's call, or if it is in none, the MPI_Init thread's */
	struct trace_call *c = !cut ? NULL : cur_call ? (in_tracer ? NULL : cur_call)
	                                              : atomic_load_explicit(&main_call, memory_order_acquire);
	/* one cut a process: a signal handled on another thread cuts the MPI_Init thread's call
	 * (main_call), and that thread's own exit would cut it again */
	static atomic_flag cut_made = ATOMIC_FLAG_INIT;
	if (c && (c->func == FILTERED || atomic_flag_test_and_set(&cut_made)))
		c = NULL;
	struct rec r;
	if (c) {
		/* c may be another thread's: read, never written */
		r = call_rec(c, REC_F_CUT);
		r.tid = c == cur_call && my_tid >= 0 ? (uint32_t)my_tid : 0;
		read2(&r.t2_g, &r.t2_l);
		if (r.t2_g < r.t_g)
			r.t2_g = r.t_g;
	}
	if (recbuf_flush(T.rb, c ? &r : NULL, 2000000000, put_cb, NULL) < 0) {
		if (c)
			atomic_flag_clear(&cut_made); /* not written: a later flush makes it */
		return;
	}
	if (c) {
		if (c == cur_call)
			cur_call = NULL;
		atomic_compare_exchange_strong(&main_call, &c, NULL);
	}
	if (T.reserve_path[0])
		unlink(T.reserve_path); /* the program ends: the disk held back is free again */
}

void trace_abort(struct trace_call *c, int errorcode)
{
	if (!T.on)
		return;
	if (c)
		set_cur(c->prev);
	if (c && c->func != FILTERED) {
		now2(&c->t2_g, &c->t2_l); /* the call never returns: a slice where it was made */
		struct rec r = call_rec(c, 0);
		append(&r);
	}
	flush_now(0);
	char what[64];
	snprintf(what, sizeof(what), "called MPI_Abort (error code %d)", errorcode);
	/* MPICH's launcher may end the job before it forwards what the aborting process wrote
	 * last (its own Abort message and this line were lost in 2 of 14 launches, this line in 0
	 * of 12 with the pause): a moment for it to pass, which an aborting job can spare */
	if (crash_failure_line(what))
		real_sleep_ns(50000000);
}

/* ---- messages --------------------------------------------------------------------------------- */

static uint64_t nbytes(int count, MPI_Datatype type)
{
	int sz = 0;
	if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0 || count < 0)
		return 0;
	return (uint64_t)count * (uint64_t)sz;
}

void trace_send(const struct trace_call *c, MPI_Comm comm, int dest, int tag, int count,
                MPI_Datatype type)
{
	if (c->func == FILTERED || dest == MPI_PROC_NULL)
		return;
	int64_t lo_g, hi_g;
	struct rec r = {.kind = REC_SEND, .func = c->func, .tag = tag, .t_g = c->t_g,
	                .t_l = c->t_l, .t2_g = rec_bounds(c->t_g, &lo_g, &hi_g) ? hi_g : 0,
	                .bytes = nbytes(count, type)};
	trace_comm_peer(comm, dest, &r.comm, &r.peer);
	append(&r);
}

void trace_recv(const struct trace_call *c, MPI_Comm comm, const MPI_Status *st,
                MPI_Datatype type)
{
	if (!T.on || c->func == FILTERED || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
		return;
	int count = 0;
	PMPI_Get_count(st, type, &count);
	/* a call that blocked for long: a bounds sample at its leave too */
	if (c->t2_l >= atomic_load_explicit(&T.bound_due, memory_order_relaxed))
		bound_check(c->t2_l);
	int64_t lo_g, hi_g;
	struct rec r = {.kind = REC_RECV, .func = c->func, .tag = st->MPI_TAG, .t_g = c->t2_g,
	                .t_l = c->t2_l, .t2_g = rec_bounds(c->t2_g, &lo_g, &hi_g) ? lo_g : 0,
	                .bytes = count == MPI_UNDEFINED ? 0 : nbytes(count, type)};
	trace_comm_peer(comm, st->MPI_SOURCE, &r.comm, &r.peer);
	append(&r);
}

void trace_coll(const struct trace_call *c, MPI_Comm comm, int root, int count,
                MPI_Datatype type)
{
	set_cur(c->prev);
	if (c->func == FILTERED)
		return;
	struct rec r = {.kind = REC_COLL, .func = c->func, .t_g = c->t_g, .t_l = c->t_l,
	                .bytes = nbytes(count, type)};
	now2(&r.t2_g, &r.t2_l);
	call_bounds(&r);
	trace_comm_peer(comm, root, &r.comm, &r.peer);
	append(&r);
}

void trace_prepare(struct rec *r, enum rec_kind kind, MPI_Comm comm, int peer, int tag,
                   uint64_t bytes)
{
	*r = (struct rec){.kind = (uint8_t)kind, .tag = tag, .bytes = bytes};
	trace_comm_peer(comm, peer, &r->comm, &r->peer);
}

void trace_append(const struct rec *r)
{
	if (!T.on || r->func == FILTERED)
		return;
	if (r->kind != REC_SEND) {
		append(r);
		return;
	}
	/* a persistent send started: its latest bound */
	struct rec s = *r;
	int64_t lo_g, hi_g;
	s.t2_g = rec_bounds(s.t_g, &lo_g, &hi_g) ? hi_g : 0;
	append(&s);
}

/* ---- init and finalize ------------------------------------------------------------------------- */

/* A bad HCLOCK_TRACE_* value (a tracer started by hand: the launcher refuses bad values
 * before the program runs) ends the program at MPI_Init, never a fallback to a default (the
 * trace would silently be another than asked for): the ranks agree, the lowest that found a
 * bad value says so in the launcher's line (naming the variable), and every rank finalizes
 * MPI and exits with status 2. Not MPI_Abort: no banner, no killed job, no hang. */
static void settings_or_exit(struct trace_settings *set)
{
	char why[600];
	int first = trace_settings_from_env(set, why, sizeof(why)) ? T.rank : T.size, low = T.size;
	PMPI_Allreduce(&first, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (low == T.size)
		return;
	if (T.rank == low)
		err_line("hclock trace", "%s", why);
	PMPI_Finalize();
	exit(2);
}

/* the cost of one record: four clock reads and the append (its atomic add, a copy), into
 * buffers of its own */
static int64_t calibrate(void)
{
	enum { N = 2000 };
	recbuf *cb = recbuf_create(N);
	if (!cb)
		return 0;
	int64_t t0 = real_now_ns();
	for (int i = 0; i < N; i++) {
		struct rec r = {.kind = REC_CALL};
		now2(&r.t_g, &r.t_l);
		now2(&r.t2_g, &r.t2_l);
		recbuf_append(cb, &r, 0, 0);
	}
	int64_t d = (real_now_ns() - t0) / N;
	recbuf_free(cb);
	return d;
}

/* The global clock (emulation, base clock, sync) as the settings ask, with the job's origin
 * of relative times. Collective; every rank returns the same: 0, or non-zero (tracing off,
 * after a line from rank 0). */
static int clock_up(const struct trace_settings *set, const char *spec)
{
	/* everything below agrees across the ranks (hclock's calls agree on errors) */
	int rc = 0;
	if (set->emulate && (rc = hclock_emu_create(set->emulate, MPI_COMM_WORLD, &T.emu)))
		warn_line("--emulate: %s; tracing off", hclock_last_error());
	if (!rc && (rc = hclock_base_create("monotonic", T.emu, &T.base)))
		warn_line("base clock: %s; tracing off", hclock_last_error());
	if (!rc && (rc = hclock_sync_create(spec, &T.s)))
		warn_line("--sync: %s; tracing off", hclock_last_error());
	/* the sync must agree even when one rank failed to create it: all ranks know rc here
	 * only locally, so agree first */
	int all = 0;
	PMPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!all) {
		int64_t s0 = real_now_ns();
		rc = hclock_sync_run(T.s, MPI_COMM_WORLD, T.base, &T.g);
		T.sync_ns = real_now_ns() - s0;
		if (rc)
			warn_line("sync: %s; tracing off", hclock_last_error());
		all = rc;
	}
	/* the job's origin of relative times (JSON): the least reading right after the sync */
	int64_t t0_mine = 0;
	if (!all) {
		t0_mine = hclock_now(T.g);
		PMPI_Allreduce(&t0_mine, &T.t0_g, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
	}
	T.progress = !all && strstr(hclock_sync_spec(T.s), "drive=progress") != NULL;
	/* the truth of real clocks on hosts of their own (agreed: alike everywhere) */
	int real = !all && !T.emu && set->event_truth == TRACE_TRUTH_REALTIME;
	if (real && truth_setup(MPI_COMM_WORLD, T.base, TRUTH_REALTIME, NULL)) {
		warn_line("--event-truth=realtime: %s; no truth", hclock_last_error());
		real = 0;
	}
	T.truth = !all && (T.emu || real) && set->event_truth && T.base->ops->truth;
	if (T.truth)
		finish_truth_start(T.base);
	return all;
}

/* DIR/raw/rank.R opened (its path into path, len bytes). Returns 1, or 0 after a line */
static int raw_open(const char *dir, char *path, size_t len)
{
	snprintf(path, len, "%s/raw", dir);
	if (path_mkdirs(path)) {
		fprintf(stderr, "hclock trace (rank %d): cannot create %s: %s; tracing off\n", T.rank,
		        path, strerror(errno));
		return 0;
	}
	/* an earlier run's truth (finish.h) would pass for this one's */
	snprintf(path, len, "%s/raw/truth.%d", dir, T.rank);
	unlink(path);
	snprintf(path, len, "%s/raw/written.%d", dir, T.rank); /* and its mark (mark_written) */
	unlink(path);
	snprintf(path, len, "%s/raw/rank.%d", dir, T.rank);
	if ((T.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
		fprintf(stderr, "hclock trace (rank %d): cannot write %s: %s; tracing off\n", T.rank,
		        path, strerror(errno));
		return 0;
	}
	return 1;
}

/* the raw file's header and function names (at path). Returns 1, or 0 after a line */
static int raw_header(const char *path)
{
	int ok;
	size_t names = 0;
	for (int i = 0; i < TF_COUNT; i++)
		names += strlen(trace_func_names[i]) + 1;
	size_t padded = (names + 7) & ~(size_t)7;
	struct rec_header h = {.magic = REC_MAGIC, .rank = T.rank, .size = T.size,
	                       .nfuncs = TF_COUNT, .names_bytes = (uint32_t)padded,
	                       .sync_ns = T.sync_ns, .t0_g = T.t0_g,
	                       .when_full = T.when_full_wait ? REC_FULL_WAIT : REC_FULL_DROP};
	memcpy(h.magic, REC_MAGIC, 8);
	snprintf(h.sync, sizeof(h.sync), "%s", hclock_sync_spec(T.s));
	hclock_clock_describe(T.base, h.clock, sizeof(h.clock));
	if (gethostname(h.host, sizeof(h.host) - 1))
		h.host[0] = 0;
	h.host[sizeof(h.host) - 1] = 0;
	char *nb = calloc(1, padded);
	ok = nb != NULL;
	for (int i = 0, o = 0; nb && i < TF_COUNT; i++) {
		strcpy(nb + o, trace_func_names[i]);
		o += (int)strlen(trace_func_names[i]) + 1;
	}
	if (!ok || write_all(T.fd, &h, sizeof(h)) || write_all(T.fd, nb, padded)) {
		fprintf(stderr, "hclock trace (rank %d): cannot write %s: %s; tracing off\n",
		        T.rank, path, strerror(errno));
		ok = 0;
	}
	T.raw_bytes = sizeof(h) + padded;
	if (ok)
		hold_next();
	free(nb);
	return ok;
}

/* the disk held back for the end (none if there is not even that much, or the file system
 * cannot allocate without writing) */
static void reserve_hold(const char *dir)
{
	snprintf(T.reserve_path, sizeof(T.reserve_path), "%s/raw/reserve.%d", dir, T.rank);
	int rfd = open(T.reserve_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (rfd < 0 || fallocate(rfd, 0, 0, STREAM_RESERVE_BYTES)) {
		unlink(T.reserve_path);
		T.reserve_path[0] = 0;
	}
	if (rfd >= 0)
		close(rfd);
}

/* recording on: the clock's timestamps one base read each where its chain maps it, the
 * record's cost, the bounds read at the first call, the handlers of a program that dies */
static void recording_on(void)
{
	/* one base read per timestamp if the chain maps it: a reading through the chain
	 * must lie between direct readings of the global clock around it */
	int64_t a = hclock_now(T.g), x = hclock_now(T.base), b = hclock_now(T.g);
	int64_t m = clock_apply_chain(T.g, x);
	T.map1 = clock_base(T.g) == T.base && m >= a - 1000 && m <= b + 1000;
	T.rec_cost_ns = calibrate();
	T.hw_said = -1;
	atomic_store(&T.bound_due, INT64_MIN); /* the first call reads the bounds */
	T.on = 1;
	crash_handlers_install();
}

void trace_init(void)
{
	in_tracer = 1;
	main_thread = 1;
	my_tid = 0;
	int64_t t0 = real_now_ns();
	PMPI_Comm_rank(MPI_COMM_WORLD, &T.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &T.size);
	struct trace_settings set;
	settings_or_exit(&set);
	char spec[512];
	const char *dir = set.dir;
	trace_settings_sync(&set, spec, sizeof(spec));
	/* an earlier run's failure mark goes before any process can be past the sync below (the
	 * launcher removes it too; a program linked with the tracer has no launcher) */
	crash_init(dir, T.rank, flush_now);
	T.cap = (size_t)set.buffer;
	T.slow_writer_ns = set.slow_writer_ns;
	T.when_full_wait = set.when_full_wait;
	T.wait_max_ns = set.wait_max_ns;
	fault_init(T.rank); /* a bad HCLOCK_FAULT is reported by the sync's set-up */
	T.test_shift = fault_mode(FAULT_SHIFT);
	T.max_size = set.max_size;
	/* the output: DIR/raw/rank.R */
	char path[4200];
	int ok = !clock_up(&set, spec) && raw_open(dir, path, sizeof(path));
	T.enabled = calloc(TF_COUNT, 1);
	T.rb = recbuf_create(T.cap);
	if (T.rb)
		recbuf_wait_for_writer(T.rb, T.when_full_wait ? T.wait_max_ns : 0);
	if (ok && (!T.enabled || !T.rb)) {
		fprintf(stderr, "hclock trace (rank %d): out of memory for %zu records; tracing off\n",
		        T.rank, 2 * T.cap);
		ok = 0;
	}
	if (ok) {
		trace_filter_apply(set.filter, trace_func_names, TF_COUNT, T.enabled, NULL, 0);
		for (int f = 0; f < TF_COUNT; f++)
			if (T.enabled[f] && mpiclass_of(trace_func_names[f]).bounds)
				T.enabled[f] |= ENABLED_BOUNDS;
		ok = raw_header(path);
		reserve_hold(dir);
	}
	snprintf(T.dir, sizeof(T.dir), "%s", dir);
	T.json_limit = set.json ? 0 : STREAM_JSON_LIMIT;
	if (ok && comms_init(T.size, trace_on))
		ok = 0;
	if (ok) {
		T.writer_up = !pthread_create(&T.writer, NULL, writer_main, NULL);
		ok = T.writer_up;
	}
	if (ok) {
		recording_on();
	} else if (T.fd >= 0) {
		close(T.fd);
		T.fd = -1;
	}
	T.overhead_ns += real_now_ns() - t0;
	in_tracer = 0;
}

/* The clock stopped (collective) and checked: its statistics into *clk (returns whether it
 * has them: a continuous clock), the drift check into the trailer, --event-truth's line. */
static int clock_down(struct rec_trailer *tr, struct stream_clock *clk)
{
	struct hclock_sync_stats cst;
	int have_clk = 0;
	int src = hclock_sync_stop(T.s); /* collective; the clock stays, frozen */
	if (src)
		warn_line("the continuous clock failed while tracing: %s", hclock_last_error());
	/* its exchanges, for the summary (a one-shot clock has none) */
	if ((have_clk = hclock_sync_stats(T.s, &cst) == 0))
		*clk = (struct stream_clock){cst.exchanges, cst.timeouts,
		                             cst.thread_cpu_s < 0 ? -1
		                                                  : (int64_t)(cst.thread_cpu_s * 1e6)};
	finish_drift_check(T.g, T.emu, &tr->drift_max_ns, &tr->drift_unc_ns, &tr->drift_true_ns);
	if (T.truth) {
		T.truth = 0;
		finish_truth_report(T.emu);
	}
	return have_clk;
}

/* the records still in memory written: the writer finishes what it has, then the rest is
 * written here; the disk held back given back, the header's --when-full wait fields */
static void records_out(void)
{
	recbuf_stop(T.rb);
	pthread_join(T.writer, NULL);
	const struct rec *b;
	size_t n;
	if ((b = recbuf_take(T.rb, &n, 0))) { /* handed over as the writer stopped */
		put_records(b, n);
		recbuf_written(T.rb);
	}
	recbuf_flush(T.rb, NULL, 0, put_cb, NULL);
	if (T.reserve_path[0] && !unlink(T.reserve_path))
		T.reserve_path[0] = 0;
	if (T.when_full_wait) { /* the header says how long the program waited */
		struct recbuf_waits w;
		recbuf_waits(T.rb, &w);
		struct {
			uint32_t when_full, waits;
			int64_t waited_ns;
		} hw = {w.gave_up ? REC_FULL_GAVE_UP : REC_FULL_WAIT,
		        w.waits > UINT32_MAX ? UINT32_MAX : (uint32_t)w.waits, w.waited_ns};
		_Static_assert(sizeof(hw) == 16 && offsetof(struct rec_header, waited_ns) ==
		               offsetof(struct rec_header, when_full) + 8, "the header's fields");
		(void)!pwrite(T.fd, &hw, sizeof(hw), offsetof(struct rec_header, when_full));
	}
}

/* the trailer tr (its counters filled in here; t0: MPI_Finalize's start, real ns) and the
 * communicators after it, the raw file closed; a failure is in tr (REC_STOP_DISK) */
static void trailer_out(struct rec_trailer *tr, int64_t t0)
{
	tr->records = T.records - T.lost;
	tr->dropped = recbuf_dropped(T.rb) + atomic_load(&T.dropped_stopped) + T.lost;
	tr->stopped = (uint16_t)atomic_load(&T.stopped);
	tr->stop_errno = (uint16_t)T.stop_errno;
	tr->rec_cost_ns = (int32_t)T.rec_cost_ns;
	tr->ncomms = (uint32_t)comms_count();
	T.overhead_ns += real_now_ns() - t0;
	tr->overhead_ns = T.overhead_ns + (int64_t)T.records * T.rec_cost_ns +
	                  atomic_load(&T.progress_ns);
	int bad = write_all(T.fd, tr, sizeof(*tr));
	for (size_t i = 0; !bad && i < comms_count(); i++) {
		struct rec_comm tc;
		int32_t *w = comms_entry(i, &tc);
		size_t n = (size_t)tc.size;
		bad = write_all(T.fd, &tc, sizeof(tc));
		if (!bad)
			bad = !w || write_all(T.fd, w, ((n + 1) & ~(size_t)1) * sizeof(int32_t));
		free(w);
	}
	/* a trailer cut short is no trailer: the file ends at its last record */
	int e = bad ? (errno ? errno : EIO) : 0;
	if (bad && ftruncate(T.fd, (off_t)T.raw_bytes))
		e = errno;
	if (close(T.fd) && !e)
		e = errno;
	if (e && !tr->stopped) {
		tr->stopped = REC_STOP_DISK;
		tr->stop_errno = (uint16_t)e;
	}
	if (tr->stopped == REC_STOP_DISK)
		fprintf(stderr, "hclock trace (rank %d): writing %s/raw/rank.%d failed (%s): "
		        "recording stopped there, %llu records lost; the program ran on\n",
		        T.rank, T.dir, T.rank, strerror(tr->stop_errno),
		        (unsigned long long)tr->dropped);
	T.fd = -1;
}

static int traced;     /* trace_finalize closed a trace: trace_shutdown watches the shutdown */
static int marks_seen; /* the processes 0..marks_seen-1 have their marks */

/* DIR/raw/written.R: this process's part of the outputs is written, it enters the MPI
 * library's shutdown (none where it cannot be made: a full disk, a directory never made;
 * then the watch never sees every mark and waits the whole wait limit) */
static void mark_written(void)
{
	char path[sizeof(T.dir) + 64];
	snprintf(path, sizeof(path), "%s/raw/written.%d", T.dir, T.rank);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd >= 0)
		close(fd);
}

void trace_finalize(void)
{
	if (!T.s)
		return;
	traced = 1;
	in_tracer = 1;
	int64_t t0 = real_now_ns();
	int was_on = T.on, truth = T.truth; /* clock_down ends the truth's notes */
	T.on = 0;
	crash_handlers_remove();
	struct rec_trailer tr = {.magic = REC_TRAILER_MAGIC, .drift_max_ns = NAN,
	                         .drift_unc_ns = NAN, .drift_true_ns = NAN};
	memcpy(tr.magic, REC_TRAILER_MAGIC, 8);
	struct stream_clock clk = {0, 0, -1};
	int have_clk = T.g ? clock_down(&tr, &clk) : 0;
	if (was_on) {
		records_out();
		trailer_out(&tr, t0);
		/* every reading's truth, DIR/raw/truth.R (a failure is one line: the trace goes
		 * on); after the records, whose disk held back it may use */
		if (truth)
			(void)finish_truth_write(T.dir, T.rank);
		/* this process's part of each output, from its raw file a chunk at a time, in
		 * parallel with the other processes (a failure leaves the raw file, from which the
		 * launcher or --convert writes them); its trailer as written here, should the file
		 * have none (a full disk) */
		if (stream_convert_raw(T.dir, T.rank, T.json_limit, &tr, have_clk ? &clk : NULL))
			fprintf(stderr, "hclock trace (rank %d): %s\n", T.rank, hclock_last_error());
	} else if (truth) {
		(void)finish_truth_write(NULL, T.rank); /* nothing recorded: nothing written */
	}
	comms_free();
	hclock_sync_free(T.s);
	T.s = NULL;
	hclock_clock_free(T.g);
	hclock_clock_free(T.base);
	hclock_emu_free(T.emu);
	recbuf_free(T.rb);
	T.rb = NULL;
	free(T.enabled);
	if (fault_hit(FAULT_SLOWPART)) /* test hook: a process slow to write its part */
		real_sleep_ns((wait_limit_ns() < 1000000000000ll ? wait_limit_ns() : 0) + 1000000000ll);
	if (T.dir[0])
		mark_written();
	in_tracer = 0;
}

/* every process's mark there (each asked once: a mark stays) */
static int all_written(void *arg)
{
	(void)arg;
	char path[sizeof(T.dir) + 64];
	struct stat st;
	if (!T.dir[0]) /* no trace directory: no process marks, none to wait for */
		return 1;
	for (; marks_seen < T.size; marks_seen++) {
		snprintf(path, sizeof(path), "%s/raw/written.%d", T.dir, marks_seen);
		if (stat(path, &st))
			return 0;
	}
	return 1;
}

/* PMPI_Finalize with an end (util/finwatch.h) once every process has written its part:
 * MPICH's shutdown waits for every process, and a conversion can take a while on one of
 * them, so the limit counts from the last process's mark (polled; no MPI: a barrier right
 * before MPICH 4.0.2's shutdown over UCX makes its hang there far more frequent). A rank
 * still in the shutdown then says so and exits 0: its trace is complete. */
int trace_shutdown(int (*fin)(void))
{
	if (!traced) /* no trace, or a Fortran shutdown that calls MPI_Finalize: watched once */
		return fin();
	traced = 0;
	struct finwatch_how how = {
	        .who = "hclock trace", .rank = T.rank, .code = 0,
	        .after = "the trace is complete; exiting with 0 (the program's code after "
	                 "MPI_Finalize does not run)",
	        .ready = all_written,
	        .ready_what = "every process had written its part"};
	return finwatch_finalize(fin, &how);
}

