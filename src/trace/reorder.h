/*
 * reorder.h - the tracer's raw files repaired so that no message is received before its send
 * (hclock trace --repair-order): events moved in time, forward or (a send whose receive
 * cannot move far enough) back, each within the clock's own bounds, by align's repair
 * (align/repair.h). MPI-free.
 *
 * The repair's nodes are the processes' threads (rank, tid). A thread's events are, in the
 * order of its records, the enter and the leave of each call record (REC_CALL, a blocking
 * REC_COLL) and one event per message record, tied to its call: a send (whose record comes
 * just before its call's, or just after it for a persistent send's MPI_Start) to the call's
 * enter, a receive (just after the call that completed it) to its leave. Events tied
 * together move together. An event's latest time is the least of its own upper bound
 * (REC_F_HW: its time plus the upper half-width; a send record: its t2_g) and the latest
 * time of every later event of its thread (the reference's time never goes back: strict and
 * free); events after the last bounded one of their thread have none, and their moves are
 * not checked (counted). Messages are paired by util/msgmatch.h's rule (each process's sends
 * in the order of their records, its receives likewise).
 *
 * Memory: the whole trace at once: about 32 bytes per event (a call's two, a message record's
 * one) while the repair runs, and about 80 more per message record while the messages are
 * paired (measured: 35 bytes an event in all). An opt-in step: 30 M calls that each send or
 * receive take about 5 GB.
 */
#ifndef HCLOCK_TRACE_REORDER_H
#define HCLOCK_TRACE_REORDER_H

#include <stdint.h>

struct trace_reorder_result {
	uint64_t events;          /* enters and leaves of calls in the repair */
	uint64_t moved;           /* of them moved (forward or back) */
	int64_t moved_max_ns;     /* the largest move, |shift|, ns (0: none) */
	uint64_t messages;        /* messages paired and in the repair */
	uint64_t inverted;        /* of them received before their send, before the repair */
	uint64_t left_out;        /* message records left out of the repair: no peer, no
	                             partner, a partner on their own thread, or no call record to
	                             tie them to */
	uint64_t unbounded;       /* enters and leaves without an upper bound (after the last
	                             bounded event of their thread) */
	uint64_t unbounded_moved; /* of them moved forward: moves nothing checked */
};

/*
 * Repair the order of DIR/raw/rank.0 .. rank.SIZE-1 in place (a missing file: a process
 * without records) for a minimum latency min_latency_ns (>= 0): every event gets a time
 * within its bounds (the REC_F_HW half-widths, swept along its thread: below, the largest
 * earliest time of it and the events before it, none known: it never moves back; above, the
 * least latest time of it and the events after it), at least the time of the event before it
 * on its thread, and for a receive at least its send's plus min_latency_ns; repair.c's rule
 * picks the time (a send moves back only when its receive cannot move far enough forward).
 * Written back (only when
 * the whole repair succeeded): each moved call record's t_g or t2_g, its REC_F_HW half-widths
 * taken again from the new time so that the absolute bounds they give still hold (they may
 * only widen, by the codes' rounding), its message records' t_g, a nonblocking collective's
 * start (t_g) and completion (t2_g) as its calls'; local times (t_l, t2_l), bound samples and
 * the bounds message records carry (t2_g) are never changed. DIR/moved.csv (written whole or
 * not at all) lists every moved enter and leave: rank,thread,record,time,corrected_ns,
 * repaired_ns,shift_ns (record: its index among the file's records, from 0; time: enter or
 * leave; corrected_ns: its recorded time; shift_ns signed, < 0 for a move back).
 *
 * Returns 0 with *res filled; HCLOCK_EINVAL with one line in hclock_last_error() when no
 * repair within the bounds exists (the message and the event named: ranks, threads, record
 * indexes, times, by how many ns the bound was short), a file is not a raw trace, or
 * min_latency_ns is outside [0, 2^62); HCLOCK_EIO, HCLOCK_ENOMEM. The raw files are unchanged
 * after any failure but a write that fails part way (HCLOCK_EIO, said in the line).
 */
int trace_reorder(const char *dir, int size, int64_t min_latency_ns,
                  struct trace_reorder_result *res);

#endif
