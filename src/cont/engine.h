/*
 * engine.h - the continuous clock's exchanges: after the one-shot sync, every process keeps
 * learning its base clock against its parent's in the tree that sync used (the multi-stage
 * sync of "Continuous Clock Synchronization for Accurate Performance Measurements"), and
 * slews its clock towards what it learned (model/cont.h). Three parts:
 *   - the protocol (engine.c): a child starts an exchange every period: `pingpongs`
 *     ping-pongs with its parent, each pong carrying the parent's base receive and send
 *     times and its current model with its bound; then a note telling the parent when the
 *     next exchange starts (in global time), so a parent driven by a thread sleeps until
 *     then. A peer that does not answer within the exchange timeout is given up on for that
 *     exchange (counted), and the next one is announced all the same (a parent that missed
 *     a message listens for it on time); nothing waits for a peer forever;
 *   - the servo (cont/servo.h, MPI-free): what an exchange means for the clock: the target
 *     model, its bound and the next period;
 *   - the link (transport/nblink.h): how the messages travel, and the set-up's and
 *     tear-down's collective steps (over MPI, PMPI_* calls on the link's own communicator:
 *     never recorded by the tracer; in the unit tests a scripted link in memory); the
 *     engine itself makes no MPI call;
 * and the followers' shared clock (cont/share.h: prop in the one-shot spec).
 *
 * Everything is nonblocking: engine_drive does what is due and says how long its caller
 * may sleep; a driver (the thread, cont/driver.c, or the application's progress calls and
 * waits: sync/cont.c) calls it again.
 */
#ifndef HCLOCK_CONT_ENGINE_H
#define HCLOCK_CONT_ENGINE_H

#include <stdint.h>

#include "hclock.h"
#include "numerics/bound.h"
#include "numerics/linreg.h"
#include "transport/nblink.h"

/* The keys of cont(INNER,KEY=VALUE,...) (sync/cont.c documents them). */
struct cont_cfg {
	double window_s;     /* the tracker's window, s */
	double min_s, max_s; /* limits of the exchange period, s (equal: a fixed period) */
	double threshold_ns; /* |projected - measured offset| above which the period halves, ns */
	int streak;          /* exchanges within the threshold before the period doubles */
	double slew;         /* largest rate of a correction, dimensionless (500e-6) */
	double drift;        /* the bounds' drift allowance, dimensionless (5e-6) */
	int pingpongs;       /* ping-pongs per exchange */
	double stale_s;      /* bounds status stale after this long without an exchange, s */
	int thread;          /* 1: a background thread drives; 0: hclock_sync_progress */
};

struct engine;

/*
 * Collective over the link's processes (over MPI: transport/nblink_mpi.h on the run's
 * private communicator): set up this process's part of the tree. The engine takes link
 * (it is closed and freed with the engine, and on failure here). parent: the rank learned
 * against (-1: none), shares: 1 if it follows parent's clock (prop). t0, b0: the one-shot
 * sync's model of this process (base -> reference) and bound. *clk receives this process's
 * continuous clock (a new reference). Errors are agreed.
 */
int engine_create(struct nblink *link, hclock_clock *base, const struct cont_cfg *cfg,
                  int parent, int shares, const struct lm *t0, const struct bound *b0,
                  struct engine **out, hclock_clock **clk);
/*
 * Drive e: do what is due without blocking, then *sleep_ns, how long the caller may sleep
 * before the next call (0: call again at once), ns. The one way an engine is driven, by
 * its thread (cont/driver.c) or by the program's calls (hclock_sync_progress, and
 * hclock_wait_until through the clock): while an exchange is under way and its messages
 * flow, at once (100 us after the last), then after naps of 50 us doubling up to 1 ms;
 * otherwise until the engine's next exchange (or a child's, less 50 us; at most 1 s).
 * Several threads may call it: one finding another in it returns 0 with *sleep_ns 0.
 * Returns 0 or the engine's first error (it stops exchanging then). *now_ns (may be NULL):
 * the base time *sleep_ns counts from (the caller need not read the clock again).
 */
int engine_drive(struct engine *e, int64_t *sleep_ns, int64_t *now_ns);
/* Collective: stop (give up whatever is in flight), freeze every clock on its last model,
 * agree on the first error. The clocks stay usable after engine_destroy. */
int engine_stop(struct engine *e);
/* Local: free (after engine_stop, or alone: stops this process's exchanges only). */
void engine_destroy(struct engine *e);
/* What this process's engine and servo did (hclock.h's struct hclock_sync_stats; the
 * thread's CPU time, which the engine does not know, is -1 and running 1). */
void engine_stats(const struct engine *e, struct hclock_sync_stats *st);
hclock_clock *engine_base(const struct engine *e);

#endif
