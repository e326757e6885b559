/*
 * engine.h - the continuous clock's exchanges (issue 11): after the one-shot sync, every
 * process keeps learning its base clock against its parent's in the tree that sync used
 * (seed 002's multi-stage sync), composes the result with the parent's current model and
 * slews its clock towards it (model/cont.h).
 *
 * Pairs. A child starts an exchange every period: `pingpongs` ping-pongs with its parent,
 * each pong carrying the parent's base receive and send times and its current model with
 * its bound; then a note telling the parent when the next exchange starts (in the parent's
 * base time), so a parent driven by a thread sleeps until then. The child feeds the
 * exchange to its tracker (numerics/track.h), composes target = parent's model o tracker's
 * line, bound likewise (bound_compose), and updates its clock.
 *
 * Driven by the program (drive=progress), answers wait for its next MPI call, and three
 * rules keep such exchanges from moving the clock by their skew: the one-shot sync's line
 * (this base against the parent's, from the two one-shot models) is the tracker's prior (its
 * slope's standard error a third of the one-shot bound's slope half-width, growing by 1e-8
 * per second, its offset's a third of the bound's half-width; dropped once the window's
 * hulls exclude it: a change of rate); the tracker reads waiting answers through its hulls
 * (track_params.waits); a new target outside the current one's bound is moved into their
 * intersection (both strict under the same drift assumption). A thread answers at once and
 * uses none of them: with 4 ranks on 2 cores they made the 30-minute scenario B worse
 * (p99.9 2.3 us against 135 ns; README).
 *
 * Adaptive period (seed 004, Liao et al.): the offset the old line projects for the new
 * exchange is compared with the one measured; beyond `threshold` the period halves (down to
 * min), after `streak` exchanges within it it doubles (up to max). The comparison is made
 * by the client, which holds both numbers (the paper's reference compares; the same test,
 * one message less).
 *
 * Followers (prop in the one-shot spec) share their leader's time source: their clock reads
 * the leader's published read function in an MPI shared-memory window, no traffic.
 *
 * Everything is nonblocking: engine_progress does what is due and returns when it would
 * wait; a driver (the thread, cont/driver.c, or the application's progress calls) calls it
 * again. A peer that does not answer within the exchange timeout is given up on for that
 * exchange (counted); nothing waits for a peer forever.
 */
#ifndef HCLOCK_CONT_ENGINE_H
#define HCLOCK_CONT_ENGINE_H

#include <stdint.h>

#include <mpi.h>

#include "hclock.h"
#include "numerics/bound.h"
#include "numerics/linreg.h"

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

/* What one process's engine did (for the tools and the benchmarks). */
struct cont_stats {
	uint64_t exchanges;  /* completed exchanges as a child */
	uint64_t timeouts;   /* exchanges given up (the parent did not answer in time) */
	uint64_t served;     /* pings answered as a parent */
	uint64_t halvings, doublings; /* adaptive period changes */
	uint64_t shrinks;    /* fits whose window shrank (hulls intersected) */
	uint64_t kept_inside; /* new estimates moved into the old bound (keep_inside_old) */
	double period_s;     /* current period, s */
	double max_corr_ns;  /* largest |correction| slewed in, ns */
	double last_dev_ns;  /* |projected - measured| of the last exchange beyond half its excess
	                        round trip (what the adaptive period compares), ns */
};

struct engine;

/*
 * Collective over comm (the run's private communicator): set up this process's part of the
 * tree. parent: the rank learned against (-1: none), shares: 1 if it follows parent's clock
 * (prop). t0, b0: the one-shot sync's model of this process (base -> reference) and bound.
 * *clk receives this process's continuous clock (a new reference). Errors are agreed.
 */
int engine_create(MPI_Comm comm, hclock_clock *base, const struct cont_cfg *cfg, int parent,
                  int shares, const struct lm *t0, const struct bound *b0, struct engine **out,
                  hclock_clock **clk);
/* Do what is due without blocking; *wake_ns (base time) receives when to call again.
 * Returns 0 or the engine's first error (it then stops exchanging). One caller at a time
 * (engine_try_progress for several). */
int engine_progress(struct engine *e, int64_t *wake_ns);
/* engine_progress if no other thread is in it (else 0 at once). */
int engine_try_progress(struct engine *e, int64_t *wake_ns);
/* 1 while an exchange is in flight (the driver polls instead of sleeping). */
int engine_busy(const struct engine *e);
/* Messages handled so far (the driver keeps spinning while they come). */
uint64_t engine_events(const struct engine *e);
/* Collective: stop (give up whatever is in flight), freeze every clock on its last model,
 * agree on the first error. The clocks stay usable after engine_destroy. */
int engine_stop(struct engine *e);
/* Local: free (after engine_stop, or alone: stops this process's exchanges only). */
void engine_destroy(struct engine *e);
void engine_stats(const struct engine *e, struct cont_stats *st);
hclock_clock *engine_base(const struct engine *e);

#endif
