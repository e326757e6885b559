/*
 * fault.h - fault injection, for tests only (docs/library.md, "Fault injection").
 *
 *   HCLOCK_FAULT=rank=R,at=POINT[,k=K]
 *
 * makes the process of MPI_COMM_WORLD rank R fail at the K-th (default 1st) passage of
 * POINT since the start of the current hclock call (fault_reset):
 *   alloc     an allocation of the sync, offset, transport or check layers returns NULL
 *   exchange  a ping-pong message: the exchange goes on with dummy values, marked failed
 *   fit       a model fit (learned models, Dunigan's frequency, the check's measurement)
 *   agree     the final agreement on the result
 *   cont      an exchange of a running continuous clock (counted on the child's side, in
 *             whichever thread drives it): the engine stops and hclock_sync_stop reports it
 *   mute      a ping a running continuous clock's parent receives: from this one on it
 *             answers none (its children's exchanges time out; the tools warn)
 *   op        a call of hclock bench's or imbalance's operation: reported failed (an MPI
 *             error) after it completed
 *   store     hclock bench storing a repetition runs out of memory
 *   collect   hclock bench collecting a measurement's repetitions runs out of memory
 *   write     a write of one of hclock trace's outputs (trace/stream.c, at MPI_Finalize):
 *             the first half of the buffer is written, then the disk is full (ENOSPC)
 *   finalize  an MPI tool's or a traced program's MPI_Finalize (util/finwatch.c): the
 *             process stays in it for ever (until the wait limit, HCLOCK_TIMEOUT, ends it)
 *   freeze    a ping-pong message this process would receive (transport/link.c): it
 *             stops there for ever, a peer that never answers (the others' waits end
 *             at the wait limit, HCLOCK_TIMEOUT)
 *   slowpart  a traced program's MPI_Finalize (trace/tracer.c): the process takes the wait
 *             limit (HCLOCK_TIMEOUT) and 1 s more to write its part of the outputs (the
 *             others' shutdown watches must wait for it, util/finwatch.h)
 *   slack     a measurement of the MPI_Bcast latency of hclock bench or imbalance (the start
 *             slack's): every try of it waits 1 ms on this rank before the broadcast (a stall)
 *   burst     a group of one of auto's bursts this process takes part in: from it on, each
 *             of that burst's ping-pongs waits 1 ms on this rank before it (a stall: on a
 *             pair's reference, every round trip its client measures is 1 ms longer)
 *
 *
 *   HCLOCK_FAULT=rank=R|all,at=shift|unbounded
 *
 * turns a behaviour that is wrong on purpose on, for the named process(es), so that a test
 * proves its check bites:
 *   shift     hclock trace moves every timestamp later by the two half-widths of the
 *             clock's last bounds and 2 us, out of its bounds (--event-truth must find
 *             every reading outside them)
 *   unbounded hclock trace's OTF2 writer leaves its memory to OTF2's own allocation, which
 *             keeps every chunk until the end (the test of the memory bound must fail)
 *   corrupt   hclock bench's and imbalance's operations give wrong results: every reduction
 *             adds 1 to the first value of its result, the v-variants and neighborhood
 *             collectives that move bytes flip the last byte received (--validate must
 *             catch each)
 *
 *   HCLOCK_FAULT=rank=R|all,at=late[,k=K]
 *
 * roundtime (hclock bench) makes the named process(es) late for every K-th round (default 5:
 * rounds K-1, 2K-1, ... of each pass): it sleeps the slack plus 10 ms before the round, so it
 * learns the round's start time late and the repetition must be reported invalid.
 *
 *   HCLOCK_FAULT=rank=R|all,at=stall[,ms=LO[-HI]][,share=P][,seed=S][,on=SITES]
 *
 * stalls instead of failing: each offset measurement (a fit point, a probe of check or
 * drift, a retake) and each exchange of a running continuous clock of the named process(es)
 * is, with probability P (default 0.05), made through a stall: every message it receives is
 * handed over D ms late, before it is timestamped (D uniform in [LO, HI], default 1-5 ms,
 * drawn per measurement or exchange), as when the scheduler gives the core away at every
 * wake-up. A continuous clock's exchange is drawn on both sides: by the child (whichever
 * thread drives it) when its first pong comes, stalling the pongs, and by the parent when
 * the exchange's first ping comes, stalling its answers. SITES (default all) limits the draws
 * to oneshot (the measurements), cont (both sides of the exchanges), child or parent (one
 * side); the others draw nothing. Seeded per process from S (default 1) and the world rank,
 * so a test is reproduced exactly as long as one thread draws (a continuous clock's thread
 * and the program's share the sequence under a lock). Counts no passages; several hclock
 * calls share one sequence.
 * (bench's points count from the start of the tool's sync, whose run calls fault_reset.)
 * A process that fails keeps taking part in the schedule; the tests assert that every rank
 * then returns the same error and none is left waiting. Unset (the normal case) the hooks
 * cost one predictable branch. Configuring is not thread safe (a test sets it for a whole
 * process, before any sync runs); the hooks are.
 */
#ifndef HCLOCK_UTIL_FAULT_H
#define HCLOCK_UTIL_FAULT_H

#include <stddef.h>
#include <stdint.h>

enum fault_point { FAULT_ALLOC, FAULT_EXCHANGE, FAULT_FIT, FAULT_AGREE, FAULT_CONT, FAULT_OP,
                   FAULT_STORE, FAULT_COLLECT, FAULT_MUTE, FAULT_WRITE, FAULT_FINALIZE,
                   FAULT_FREEZE, FAULT_SLOWPART, FAULT_SLACK, FAULT_BURST, FAULT_SHIFT, FAULT_UNBOUNDED,
                   FAULT_CORRUPT, FAULT_LATE, FAULT_NPOINTS };

extern int fault_armed; /* HCLOCK_FAULT names this process (set by fault_init) */

/* Read HCLOCK_FAULT once; rank is this process's MPI_COMM_WORLD rank. Returns 0, or
 * HCLOCK_EINVAL (with the error line) for a malformed value. */
int fault_init(int world_rank);
/* Arm the hook with value (the syntax of HCLOCK_FAULT; NULL or "" disarms), for tests that
 * run many cases in one process. */
int fault_configure(const char *value, int world_rank);
/* Start counting passages anew (at the start of every public collective call). */
void fault_reset(void);
/* Whether this passage of point p is the one to fail (counts the passage). */
int fault_hit_slow(enum fault_point p);
static inline int fault_hit(enum fault_point p)
{
	return fault_armed ? fault_hit_slow(p) : 0;
}
/* Whether the mode p (shift, unbounded, corrupt, late) is on for this process (counts
 * nothing). */
int fault_mode(enum fault_point p);
/* at=late: its period K, in rounds (k=K, default 5) */
long fault_period(void);
/* at=stall: where a stall is drawn */
enum fault_stall_site {
	FAULT_STALL_ONESHOT, /* an offset measurement (offset_measure) */
	FAULT_STALL_CHILD,   /* a continuous clock's exchange, the child's pongs */
	FAULT_STALL_PARENT   /* a continuous clock's exchange, the parent's answers */
};
/* at=stall: the stall, in ns, of the measurement or exchange about to be made at site s in
 * this process (0: none, and always 0 unless at=stall is armed here for s). Thread safe. */
extern int fault_stall_armed;
int64_t fault_stall_draw_slow(enum fault_stall_site s);
static inline int64_t fault_stall_draw_at(enum fault_stall_site s)
{
	return fault_stall_armed ? fault_stall_draw_slow(s) : 0;
}
static inline int64_t fault_stall_draw(void)
{
	return fault_stall_draw_at(FAULT_STALL_ONESHOT);
}
/* Tests (auto's point burst): from now on every offset measurement of this process (each
 * try, retakes included) is made through a stall of ns (0: back to at=stall's draws, if
 * any). Not thread safe. */
void fault_stall_force(int64_t ns);
/* How many stalls this process drew at site s since at=stall was configured (for tests). */
uint64_t fault_stalls(enum fault_stall_site s);

/* Whether a fault fired in this process since the last fault_reset (for the tests). */
int fault_fired(void);

/* malloc, calloc, realloc that fail on FAULT_ALLOC. */
void *fault_malloc(size_t n);
void *fault_calloc(size_t n, size_t size);
void *fault_realloc(void *p, size_t n);

#endif
